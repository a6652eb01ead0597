/* emit_lib.c: `--emit=lib`: a program as an ahead-of-time C library over the
 * gpuc runtime (docs/library.md). Three files from one lowered module:
 *   NAME.h     the public header: a per-context handle NAME_lib (the embedded
 *              kernels loaded once), typed device arrays NAME_<kind>_<rank>d
 *              with create-from-host, wrap-a-device-pointer, read-back, shape
 *              and free, and per entry (template instances are entries of
 *              their own) NAME_ENTRY(lib, inputs..., outputs...) -> GpucStatus;
 *   NAME.c     the implementation: the C prelude, the runtime host interface
 *              and the launchers gpuc_dev_ENTRY shared with executables
 *              (backend/emit_program.c, backend/cuda/launch.c), and wrappers
 *              that check sizes, call the launcher under the library's lock
 *              and hand the result arrays to the caller;
 *   NAME.json  the manifest: entries, parameter and result types with their
 *              components, sizes, template parameters and kernel attributes.
 * Struct and tuple values are passed as their components, struct of arrays,
 * named as the program runner names them (runner/gpuc_program.h) with '_'
 * for '.': `ps: Point { x: f32, y: f32 }[n]` is ps_x and ps_y.
 * Generated code returns errors (NAME_last_error() has the message); it never
 * prints or exits. */
#include "backend.h"
#include "cuda/cuda_emit.h"   /* cuda_host_into_entries, cuda_results_known */

#include <stdlib.h>
#include <string.h>

/* ---- components: the leaves of a gdsl type string, depth first ---- */

#define MAX_LEAVES 256

typedef struct {
    char path[96];  /* ".x", ".0.1", or "" for a scalar or array of scalars */
} Leaf;

static void skip_ws(const char **p) {
    while (**p == ' ') { (*p)++; }
}

/* Parse one type at *p, appending its leaves (prefixed) to out; returns the
 * new count, or -1 when the string is not understood. */
static int parse_type(const char **p, const char *prefix, Leaf *out, int n) {
    skip_ws(p);
    char sub[96];
    if (**p == '(') {
        (*p)++;
        for (int idx = 0;; idx++) {
            snprintf(sub, sizeof sub, "%s.%d", prefix, idx);
            if ((n = parse_type(p, sub, out, n)) < 0) { return -1; }
            skip_ws(p);
            if (**p == ',') { (*p)++; continue; }
            if (**p != ')') { return -1; }
            (*p)++;
            break;
        }
    } else {
        const char *id = *p;
        while ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') || (**p >= '0' && **p <= '9') || **p == '_') { (*p)++; }
        if (*p == id) { return -1; }
        skip_ws(p);
        if (**p == '{') {
            (*p)++;
            for (;;) {
                skip_ws(p);
                const char *f = *p;
                while ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') || (**p >= '0' && **p <= '9') || **p == '_') { (*p)++; }
                int flen = (int)(*p - f);
                skip_ws(p);
                if (!flen || **p != ':') { return -1; }
                (*p)++;
                snprintf(sub, sizeof sub, "%s.%.*s", prefix, flen, f);
                if ((n = parse_type(p, sub, out, n)) < 0) { return -1; }
                skip_ws(p);
                if (**p == ',') { (*p)++; continue; }
                if (**p != '}') { return -1; }
                (*p)++;
                break;
            }
        } else {
            if (n >= MAX_LEAVES) { return -1; }
            snprintf(out[n].path, sizeof out[n].path, "%s", prefix);
            n++;
        }
    }
    for (skip_ws(p); **p == '['; skip_ws(p)) {
        while (**p && **p != ']') { (*p)++; }
        if (!**p) { return -1; }
        (*p)++;
    }
    return n;
}

/* One component of a parameter or of the result. */
typedef struct {
    char label[128];  /* the runner's name: "ps.x", "result.0" */
    char cname[128];  /* the C argument: "ps_x", "out_0" */
    char type[160];   /* its own type: "f32[n]" */
    IrValue *v;
    int group;        /* parameter number (-1 for the result) */
} Comp;

typedef struct {
    int nin, nout;
    Comp *in, *out;
} Comps;

static bool is_c_keyword(const char *s) {
    static const char *const kw[] = { "auto", "break", "case", "char", "const", "continue", "default", "do", "double",
        "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict",
        "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "bool", "true", "false", "lib", "class", "new", "delete", "template", "this", NULL };
    for (int i = 0; kw[i]; i++) {
        if (strcmp(s, kw[i]) == 0) { return true; }
    }
    return false;
}

/* The name of a size for messages and types: the size variable, the
 * integer parameter it comes from, a constant, or `_` (known at run time). */
static const char *dim_name(const IrValue *d, char *buf, size_t n) {
    if (d->has_const) { snprintf(buf, n, "%lld", (long long)d->const_val); return buf; }
    if (d->name) { return d->name; }
    const IrStmt *s = d->def;
    if (s && s->kind == IR_S_SCALAR && s->map && s->map->nres == 1) {
        const IrExpr *x = s->map->res[0];
        if (x->kind == IR_E_CAST) { x = x->a[0]; }
        if (x->kind == IR_E_FREE && x->val->is_param && x->val->name) { return x->val->name; }
    }
    return "_";
}

static void comp_type(Comp *c) {
    char d0[32], d1[32];
    const IrValue *v = c->v;
    if (v->rank == 0) { snprintf(c->type, sizeof c->type, "%s", ir_scalar_name(v->elem)); }
    else if (v->rank == 1) { snprintf(c->type, sizeof c->type, "%s[%s]", ir_scalar_name(v->elem), dim_name(v->dims[0], d0, sizeof d0)); }
    else {
        snprintf(c->type, sizeof c->type, "%s[%s][%s]", ir_scalar_name(v->elem), dim_name(v->dims[0], d0, sizeof d0),
                 dim_name(v->dims[1], d1, sizeof d1));
    }
}

static void set_cname(Comp *c, const char *base, const char *path) {
    snprintf(c->cname, sizeof c->cname, "%s%s", base, path);
    for (char *p = c->cname; *p; p++) {
        if (*p == '.') { *p = '_'; }
    }
}

/* The components of an entry's parameters and result. */
static Comps entry_comps(IrEntry *e) {
    Comps cs = { 0, 0, NULL, NULL };
    Leaf *leaves = calloc(MAX_LEAVES, sizeof *leaves);
    cs.in = calloc((size_t)e->nparams + 1, sizeof *cs.in);
    cs.out = calloc((size_t)e->nresults + 1, sizeof *cs.out);
    if (!leaves || !cs.in || !cs.out) { IR_UNREACHABLE("out of memory"); }
    for (int g = 0; g < e->ngroups_in; g++) {
        IrGroup *gr = &e->groups_in[g];
        const char *t = e->param_types ? e->param_types[g] : "";
        int n = parse_type(&t, "", leaves, 0);
        for (int k = 0; k < gr->count; k++) {
            Comp *c = &cs.in[cs.nin++];
            char fallback[16];
            fallback[0] = '\0';
            if (gr->count > 1) { snprintf(fallback, sizeof fallback, ".%d", k); }
            const char *path = n == gr->count ? leaves[k].path : fallback;
            c->v = e->params[gr->first + k];
            c->group = g;
            snprintf(c->label, sizeof c->label, "%s%s", gr->name, path);
            set_cname(c, gr->name, path);
            if (is_c_keyword(c->cname) || strncmp(c->cname, "out", 3) == 0) { strcat(c->cname, "_"); }
            comp_type(c);
        }
    }
    const char *t = e->result_type ? e->result_type : "";
    int n = parse_type(&t, "", leaves, 0);
    for (int k = 0; k < e->nresults; k++) {
        Comp *c = &cs.out[cs.nout++];
        char fallback[16];
        fallback[0] = '\0';
        if (e->nresults > 1) { snprintf(fallback, sizeof fallback, ".%d", k); }
        const char *path = n == e->nresults ? leaves[k].path : fallback;
        c->v = e->results[k];
        c->group = -1;
        snprintf(c->label, sizeof c->label, "result%s", path);
        set_cname(c, "out", path);
        comp_type(c);
    }
    free(leaves);
    return cs;
}

static void comps_free(Comps *cs) {
    free(cs->in);
    free(cs->out);
}

/* ---- sharded entries (NAME_new_comm, docs/sharding.md) ----
 * o->sharded is the program lowered a second time and rewritten by ir_shard;
 * its entries are the plain module's, in the same order. be_emit_lib_source
 * (first) clears `sharded` of the entries the GPU cannot combine yet; the
 * header and manifest, written after it, read the marks. */

/* Entry i's sharded twin, or NULL when it runs plain on a NAME_new_comm library. */
static IrEntry *shard_twin(const BeLibOptions *o, int i) {
    IrEntry *e = o->sharded ? o->sharded->entries[i] : NULL;
    return e && e->sharded ? e : NULL;
}

/* Why entry i is not sharded (NULL when it is). ir_shard gives a refused
 * entry no sharded sizes; an accepted one that the GPU cannot combine yet
 * has them. */
static const char *not_sharded(const BeLibOptions *o, int i) {
    if (shard_twin(o, i)) { return NULL; }
    IrEntry *e = o->sharded ? o->sharded->entries[i] : NULL;
    if (!e) { return "no sharded form was built"; }
    if (e->nshards > 0) {
        const char *why = be_cuda_shard_unsupported(e);
        return ir_fmt(o->sharded->arena, "not on the GPU yet: %s", why ? why : "no GPU combine");
    }
    return "it reads or writes across shards; gpuc --emit=c-shard names the construct";
}

/* Is component c of entry i (of the plain module) split over the ranks:
 * an array whose first size is sharded in the twin t? */
static bool comp_split(IrEntry *e, IrEntry *t, const Comp *c) {
    if (!t || !c->v->rank) { return false; }
    const IrValue *tv = NULL;
    for (int p = 0; p < e->nparams && !tv; p++) { if (e->params[p] == c->v && c->group >= 0) { tv = t->params[p]; } }
    for (int r = 0; r < e->nresults && !tv; r++) { if (e->results[r] == c->v && c->group < 0) { tv = t->results[r]; } }
    for (int z = 0; tv && z < t->nshards; z++) {
        if (t->shards[z].local == tv->dims[0]) { return true; }
    }
    return false;
}

/* ---- the public header ---- */

/* The array type of a component: NAME_f32_1d. */
static const char *arr_type(BeBuf *tmp, const char *lib, const IrValue *v) {
    tmp->n = 0;
    be_printf(tmp, "%s_%s_%dd", lib, ir_scalar_name(v->elem), v->rank);
    return tmp->p;
}

/* Which (kind, rank) array types the entries use: used[kind][rank]. */
static void used_arrays(IrModule *m, bool used[16][3]) {
    memset(used, 0, sizeof(bool) * 16 * 3);
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        for (int j = 0; j < e->nparams; j++) { used[e->params[j]->elem][e->params[j]->rank] = true; }
        for (int j = 0; j < e->nresults; j++) { used[e->results[j]->elem][e->results[j]->rank] = true; }
    }
}

