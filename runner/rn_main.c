/* rn_main.c: gpuc_program_main, the life of every gpuc executable, in order:
 * the command line, the entry, where each argument comes from (stdin text,
 * .npy or text files, random), the backend, reading and checking the
 * arguments, the timed runs, and the results (stdout text or .npy files,
 * written to temporaries and renamed only when everything is ready).
 * The user-facing behaviour is documented in docs/executables.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "runner.h"

#include "gpuc_comm.h"

void gpuc_run_mark_start(GpucRun *run)
{
  if (run && run->start && gpuc_event_record(run->start, NULL) == GPUC_SUCCESS) {
    run->started = true;
  }
}

void gpuc_run_mark_end(GpucRun *run)
{
  if (run && run->end && gpuc_event_record(run->end, NULL) == GPUC_SUCCESS) {
    run->ended = true;
  }
}

int gpuc_run_input(GpucRun *run, int index, const void *host, size_t bytes, void **dev)
{
  *dev = NULL;
  if (!run || !run->keep_inputs || index < 0) {
    return 0;
  }
  if (index >= run->ninputs) {
    GpucDevPtr *grown = realloc(run->inputs, sizeof *grown * (size_t)(index + 1));
    if (!grown) {
      return GPUC_ERROR_OUT_OF_MEMORY;
    }
    memset(grown + run->ninputs, 0, sizeof *grown * (size_t)(index + 1 - run->ninputs));
    run->inputs = grown;
    run->ninputs = index + 1;
  }
  if (!run->inputs[index]) {
    GpucDevPtr p = 0;
    GpucStatus st = gpuc_mem_alloc(run->ctx, bytes ? bytes : 1, &p);
    if (st == GPUC_SUCCESS && bytes) {
      st = gpuc_memcpy_htod(run->ctx, p, host, bytes);
    }
    if (st != GPUC_SUCCESS) {
      gpuc_mem_free(run->ctx, p);
      return st;
    }
    run->inputs[index] = p;
  }
  *dev = (void *)(uintptr_t)run->inputs[index];
  return 0;
}

int gpuc_run_wants_results(GpucRun *run)
{
  return !run || !run->skip_results;
}

/* The end of a series of runs: the kept device copies of the arguments go. */
static void run_inputs_free(GpucRun *run)
{
  for (int i = 0; i < run->ninputs; i++) {
    gpuc_mem_free(run->ctx, run->inputs[i]);
  }
  free(run->inputs);
  run->inputs = NULL;
  run->ninputs = 0;
  run->keep_inputs = false;
}

typedef enum Backend { BACKEND_AUTO, BACKEND_C, BACKEND_CUDA } Backend;

typedef struct Options {
  const char *entry;
  const char **in_names, **in_paths;   /* --in NAME=PATH */
  int num_in;
  const char **positional;             /* .npy paths */
  int num_positional;
  char **outs;                         /* --out paths (split at commas) */
  int num_outs;
  Backend backend;
  long runs;                           /* -r N: 0 means one untimed-warm-up-free run */
  long ranks;                          /* --ranks N: the sharded entry on N threads; 0: unsharded */
  long rank;                           /* --rank R (with --ranks N): this process is rank R; -1: not given */
  bool ranks_from_env;                 /* --ranks-from-env: rank and size from mpirun's or srun's variables */
  const char *times_path;              /* -t FILE */
  bool profile;
  bool random;
  RnSizes random_sizes;                /* from --random */
  uint64_t seed;
  bool help;
  bool signatures;                     /* --signatures (hidden, for gpuc test and gpuc bench) */
  const char *stdin_path;              /* batch mode: the run's text input (NULL: standard input) */
} Options;

static const char *prog_name = "gpuc-program";
/* "rank R of N: " in every message of a process rank, else empty. */
static char rank_tag[48];

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...)
{
  /* one write: the messages of ranks sharing a terminal or a pipe do not interleave */
  char msg[4096];
  int n = snprintf(msg, sizeof msg, "%s: error: %s", prog_name, rank_tag);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + n, sizeof msg - (size_t)n - 1, fmt, ap);
  va_end(ap);
  strcat(msg, "\n");
  fputs(msg, stderr);
}

static void print_signature(FILE *out, const GpucEntry *entry)
{
  RnError e = {0};
  RnSig sig;
  if (rn_sig_init(&sig, entry, &e)) {
    fprintf(out, "  %s  (%s)\n", entry->name, e.msg);
    return;
  }
  fprintf(out, "  %s(", entry->name);
  for (int i = 0; i < sig.nparams; i++) {
    fprintf(out, "%s%s: %s", i ? ", " : "", entry->params[i].name, sig.shown[i]);
  }
  fprintf(out, ") -> %s\n", sig.result_shown);
  rn_sig_free(&sig);
}

/* --signatures: the program table exactly as generated, one entry a line,
 * fields separated by tabs (type strings hold spaces and commas, never tabs):
 *     NAME <TAB> RESULT_TYPE [<TAB> PARAM <TAB> TYPE]...
 * with structs spelled out ("Point { x: f32, y: f32 }[n]"). Not in --help: it
 * is for tools (gpuc test, gpuc bench), which must not parse the abbreviated
 * types --help shows. */
static void print_signatures(FILE *out, const GpucProgram *prog)
{
  for (int i = 0; i < prog->num_entries; i++) {
    const GpucEntry *e = &prog->entries[i];
    fprintf(out, "%s\t%s", e->name, e->result_type ? e->result_type : "");
    for (int p = 0; p < e->num_params; p++) {
      fprintf(out, "\t%s\t%s", e->params[p].name, e->params[p].type ? e->params[p].type : "");
    }
    fputc('\n', out);
  }
}

static void usage(FILE *out, const GpucProgram *prog)
{
  fprintf(out,
          "usage: %s [-e ENTRY] [options] [ARG.npy ...] < text-arguments\n"
          "Runs an entry of a gpuc program. Arguments are read as text from standard input\n"
          "(one value per parameter, in order) unless given as files or generated.\n"
          "\n"
          "options:\n"
          "  -e, --entry NAME       the entry to run (required when there are several)\n"
          "  --in NAME=FILE         argument or component NAME from FILE (.npy, else one text value)\n"
          "  ARG.npy                .npy files for the components in order (after those given by --in)\n"
          "  --out DIR | --out F1,F2,...\n"
          "                         write the result as .npy: DIR/result.npy (result.0.npy, result.x.npy\n"
          "                         for tuples and structs), or one file per component; default: text on stdout\n"
          "  --backend=auto|cuda|c  auto (default): the GPU when one is usable, else the C backend\n"
          "  -r N                   run N timed times after one warm-up run\n"
          "  --ranks N              the entry sharded over N ranks: N GPUs over NCCL, or threads on the\n"
          "                         C backend (docs/sharding.md)\n"
          "  --rank R --ranks N     this process is rank R of N processes, which meet at\n"
          "                         $GPUC_MASTER_ADDR:$GPUC_MASTER_PORT (rank 0 listens there)\n"
          "  --ranks-from-env       rank and size from the launcher (mpirun: automatic; srun: needed)\n"
          "  -t FILE                write each timed run's time in microseconds, one per line\n"
          "  --profile              the runtime's per-kernel profile table on stderr (CUDA backend)\n"
          "  --random SIZES         generate the arguments not given as files: SIZES like n=1000000,m=64\n"
          "  --seed S               seed for --random (default 0)\n"
          "  -h, --help             this text\n"
          "\n"
          "entries:\n",
          prog_name);
  for (int i = 0; i < prog->num_entries; i++) {
    print_signature(out, &prog->entries[i]);
  }
  fprintf(out, "See docs/executables.md.\n");
}

static bool parse_count(const char *s, long *out)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '\0' || v < 0) {
    return false;
  }
  *out = v;
  return true;
}

static int add_outs(Options *o, const char *arg)
{
  char *copy = strdup(arg);
  if (!copy) {
    return -1;
  }
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char **outs = realloc(o->outs, (size_t)(o->num_outs + 1) * sizeof *outs);
    if (!outs) {
      free(copy);
      return -1;
    }
    o->outs = outs;
    if (!(o->outs[o->num_outs] = strdup(tok))) {
      free(copy);
      return -1;
    }
    o->num_outs++;
  }
  free(copy);
  return 0;
}

static int parse_random(Options *o, const char *spec)
{
  char *copy = strdup(spec), *save = NULL;
  if (!copy) {
    return -1;
  }
  o->random = true;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    long long v;
    char *end;
    if (!eq || eq == tok) {
      error("--random: expected SIZE=N, found '%s'", tok);
      free(copy);
      return -1;
    }
    *eq = '\0';
    errno = 0;
    v = strtoll(eq + 1, &end, 10);
    if (errno || end == eq + 1 || *end != '\0' || v < 0) {
      error("--random: size %s: expected a non-negative integer, found '%s'", tok, eq + 1);
      free(copy);
      return -1;
    }
    if (rn_sizes_bind(&o->random_sizes, tok, v, "--random")) {
      error("--random: too many sizes");
      free(copy);
      return -1;
    }
  }
  free(copy);
  return 0;
}

static void options_free(Options *o)
{
  free(o->in_names);
  free(o->in_paths);
  free(o->positional);
  for (int i = 0; i < o->num_outs; i++) {
    free(o->outs[i]);
  }
  free(o->outs);
}

/* The value of an option given as "--opt VALUE" or "--opt=VALUE". */
static const char *option_value(int argc, char **argv, int *i, const char *opt)
{
  size_t n = strlen(opt);
  if (strncmp(argv[*i], opt, n) == 0 && argv[*i][n] == '=') {
    return argv[*i] + n + 1;
  }
  if (strcmp(argv[*i], opt) == 0) {
    if (*i + 1 >= argc) {
      error("%s needs a value", opt);
      return NULL;
    }
    return argv[++*i];
  }
  return NULL;
}