/* NAME_ENTRY(lib, inputs..., outputs...) */
static void entry_decl(BeBuf *b, const char *lib, IrEntry *e, Comps *cs) {
    BeBuf t = { 0 };
    be_printf(b, "GpucStatus %s_%s(%s_lib *lib", lib, e->name, lib);
    for (int i = 0; i < cs->nin; i++) {
        IrValue *v = cs->in[i].v;
        if (v->rank) { be_printf(b, ", const %s *%s", arr_type(&t, lib, v), cs->in[i].cname); }
        else { be_printf(b, ", %s %s", ir_scalar_ctype(v->elem), cs->in[i].cname); }
    }
    for (int i = 0; i < cs->nout; i++) {
        IrValue *v = cs->out[i].v;
        if (v->rank) { be_printf(b, ", %s **%s", arr_type(&t, lib, v), cs->out[i].cname); }
        else { be_printf(b, ", %s *%s", ir_scalar_ctype(v->elem), cs->out[i].cname); }
    }
    be_printf(b, ")");
    be_buf_free(&t);
}

static void template_comment(BeBuf *b, IrEntry *e) {
    if (!e->ntargs) { return; }
    be_printf(b, " *   template parameters:");
    for (int t = 0; t < e->ntargs; t++) {
        IrTemplateArg *a = &e->targs[t];
        if (a->is_type) { be_printf(b, "%s %s = %s", t ? "," : "", a->name, ir_scalar_name(a->type)); }
        else { be_printf(b, "%s %s = %lld", t ? "," : "", a->name, (long long)a->value); }
    }
    be_printf(b, "\n");
}

/* The generic calling convention: one uniform thunk per entry, for callers
 * that learn the entries at run time (the Python package, gpuc.load). The
 * value and table types are shared by every library's header (a guard). */
static void table_header(BeBuf *b, const char *L) {
    be_printf(b,
        "/* ---- The generic entry table: every entry through one signature ----\n"
        " * For callers that learn the entries at run time (gpuc's Python package).\n"
        " * A value is one component (struct and tuple values flattened as above,\n"
        " * the leaves depth first, as runner/gpuc_program.h describes): a scalar in\n"
        " * .scalar, or a row-major device array at .data with .shape. Arguments: kind,\n"
        " * rank, shape and data (or scalar) set. Results: kind and rank set; .data 0\n"
        " * asks the library to allocate (free it with %s_free_device; .shape gets\n"
        " * the size, also for sizes known only after the call), else .data is the\n"
        " * caller's device memory of exactly .shape that the result is written to.\n"
        " * Scalar results arrive in .scalar (the call waits for its kernels); a\n"
        " * scalar result with .data set is instead written to that device address\n"
        " * (one element), on the stream without a wait where every result is given.\n"
        " * call() runs on cu_stream (a CUstream of the library's context, NULL the\n"
        " * default stream): it makes it the context's stream, after waiting for the\n"
        " * previous stream when it differs (device blocks are reused across calls).\n"
        " * Calls through the table are serialized per library. */\n"
        "#ifndef GPUC_LIB_VALUE_DEFINED\n"
        "#define GPUC_LIB_VALUE_DEFINED\n"
        "/* grep \"ORDER KIND\": the numbering of runner/gpuc_program.h's GpucKind */\n"
        "enum { GPUC_LIB_BOOL = 0, GPUC_LIB_I32, GPUC_LIB_I64, GPUC_LIB_U32, GPUC_LIB_U64, GPUC_LIB_F32, GPUC_LIB_F64 };\n"
        "typedef struct GpucLibValue {\n"
        "  int kind;           /* GPUC_LIB_BOOL ... GPUC_LIB_F64 */\n"
        "  int rank;           /* 0 (a scalar), 1 or 2 */\n"
        "  int64_t shape[2];   /* rank 1: shape[0] elements; rank 2: rows, columns; unused entries 0 */\n"
        "  GpucDevPtr data;    /* arrays: the device address (see above for results) */\n"
        "  union { bool b; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; float f32; double f64; } scalar;\n"
        "} GpucLibValue;\n"
        "typedef struct GpucLibEntryInfo {\n"
        "  const char *name;                 /* the entry, \"saxpy\" */\n"
        "  int num_params;\n"
        "  const char *const *param_names;   /* gdsl parameter names */\n"
        "  const char *const *param_types;   /* gdsl type strings, \"f32[n]\" (runner/gpuc_program.h) */\n"
        "  const char *result_type;          /* \"f32[n]\", \"(i32[n], i64)\" */\n"
        "  int num_args, num_results;        /* components of the parameters and of the result */\n"
        "  /* lib is the library's NAME_lib *; GPUC_SUCCESS or a status with NAME_last_error() */\n"
        "  GpucStatus (*call)(void *lib, void *cu_stream, const GpucLibValue *args, GpucLibValue *results);\n"
        "} GpucLibEntryInfo;\n"
        "#endif\n"
        "/* The entries in manifest order; *count gets how many. */\n"
        "const GpucLibEntryInfo *%s_entry_table(int *count);\n"
        "/* Free a device block a table call allocated for a result (0 is ok). */\n"
        "GpucStatus %s_free_device(%s_lib *lib, GpucDevPtr data);\n"
        "/* Per entry of the table, in its order: how it runs on a %s_new_comm library. */\n"
        "#ifndef GPUC_LIB_SHARD_DEFINED\n"
        "#define GPUC_LIB_SHARD_DEFINED\n"
        "typedef struct GpucLibShardInfo {\n"
        "  const char *name;                 /* the entry */\n"
        "  int sharded;                      /* 1: on this rank's shards; 0: plain on each rank */\n"
        "  const char *why_not;              /* when not sharded, why; else \"\" */\n"
        "  const int *arg_split;             /* per argument component: 1 this rank's rows, 0 the whole value */\n"
        "  const int *result_split;          /* per result component: 1 this rank's rows, 0 the same on every rank */\n"
        "} GpucLibShardInfo;\n"
        "#endif\n"
        "const GpucLibShardInfo *%s_shard_table(int *count);\n\n",
        L, L, L, L, L, L);
}

/* What an entry does on a NAME_new_comm library. */
static void shard_comment(BeBuf *b, const BeLibOptions *o, int i, IrEntry *e, Comps *cs) {
    const char *why = not_sharded(o, i);
    if (why) {
        be_printf(b, " *   not sharded (%s): on a %s_new_comm library it runs plain on each rank\n", why, o->name);
        return;
    }
    IrEntry *t = shard_twin(o, i);
    be_printf(b, " *   sharded (%s_new_comm): split by rows over the ranks:", o->name);
    int n = 0;
    for (int c = 0; c < cs->nin; c++) {
        if (comp_split(e, t, &cs->in[c])) { be_printf(b, "%s %s", n++ ? "," : "", cs->in[c].cname); }
    }
    for (int c = 0; c < cs->nout; c++) {
        if (comp_split(e, t, &cs->out[c])) { be_printf(b, "%s %s (this rank's shard)", n++ ? "," : "", cs->out[c].cname); }
    }
    be_printf(b, "%s\n", n ? "" : " none");
}

int be_emit_lib_header(FILE *out, IrModule *m, const BeLibOptions *o) {
    BeBuf b = { 0 }, t = { 0 };
    const char *L = o->name;
    be_printf(&b,
        "/* %s.h: generated by gpuc %s from %s (gpuc --emit=lib); see docs/library.md.\n"
        " *\n"
        " * Use: create a gpuc context (gpuc.h; or pass NULL to %s_new for one of its\n"
        " * own on device 0), load the library's kernels into it once with %s_new,\n"
        " * make device arrays from host data (or wrap device pointers you own),\n"
        " * call entries, read results back, free arrays, then %s_free before\n"
        " * gpuc_context_free. Link lib%s.a with the static gpuc runtime\n"
        " * (pkg-config --libs --static gpuc), or lib%s.so with libgpuc_runtime.so.\n"
        " *\n"
        " * Every function returns GPUC_SUCCESS (0) or a GpucStatus; %s_last_error()\n"
        " * has the calling thread's last message. Nothing prints or exits.\n"
        " * Entries and uploads are asynchronous on the context's stream (the caller's\n"
        " * CUstream with GpucConfig.cu_stream): results may be used by later calls at\n"
        " * once; %s_*_read and %s_sync wait. Entries with a scalar result, or that\n"
        " * index arrays (the bounds check), wait for their kernels. An upload from\n"
        " * pinned host memory must stay untouched until the stream is synchronized.\n"
        " * Threads: every function may be called from any thread; the host part of\n"
        " * entry calls is serialized by one lock per lib handle (kernels still overlap\n"
        " * with the host); handles run concurrently. Arrays belong to the lib they\n"
        " * were made with.\n"
        " * Struct and tuple values are passed as their components (struct of\n"
        " * arrays), named like the program runner's with '_' for '.'. */\n",
        L, o->version ? o->version : "", o->source ? o->source : m->file, L, L, L, L, L, L, L, L);
    char guard[160];
    snprintf(guard, sizeof guard, "GPUC_LIB_%s_H", L);
    be_printf(&b, "#ifndef %s\n#define %s\n\n#include <stdbool.h>\n#include <stdint.h>\n\n#include \"gpuc.h\"\n\n", guard, guard);
    be_printf(&b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    be_printf(&b,
        "/* The library loaded in one context: its kernels (the embedded image that\n"
        " * fits the device: %s) and their functions. */\n"
        "typedef struct %s_lib %s_lib;\n"
        "/* ctx NULL: a context of the lib's own on device 0, freed by %s_free.\n"
        " * No GPU: the runtime's status and message (e.g. GPUC_ERROR_NO_DRIVER). */\n"
        "GpucStatus %s_new(GpucContext *ctx, %s_lib **lib);\n"
        "/* A library bound to a communicator the caller made (MPI, torch.distributed,\n"
        " * ncclCommInitRank; the caller keeps it and destroys it after %s_free): entries\n"
        " * marked `sharded` below then run on this rank's shards, combined through NCCL,\n"
        " * called on every rank alike; the others run plain on each rank. ctx: a context\n"
        " * on the communicator's device (NULL: device 0). Several ranks in one process:\n"
        " * one handle (and context) per rank, each called from its own thread. No libnccl:\n"
        " * GPUC_ERROR_NO_NCCL and what was tried (docs/sharding.md). */\n"
        "GpucStatus %s_new_comm(GpucContext *ctx, void *nccl_comm /* ncclComm_t */, %s_lib **lib);\n"
        "GpucStatus %s_free(%s_lib *lib);   /* NULL is ok; before gpuc_context_free */\n"
        "GpucContext *%s_context(%s_lib *lib);\n"
        "GpucStatus %s_sync(%s_lib *lib);   /* wait for everything queued on the stream */\n"
        "const char *%s_last_error(void);   /* the calling thread's last message, \"\" when none */\n\n",
        o->archs && *o->archs ? o->archs : "none: built without NVRTC", L, L, L, L, L, L, L, L, L, L, L, L, L, L, L);
    bool used[16][3];
    used_arrays(m, used);
    be_printf(&b, "/* Device arrays, row-major. _new copies host data (asynchronously);\n"
                  " * _from_device wraps a device pointer without copying (the caller keeps\n"
                  " * ownership; _free frees only the wrapper); _read copies to host and\n"
                  " * waits; _shape gives {rows, columns} ({n, 1} for 1-D); _device the pointer.\n"
                  " * Results of entries are new arrays that the caller frees. */\n");
    for (int k = 0; k < 16; k++) {
        for (int r = 1; r <= 2; r++) {
            if (!used[k][r]) { continue; }
            IrScalar s = (IrScalar)k;
            t.n = 0;
            be_printf(&t, "%s_%s_%dd", L, ir_scalar_name(s), r);
            const char *A = t.p, *T = ir_scalar_ctype(s);
            const char *dims = r == 1 ? "int64_t n" : "int64_t rows, int64_t cols";
            be_printf(&b, "typedef struct %s %s;\n", A, A);
            be_printf(&b, "GpucStatus %s_new(%s_lib *lib, const %s *data, %s, %s **arr);\n", A, L, T, dims, A);
            be_printf(&b, "GpucStatus %s_from_device(%s_lib *lib, GpucDevPtr data, %s, %s **arr);\n", A, L, dims, A);
            be_printf(&b, "GpucStatus %s_read(%s_lib *lib, const %s *arr, %s *data);\n", A, L, A, T);
            be_printf(&b, "const int64_t *%s_shape(const %s *arr);\n", A, A);
            be_printf(&b, "GpucDevPtr %s_device(const %s *arr);\n", A, A);
            be_printf(&b, "GpucStatus %s_free(%s_lib *lib, %s *arr);\n\n", A, L, A);
        }
    }
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        Comps cs = entry_comps(e);
        be_printf(&b, "/* %s:%d: entry %s(", m->file, e->line, e->name);
        for (int g = 0; g < e->ngroups_in; g++) {
            be_printf(&b, "%s%s: %s", g ? ", " : "", e->groups_in[g].name, e->param_types ? e->param_types[g] : "?");
        }
        be_printf(&b, ") -> %s\n", e->result_type ? e->result_type : "?");
        template_comment(&b, e);
        for (int c = 0; c < cs.nin; c++) { be_printf(&b, " *   in  %-12s %s\n", cs.in[c].cname, cs.in[c].type); }
        for (int c = 0; c < cs.nout; c++) {
            be_printf(&b, " *   out %-12s %s%s\n", cs.out[c].cname, cs.out[c].type,
                      cs.out[c].v->rank ? " (a new array)" : " (waits for the kernels)");
        }
        shard_comment(&b, o, i, e, &cs);
        be_printf(&b, " */\n");
        for (int a = 0; a < e->ntargs; a++) {
            IrTemplateArg *ta = &e->targs[a];
            if (ta->is_type) { be_printf(&b, "#define %s_%s_%s \"%s\"\n", L, e->name, ta->name, ir_scalar_name(ta->type)); }
            else { be_printf(&b, "#define %s_%s_%s %lld\n", L, e->name, ta->name, (long long)ta->value); }
        }
        entry_decl(&b, L, e, &cs);
        be_printf(&b, ";\n\n");
        comps_free(&cs);
    }
    table_header(&b, L);
    be_printf(&b, "#ifdef __cplusplus\n}\n#endif\n#endif /* %s */\n", guard);
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_buf_free(&t);
    return 0;
}

/* ---- the implementation ---- */