static bool is_option(const char *arg, const char *opt)
{
  size_t n = strlen(opt);
  return strncmp(arg, opt, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

static bool ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int parse_options(Options *o, int argc, char **argv)
{
  memset(o, 0, sizeof *o);
  o->rank = -1;
  size_t cap = (size_t)argc + 1;
  o->in_names = calloc(cap, sizeof *o->in_names);
  o->in_paths = calloc(cap, sizeof *o->in_paths);
  o->positional = calloc(cap, sizeof *o->positional);
  if (!o->in_names || !o->in_paths || !o->positional) {
    error("out of memory");
    return -1;
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      o->help = true;
    } else if (strcmp(a, "--signatures") == 0) {
      o->signatures = true;
    } else if (strcmp(a, "-e") == 0 || is_option(a, "--entry")) {
      if (!(v = option_value(argc, argv, &i, a[1] == 'e' ? "-e" : "--entry"))) {
        return -1;
      }
      o->entry = v;
    } else if (is_option(a, "--in")) {
      if (!(v = option_value(argc, argv, &i, "--in"))) {
        return -1;
      }
      const char *eq = strchr(v, '=');
      if (!eq || eq == v || eq[1] == '\0') {
        error("--in: expected NAME=FILE, found '%s'", v);
        return -1;
      }
      o->in_names[o->num_in] = v;
      o->in_paths[o->num_in] = eq + 1;
      o->num_in++;
    } else if (is_option(a, "--out")) {
      if (!(v = option_value(argc, argv, &i, "--out"))) {
        return -1;
      }
      if (add_outs(o, v)) {
        error("out of memory");
        return -1;
      }
    } else if (is_option(a, "--backend")) {
      if (!(v = option_value(argc, argv, &i, "--backend"))) {
        return -1;
      }
      if (strcmp(v, "auto") == 0) {
        o->backend = BACKEND_AUTO;
      } else if (strcmp(v, "c") == 0) {
        o->backend = BACKEND_C;
      } else if (strcmp(v, "cuda") == 0) {
        o->backend = BACKEND_CUDA;
      } else {
        error("--backend: expected auto, cuda or c, found '%s'", v);
        return -1;
      }
    } else if (strcmp(a, "-r") == 0 || is_option(a, "--runs")) {
      if (!(v = option_value(argc, argv, &i, a[1] == 'r' ? "-r" : "--runs"))) {
        return -1;
      }
      if (!parse_count(v, &o->runs) || o->runs < 1) {
        error("-r: expected a positive number of runs, found '%s'", v);
        return -1;
      }
    } else if (strcmp(a, "--ranks-from-env") == 0) {
      o->ranks_from_env = true;
    } else if (is_option(a, "--rank")) {
      if (!(v = option_value(argc, argv, &i, "--rank"))) {
        return -1;
      }
      if (!parse_count(v, &o->rank) || o->rank > 1023) {
        error("--rank: expected a rank from 0 to 1023, found '%s'", v);
        return -1;
      }
    } else if (is_option(a, "--ranks")) {
      if (!(v = option_value(argc, argv, &i, "--ranks"))) {
        return -1;
      }
      if (!parse_count(v, &o->ranks) || o->ranks < 1 || o->ranks > 1024) {
        error("--ranks: expected a number of ranks from 1 to 1024, found '%s'", v);
        return -1;
      }
    } else if (strcmp(a, "-t") == 0 || is_option(a, "--times")) {
      if (!(v = option_value(argc, argv, &i, a[1] == 't' ? "-t" : "--times"))) {
        return -1;
      }
      o->times_path = v;
    } else if (strcmp(a, "--profile") == 0) {
      o->profile = true;
    } else if (is_option(a, "--random")) {
      if (!(v = option_value(argc, argv, &i, "--random")) || parse_random(o, v)) {
        return -1;
      }
    } else if (is_option(a, "--seed")) {
      if (!(v = option_value(argc, argv, &i, "--seed"))) {
        return -1;
      }
      char *end;
      errno = 0;
      o->seed = strtoull(v, &end, 0);
      if (errno || end == v || *end != '\0' || v[0] == '-') {
        error("--seed: expected a non-negative integer, found '%s'", v);
        return -1;
      }
    } else if (a[0] == '-' && a[1] != '\0') {
      error("unknown option '%s' (see %s --help)", a, prog_name);
      return -1;
    } else if (ends_with(a, ".npy")) {
      o->positional[o->num_positional++] = a;
    } else {
      error("unexpected argument '%s': inputs are .npy files, --in NAME=FILE, or text on standard input", a);
      return -1;
    }
  }
  return 0;
}

static const GpucEntry *choose_entry(const GpucProgram *prog, const char *name)
{
  char list[1024];
  size_t n = 0;
  list[0] = '\0';
  for (int i = 0; i < prog->num_entries; i++) {
    if (name && strcmp(prog->entries[i].name, name) == 0) {
      return &prog->entries[i];
    }
    if (n < sizeof list) {
      n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", prog->entries[i].name);
    }
  }
  if (prog->num_entries == 0) {
    error("this program has no entry points");
  } else if (name) {
    error("no entry '%s'; the entries are: %s", name, list);
  } else if (prog->num_entries == 1) {
    return &prog->entries[0];
  } else {
    error("this program has %d entries; choose one with -e NAME: %s", prog->num_entries, list);
  }
  return NULL;
}

/* ---- where each component comes from ---- */

typedef struct Sources {
  const char **file;   /* per component: a path, or NULL */
  bool *text_file;     /* per parameter: file[first] is a text file for the whole parameter */
} Sources;

static int find_param(const RnSig *sig, const char *name, size_t len)
{
  for (int p = 0; p < sig->nparams; p++) {
    const char *pn = sig->entry->params[p].name;
    if (strlen(pn) == len && strncmp(pn, name, len) == 0) {
      return p;
    }
  }
  return -1;
}

static void component_list(const RnSig *sig, int p, char *buf, size_t size)
{
  size_t n = 0;
  buf[0] = '\0';
  for (int c = sig->first[p]; c < sig->first[p + 1] && n < size; c++) {
    n += (size_t)snprintf(buf + n, size - n, "%s%s", c > sig->first[p] ? ", " : "", sig->args[c].name);
  }
}

static void param_list(const RnSig *sig, char *buf, size_t size)
{
  size_t n = 0;
  buf[0] = '\0';
  for (int p = 0; p < sig->nparams && n < size; p++) {
    n += (size_t)snprintf(buf + n, size - n, "%s%s", p ? ", " : "", sig->entry->params[p].name);
  }
  if (sig->nparams == 0) {
    snprintf(buf, size, "none");
  }
}

static int assign_sources(const RnSig *sig, const Options *o, Sources *s)
{
  s->file = calloc((size_t)sig->nargs + 1, sizeof *s->file);
  s->text_file = calloc((size_t)sig->nparams + 1, sizeof *s->text_file);
  if (!s->file || !s->text_file) {
    error("out of memory");
    return -1;
  }
  const char *entry = sig->entry->name;
  for (int i = 0; i < o->num_in; i++) {
    const char *name = o->in_names[i];
    size_t len = (size_t)(strchr(name, '=') - name);
    const char *path = o->in_paths[i];
    int comp = -1, p = find_param(sig, name, len);
    for (int c = 0; c < sig->nargs; c++) {
      if (strlen(sig->args[c].name) == len && strncmp(sig->args[c].name, name, len) == 0) {
        comp = c;
      }
    }
    if (p < 0 && comp < 0) {
      char params[512];
      param_list(sig, params, sizeof params);
      error("--in %.*s: entry '%s' has no parameter or component '%.*s' (parameters: %s)", (int)len, name, entry,
            (int)len, name, params);
      return -1;
    }
    if (p >= 0 && !ends_with(path, ".npy")) {
      /* a text file holding the whole parameter */
      if (s->file[sig->first[p]]) {
        error("--in %.*s: argument '%.*s' is given twice", (int)len, name, (int)len, name);
        return -1;
      }
      for (int c = sig->first[p]; c < sig->first[p + 1]; c++) {
        s->file[c] = path;
      }
      s->text_file[p] = true;
      continue;
    }
    if (comp < 0) {
      char comps[512];
      component_list(sig, p, comps, sizeof comps);
      error("--in %.*s: argument '%.*s' (%s) has several components; give each as a .npy file: %s", (int)len, name,
            (int)len, name, sig->shown[p], comps);
      return -1;
    }
    if (s->file[comp]) {
      error("--in %.*s: argument '%.*s' is given twice", (int)len, name, (int)len, name);
      return -1;
    }
    s->file[comp] = path;
  }
  int next = 0;
  for (int i = 0; i < o->num_positional; i++) {
    while (next < sig->nargs && s->file[next]) {
      next++;
    }
    if (next >= sig->nargs) {
      error("too many .npy files: entry '%s' takes %d component%s (%d given by --in, %d positional)", entry,
            sig->nargs, sig->nargs == 1 ? "" : "s", o->num_in, o->num_positional);
      return -1;
    }
    s->file[next++] = o->positional[i];
  }
  for (int p = 0; p < sig->nparams; p++) {
    int given = 0, total = sig->first[p + 1] - sig->first[p];
    for (int c = sig->first[p]; c < sig->first[p + 1]; c++) {
      given += s->file[c] != NULL;
    }
    if (given > 0 && given < total) {
      char comps[512];
      component_list(sig, p, comps, sizeof comps);
      error("argument '%s' (%s): give all of its components as .npy files or none: %s", sig->entry->params[p].name,
            sig->shown[p], comps);
      return -1;
    }
  }
  return 0;
}

/* Read one .npy component and check its dtype and rank. */
static int read_npy_component(const RnSig *sig, int p, int c, const char *path, const GpucComm *part, GpucValue *v,
                              int64_t *whole_rows, RnError *e)
{
  const RnComp *comp = &sig->args[c];
  const char *pname = sig->entry->params[p].name;
  char who[512];
  if (strcmp(comp->name, pname) == 0) {
    snprintf(who, sizeof who, "argument '%s' (%s): %s", pname, sig->shown[p], path);
  } else {
    snprintf(who, sizeof who, "argument '%s' (%s): component '%s': %s", pname, sig->shown[p], comp->name, path);
  }
  if (part ? rn_npy_read_part(path, part->rank, part->size, v, whole_rows, e) : rn_npy_read_file(path, v, e)) {
    rn_err_prefix(e, "%s", who);
    return -1;
  }
  if (v->kind != comp->kind) {
    rn_err(e, "%s: dtype %s (%s) but the parameter needs %s (%s)", who, rn_npy_descr(v->kind), rn_kind_name(v->kind),
           rn_npy_descr(comp->kind), rn_kind_name(comp->kind));
  } else if (v->rank != comp->rank) {
    rn_err(e, "%s: an array of rank %d but the parameter needs rank %d", who, v->rank, comp->rank);
  } else {
    return 0;
  }
  free(v->data);
  v->data = NULL;
  return -1;
}

/* ---- writing files whole ---- */

typedef struct PendingFile {
  char *tmp;           /* the temporary: in the target's directory, or in $TMPDIR when in_place */
  const char *path;    /* the final name */
  bool in_place;       /* path is a device, FIFO or link (/dev/null, /dev/stdout): written into, not replaced */
} PendingFile;

/* Create a temporary for path (next to it when it will be renamed over a
 * regular file or a new one); its FILE is returned open for writing. */
static FILE *open_pending(PendingFile *pf, const char *path, RnError *e)
{
  const char *slash = strrchr(path, '/');
  size_t dir = slash ? (size_t)(slash - path + 1) : 0;
  const char *tmpdir = getenv("TMPDIR");
  tmpdir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  size_t size = strlen(path) + strlen(tmpdir) + 32;
  struct stat st;
  pf->path = path;
  pf->in_place = lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
  if (pf->in_place && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    rn_err(e, "cannot write '%s': it is a directory", path);
    return NULL;
  }
  pf->tmp = malloc(size);
  if (!pf->tmp) {
    rn_err(e, "out of memory");
    return NULL;
  }
  if (pf->in_place) {
    snprintf(pf->tmp, size, "%s/gpuc-out-XXXXXX", tmpdir);
  } else {
    snprintf(pf->tmp, size, "%.*s.%s.tmpXXXXXX", (int)dir, path, path + dir);
  }
  int fd = mkstemp(pf->tmp);
  if (fd < 0) {
    rn_err(e, "cannot create a file next to '%s': %s", path, strerror(errno));
    free(pf->tmp);
    pf->tmp = NULL;
    return NULL;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask); /* a new file's mode, as any program's output */
  FILE *f = fdopen(fd, "wb");
  if (!f) {
    rn_err(e, "cannot write '%s': %s", path, strerror(errno));
    close(fd);
    unlink(pf->tmp);
    free(pf->tmp);
    pf->tmp = NULL;
  }
  return f;
}

static int close_pending(FILE *f, PendingFile *pf, RnError *e)
{
  if (fflush(f) != 0 || ferror(f)) {
    rn_err(e, "cannot write '%s': %s", pf->path, strerror(errno));
    fclose(f);
    return -1;
  }
  if (fclose(f) != 0) {
    rn_err(e, "cannot write '%s': %s", pf->path, strerror(errno));
    return -1;
  }
  return 0;
}

static void discard_pending(PendingFile *pf, int n)
{
  for (int i = 0; i < n; i++) {
    if (pf[i].tmp) {
      unlink(pf[i].tmp);
      free(pf[i].tmp);
      pf[i].tmp = NULL;
    }
  }
}

/* Copy the finished temporary into a device, FIFO or link (which stays). */
static int copy_into(const char *from, const char *to, RnError *e)
{
  FILE *in = fopen(from, "rb");
  FILE *out = in ? fopen(to, "wb") : NULL;
  char buf[1 << 16];
  size_t got;
  bool ok = in && out;
  while (ok && (got = fread(buf, 1, sizeof buf, in)) > 0) {
    ok = fwrite(buf, 1, got, out) == got;
  }
  ok = ok && !ferror(in);
  if (out && fclose(out) != 0) {
    ok = false;
  }
  if (in) {
    fclose(in);
  }
  if (!ok) {
    rn_err(e, "cannot write '%s': %s", to, strerror(errno));
  }
  return ok ? 0 : -1;
}

static int commit_pending(PendingFile *pf, int n, RnError *e)
{
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (rc == 0 && pf[i].in_place) {
      rc = copy_into(pf[i].tmp, pf[i].path, e);
      unlink(pf[i].tmp);
    } else if (rc == 0 && rename(pf[i].tmp, pf[i].path) != 0) {
      rn_err(e, "cannot rename the finished output to '%s': %s", pf[i].path, strerror(errno));
      rc = -1;
    }
    if (rc != 0) {
      unlink(pf[i].tmp);
    }
    free(pf[i].tmp);
    pf[i].tmp = NULL;
  }
  return rc;
}

static bool is_directory(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The .npy outputs: all written to temporaries, then renamed. */
static int write_npy_outputs(const RnSig *sig, const Options *o, const GpucValue *res, RnError *e)
{
  int n = sig->nres;
  char **paths = calloc((size_t)n + 1, sizeof *paths);
  PendingFile *pf = calloc((size_t)n + 1, sizeof *pf);
  int rc = -1, opened = 0;
  if (!paths || !pf) {
    rn_err(e, "out of memory");
    goto done;
  }
  if (o->num_outs == 1 && (is_directory(o->outs[0]) || ends_with(o->outs[0], "/"))) {
    const char *dir = o->outs[0];
    if (!is_directory(dir)) {
      rn_err(e, "--out %s: no such directory", dir);
      goto done;
    }
    for (int i = 0; i < n; i++) {
      size_t size = strlen(dir) + strlen(sig->res[i].name) + 8;
      if (!(paths[i] = malloc(size))) {
        rn_err(e, "out of memory");
        goto done;
      }
      snprintf(paths[i], size, "%s%s%s.npy", dir, ends_with(dir, "/") ? "" : "/", sig->res[i].name);
    }
  } else if (o->num_outs != n) {
    char names[512];
    size_t k = 0;
    names[0] = '\0';
    for (int i = 0; i < n && k < sizeof names; i++) {
      k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", sig->res[i].name);
    }
    rn_err(e, "--out: the result (%s) has %d component%s (%s): give a directory or %d file%s", sig->result_shown, n,
           n == 1 ? "" : "s", names, n, n == 1 ? "" : "s");
    goto done;
  } else {
    for (int i = 0; i < n; i++) {
      if (!(paths[i] = strdup(o->outs[i]))) {
        rn_err(e, "out of memory");
        goto done;
      }
    }
  }
  for (int i = 0; i < n; i++, opened++) {
    FILE *f = open_pending(&pf[i], paths[i], e);
    if (!f) {
      goto done;
    }
    int wrc = rn_npy_write(f, &res[i], e);
    if (close_pending(f, &pf[i], e) || wrc) {
      rn_err_prefix(e, "--out %s", paths[i]);
      opened++;
      goto done;
    }
  }
  rc = commit_pending(pf, n, e);
  opened = 0;
done:
  if (pf) {
    discard_pending(pf, opened);
  }
  for (int i = 0; paths && i < n; i++) {
    free(paths[i]);
  }
  free(paths);
  free(pf);
  return rc;
}

static int write_times(const char *path, const double *us, long n, RnError *e)
{
  PendingFile pf = {0};
  FILE *f = open_pending(&pf, path, e);
  if (!f) {
    rn_err_prefix(e, "-t %s", path);
    return -1;
  }
  for (long i = 0; i < n; i++) {
    fprintf(f, "%.0f\n", us[i]);
  }
  if (close_pending(f, &pf, e)) {
    discard_pending(&pf, 1);
    return -1;
  }
  return commit_pending(&pf, 1, e);
}

/* ---- the runs ---- */

/* The CUDA state all runs of one process share (one run, or every run of a
 * --batch): created by the first run on the CUDA backend, freed at exit. */
typedef struct Device {
  GpucContext *ctx;
  GpucModule *module;
  GpucRun run;
  bool failed;               /* a run left a CUDA error on the context: it may be unusable */
  RnGpuRanks *ranks;         /* --ranks N on GPUs: N contexts and an NCCL communicator */
} Device;

typedef struct Runner {
  const RnSig *sig;
  Backend backend;           /* BACKEND_C or BACKEND_CUDA once chosen */
  Device *dev;
  int ranks;                 /* --ranks: the sharded entry on this many ranks (GPUs: dev->ranks) */
  const RnProcRun *procs;    /* processes as ranks (--rank R, mpirun): this rank's part; NULL: not */
} Runner;

/* Processes as ranks: this process's place among them and what it owns. */
typedef struct Procs {
  int rank, size;            /* size 0: not a process rank */
  int local_rank;            /* the launcher's rank on this host (which GPU), -1 when unknown */
  GpucComm *tcp;             /* the ranks' connections (gpuc_comm_tcp.c) */
  GpucComm *nccl;            /* the CUDA backend's communicator */
  GpucContext *ctx;          /* the CUDA backend: this rank's GPU */
  GpucModule *module;
  GpucEvent *start, *end;
  RnProcRun run;             /* what rn_run_procs needs, pointing at the above */
} Procs;

static void procs_free(Procs *pr)
{
  gpuc_comm_nccl_free(pr->nccl);
  if (pr->end) {
    gpuc_event_free(pr->end);
  }
  if (pr->start) {
    gpuc_event_free(pr->start);
  }
  if (pr->module) {
    gpuc_module_free(pr->module);
  }
  if (pr->ctx) {
    gpuc_context_free(pr->ctx);
  }
  gpuc_comm_tcp_free(pr->tcp);
  memset(pr, 0, sizeof *pr);
}

/* Is this process one rank of several: --rank R --ranks N, --ranks-from-env,
 * or (not in a --batch) an mpirun's variables without --ranks? */
static int decide_procs(const Options *o, bool batch, Procs *pr)
{
  char err[512];
  memset(pr, 0, sizeof *pr);
  if (o->rank >= 0) {
    if (o->ranks_from_env) {
      error("--rank and --ranks-from-env: give one of them");
      return -1;
    }
    if (o->ranks == 0) {
      error("--rank %ld needs --ranks N, the number of processes", o->rank);
      return -1;
    }
    if (o->rank >= o->ranks) {
      error("--rank %ld is not a rank of --ranks %ld (0 to %ld)", o->rank, o->ranks, o->ranks - 1);
      return -1;
    }
    pr->rank = (int)o->rank;
    pr->size = (int)o->ranks;
  } else if (o->ranks_from_env || (o->ranks == 0 && !batch)) {
    if (o->ranks_from_env && o->ranks) {
      error("--ranks-from-env and --ranks %ld: give one of them", o->ranks);
      return -1;
    }
    const char *var;
    int rc = rn_procs_from_env(o->ranks_from_env, &pr->rank, &pr->size, &var, err, sizeof err);
    if (rc <= 0) {
      if (rc < 0) {
        error("%s", err);
      }
      return rc;
    }
  } else {
    return 0;
  }
  if ((pr->local_rank = rn_procs_local_rank(err, sizeof err)) == -2) {
    error("%s", err);
    return -1;
  }
  snprintf(rank_tag, sizeof rank_tag, "rank %d of %d: ", pr->rank, pr->size);
  return 0;
}

/* Processes as ranks: meet the others, then choose the backend together
 * (the GPU only when every rank can use one), and on the GPU make this
 * rank's context on its device and the NCCL communicator (rank 0's unique
 * id sent over the ranks' connections). */
static int setup_procs(Runner *rn, const GpucProgram *prog, const Options *o, Procs *pr)
{
  const GpucEntry *entry = rn->sig->entry;
  char err[1024];
  if (!entry->shard) {
    error("entry '%s' cannot run sharded (`gpuc --emit=c-shard` says why)", entry->name);
    return -1;
  }
  if (!(pr->tcp = rn_procs_connect(pr->rank, pr->size, err, sizeof err))) {
    size_t tag = strlen(rank_tag);
    error("%s", strncmp(err, rank_tag, tag) == 0 ? err + tag : err);
    return -1;
  }
  pr->run.tcp = pr->tcp;
  rn->procs = &pr->run;
  rn->backend = BACKEND_C;
  char why[1024] = "";
  if (o->backend != BACKEND_C) {
    if (gpuc_init() != GPUC_SUCCESS) {
      snprintf(why, sizeof why, "no usable GPU (%s)", gpuc_last_error());
    } else if (!entry->shard->run_cuda) {
      snprintf(why, sizeof why, "entry '%s' is not sharded on the GPU", entry->name);
    } else if (gpuc_comm_nccl_load() != GPUC_SUCCESS) {
      snprintf(why, sizeof why, "%s", gpuc_last_error());
    }
    if (why[0] && o->backend == BACKEND_CUDA) {
      error("--backend=cuda: %s", why);
      return -1;
    }
  }
  int32_t can = o->backend != BACKEND_C && !why[0], all = 0;
  if (pr->tcp->all_reduce(pr->tcp, &can, &all, 1, GPUC_COMM_I32, GPUC_COMM_MIN, NULL) != 0) {
    error("choosing the backend: %s", gpuc_comm_tcp_error(pr->tcp));
    return -1;
  }
  if (!all) {
    if (o->backend == BACKEND_AUTO && pr->rank == 0) {
      fprintf(stderr, "%s: note: %s; running the ranks on the C backend\n", prog_name,
              why[0] ? why : "another rank cannot use its GPU");
    }
    return 0;
  }
  int visible = 0;
  gpuc_device_count(&visible);
  int device = pr->local_rank >= 0 ? pr->local_rank : pr->rank % (visible > 0 ? visible : 1);
  if (device >= visible) {
    error("local rank %d needs GPU %d, but %d %s visible", pr->local_rank, device, visible,
          visible == 1 ? "is" : "are");
    return -1;
  }
  GpucConfig config;
  gpuc_config_init(&config);
  config.device = device;
  config.profile = o->profile ? 1 : -1;
  if (gpuc_context_new(&config, &pr->ctx) != GPUC_SUCCESS) {
    error("cannot create a CUDA context on device %d: %s", device, gpuc_last_error());
    return -1;
  }
  if (prog->num_images > 0 &&
      gpuc_module_load_images(pr->ctx, prog->images, prog->num_images, &pr->module) != GPUC_SUCCESS) {
    const char *msg = gpuc_context_error(pr->ctx);
    error("cannot load the program's kernels: %s", msg ? msg : gpuc_last_error());
    return -1;
  }
  if (gpuc_event_new(pr->ctx, &pr->start) != GPUC_SUCCESS || gpuc_event_new(pr->ctx, &pr->end) != GPUC_SUCCESS) {
    const char *msg = gpuc_context_error(pr->ctx);
    error("cannot create timing events: %s", msg ? msg : gpuc_last_error());
    return -1;
  }
  char id[128] = {0};
  if (pr->rank == 0 && gpuc_comm_nccl_unique_id(id) != 0) {
    error("%s", gpuc_last_error());
    return -1;
  }
  if (gpuc_comm_tcp_broadcast(pr->tcp, id, sizeof id) != 0) {
    error("sending NCCL's unique id: %s", gpuc_comm_tcp_error(pr->tcp));
    return -1;
  }
  if (gpuc_comm_nccl_init_rank(id, pr->rank, pr->size, &pr->nccl) != 0) {
    error("%s", gpuc_last_error());
    return -1;
  }
  pr->run.nccl = pr->nccl;
  pr->run.ctx = pr->ctx;
  pr->run.module = pr->module;
  pr->run.start = pr->start;
  pr->run.end = pr->end;
  rn->backend = BACKEND_CUDA;
  return 0;
}

/* --ranks N with --backend=cuda or auto: N GPUs over NCCL when the entry
 * has a sharded CUDA form and a GPU is usable; auto falls back to threads
 * on the C backend with a note, as an unsharded run does. */
static int setup_gpu_ranks(Runner *rn, const GpucProgram *prog, const Options *o)
{
  const GpucEntry *entry = rn->sig->entry;
  bool want = o->backend == BACKEND_CUDA;
  if (gpuc_init() != GPUC_SUCCESS) {
    if (want) {
      error("--ranks %ld --backend=cuda: %ld ranks need %ld GPUs, but none is usable: %s", o->ranks, o->ranks,
            o->ranks, gpuc_last_error());
      return -1;
    }
    fprintf(stderr, "%s: note: no usable GPU (%s); running the ranks on the C backend\n", prog_name,
            gpuc_last_error());
    return 0;
  }
  if (!entry->shard->run_cuda) {
    if (want) {
      error("entry '%s' is not sharded on the GPU (%s)", entry->name,
            prog->num_images ? "`gpuc --emit=cuda-shard` says why" : "the program was built without kernels");
      return -1;
    }
    fprintf(stderr, "%s: note: entry '%s' is not sharded on the GPU; running the ranks on the C backend\n",
            prog_name, entry->name);
    return 0;
  }
  Device *dev = rn->dev;
  if (dev->ranks && rn_gpu_ranks_count(dev->ranks) != rn->ranks) {
    rn_gpu_ranks_free(dev->ranks);
    dev->ranks = NULL;
  }
  char err[1024];
  if (!dev->ranks && !(dev->ranks = rn_gpu_ranks_new(rn->ranks, prog, o->profile, err, sizeof err))) {
    error("%s", err);
    return -1;
  }
  rn->backend = BACKEND_CUDA;
  return 0;
}

/* Choose the backend and, for CUDA, set up the context and the module. */
static int setup_backend(Runner *rn, const GpucProgram *prog, const Options *o)
{
  const GpucEntry *entry = rn->sig->entry;
  rn->backend = BACKEND_C;
  if (o->ranks > 0) {
    if (!entry->shard) {
      error("entry '%s' cannot run sharded (`gpuc --emit=c-shard` says why)", entry->name);
      return -1;
    }
    rn->ranks = (int)o->ranks;
    return o->backend == BACKEND_C ? 0 : setup_gpu_ranks(rn, prog, o);
  }
  if (o->backend == BACKEND_C) {
    if (!entry->run_c) {
      error("entry '%s' has no C backend", entry->name);
      return -1;
    }
    return 0;
  }
  if (gpuc_init() != GPUC_SUCCESS) {
    const char *why = gpuc_last_error();
    if (o->backend == BACKEND_CUDA) {
      error("--backend=cuda: no usable GPU: %s", why);
      return -1;
    }
    if (!entry->run_c) {
      error("entry '%s' has no C backend and there is no usable GPU: %s", entry->name, why);
      return -1;
    }
    fprintf(stderr, "%s: note: no usable GPU (%s); running on the C backend\n", prog_name, why);
    return 0;
  }
  if (!entry->run_cuda) {
    if (o->backend == BACKEND_CUDA || !entry->run_c) {
      error("entry '%s' has no CUDA backend", entry->name);
      return -1;
    }
    fprintf(stderr, "%s: note: entry '%s' has no CUDA backend; running on the C backend\n", prog_name, entry->name);
    return 0;
  }
  Device *dev = rn->dev;
  if (!dev->ctx) {
    GpucConfig config;
    gpuc_config_init(&config);
    config.profile = o->profile ? 1 : -1;
    if (gpuc_context_new(&config, &dev->ctx) != GPUC_SUCCESS) {
      error("cannot create a CUDA context: %s", gpuc_last_error());
      return -1;
    }
  }
  rn->backend = BACKEND_CUDA;
  if (prog->num_images > 0 && !dev->module &&
      gpuc_module_load_images(dev->ctx, prog->images, prog->num_images, &dev->module) != GPUC_SUCCESS) {
    const char *msg = gpuc_context_error(dev->ctx);
    error("cannot load the program's kernels: %s", msg ? msg : gpuc_last_error());
    return -1;
  }
  if ((!dev->run.start && gpuc_event_new(dev->ctx, &dev->run.start) != GPUC_SUCCESS) ||
      (!dev->run.end && gpuc_event_new(dev->ctx, &dev->run.end) != GPUC_SUCCESS)) {
    const char *msg = gpuc_context_error(dev->ctx);
    error("cannot create timing events: %s", msg ? msg : gpuc_last_error());
    return -1;
  }
  dev->run.ctx = dev->ctx;
  return 0;
}

static void device_free(Device *dev)
{
  run_inputs_free(&dev->run);
  rn_gpu_ranks_free(dev->ranks);
  if (dev->run.start) {
    gpuc_event_free(dev->run.start);
  }
  if (dev->run.end) {
    gpuc_event_free(dev->run.end);
  }
  if (dev->module) {
    gpuc_module_free(dev->module);
  }
  gpuc_context_free(dev->ctx);
  memset(dev, 0, sizeof *dev);
}

/* One call of the entry; *us gets its time. */
static int run_once(Runner *rn, const GpucValue *args, GpucValue *res, const GpucValue *tmpl, double *us)
{
  const RnSig *sig = rn->sig;
  const GpucEntry *entry = sig->entry;
  char err[1024] = "";
  int rc;
  for (int i = 0; i < sig->nres; i++) {
    if (!tmpl[i].data) {
      /* size known only at run time: a fresh result for every call */
      free(res[i].data);
      res[i] = tmpl[i];
    }
  }
  if (rn->procs) {
    rc = rn_run_procs(rn->procs, entry->shard, sig->nargs, args, sig->nres, res, us, err, sizeof err);
  } else if (rn->backend == BACKEND_C) {
    double t0 = rn_now_us();
    rc = rn->ranks ? rn_run_ranks(entry->shard, rn->ranks, sig->nargs, args, sig->nres, res, err, sizeof err)
                   : entry->run_c(args, res, err, sizeof err);
    *us = rn_now_us() - t0;
  } else if (rn->ranks) {
    rc = rn_run_ranks_cuda(rn->dev->ranks, entry->shard, sig->nargs, args, sig->nres, res, us, err, sizeof err);
    rn->dev->failed = rn->dev->failed || rc != 0;
  } else {
    Device *dev = rn->dev;
    dev->run.started = dev->run.ended = false;
    gpuc_event_record(dev->run.start, NULL);
    rc = entry->run_cuda(dev->ctx, dev->module, &dev->run, args, res, err, sizeof err);
    if (!dev->run.ended) {
      gpuc_event_record(dev->run.end, NULL);
    }
    float ms = 0;
    if (rc == 0 && gpuc_event_elapsed_ms(dev->run.start, dev->run.end, &ms) != GPUC_SUCCESS) {
      const char *msg = gpuc_context_error(dev->ctx);
      snprintf(err, sizeof err, "timing failed: %s", msg ? msg : gpuc_last_error());
      rc = -1;
    }
    *us = (double)ms * 1e3;
    /* a CUDA call failed (recorded on the context; a fault is sticky): the
     * context may be unusable. An index out of bounds, which the kernels
     * report through a flag, leaves it as it was: the batch goes on. */
    dev->failed = dev->failed || (rc != 0 && gpuc_context_error(dev->ctx) != NULL);
  }
  if (rc != 0) {
    error("%s: %s", entry->name, err[0] ? err : "failed (no message)");
    return -1;
  }
  for (int i = 0; i < sig->nres; i++) {
    if (!res[i].data || res[i].shape[0] < 0 || res[i].shape[1] < 0 || res[i].kind != tmpl[i].kind ||
        res[i].rank != tmpl[i].rank) {
      error("internal error: entry '%s' returned no valid data for its result component '%s'", entry->name,
            sig->res[i].name);
      return -1;
    }
  }
  return 0;
}

/* Read, generate and check every argument, in parameter order (random ones
 * last, so they take sizes from the given ones). */
/* Processes as ranks: this rank's rows of a whole argument component. */
static int keep_own_rows(GpucValue *v, int rank, int size)
{
  int64_t rows = v->shape[0], lo = rows * rank / size, hi = rows * (rank + 1) / size;
  size_t row = (size_t)(v->rank == 2 ? v->shape[1] : 1) * gpuc_kind_size(v->kind);
  void *mine = malloc((size_t)(hi - lo) * row + 1);
  if (!mine) {
    return -1;
  }
  memcpy(mine, (char *)v->data + (size_t)lo * row, (size_t)(hi - lo) * row);
  free(v->data);
  v->data = mine;
  v->shape[0] = hi - lo;
  return 0;
}

/* Processes as ranks: rank 0 reads standard input and sends it to the others. */
static char *shared_stdin(const Options *o, const GpucComm *tcp, size_t *len, RnError *e)
{
  char *text = NULL;
  uint64_t n = 0;
  if (tcp->rank == 0) {
    if (!(text = rn_read_all(o->stdin_path, len, e))) {
      return NULL;
    }
    n = *len;
  }
  if (gpuc_comm_tcp_broadcast(tcp, &n, sizeof n) != 0) {
    rn_err(e, "sending standard input to the ranks: %s", gpuc_comm_tcp_error(tcp));
    free(text);
    return NULL;
  }
  if (tcp->rank != 0 && !(text = malloc((size_t)n + 1))) {
    rn_err(e, "out of memory (%" PRIu64 " bytes of standard input)", n);
    return NULL;
  }
  if (gpuc_comm_tcp_broadcast(tcp, text, (size_t)n) != 0) {
    rn_err(e, "sending standard input to the ranks: %s", gpuc_comm_tcp_error(tcp));
    free(text);
    return NULL;
  }
  text[n] = '\0';
  *len = (size_t)n;
  return text;
}

/* With tcp (processes as ranks), the components split[c] end up as this
 * rank's rows: .npy files read in part, the others read whole (stdin from
 * rank 0, text files, --random with the same seed on every rank) and cut;
 * sizes are checked against the whole arrays. */
static int read_arguments(const RnSig *sig, const Options *o, const Sources *src, GpucValue *args, RnSizes *sizes,
                          const GpucComm *tcp, const unsigned char *split)
{
  int64_t *whole_rows = calloc((size_t)sig->nargs + 1, sizeof *whole_rows);   /* of a component read in part */
  GpucValue *shown = calloc((size_t)sig->nargs + 1, sizeof *shown);
  if (!whole_rows || !shown) {
    free(whole_rows);
    free(shown);
    error("out of memory");
    return -1;
  }
  RnError e = {0};
  char *text = NULL;
  size_t text_len = 0;
  RnReader stdin_reader;
  bool need_stdin = false;
  int rc = -1, values_read = 0;
  for (int p = 0; p < sig->nparams; p++) {
    need_stdin = need_stdin || (!src->file[sig->first[p]] && !o->random);
  }
  if (need_stdin) {
    if (!(text = tcp ? shared_stdin(o, tcp, &text_len, &e) : rn_read_all(o->stdin_path, &text_len, &e))) {
      error("reading standard input: %s", e.msg);
      free(whole_rows);
      free(shown);
      return -1;
    }
    rn_reader_init(&stdin_reader, text, text_len, "<stdin>");
  }
  for (int pass = 0; pass < 2; pass++) {
    for (int p = 0; p < sig->nparams; p++) {
      const char *pname = sig->entry->params[p].name;
      GpucValue *comps = &args[sig->first[p]];
      bool from_file = src->file[sig->first[p]] != NULL;
      if ((pass == 0) == (!from_file && o->random)) {
        continue;
      }
      if (from_file && src->text_file[p]) {
        const char *path = src->file[sig->first[p]];
        size_t len;
        char *ftext = rn_read_all(path, &len, &e);
        if (!ftext) {
          rn_err_prefix(&e, "argument '%s' (%s): %s", pname, sig->shown[p], path);
          goto fail;
        }
        RnReader r;
        rn_reader_init(&r, ftext, len, path);
        int frc = rn_text_read(&r, sig->params[p], comps, &e);
        if (frc == 0 && !rn_reader_at_end(&r)) {
          rn_err(&e, "%s:%d:%d: extra text after the value", path, r.line, r.col);
          rn_values_free(comps, sig->params[p]->ncomp);
          frc = -1;
        }
        free(ftext);
        if (frc) {
          rn_err_prefix(&e, "argument '%s' (%s)", pname, sig->shown[p]);
          goto fail;
        }
      } else if (from_file) {
        for (int c = sig->first[p]; c < sig->first[p + 1]; c++) {
          bool part = tcp && split[c] && sig->args[c].rank >= 1;
          if (read_npy_component(sig, p, c, src->file[c], part ? tcp : NULL, &args[c], &whole_rows[c], &e)) {
            goto fail;
          }
        }
      } else if (o->random) {
        if (rn_random_param(sig, p, sizes, o->seed, comps, &e)) {
          goto fail;
        }
      } else {
        if (rn_reader_at_end(&stdin_reader)) {
          rn_err(&e, "argument '%s' (%s): missing: standard input ended after %d value%s", pname, sig->shown[p],
                 values_read, values_read == 1 ? "" : "s");
          goto fail;
        }
        if (rn_text_read(&stdin_reader, sig->params[p], comps, &e)) {
          rn_err_prefix(&e, "argument '%s' (%s)", pname, sig->shown[p]);
          goto fail;
        }
        values_read++;
      }
      /* sizes are those of the whole arrays */
      for (int c = sig->first[p]; c < sig->first[p + 1]; c++) {
        shown[c] = args[c];
        if (tcp && split[c] && from_file && !src->text_file[p] && args[c].rank >= 1) {
          shown[c].shape[0] = whole_rows[c];
        }
      }
      if (rn_check_param(sig, p, &shown[sig->first[p]], sizes, &e)) {
        goto fail;
      }
      for (int c = sig->first[p]; tcp && c < sig->first[p + 1]; c++) {
        bool read_whole = !from_file || src->text_file[p];
        if (split[c] && read_whole && args[c].rank >= 1 && keep_own_rows(&args[c], tcp->rank, tcp->size)) {
          rn_err(&e, "argument '%s': out of memory", pname);
          goto fail;
        }
      }
    }
  }
  if (need_stdin && !rn_reader_at_end(&stdin_reader)) {
    char found[40];
    size_t left = stdin_reader.len - stdin_reader.pos, k;
    for (k = 0; k < left && k < 24; k++) {
      char ch = stdin_reader.src[stdin_reader.pos + k];
      if (ch == '\n' || ch == '\r') {
        break;
      }
      found[k] = (ch >= 32 && ch < 127) ? ch : '?';
    }
    found[k] = '\0';
    rn_err(&e, "<stdin>:%d:%d: extra input after the last argument ('%s%s'): entry '%s' takes %d argument%s",
           stdin_reader.line, stdin_reader.col, found, k == 24 && k < left ? "..." : "",
           sig->entry->name, sig->nparams, sig->nparams == 1 ? "" : "s");
    goto fail;
  }
  rc = 0;
fail:
  if (rc) {
    error("%s", e.msg);
  }
  free(text);
  free(whole_rows);
  free(shown);
  return rc;
}

/* Processes as ranks: every rank must have read arrays of the same sizes
 * (the same files, or the same --random sizes); else a clear error on all. */
static int sizes_agree(const GpucComm *tcp, const RnSizes *sizes)
{
  uint64_t mine = 14695981039346656037ull, *all = calloc((size_t)tcp->size, sizeof *all);   /* FNV-1a */
  for (int i = 0; i < sizes->count; i++) {
    for (const char *c = sizes->v[i].name; *c; c++) {
      mine = (mine ^ (unsigned char)*c) * 1099511628211ull;
    }
    for (int b = 0; b < 8; b++) {
      mine = (mine ^ (((uint64_t)sizes->v[i].value >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
  }
  if (!all || tcp->all_gather(tcp, &mine, all, sizeof mine, NULL) != 0) {
    error("comparing the ranks' sizes: %s", all ? gpuc_comm_tcp_error(tcp) : "out of memory");
    free(all);
    return -1;
  }
  for (int r = 0; r < tcp->size; r++) {
    if (all[r] != all[0]) {
      char here[256] = "";
      size_t n = 0;
      for (int i = 0; i < sizes->count && n < sizeof here; i++) {
        n += (size_t)snprintf(here + n, sizeof here - n, "%s%s = %" PRId64, i ? ", " : "", sizes->v[i].name,
                              sizes->v[i].value);
      }
      error("rank %d's inputs have other sizes than rank 0's (here %s): give every rank the same inputs", r, here);
      free(all);
      return -1;
    }
  }
  free(all);
  return 0;
}

/* One command line (argv[0] is the program), on the shared device; stdin_path
 * (batch mode) replaces standard input. Returns the exit status. */
static int run_command(const GpucProgram *prog, int argc, char **argv, Device *dev, const char *stdin_path)
{
  Options o;
  RnSig sig;
  memset(&sig, 0, sizeof sig);
  GpucValue *args = NULL, *res = NULL, *tmpl = NULL;
  double *times = NULL;
  Runner rn;
  memset(&rn, 0, sizeof rn);
  int status = 1;
  RnError e = {0};
  RnSizes sizes;
  memset(&sizes, 0, sizeof sizes);
  Sources src = {0};
  Procs procs;
  memset(&procs, 0, sizeof procs);

  if (parse_options(&o, argc, argv)) {
    goto out;
  }
  o.stdin_path = stdin_path;
  if (o.help) {
    usage(stdout, prog);
    status = 0;
    goto out;
  }
  if (o.signatures) {
    print_signatures(stdout, prog);
    status = fflush(stdout) == 0 ? 0 : 1;
    goto out;
  }
  if (decide_procs(&o, stdin_path != NULL, &procs)) {
    goto out;
  }
  const GpucEntry *entry = choose_entry(prog, o.entry);
  if (!entry) {
    goto out;
  }
  if (rn_sig_init(&sig, entry, &e)) {
    error("%s", e.msg);
    goto out;
  }
  if (o.random) {
    sizes = o.random_sizes;
    for (int i = 0; i < sizes.count; i++) {
      bool used = false;
      for (int p = 0; p < sig.nparams; p++) {
        for (int c = sig.first[p]; c < sig.first[p + 1]; c++) {
          const RnType *a = sig.args[c].array;
          for (int d = 0; a && d < a->rank; d++) {
            used = used || (a->dims[d].kind == RN_DIM_VAR && strcmp(a->dims[d].name, sizes.v[i].name) == 0);
          }
        }
        used = used || strcmp(entry->params[p].name, sizes.v[i].name) == 0;
      }
      if (!used) {
        error("--random: entry '%s' has no size '%s'", entry->name, sizes.v[i].name);
        goto out;
      }
    }
  }
  if (assign_sources(&sig, &o, &src)) {
    goto out;
  }
  rn.sig = &sig;
  rn.dev = dev;
  if (procs.size ? setup_procs(&rn, prog, &o, &procs) : setup_backend(&rn, prog, &o)) {
    goto out;
  }
  if (o.profile && rn.backend == BACKEND_C) {
    fprintf(stderr, "%s: note: --profile shows kernels of the CUDA backend; the C backend has none\n", prog_name);
  }
  args = calloc((size_t)sig.nargs + 1, sizeof *args);
  res = calloc((size_t)sig.nres + 1, sizeof *res);
  tmpl = calloc((size_t)sig.nres + 1, sizeof *tmpl);
  times = calloc((size_t)(o.runs > 0 ? o.runs : 1), sizeof *times);
  if (!args || !res || !tmpl || !times) {
    error("out of memory");
    goto out;
  }
  if (read_arguments(&sig, &o, &src, args, &sizes, procs.tcp, procs.size ? entry->shard->args_split : NULL)) {
    goto out;
  }
  if (procs.size && sizes_agree(procs.tcp, &sizes)) {
    goto out;
  }
  if (rn_prepare_results(&sig, &sizes, tmpl, &e)) {
    rn_values_free(tmpl, sig.nres);
    error("%s", e.msg);
    goto out;
  }
  for (int i = 0; i < sig.nres; i++) {
    res[i] = tmpl[i];
  }
  /* tmpl keeps the shapes; res owns the buffers (tmpl[i].data is only a flag) */
  long timed = o.runs > 0 ? o.runs : 1;
  double warm;
  run_inputs_free(&dev->run);
  dev->run.keep_inputs = true;   /* every run of the series on the same device copies */
  /* only the last run's array results come back to the host: the runs
   * before it time the same thing as the header's and library's calls,
   * without a copy of the results (1 GiB: about 0.1 s) between runs */
  dev->run.skip_results = o.runs > 0;
  if (o.runs > 0 && run_once(&rn, args, res, tmpl, &warm)) {
    goto out;
  }
  for (long i = 0; i < timed; i++) {
    dev->run.skip_results = i + 1 < timed;
    if (run_once(&rn, args, res, tmpl, &times[i])) {
      goto out;
    }
  }
  dev->run.skip_results = false;
  run_inputs_free(&dev->run);
  if (procs.size && procs.rank != 0) {
    status = 0;   /* rank 0 writes the results and times */
    goto out;
  }
  if (o.times_path && write_times(o.times_path, times, timed, &e)) {
    error("%s", e.msg);
    goto out;
  }
  if (o.num_outs > 0) {
    if (write_npy_outputs(&sig, &o, res, &e)) {
      error("%s", e.msg);
      goto out;
    }
  } else {
    rn_text_write(stdout, sig.result, res);
    fputc('\n', stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      error("cannot write standard output: %s", strerror(errno));
      goto out;
    }
  }
  status = 0;
out:
  run_inputs_free(&dev->run);
  if (sig.entry) {
    rn_values_free(args, sig.nargs);
    rn_values_free(res, sig.nres);
  }
  free(args);
  free(res);
  free(tmpl);
  free(times);
  free(src.file);
  free(src.text_file);
  rn_sig_free(&sig);
  options_free(&o);
  procs_free(&procs);
  rank_tag[0] = '\0';
  return status;
}

/* ---- batch mode: many runs in one process ---- */

/* Point fd at path (opened for writing, or reading with for_read); -1 on failure. */
static int redirect(int fd, const char *path, bool for_read)
{
  int f = for_read ? open(path, O_RDONLY) : open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (f < 0) {
    return -1;
  }
  int rc = dup2(f, fd) < 0 ? -1 : 0;
  close(f);
  return rc;
}

/* `PROGRAM --batch LIST [--timeout S]` (docs/executables.md): every line of
 * LIST is one run, tab-separated fields
 *     ID  STDIN  STDOUT  STDERR  ARG...
 * (ARGs: the ordinary command line; STDIN: a file of text input or "-" for
 * none). The runs share one process, CUDA context and loaded module. After
 * each run a line `ID <TAB> STATUS` (the exit status the command line alone
 * would give) goes to standard output. A run that fails inside the CUDA
 * backend may leave the context unusable: the batch stops after its status
 * line with exit status 3, and the caller runs the rest in a new process
 * (a run whose failure left no CUDA error on the context, such as an index
 * out of bounds, does not stop it). With --timeout, a run longer than S seconds ends the process (SIGALRM).
 * Exit status 0 when every line ran, 2 for a bad command line or list. */
static int run_batch(const GpucProgram *prog, int argc, char **argv)
{
  unsigned long timeout = 0;
  if (argc == 5 && strcmp(argv[3], "--timeout") == 0) {
    char *end;
    errno = 0;
    timeout = strtoul(argv[4], &end, 10);
    if (errno || end == argv[4] || *end) {
      error("--batch: --timeout needs seconds, not '%s'", argv[4]);
      return 2;
    }
  } else if (argc != 3) {
    error("usage: %s --batch LIST [--timeout SECONDS]", prog_name);
    return 2;
  }
  RnError e = {0};
  size_t len;
  char *list = rn_read_all(argv[2], &len, &e);
  if (!list) {
    error("--batch %s: %s", argv[2], e.msg);
    return 2;
  }
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  FILE *status = saved_out >= 0 ? fdopen(dup(saved_out), "w") : NULL;
  if (saved_err < 0 || !status) {
    error("--batch: cannot duplicate the standard streams: %s", strerror(errno));
    free(list);
    return 2;
  }
  Device dev;
  memset(&dev, 0, sizeof dev);
  int rc = 0;
  char **args = NULL;
  int lineno = 0;
  for (char *line = list, *next; line && *line && rc == 0; line = next) {
    lineno++;
    next = strchr(line, '\n');
    if (next) {
      *next++ = '\0';
    }
    if (!*line) {
      continue;
    }
    /* fields: ID STDIN STDOUT STDERR, then the run's arguments */
    int n = 1;
    for (char *c = line; *c; c++) {
      n += *c == '\t';
    }
    free(args);
    args = calloc((size_t)n + 2, sizeof *args);
    if (!args) {
      error("--batch: out of memory");
      rc = 2;
      break;
    }
    int k = 0;
    for (char *f = line; f; k++) {
      args[k] = f;
      f = strchr(f, '\t');
      if (f) {
        *f++ = '\0';
      }
    }
    if (k < 4) {
      error("--batch %s:%d: a line needs ID, STDIN, STDOUT and STDERR separated by tabs", argv[2], lineno);
      rc = 2;
      break;
    }
    const char *id = args[0], *in = args[1];
    fflush(stdout);
    fflush(stderr);
    if (redirect(1, args[2], false) || redirect(2, args[3], false)) {
      dup2(saved_out, 1);
      dup2(saved_err, 2);
      error("--batch: run %s: cannot write '%s' or '%s': %s", id, args[2], args[3], strerror(errno));
      rc = 2;
      break;
    }
    args[3] = argv[0]; /* the run's argv: the program, then its arguments */
    clearerr(stdout);
    if (timeout) {
      alarm((unsigned)timeout);
    }
    int st = run_command(prog, k - 3, args + 3, &dev, strcmp(in, "-") == 0 ? "/dev/null" : in);
    alarm(0);
    if (dev.ctx) {
      /* give the run's device memory back: other processes test beside this one */
      gpuc_mem_trim(dev.ctx);
    }
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    clearerr(stdout);
    fprintf(status, "%s\t%d\n", id, st);
    if (fflush(status) != 0) {
      rc = 2;
    } else if (dev.failed) {
      rc = 3;
    }
  }
  free(args);
  free(list);
  fclose(status);
  close(saved_out);
  close(saved_err);
  if (timeout) {
    alarm((unsigned)timeout); /* the teardown may not hang either */
  }
  device_free(&dev);
  return rc;
}

int gpuc_program_main(const GpucProgram *prog, int argc, char **argv)
{
  if (argc > 0 && argv[0] && argv[0][0]) {
    const char *slash = strrchr(argv[0], '/');
    prog_name = slash ? slash + 1 : argv[0];
  } else if (prog->name) {
    prog_name = prog->name;
  }
  if (argc >= 2 && strcmp(argv[1], "--batch") == 0) {
    return run_batch(prog, argc, argv);
  }
  Device dev;
  memset(&dev, 0, sizeof dev);
  int status = run_command(prog, argc, argv, &dev, NULL);
  device_free(&dev);
  return status;
}