static void lib_support(BeBuf *b, const char *L) {
    be_printf(b,
        "/* ---- the library: handle, errors, arrays ---- */\n"
        "#ifdef GPUC_IMAGES\n"
        "#include GPUC_IMAGES\n"
        "#define GPUC_NUM_IMAGES ((int)(sizeof gpuc_images / sizeof gpuc_images[0]))\n"
        "#define GPUC_IMAGE_TABLE gpuc_images\n"
        "#else\n"
        "#define GPUC_NUM_IMAGES 0\n"
        "#define GPUC_IMAGE_TABLE NULL\n"
        "#endif\n"
        "#define GPUC_LIB_API __attribute__((visibility(\"default\")))\n"
        "struct %s_lib {\n"
        "    GpucContext *ctx; int own_ctx; GpucModule *module; GpucKernels kernels;\n"
        "    GpucComm *comm;   /* NAME_new_comm: the caller's ncclComm_t wrapped (gpuc_comm_nccl.c); NULL: plain */\n"
        "    pthread_mutex_t lock;  /* the host part of this handle's entry calls (its kernel cache) */\n"
        "};\n"
        "typedef struct GpucLibArray { int64_t shape[2]; int rank; size_t elem; GpucDevPtr data; int owned; } GpucLibArray;\n"
        "/* one lock per handle (lib->lock): handles on other contexts, e.g. one rank\n"
        " * of a communicator each, run their entries concurrently; the out-of-bounds\n"
        " * record and the messages are per thread */\n"
        "static _Thread_local char gpuc_lib_msg[2048];\n"
        "GPUC_LIB_API const char *%s_last_error(void) { return gpuc_lib_msg; }\n"
        "static GpucStatus gpuc_lib_fail(GpucStatus st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));\n"
        "static GpucStatus gpuc_lib_fail(GpucStatus st, const char *fmt, ...) {\n"
        "    va_list ap;\n"
        "    va_start(ap, fmt);\n"
        "    vsnprintf(gpuc_lib_msg, sizeof gpuc_lib_msg, fmt, ap);\n"
        "    va_end(ap);\n"
        "    return st;\n"
        "}\n"
        "/* the status of a failed launcher: an index out of bounds or a run-time\n"
        " * size error, or the runtime's error */\n"
        "static GpucStatus gpuc_lib_status(int rc, const char *fn) {\n"
        "    if (gpuc_oob_hit) {\n"
        "        char text[400];\n"
        "        gpuc_fail_text(text, sizeof text);\n"
        "        gpuc_oob_hit = 0;\n"
        "        return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: %%s\", fn, text);\n"
        "    }\n"
        "    const char *msg = gpuc_last_error();\n"
        "    if (rc < 0) { rc = GPUC_ERROR_INVALID_VALUE; }\n"
        "    return gpuc_lib_fail((GpucStatus)rc, \"%%s: %%s\", fn, msg && *msg ? msg : gpuc_status_string((GpucStatus)rc));\n"
        "}\n"
        "GPUC_LIB_API GpucStatus %s_new(GpucContext *ctx, %s_lib **out) {\n"
        "    if (!out) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s_new: lib is NULL\"); }\n"
        "    *out = NULL;\n"
        "    %s_lib *lib = (%s_lib *)calloc(1, sizeof *lib);\n"
        "    if (!lib) { return gpuc_lib_fail(GPUC_ERROR_OUT_OF_MEMORY, \"%s_new: out of host memory\"); }\n"
        "    GpucStatus st = GPUC_SUCCESS;\n"
        "    if (!ctx) {\n"
        "        if ((st = gpuc_context_new(NULL, &ctx)) != GPUC_SUCCESS) {\n"
        "            free(lib);\n"
        "            return gpuc_lib_fail(st, \"%s_new: %%s\", gpuc_last_error());\n"
        "        }\n"
        "        lib->own_ctx = 1;\n"
        "    }\n"
        "    lib->ctx = ctx;\n"
        "    if (GPUC_NUM_IMAGES == 0) {\n"
        "        st = gpuc_lib_fail(GPUC_ERROR_NOT_FOUND, \"%s_new: the library has no GPU kernels: gpuc --emit=lib found no NVRTC when it was built; rebuild it where NVRTC is\");\n"
        "    } else if ((st = gpuc_module_load_images(ctx, GPUC_IMAGE_TABLE, GPUC_NUM_IMAGES, &lib->module)) != GPUC_SUCCESS) {\n"
        "        st = gpuc_lib_fail(st, \"%s_new: %%s\", gpuc_last_error());\n"
        "    }\n"
        "    if (st != GPUC_SUCCESS) {\n"
        "        if (lib->own_ctx) { gpuc_context_free(ctx); }\n"
        "        free(lib);\n"
        "        return st;\n"
        "    }\n"
        "    pthread_mutex_init(&lib->lock, NULL);\n"
        "    *out = lib;\n"
        "    return GPUC_SUCCESS;\n"
        "}\n"
        "/* NCCL first (a missing libnccl is this call's error, before any GPU work) */\n"
        "GPUC_LIB_API GpucStatus %s_new_comm(GpucContext *ctx, void *nccl_comm, %s_lib **out) {\n"
        "    if (!out) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s_new_comm: lib is NULL\"); }\n"
        "    *out = NULL;\n"
        "    if (!nccl_comm) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s_new_comm: the ncclComm_t is NULL\"); }\n"
        "    GpucComm *comm = NULL;\n"
        "    GpucStatus st = (GpucStatus)gpuc_comm_from_nccl(nccl_comm, &comm);\n"
        "    if (st != GPUC_SUCCESS) { return gpuc_lib_fail(st, \"%s_new_comm: %%s\", gpuc_last_error()); }\n"
        "    if ((st = %s_new(ctx, out)) != GPUC_SUCCESS) {\n"
        "        gpuc_comm_nccl_free(comm);\n"
        "        return st;\n"
        "    }\n"
        "    (*out)->comm = comm;\n"
        "    return GPUC_SUCCESS;\n"
        "}\n"
        "GPUC_LIB_API GpucStatus %s_free(%s_lib *lib) {\n"
        "    if (!lib) { return GPUC_SUCCESS; }\n"
        "    GpucStatus st = gpuc_module_free(lib->module);\n"
        "    gpuc_comm_nccl_free(lib->comm);\n"
        "    if (lib->own_ctx) { GpucStatus s2 = gpuc_context_free(lib->ctx); if (st == GPUC_SUCCESS) { st = s2; } }\n"
        "    pthread_mutex_destroy(&lib->lock);\n"
        "    free(lib);\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%s_free: %%s\", gpuc_last_error());\n"
        "}\n"
        "GPUC_LIB_API GpucContext *%s_context(%s_lib *lib) { return lib ? lib->ctx : NULL; }\n"
        "GPUC_LIB_API GpucStatus %s_sync(%s_lib *lib) {\n"
        "    if (!lib) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s_sync: lib is NULL\"); }\n"
        "    GpucStatus st = gpuc_stream_synchronize(lib->ctx, NULL);\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%s_sync: %%s\", gpuc_last_error());\n"
        "}\n"
        "static GpucStatus gpuc_lib_array(%s_lib *lib, const char *fn, const void *host, GpucDevPtr dev, int wrap, size_t elem,\n"
        "                                 int rank, int64_t n0, int64_t n1, void **out) {\n"
        "    if (!out) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: arr is NULL\", fn); }\n"
        "    *out = NULL;\n"
        "    if (!lib) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: lib is NULL\", fn); }\n"
        "    if (n0 < 0 || n1 < 0) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: negative size (%%lld, %%lld)\", fn, (long long)n0, (long long)n1); }\n"
        "    if (n1 && (uint64_t)n0 > (uint64_t)INT64_MAX / (uint64_t)n1 / elem) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: size (%%lld, %%lld) too large\", fn, (long long)n0, (long long)n1); }\n"
        "    size_t bytes = (size_t)n0 * (size_t)n1 * elem;\n"
        "    if (bytes && !wrap && !host) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: data is NULL\", fn); }\n"
        "    GpucLibArray *a = (GpucLibArray *)calloc(1, sizeof *a);\n"
        "    if (!a) { return gpuc_lib_fail(GPUC_ERROR_OUT_OF_MEMORY, \"%%s: out of host memory\", fn); }\n"
        "    a->shape[0] = n0; a->shape[1] = n1; a->rank = rank; a->elem = elem;\n"
        "    if (wrap) {\n"
        "        a->data = dev;\n"
        "    } else {\n"
        "        GpucStatus st = gpuc_mem_alloc(lib->ctx, bytes ? bytes : 1, &a->data);\n"
        "        if (st == GPUC_SUCCESS && bytes) { st = gpuc_memcpy_htod_async(lib->ctx, a->data, host, bytes, NULL); }\n"
        "        if (st != GPUC_SUCCESS) {\n"
        "            gpuc_mem_free(lib->ctx, a->data);\n"
        "            free(a);\n"
        "            return gpuc_lib_fail(st, \"%%s: %%s\", fn, gpuc_last_error());\n"
        "        }\n"
        "        a->owned = 1;\n"
        "    }\n"
        "    *out = a;\n"
        "    return GPUC_SUCCESS;\n"
        "}\n"
        "static GpucStatus gpuc_lib_read(%s_lib *lib, const char *fn, const GpucLibArray *a, void *host) {\n"
        "    if (!lib || !a || !host) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: a NULL argument\", fn); }\n"
        "    size_t bytes = (size_t)a->shape[0] * (size_t)a->shape[1] * a->elem;\n"
        "    GpucStatus st = bytes ? gpuc_memcpy_dtoh_async(lib->ctx, host, a->data, bytes, NULL) : GPUC_SUCCESS;\n"
        "    if (st == GPUC_SUCCESS) { st = gpuc_stream_synchronize(lib->ctx, NULL); }\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%%s: %%s\", fn, gpuc_last_error());\n"
        "}\n"
        "static GpucStatus gpuc_lib_free(%s_lib *lib, const char *fn, GpucLibArray *a) {\n"
        "    if (!a) { return GPUC_SUCCESS; }\n"
        "    if (!lib) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: lib is NULL\", fn); }\n"
        "    GpucStatus st = a->owned ? gpuc_mem_free(lib->ctx, a->data) : GPUC_SUCCESS;\n"
        "    free(a);\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%%s: %%s\", fn, gpuc_last_error());\n"
        "}\n"
        "/* a result block of a launcher as a new array (the wrapper was allocated before the call) */\n"
        "static void *gpuc_lib_result(GpucLibArray *a, void *data, const int64_t shape[2], int rank, size_t elem) {\n"
        "    a->data = GPUC_DP(data); a->shape[0] = shape[0]; a->shape[1] = rank == 2 ? shape[1] : 1;\n"
        "    a->rank = rank; a->elem = elem; a->owned = 1;\n"
        "    return a;\n"
        "}\n\n",
        L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L, L);
}

static void array_functions(BeBuf *b, const char *L, IrScalar s, int r) {
    BeBuf t = { 0 };
    be_printf(&t, "%s_%s_%dd", L, ir_scalar_name(s), r);
    const char *A = t.p, *T = ir_scalar_ctype(s);
    const char *dims = r == 1 ? "int64_t n" : "int64_t rows, int64_t cols";
    const char *args = r == 1 ? "n, 1" : "rows, cols";
    be_printf(b, "struct %s { GpucLibArray a; };\n", A);
    be_printf(b, "GPUC_LIB_API GpucStatus %s_new(%s_lib *lib, const %s *data, %s, %s **arr) {\n"
                 "    return gpuc_lib_array(lib, \"%s_new\", data, 0, 0, sizeof(%s), %d, %s, (void **)arr);\n}\n",
              A, L, T, dims, A, A, T, r, args);
    be_printf(b, "GPUC_LIB_API GpucStatus %s_from_device(%s_lib *lib, GpucDevPtr data, %s, %s **arr) {\n"
                 "    return gpuc_lib_array(lib, \"%s_from_device\", NULL, data, 1, sizeof(%s), %d, %s, (void **)arr);\n}\n",
              A, L, dims, A, A, T, r, args);
    be_printf(b, "GPUC_LIB_API GpucStatus %s_read(%s_lib *lib, const %s *arr, %s *data) {\n"
                 "    return gpuc_lib_read(lib, \"%s_read\", arr ? &arr->a : NULL, data);\n}\n", A, L, A, T, A);
    be_printf(b, "GPUC_LIB_API const int64_t *%s_shape(const %s *arr) { return arr ? arr->a.shape : NULL; }\n", A, A);
    be_printf(b, "GPUC_LIB_API GpucDevPtr %s_device(const %s *arr) { return arr ? arr->a.data : 0; }\n", A, A);
    be_printf(b, "GPUC_LIB_API GpucStatus %s_free(%s_lib *lib, %s *arr) {\n"
                 "    return gpuc_lib_free(lib, \"%s_free\", arr ? &arr->a : NULL);\n}\n\n", A, L, A, A);
    be_buf_free(&t);
}

/* The expression for size sv from the first array component that has it. */
static bool size_source(Comps *cs, const IrValue *sv, char *buf, size_t n, const Comp **from) {
    for (int i = 0; i < cs->nin; i++) {
        const IrValue *v = cs->in[i].v;
        for (int d = 0; d < v->rank; d++) {
            if (v->dims[d] == sv) {
                snprintf(buf, n, "%s->a.shape[%d]", cs->in[i].cname, d);
                *from = &cs->in[i];
                return true;
            }
        }
    }
    return false;
}

/* The sizes of an entry from its array arguments (const int64_t per size),
 * then every array argument checked against them; the arguments are the
 * typed wrapper's (its parameter names). */
static void wrapper_sizes(BeBuf *b, const char *fn, IrEntry *e, Comps *csp) {
    Comps cs = *csp;
    for (int i = 0; i < e->nsizes; i++) {
        char src[200];
        const Comp *from = NULL;
        if (size_source(&cs, e->sizes[i], src, sizeof src, &from)) { be_line(b, "const int64_t %s = %s;", be_vname(e->sizes[i]), src); }
        else { be_line(b, "const int64_t %s = 0;", be_vname(e->sizes[i])); }
    }
    for (int i = 0; i < cs.nin; i++) {
        const IrValue *v = cs.in[i].v;
        for (int d = 0; d < v->rank; d++) {
            const IrValue *dv = v->dims[d];
            char want[64], nm[32];
            const Comp *from = NULL;
            char src[200];
            if (dv->has_const) { snprintf(want, sizeof want, "%lldLL", (long long)dv->const_val); }
            else if (size_source(&cs, dv, src, sizeof src, &from) && from != &cs.in[i]) { snprintf(want, sizeof want, "%s", be_vname(dv)); }
            else { continue; }
            be_line(b, "if (%s->a.shape[%d] != %s) {", cs.in[i].cname, d, want);
            if (dv->has_const) {
                be_line(b, "    return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s: argument '%s' (%s) has %%lld %s but the type says %lld\", (long long)%s->a.shape[%d]);",
                        fn, cs.in[i].label, cs.in[i].type, d ? "columns" : v->rank == 2 ? "rows" : "elements", (long long)dv->const_val, cs.in[i].cname, d);
            } else {
                be_line(b, "    return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s: argument '%s' (%s) has %%lld %s but size %s = %%lld from argument '%s'\", (long long)%s->a.shape[%d], (long long)%s);",
                        fn, cs.in[i].label, cs.in[i].type, d ? "columns" : v->rank == 2 ? "rows" : "elements", dim_name(dv, nm, sizeof nm),
                        from->label, cs.in[i].cname, d, be_vname(dv));
            }
            be_line(b, "}");
        }
    }
}

static void entry_wrapper(BeBuf *b, const char *L, IrEntry *e, bool sharded) {
    Comps cs = entry_comps(e);
    BeBuf t = { 0 };
    be_printf(b, "GPUC_LIB_API ");
    entry_decl(b, L, e, &cs);
    be_printf(b, " {\n");
    b->indent = 1;
    char fn[200];
    snprintf(fn, sizeof fn, "%s_%s", L, e->name);
    /* NULL checks */
    be_printf(b, "    if (!lib");
    for (int i = 0; i < cs.nin; i++) { if (cs.in[i].v->rank) { be_printf(b, " || !%s", cs.in[i].cname); } }
    for (int i = 0; i < cs.nout; i++) { be_printf(b, " || !%s", cs.out[i].cname); }
    be_printf(b, ") {\n        return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s: a NULL argument\");\n    }\n", fn);
    for (int i = 0; i < cs.nout; i++) { if (cs.out[i].v->rank) { be_line(b, "*%s = NULL;", cs.out[i].cname); } }
    wrapper_sizes(b, fn, e, &cs);
    /* result wrappers first, so nothing can fail after the launcher */
    for (int i = 0; i < cs.nout; i++) {
        if (!cs.out[i].v->rank) { continue; }
        be_line(b, "GpucLibArray *g_a%d = (GpucLibArray *)calloc(1, sizeof(GpucLibArray));", i);
    }
    be_printf(b, "    if (0");
    for (int i = 0; i < cs.nout; i++) { if (cs.out[i].v->rank) { be_printf(b, " || !g_a%d", i); } }
    be_printf(b, ") {\n");
    for (int i = 0; i < cs.nout; i++) { if (cs.out[i].v->rank) { be_line(b, "    free(g_a%d);", i); } }
    be_line(b, "    return gpuc_lib_fail(GPUC_ERROR_OUT_OF_MEMORY, \"%s: out of host memory\");", fn);
    be_line(b, "}");
    for (int i = 0; i < cs.nout; i++) {
        const IrValue *v = cs.out[i].v;
        if (!v->rank) { continue; }
        be_line(b, "%s *g_r%d = NULL;", ir_scalar_ctype(v->elem), i);
        be_line(b, "int64_t g_r%d_shape[2] = { 0, 1 };", i);
    }
    be_line(b, "pthread_mutex_lock(&lib->lock);");
    be_line(b, "GpucHost g_host, *gpuc_h = &g_host;");
    be_line(b, "gpuc_h_init(gpuc_h, lib->ctx, lib->module, &lib->kernels);");
    /* the launcher's arguments; a sharded entry on a NAME_new_comm library
     * takes the same ones (the sizes are this rank's) after the communicator */
    BeBuf a = { 0 };
    for (int i = 0; i < e->nsizes; i++) { be_printf(&a, ", %s", be_vname(e->sizes[i])); }
    for (int i = 0; i < cs.nin; i++) {
        const IrValue *v = cs.in[i].v;
        if (v->rank) { be_printf(&a, ", (const %s *)(uintptr_t)%s->a.data", ir_scalar_ctype(v->elem), cs.in[i].cname); }
        else { be_printf(&a, ", %s", cs.in[i].cname); }
    }
    for (int i = 0; i < cs.nout; i++) {
        if (cs.out[i].v->rank) { be_printf(&a, ", &g_r%d, g_r%d_shape", i, i); }
        else { be_printf(&a, ", %s", cs.out[i].cname); }
    }
    if (sharded) {
        be_line(b, "int g_rc = lib->comm ? gpuc_dev_shard_%s(gpuc_h, lib->comm%s)", e->name, a.p ? a.p : "");
        be_line(b, "                     : gpuc_dev_%s(gpuc_h%s);", e->name, a.p ? a.p : "");
    } else {
        be_line(b, "int g_rc = gpuc_dev_%s(gpuc_h%s);", e->name, a.p ? a.p : "");
    }
    be_buf_free(&a);
    be_line(b, "if (g_rc == 0) {");
    for (int i = 0; i < cs.nout; i++) { if (cs.out[i].v->rank) { be_line(b, "    gpuc_h_keep(gpuc_h, g_r%d);", i); } }
    be_line(b, "}");
    be_line(b, "gpuc_h_done(gpuc_h);");
    be_line(b, "GpucStatus g_st = g_rc == 0 ? GPUC_SUCCESS : gpuc_lib_status(g_rc, \"%s\");", fn);
    be_line(b, "pthread_mutex_unlock(&lib->lock);");
    be_line(b, "if (g_st != GPUC_SUCCESS) {");
    for (int i = 0; i < cs.nout; i++) { if (cs.out[i].v->rank) { be_line(b, "    free(g_a%d);", i); } }
    be_line(b, "    return g_st;");
    be_line(b, "}");
    for (int i = 0; i < cs.nout; i++) {
        const IrValue *v = cs.out[i].v;
        if (!v->rank) { continue; }
        be_line(b, "*%s = (%s *)gpuc_lib_result(g_a%d, g_r%d, g_r%d_shape, %d, sizeof(%s));", cs.out[i].cname,
                arr_type(&t, L, v), i, i, i, v->rank, ir_scalar_ctype(v->elem));
    }
    be_line(b, "return GPUC_SUCCESS;");
    b->indent = 0;
    be_printf(b, "}\n\n");
    be_buf_free(&t);
    comps_free(&cs);
}

/* ---- the generic entry table (see table_header) ---- */

/* The helpers every thunk uses: argument checks, the call's stream, results
 * handed over or copied into the caller's memory. */
static void table_support(BeBuf *b, const char *L) {
    be_printf(b,
        "/* ---- the generic entry table ---- */\n"
        "/* calls through the table set the context's stream: one at a time */\n"
        "static pthread_mutex_t gpuc_table_lock = PTHREAD_MUTEX_INITIALIZER;\n"
        "static const char *const gpuc_table_kinds[] = { \"bool\", \"i32\", \"i64\", \"u32\", \"u64\", \"f32\", \"f64\" };\n"
        "static const char *gpuc_table_kind(int k) { return k >= 0 && k < 7 ? gpuc_table_kinds[k] : \"?\"; }\n"
        "static GpucStatus gpuc_table_check(const char *fn, const char *what, const GpucLibValue *v, int n, const int *kinds,\n"
        "                                   const int *ranks, const char *const *labels) {\n"
        "    for (int i = 0; i < n; i++) {\n"
        "        if (v[i].kind != kinds[i] || v[i].rank != ranks[i]) {\n"
        "            return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: %%s '%%s' must be %%s of rank %%d, got %%s of rank %%d\", fn, what,\n"
        "                                 labels[i], gpuc_table_kind(kinds[i]), ranks[i], gpuc_table_kind(v[i].kind), v[i].rank);\n"
        "        }\n"
        "        if (v[i].rank && (v[i].shape[0] < 0 || (v[i].rank == 2 && v[i].shape[1] < 0))) {\n"
        "            return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: %%s '%%s' has a negative size\", fn, what, labels[i]);\n"
        "        }\n"
        "    }\n"
        "    return GPUC_SUCCESS;\n"
        "}\n"
        "/* the call's stream as the context's, after the previous one is done */\n"
        "static GpucStatus gpuc_table_stream(%s_lib *lib, const char *fn, void *cu_stream) {\n"
        "    if (gpuc_stream_handle(lib->ctx, NULL) == cu_stream) { return GPUC_SUCCESS; }\n"
        "    GpucStatus st = gpuc_stream_synchronize(lib->ctx, NULL);\n"
        "    if (st != GPUC_SUCCESS) { return gpuc_lib_fail(st, \"%%s: %%s\", fn, gpuc_last_error()); }\n"
        "    gpuc_context_swap_stream(lib->ctx, cu_stream);\n"
        "    return GPUC_SUCCESS;\n"
        "}\n"
        "/* a result array of the typed entry into the caller's value: handed over\n"
        " * (data 0) or copied into the caller's memory */\n"
        "static GpucStatus gpuc_table_result(%s_lib *lib, const char *fn, const char *label, GpucLibValue *r, GpucLibArray *a) {\n"
        "    int64_t rows = a->shape[0], cols = a->rank == 2 ? a->shape[1] : 0;\n"
        "    if (!r->data) {\n"
        "        r->data = a->data;\n"
        "        r->shape[0] = rows;\n"
        "        r->shape[1] = cols;\n"
        "        a->owned = 0;\n"
        "        return GPUC_SUCCESS;\n"
        "    }\n"
        "    if (r->shape[0] != rows || r->shape[1] != cols) {\n"
        "        return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: result '%%s' has shape (%%lld, %%lld) but the given array has (%%lld, %%lld)\",\n"
        "                             fn, label, (long long)rows, (long long)cols, (long long)r->shape[0], (long long)r->shape[1]);\n"
        "    }\n"
        "    size_t bytes = (size_t)rows * (size_t)(cols ? cols : 1) * a->elem;\n"
        "    GpucStatus st = bytes ? gpuc_memcpy_dtod_async(lib->ctx, r->data, a->data, bytes, NULL) : GPUC_SUCCESS;\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%%s: %%s\", fn, gpuc_last_error());\n"
        "}\n"
        "GPUC_LIB_API GpucStatus %s_free_device(%s_lib *lib, GpucDevPtr data) {\n"
        "    if (!data) { return GPUC_SUCCESS; }\n"
        "    if (!lib) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%s_free_device: lib is NULL\"); }\n"
        "    GpucStatus st = gpuc_mem_free(lib->ctx, data);\n"
        "    return st == GPUC_SUCCESS ? st : gpuc_lib_fail(st, \"%s_free_device: %%s\", gpuc_last_error());\n"
        "}\n\n",
        L, L, L, L, L, L);
}

/* The component descriptions of one side of an entry as static arrays. */
static void table_comp_arrays(BeBuf *b, const char *e, const char *side, const Comp *cs, int n) {
    be_printf(b, "static const int gpuc_table_%s_%s_kinds[] = {", e, side);
    for (int i = 0; i < n; i++) { be_printf(b, "%s %d", i ? "," : "", (int)cs[i].v->elem); }
    be_printf(b, "%s };\n", n ? "" : " 0");
    be_printf(b, "static const int gpuc_table_%s_%s_ranks[] = {", e, side);
    for (int i = 0; i < n; i++) { be_printf(b, "%s %d", i ? "," : "", cs[i].v->rank); }
    be_printf(b, "%s };\n", n ? "" : " 0");
    be_printf(b, "static const char *const gpuc_table_%s_%s_labels[] = {", e, side);
    for (int i = 0; i < n; i++) { be_printf(b, "%s ", i ? "," : ""); be_c_string(b, cs[i].label); }
    be_printf(b, "%s };\n", n ? "" : " \"\"");
}

/* Can the table thunk write E's results straight into the caller's device
 * memory (gpuc_dev_E_into)? Sizes the launcher knows. It does when the caller
 * gives every result's memory: arrays, and scalars too (a scalar result whose
 * data is set is written there on the stream, with no wait). */
static bool thunk_into(IrEntry *e, Comps *cs) {
    return cuda_results_known(e) && cs->nout > 0;
}

/* The expected extent of result dimension dv in the into function, or NULL
 * when it cannot be told there (the thunk then takes the copying path). */
static const char *into_extent(char *buf, size_t n, IrEntry *e, Comps *cs, const IrValue *dv) {
    if (dv->has_const) { snprintf(buf, n, "%lldLL", (long long)dv->const_val); return buf; }
    const Comp *from = NULL;
    char src[200];
    for (int i = 0; i < e->nsizes; i++) {
        if (e->sizes[i] == dv && size_source(cs, dv, src, sizeof src, &from)) { return be_vname(dv); }
    }
    return NULL;
}

/* gpuc_into_ENTRY: the entry with its results written into the caller's
 * device arrays (no result block, no copy): the typed wrapper's argument
 * checks, then gpuc_dev_ENTRY_into. *gpuc_used is 0 when a result's shape is
 * not the expected one (the thunk's copying path then reports it). */
static void entry_into(BeBuf *b, const char *L, IrEntry *e, Comps *cs) {
    BeBuf t = { 0 };
    char fn[200], ext[64];
    snprintf(fn, sizeof fn, "%s_%s", L, e->name);
    be_printf(b, "static GpucStatus gpuc_into_%s(%s_lib *lib", e->name, L);
    for (int i = 0; i < cs->nin; i++) {
        IrValue *v = cs->in[i].v;
        if (v->rank) { be_printf(b, ", const %s *%s", arr_type(&t, L, v), cs->in[i].cname); }
        else { be_printf(b, ", %s %s", ir_scalar_ctype(v->elem), cs->in[i].cname); }
    }
    be_printf(b, ", const GpucLibValue *gpuc_results, int *gpuc_used) {\n");
    b->indent = 1;
    be_line(b, "*gpuc_used = 0;");
    wrapper_sizes(b, fn, e, cs);
    for (int i = 0; i < cs->nout; i++) {
        const IrValue *v = cs->out[i].v;
        for (int d = 0; d < v->rank; d++) {
            const char *want = into_extent(ext, sizeof ext, e, cs, v->dims[d]);
            be_line(b, "if (%s || gpuc_results[%d].shape[%d] != %s) { return GPUC_SUCCESS; }", want ? "0" : "1", i, d, want ? want : "0");
        }
    }
    be_line(b, "*gpuc_used = 1;");
    be_line(b, "pthread_mutex_lock(&lib->lock);");
    be_line(b, "GpucHost g_host, *gpuc_h = &g_host;");
    be_line(b, "gpuc_h_init(gpuc_h, lib->ctx, lib->module, &lib->kernels);");
    be_printf(b, "    int g_rc = gpuc_dev_%s_into(gpuc_h", e->name);
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, ", %s", be_vname(e->sizes[i])); }
    for (int i = 0; i < cs->nin; i++) {
        const IrValue *v = cs->in[i].v;
        if (v->rank) { be_printf(b, ", (const %s *)(uintptr_t)%s->a.data", ir_scalar_ctype(v->elem), cs->in[i].cname); }
        else { be_printf(b, ", %s", cs->in[i].cname); }
    }
    for (int i = 0; i < cs->nout; i++) {
        be_printf(b, ", (%s *)(uintptr_t)gpuc_results[%d].data", ir_scalar_ctype(cs->out[i].v->elem), i);
    }
    be_printf(b, ");\n");
    be_line(b, "gpuc_h_done(gpuc_h);");
    be_line(b, "GpucStatus g_st = g_rc == 0 ? GPUC_SUCCESS : gpuc_lib_status(g_rc, \"%s\");", fn);
    be_line(b, "pthread_mutex_unlock(&lib->lock);");
    be_line(b, "return g_st;");
    b->indent = 0;
    be_printf(b, "}\n\n");
    be_buf_free(&t);
}

/* gpuc_table_ENTRY: the entry on GpucLibValues, through the typed wrapper
 * NAME_ENTRY (its size checks, lock and launcher) on arrays that wrap the
 * caller's device pointers. */
static void entry_thunk(BeBuf *b, const char *L, IrEntry *e, bool sharded) {
    Comps cs = entry_comps(e);
    BeBuf t = { 0 };
    const char *E = e->name;
    bool into = thunk_into(e, &cs);
    if (into) { entry_into(b, L, e, &cs); }
    table_comp_arrays(b, E, "in", cs.in, cs.nin);
    table_comp_arrays(b, E, "out", cs.out, cs.nout);
    be_printf(b, "static GpucStatus gpuc_table_%s(void *lib_, void *cu_stream, const GpucLibValue *args, GpucLibValue *results) {\n", E);
    b->indent = 1;
    be_line(b, "%s_lib *lib = (%s_lib *)lib_;", L, L);
    be_line(b, "static const char fn[] = \"%s_%s\";", L, E);
    be_line(b, "if (!lib || (!args && %d) || (!results && %d)) { return gpuc_lib_fail(GPUC_ERROR_INVALID_VALUE, \"%%s: a NULL argument\", fn); }", cs.nin, cs.nout);
    be_line(b, "GpucStatus g_st = gpuc_table_check(fn, \"argument\", args, %d, gpuc_table_%s_in_kinds, gpuc_table_%s_in_ranks, gpuc_table_%s_in_labels);", cs.nin, E, E, E);
    be_line(b, "if (g_st == GPUC_SUCCESS) { g_st = gpuc_table_check(fn, \"result\", results, %d, gpuc_table_%s_out_kinds, gpuc_table_%s_out_ranks, gpuc_table_%s_out_labels); }", cs.nout, E, E, E);
    be_line(b, "if (g_st != GPUC_SUCCESS) { return g_st; }");
    for (int i = 0; i < cs.nin; i++) {
        const IrValue *v = cs.in[i].v;
        if (!v->rank) { continue; }
        be_line(b, "struct %s g_in%d = { { { args[%d].shape[0], %s }, %d, sizeof(%s), args[%d].data, 0 } };", arr_type(&t, L, v), i, i,
                v->rank == 2 ? "0" : "1", v->rank, ir_scalar_ctype(v->elem), i);
        if (v->rank == 2) { be_line(b, "g_in%d.a.shape[1] = args[%d].shape[1];", i, i); }
    }
    for (int i = 0; i < cs.nout; i++) {
        const IrValue *v = cs.out[i].v;
        if (v->rank) { be_line(b, "%s *g_out%d = NULL;", arr_type(&t, L, v), i); }
        else { be_line(b, "%s g_out%d = 0;", ir_scalar_ctype(v->elem), i); }
        be_line(b, "const int g_given%d = results[%d].data != 0;", i, i);
    }
    be_line(b, "int g_used = 0;   /* written into the caller's arrays by gpuc_into_%s */", E);
    if (!into && cuda_results_known(e)) { be_line(b, "(void)gpuc_dev_%s_into;   /* not used by the table: a scalar result */", E); }
    be_line(b, "pthread_mutex_lock(&gpuc_table_lock);");
    be_line(b, "g_st = gpuc_table_stream(lib, fn, cu_stream);");
    if (into) {
        be_printf(b, "    if (g_st == GPUC_SUCCESS%s", sharded ? " && !lib->comm" : "");
        for (int i = 0; i < cs.nout; i++) { be_printf(b, " && g_given%d", i); }
        be_printf(b, ") {\n        g_st = gpuc_into_%s(lib", E);
        for (int i = 0; i < cs.nin; i++) {
            const IrValue *v = cs.in[i].v;
            if (v->rank) { be_printf(b, ", &g_in%d", i); }
            else { be_printf(b, ", args[%d].scalar.%s", i, v->elem == IR_BOOL ? "b" : ir_scalar_name(v->elem)); }
        }
        be_printf(b, ", results, &g_used);\n    }\n");
    }
    be_line(b, "if (g_st == GPUC_SUCCESS && !g_used) {");
    be_printf(b, "        g_st = %s_%s(lib", L, E);
    for (int i = 0; i < cs.nin; i++) {
        const IrValue *v = cs.in[i].v;
        if (v->rank) { be_printf(b, ", &g_in%d", i); }
        else { be_printf(b, ", args[%d].scalar.%s", i, v->elem == IR_BOOL ? "b" : ir_scalar_name(v->elem)); }
    }
    for (int i = 0; i < cs.nout; i++) { be_printf(b, ", &g_out%d", i); }
    be_printf(b, ");\n");
    be_line(b, "}");
    for (int i = 0; i < cs.nout; i++) {
        const IrValue *v = cs.out[i].v;
        if (v->rank) {
            be_line(b, "if (g_st == GPUC_SUCCESS && !g_used) { g_st = gpuc_table_result(lib, fn, gpuc_table_%s_out_labels[%d], &results[%d], &g_out%d->a); }", E, i, i, i);
        } else {
            /* the typed path waited for the scalar; a caller's device scalar gets it copied */
            be_line(b, "if (g_st == GPUC_SUCCESS && !g_used) { results[%d].scalar.%s = g_out%d; }", i, v->elem == IR_BOOL ? "b" : ir_scalar_name(v->elem), i);
            be_line(b, "if (g_st == GPUC_SUCCESS && !g_used && g_given%d) {", i);
            be_line(b, "    g_st = gpuc_memcpy_htod(lib->ctx, results[%d].data, &g_out%d, sizeof g_out%d);", i, i, i);
            be_line(b, "    if (g_st != GPUC_SUCCESS) { g_st = gpuc_lib_fail(g_st, \"%%s: %%s\", fn, gpuc_last_error()); }");
            be_line(b, "}");
        }
    }
    be_line(b, "/* the typed results' wrappers (and their blocks unless handed over); on");
    be_line(b, " * failure the blocks handed over so far too */");
    for (int i = 0; i < cs.nout; i++) {
        const IrValue *v = cs.out[i].v;
        if (!v->rank) { continue; }
        be_line(b, "if (g_st != GPUC_SUCCESS && !g_given%d && results[%d].data) {", i, i);
        be_line(b, "    gpuc_mem_free(lib->ctx, results[%d].data);", i);
        be_line(b, "    results[%d].data = 0;", i);
        be_line(b, "}");
        be_line(b, "if (g_out%d) { gpuc_lib_free(lib, fn, &g_out%d->a); }", i, i);
    }
    be_line(b, "pthread_mutex_unlock(&gpuc_table_lock);");
    be_line(b, "return g_st;");
    b->indent = 0;
    be_printf(b, "}\n\n");
    be_buf_free(&t);
    comps_free(&cs);
}

static void entry_table(BeBuf *b, const char *L, IrModule *m, const BeLibOptions *o) {
    table_support(b, L);
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        entry_thunk(b, L, e, shard_twin(o, i) != NULL);
        be_printf(b, "static const char *const gpuc_table_%s_pnames[] = {", e->name);
        for (int g = 0; g < e->ngroups_in; g++) { be_printf(b, "%s ", g ? "," : ""); be_c_string(b, e->groups_in[g].name); }
        be_printf(b, "%s };\nstatic const char *const gpuc_table_%s_ptypes[] = {", e->ngroups_in ? "" : " NULL", e->name);
        for (int g = 0; g < e->ngroups_in; g++) { be_printf(b, "%s ", g ? "," : ""); be_c_string(b, e->param_types ? e->param_types[g] : "?"); }
        be_printf(b, "%s };\n", e->ngroups_in ? "" : " NULL");
    }
    be_printf(b, "static const GpucLibEntryInfo gpuc_table[] = {\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        Comps cs = entry_comps(e);
        be_printf(b, "    { \"%s\", %d, gpuc_table_%s_pnames, gpuc_table_%s_ptypes, ", e->name, e->ngroups_in, e->name, e->name);
        be_c_string(b, e->result_type ? e->result_type : "?");
        be_printf(b, ", %d, %d, gpuc_table_%s },\n", cs.nin, cs.nout, e->name);
        comps_free(&cs);
    }
    be_printf(b, "    { NULL, 0, NULL, NULL, NULL, 0, 0, NULL },\n};\n");
    be_printf(b, "GPUC_LIB_API const GpucLibEntryInfo *%s_entry_table(int *count) {\n"
                 "    if (count) { *count = %d; }\n"
                 "    return gpuc_table;\n}\n",
              L, m->nentries);
}

/* NAME_shard_table: per entry, whether it runs sharded on a NAME_new_comm
 * library and which components are split (GpucLibShardInfo). */
static void shard_table(BeBuf *b, const char *L, IrModule *m, const BeLibOptions *o) {
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i], *t = shard_twin(o, i);
        Comps cs = entry_comps(e);
        be_printf(b, "static const int gpuc_shard_%s_in[] = {", e->name);
        for (int c = 0; c < cs.nin; c++) { be_printf(b, "%s %d", c ? "," : "", comp_split(e, t, &cs.in[c])); }
        be_printf(b, "%s };\nstatic const int gpuc_shard_%s_out[] = {", cs.nin ? "" : " 0", e->name);
        for (int c = 0; c < cs.nout; c++) { be_printf(b, "%s %d", c ? "," : "", comp_split(e, t, &cs.out[c])); }
        be_printf(b, "%s };\n", cs.nout ? "" : " 0");
        comps_free(&cs);
    }
    be_printf(b, "static const GpucLibShardInfo gpuc_shard_table[] = {\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        be_printf(b, "    { \"%s\", %d, ", e->name, shard_twin(o, i) != NULL);
        be_c_string(b, not_sharded(o, i) ? not_sharded(o, i) : "");
        be_printf(b, ", gpuc_shard_%s_in, gpuc_shard_%s_out },\n", e->name, e->name);
    }
    be_printf(b, "    { NULL, 0, NULL, NULL, NULL },\n};\n");
    be_printf(b, "GPUC_LIB_API const GpucLibShardInfo *%s_shard_table(int *count) {\n"
                 "    if (count) { *count = %d; }\n"
                 "    return gpuc_shard_table;\n}\n",
              L, m->nentries);
}

int be_emit_lib_source(FILE *out, IrModule *m, const BeLibOptions *o) {
    BeBuf b = { 0 };
    const char *L = o->name;
    be_printf(&b, "/* %s.c: generated by gpuc from %s (gpuc --emit=lib): the library behind %s.h.\n"
                  " * Build: cc -std=c11 -fPIC -fvisibility=hidden -DGPUC_IMAGES='\"images.h\"' -c %s.c */\n",
              L, o->source ? o->source : m->file, L, L);
    be_printf(&b, "#define _POSIX_C_SOURCE 200809L\n#include <pthread.h>\n#include <stdarg.h>\n#include \"%s.h\"\n"
                  "#include \"gpuc_comm.h\"\n", L);
    be_prelude(&b, false);
    be_runtime_host_prelude(&b);
    be_cuda_host_entries(&b, m);
    cuda_host_into_entries(&b, m);
    if (o->sharded) {
        IrModule *ms = o->sharded;
        bool *gpu = calloc((size_t)ms->nentries + 1, sizeof *gpu);
        if (!gpu) { IR_UNREACHABLE("out of memory"); }
        be_shard_prelude(&b, false, true);
        be_printf(&b, "/* ---- the sharded launchers (NAME_new_comm) over the runtime ---- */\n"
                      "#define GPUC_H_COMM_STREAM(h) gpuc_stream_handle((h)->ctx, NULL)\n"
                      "#define GPUC_H_COMM_SYNC(h) ((int)gpuc_stream_synchronize((h)->ctx, NULL))\n");
        be_cuda_shard_launchers(&b, ms, gpu);
        for (int i = 0; i < ms->nentries; i++) { ms->entries[i]->sharded = ms->entries[i]->sharded && gpu[i]; }
        free(gpu);
    }
    lib_support(&b, L);
    bool used[16][3];
    used_arrays(m, used);
    for (int k = 0; k < 16; k++) {
        for (int r = 1; r <= 2; r++) {
            if (used[k][r]) { array_functions(&b, L, (IrScalar)k, r); }
        }
    }
    for (int i = 0; i < m->nentries; i++) { entry_wrapper(&b, L, m->entries[i], shard_twin(o, i) != NULL); }
    entry_table(&b, L, m, o);
    shard_table(&b, L, m, o);
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    return 0;
}

/* ---- the manifest ---- */

static void json_str(BeBuf *b, const char *s) {
    be_printf(b, "\"");
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { be_printf(b, "\\%c", ch); }
        else if (ch < 0x20) { be_printf(b, "\\u%04x", ch); }
        else { be_printf(b, "%c", ch); }
    }
    be_printf(b, "\"");
}

static void json_comp(BeBuf *b, const Comp *c, const char *lead) {
    char nm[32];
    be_printf(b, "%s{ \"name\": ", lead);
    json_str(b, c->label);
    be_printf(b, ", \"c_name\": ");
    json_str(b, c->cname);
    be_printf(b, ", \"kind\": \"%s\", \"rank\": %d, \"shape\": [", ir_scalar_name(c->v->elem), c->v->rank);
    for (int d = 0; d < c->v->rank; d++) {
        be_printf(b, "%s", d ? ", " : "");
        json_str(b, dim_name(c->v->dims[d], nm, sizeof nm));
    }
    be_printf(b, "] }");
}

static const char *kernel_kind(IrKernelKind k) {
    static const char *const names[] = { "map", "reduce", "scan", "filter", "scatter", "segred_row", "segred_col", "matmul", "host" };
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

int be_emit_lib_manifest(FILE *out, IrModule *m, const BeLibOptions *o) {
    BeBuf b = { 0 };
    const char *L = o->name;
    be_printf(&b, "{\n  \"format\": \"gpuc-lib-1\",\n  \"name\": ");
    json_str(&b, L);
    be_printf(&b, ",\n  \"gpuc_version\": ");
    json_str(&b, o->version);
    be_printf(&b, ",\n  \"source\": ");
    json_str(&b, o->source ? o->source : m->file);
    be_printf(&b, ",\n  \"header\": \"%s.h\",\n  \"static_library\": \"lib%s.a\",\n  \"shared_library\": \"lib%s.so\",\n", L, L, L);
    be_printf(&b, "  \"entry_table\": \"%s_entry_table\",\n  \"shard_table\": \"%s_shard_table\",\n", L, L);
    be_printf(&b, "  \"images\": [");
    if (o->archs && *o->archs) {
        const char *p = o->archs;
        for (bool first = true; *p; first = false) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            be_printf(&b, "%s\"%.*s\"", first ? "" : ", ", (int)n, p);
            p += n + (e ? 1 : 0);
        }
    }
    be_printf(&b, "],\n  \"entries\": [");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        Comps cs = entry_comps(e);
        be_printf(&b, "%s\n    {\n      \"name\": \"%s\",\n      \"function\": \"%s_%s\",\n      \"line\": %d,\n      \"params\": [",
                  i ? "," : "", e->name, L, e->name, e->line);
        for (int g = 0; g < e->ngroups_in; g++) {
            be_printf(&b, "%s\n        { \"name\": ", g ? "," : "");
            json_str(&b, e->groups_in[g].name);
            be_printf(&b, ", \"type\": ");
            json_str(&b, e->param_types ? e->param_types[g] : "?");
            be_printf(&b, ", \"components\": [");
            bool first = true;
            for (int c = 0; c < cs.nin; c++) {
                if (cs.in[c].group != g) { continue; }
                json_comp(&b, &cs.in[c], first ? "" : ", ");
                first = false;
            }
            be_printf(&b, "] }");
        }
        be_printf(&b, "%s],\n      \"result\": { \"type\": ", e->ngroups_in ? "\n      " : "");
        json_str(&b, e->result_type ? e->result_type : "?");
        be_printf(&b, ", \"components\": [");
        for (int c = 0; c < cs.nout; c++) { json_comp(&b, &cs.out[c], c ? ", " : ""); }
        be_printf(&b, "] },\n      \"sizes\": [");
        for (int s = 0; s < e->nsizes; s++) {
            be_printf(&b, "%s", s ? ", " : "");
            json_str(&b, e->sizes[s]->name ? e->sizes[s]->name : "_");
        }
        be_printf(&b, "],\n      \"template\": [");
        for (int t = 0; t < e->ntargs; t++) {
            IrTemplateArg *a = &e->targs[t];
            be_printf(&b, "%s{ \"name\": ", t ? ", " : "");
            json_str(&b, a->name);
            if (a->is_type) { be_printf(&b, ", \"type\": \"%s\" }", ir_scalar_name(a->type)); }
            else { be_printf(&b, ", \"value\": %lld }", (long long)a->value); }
        }
        IrEntry *t = shard_twin(o, i);
        be_printf(&b, "],\n      \"sharded\": %s", t ? "true" : "false");
        if (t) {
            be_printf(&b, ", \"split_args\": [");
            for (int c = 0; c < cs.nin; c++) { be_printf(&b, "%s%s", c ? ", " : "", comp_split(e, t, &cs.in[c]) ? "true" : "false"); }
            be_printf(&b, "], \"split_results\": [");
            for (int c = 0; c < cs.nout; c++) { be_printf(&b, "%s%s", c ? ", " : "", comp_split(e, t, &cs.out[c]) ? "true" : "false"); }
            be_printf(&b, "]");
        } else {
            be_printf(&b, ", \"not_sharded\": ");
            json_str(&b, not_sharded(o, i));
        }
        be_printf(&b, ",\n      \"kernels\": [");
        bool first = true;
        for (int k = 0; k < e->nkernels; k++) {
            IrKernel *kn = &e->kernels[k];
            if (kn->kind == IR_K_HOST) { continue; }
            be_printf(&b, "%s\n        { \"name\": \"%s\", \"kind\": \"%s\", \"block\": %d, \"items\": %d, \"unroll\": %d, \"tile\": %d }",
                      first ? "" : ",", kn->name, kernel_kind(kn->kind), kn->block, kn->items, kn->unroll, kn->tile);
            first = false;
        }
        be_printf(&b, "%s]\n    }", first ? "" : "\n      ");
        comps_free(&cs);
    }
    be_printf(&b, "\n  ]\n}\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    return 0;
}
