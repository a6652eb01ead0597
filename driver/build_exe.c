/* build_exe.c: `gpuc prog.gdsl -o prog` and `gpuc run`. The checked program
 * goes through the compiler library's --emit=program (both backends' host code,
 * the runner's GpucProgram table and main) into a temporary directory; its
 * kernels (--emit=cuda) are compiled ahead of time with NVRTC into a cubin
 * per --arch (default sm_80,sm_90) plus PTX for the newest, written as C
 * arrays into images.h; then the system C compiler ($CC, default cc)
 * compiles and links it all against libgpuc_runner.a and libgpuc_runtime.a.
 * --arch=none (or no NVRTC on this machine, with a warning) builds the C
 * backend only. Those libraries and their headers
 * are found in the install prefix given by --gpuc-home or $GPUC_HOME
 * (PREFIX/lib, PREFIX/include), else in the build tree this gpuc came from
 * (paths baked in by driver/CMakeLists.txt). `gpuc run` keeps executables in
 * $XDG_CACHE_HOME/gpuc/programs/KEY/, KEY hashing the sources, options and
 * gpuc itself. `gpuc --emit=lib -o DIR/libNAME` (drv_build_lib) builds an
 * ahead-of-time library the same way: the same images, the backend's
 * library C file compiled once with -fPIC into libNAME.a and libNAME.so
 * (linked against libgpuc_runtime.so), with NAME.h, NAME.json and a depfile
 * NAME.d (docs/library.md). */
#define _XOPEN_SOURCE 700 /* mkdtemp, mkstemp, realpath, strdup */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver.h"
#include "gpuc.h"

#ifndef GPUC_VERSION
#define GPUC_VERSION "0.0.0"
#endif
/* The build tree's headers and libraries (driver/CMakeLists.txt). */
#ifndef GPUC_BUILD_INCLUDE_RUNTIME
#define GPUC_BUILD_INCLUDE_RUNTIME ""
#endif
#ifndef GPUC_BUILD_INCLUDE_RUNNER
#define GPUC_BUILD_INCLUDE_RUNNER ""
#endif
#ifndef GPUC_BUILD_LIB_RUNTIME
#define GPUC_BUILD_LIB_RUNTIME ""
#endif
#ifndef GPUC_BUILD_LIB_RUNNER
#define GPUC_BUILD_LIB_RUNNER ""
#endif
#ifndef GPUC_INSTALL_LIBDIR
#define GPUC_INSTALL_LIBDIR "lib"
#endif
/* Extra flags for compiling and linking programs: the sanitizer build's
 * libraries need the sanitizer runtimes. */
#ifndef GPUC_EXE_FLAGS
#define GPUC_EXE_FLAGS ""
#endif

/* Compile co as `emit` through the compiler library (compiler/compile.c)
 * and print its diagnostics. Returns the result, or NULL after errors; an
 * internal error ends gpuc with status 70, as it always has. The debugging
 * options (--dump-after, --explain-fusion) are for --emit only. */
static GpucCompileResult *compile_or_report(const GpucCompileOptions *co, GpucEmit emit)
{
    GpucCompileOptions o = *co;
    o.dump_after = NULL;
    o.explain_fusion = 0;
    GpucCompileResult *r = NULL;
    int status = gpuc_compiler_compile(&o, emit, &r);
    fputs(gpuc_compiler_result_rendered(r), stderr);
    if (status == GPUC_COMPILE_INTERNAL_ERROR) {
        fflush(stdout);
        exit(status);
    }
    if (status != GPUC_COMPILE_OK) {
        gpuc_compiler_result_free(r);
        return NULL;
    }
    return r;
}

/* Write len bytes of text to path; false after reporting why not. */
static bool write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(text, 1, len, f) == len;
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "gpuc: error: cannot write '%s'\n", path);
        return false;
    }
    return true;
}

static char *xstrdup(const char *s)
{
    char *r = strdup(s);
    if (!r) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    return r;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s) {
        fprintf(stderr, "gpuc: error: out of memory\n");
        exit(1);
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *drv_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) {
            break;
        }
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            buf = NULL;
        }
        buf = nb;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len) {
        *len = n;
    }
    return buf;
}

int drv_spawn(char *const argv[], const char *in, const char *out, const char *err, unsigned timeout_s)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        return 127;
    }
    if (pid == 0) {
        const char *paths[3] = { in, out, err };
        for (int fdn = 0; fdn < 3; fdn++) {
            if (!paths[fdn]) {
                continue;
            }
            int fd = fdn == 0 ? open(paths[fdn], O_RDONLY) : open(paths[fdn], O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (fd < 0 || dup2(fd, fdn) < 0) {
                _exit(127);
            }
            close(fd);
        }
        if (timeout_s) {
            alarm(timeout_s); /* survives exec: the default action ends the program */
        }
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return 127;
        }
    }
    if (WIFSIGNALED(st)) {
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}

char *drv_temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = xprintf("%s/gpuc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "gpuc: error: cannot create a temporary directory '%s': %s\n", dir, strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

void drv_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            char *p = xprintf("%s/%s", dir, e->d_name);
            unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

int drv_check_arch(const char *arch)
{
    if (!arch || !*arch) {
        fprintf(stderr, "gpuc: error: --arch needs a list like sm_80,sm_90\n");
        return -1;
    }
    if (strcmp(arch, "none") == 0) {
        return 0;
    }
    const char *p = arch;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        bool ok = n >= 5 && n <= 7 && strncmp(p, "sm_", 3) == 0;
        for (size_t i = 3; ok && i < n; i++) {
            ok = p[i] >= '0' && p[i] <= '9';
        }
        if (!ok) {
            fprintf(stderr, "gpuc: error: --arch: '%.*s' is not an architecture (expected sm_NN, e.g. sm_80,sm_90)\n",
                    (int)n, p);
            return -1;
        }
        if (!end) {
            return 0;
        }
        p = end + 1;
    }
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where the headers and the two libraries are. */
typedef struct Toolchain {
    char *inc_runtime, *inc_runner, *lib_runtime, *lib_runner;
} Toolchain;

static void toolchain_free(Toolchain *t)
{
    free(t->inc_runtime);
    free(t->inc_runner);
    free(t->lib_runtime);
    free(t->lib_runner);
}

static bool find_toolchain(const DrvBuildOptions *bo, Toolchain *t)
{
    const char *home = bo->gpuc_home;
    const char *from = "--gpuc-home";
    if (!home) {
        const char *env = getenv("GPUC_HOME");
        if (env && *env) {
            home = env;
            from = "GPUC_HOME";
        }
    }
    char *installed = NULL;
    if (!home) {
        /* an installed gpuc, PREFIX/bin/gpuc, uses PREFIX when it has the libraries */
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            char *slash = strrchr(self, '/');
            if (slash && slash - self >= 4 && strncmp(slash - 4, "/bin", 4) == 0) {
                slash[-4] = 0;
                char *probe = xprintf("%s/include/gpuc_program.h", self);
                if (is_file(probe)) {
                    installed = xstrdup(self);
                    home = installed;
                    from = "the install prefix";
                }
                free(probe);
            }
        }
    }
    if (home) {
        t->inc_runtime = xprintf("%s/include", home);
        t->inc_runner = xprintf("%s/include", home);
        const char *libdirs[] = { GPUC_INSTALL_LIBDIR, "lib", "lib64" };
        bool found = false; /* the first that has both, else the first */
        for (int i = 0; i < 3 && !found; i++) {
            char *rt = xprintf("%s/%s/libgpuc_runtime.a", home, libdirs[i]);
            char *rn = xprintf("%s/%s/libgpuc_runner.a", home, libdirs[i]);
            found = is_file(rt) && is_file(rn);
            if (found || i == 0) {
                free(t->lib_runtime);
                free(t->lib_runner);
                t->lib_runtime = rt;
                t->lib_runner = rn;
            } else {
                free(rt);
                free(rn);
            }
        }
    } else {
        from = "the build tree";
        t->inc_runtime = xstrdup(GPUC_BUILD_INCLUDE_RUNTIME);
        t->inc_runner = xstrdup(GPUC_BUILD_INCLUDE_RUNNER);
        t->lib_runtime = xstrdup(GPUC_BUILD_LIB_RUNTIME);
        t->lib_runner = xstrdup(GPUC_BUILD_LIB_RUNNER);
    }
    char *h1 = xprintf("%s/gpuc.h", t->inc_runtime);
    char *h2 = xprintf("%s/gpuc_program.h", t->inc_runner);
    const char *missing = !is_file(t->lib_runner) ? t->lib_runner
                          : !is_file(t->lib_runtime) ? t->lib_runtime
                          : !is_file(h1) ? h1
                          : !is_file(h2) ? h2 : NULL;
    if (missing) {
        fprintf(stderr,
                "gpuc: error: cannot build an executable: '%s' not found (libraries and headers from %s%s%s); "
                "set GPUC_HOME or --gpuc-home to the prefix gpuc was installed in (with lib/ and include/)\n",
                missing, from, home ? " = " : "", home ? home : "");
    }
    free(h1);
    free(h2);
    free(installed);
    if (missing) {
        toolchain_free(t);
    }
    return !missing;
}

/* Split a command (like $CC, "ccache cc") at blanks into argv. */
static int split_words(char *s, char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, " \t"); tok && n < max; tok = strtok(NULL, " \t")) {
        out[n++] = tok;
    }
    return n;
}

#define DEFAULT_ARCHS "sm_80,sm_90"

/* Compile the program's kernels for every architecture of the list (plus PTX
 * for the newest, for later devices) and write them to images_path as
 * `static const GpucImage gpuc_images[]`. Returns 0 when written, 1 after an
 * error, 2 when there is nothing to write: --arch=none, or no NVRTC and no
 * --arch given (warned, naming `what`: "the executable has the C backend
 * only"). With written_archs, *written_archs gets the images' names
 * ("sm_80,sm_90,compute_90", malloc'd) when written. Shared by executables
 * and libraries (--emit=lib); `kind` is the text compiled (executables:
 * GPUC_EMIT_CUDA_KERNELS, with the sharded entries' kernels for --ranks). */
static int write_images(const GpucCompileOptions *co, GpucEmit kind, const char *archs, const char *images_path,
                        const char *what, char **written_archs)
{
    bool explicit = archs != NULL;
    if (!archs) {
        archs = DEFAULT_ARCHS;
    }
    if (strcmp(archs, "none") == 0) {
        return 2;
    }
    int major = 0, minor = 0;
    if (gpuc_nvrtc_version(&major, &minor) != GPUC_SUCCESS) {
        if (explicit) {
            fprintf(stderr, "gpuc: error: --arch=%s needs NVRTC to compile the kernels: %s\n", archs, gpuc_last_error());
            return 1;
        }
        fprintf(stderr, "gpuc: warning: no NVRTC (%s): %s\n", gpuc_last_error(), what);
        return 2;
    }
    GpucCompileResult *cuda = compile_or_report(co, kind);
    if (!cuda) {
        return 1;
    }
    const char *source = gpuc_compiler_result_output(cuda, "source", NULL);
    int rc = 0;
    /* the list, then PTX of its newest architecture */
    char *list = xstrdup(archs);
    const char *names[33];
    int n = 0, newest = 0;
    for (char *tok = strtok(list, ","); tok && n < 32; tok = strtok(NULL, ",")) {
        names[n++] = tok;
        if (atoi(tok + 3) > atoi(names[newest] + 3)) {
            newest = n - 1;
        }
    }
    char *ptx = xprintf("compute_%s", names[newest] + 3);
    names[n++] = ptx;
    static const char *const options[] = { "-lineinfo" };
    GpucImageData images[33] = { { NULL, NULL, 0 } };   /* data NULL past a failure */
    for (int i = 0; i < n && rc == 0; i++) {
        void *image = NULL;
        size_t size = 0;
        char *log = NULL;
        if (gpuc_compile_cuda_to_image(source, names[i], options, 1, &image, &size, &log) != GPUC_SUCCESS) {
            fprintf(stderr, "gpuc: internal error: NVRTC could not compile the kernels for %s: %s\n", names[i],
                    gpuc_last_error());
            rc = 1;
        }
        free(log);
        images[i] = (GpucImageData){ names[i], image, size };
    }
    if (rc == 0 && gpuc_compiler_write_images(images_path, images, n) != 0) {
        fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", images_path, strerror(errno));
        rc = 1;
    }
    for (int i = 0; i < n; i++) {
        free((void *)images[i].data);
    }
    if (rc == 0 && written_archs) {
        size_t len = 1;
        for (int i = 0; i < n; i++) {
            len += strlen(names[i]) + 1;
        }
        *written_archs = calloc(len, 1);
        for (int i = 0; *written_archs && i < n; i++) {
            strcat(strcat(*written_archs, i ? "," : ""), names[i]);
        }
    }
    free(ptx);
    free(list);
    gpuc_compiler_result_free(cuda);
    return rc;
}

int drv_build_exe(const GpucCompileOptions *co, const DrvBuildOptions *bo, const char *out_path)
{
    if ((bo->arch && drv_check_arch(bo->arch) != 0) || drv_output_check(out_path, DRV_OUTPUT_EXECUTABLE) != 0) {
        return 1;
    }
    Toolchain tc = { 0 };
    if (!find_toolchain(bo, &tc)) {
        return 1;
    }
    int status = 1;
    char *dir = drv_temp_dir();
    char *gen = NULL, *unit = NULL, *log = NULL, *tmp_out = NULL, *images = NULL;
    DrvOutput out = { 0 };
    if (!dir) {
        goto done;
    }
    gen = xprintf("%s/program.c", dir);
    log = xprintf("%s/cc.log", dir);
    images = xprintf("%s/images.h", dir);
    int img = write_images(co, GPUC_EMIT_CUDA_KERNELS, bo->arch, images, "the executable has the C backend only", NULL);
    if (img == 1) {
        goto done;
    }
    GpucCompileResult *program = compile_or_report(co, GPUC_EMIT_PROGRAM);
    size_t program_len = 0;
    const char *program_text = program ? gpuc_compiler_result_output(program, "source", &program_len) : NULL;
    bool written = program_text && write_text(gen, program_text, program_len);
    gpuc_compiler_result_free(program);
    if (!written) {
        goto done;
    }
    FILE *f;
    unit = gen;
    if (bo->entry) {
        /* The generated main, renamed, behind one that adds `-e ENTRY` when
         * the command line does not choose an entry itself. */
        unit = xprintf("%s/main.c", dir);
        f = fopen(unit, "w");
        if (!f) {
            fprintf(stderr, "gpuc: error: cannot write '%s': %s\n", unit, strerror(errno));
            goto done;
        }
        fprintf(f,
                "#define main gpuc_generated_main\n"
                "#include \"program.c\"\n"
                "#undef main\n"
                "int main(int argc, char **argv) {\n"
                "    for (int i = 1; i < argc; i++) {\n"
                "        if (strcmp(argv[i], \"-e\") == 0 || strncmp(argv[i], \"--entry\", 7) == 0) {\n"
                "            return gpuc_generated_main(argc, argv);\n"
                "        }\n"
                "    }\n"
                "    char **v = malloc(((size_t)argc + 3) * sizeof *v);\n"
                "    if (!v) { return 1; }\n"
                "    v[0] = argv[0]; v[1] = \"-e\"; v[2] = \"%s\";\n"
                "    for (int i = 1; i <= argc; i++) { v[i + 2] = argv[i]; }\n"
                "    int rc = gpuc_generated_main(argc + 2, v);\n"
                "    free(v);\n"
                "    return rc;\n"
                "}\n",
                bo->entry);
        if (fclose(f) != 0) {
            fprintf(stderr, "gpuc: error: cannot write '%s'\n", unit);
            goto done;
        }
    }

    /* link to a temporary (output.c: next to the target, renamed when
     * complete; written into a device or FIFO in place) */
    if (drv_output_open(&out, out_path, DRV_OUTPUT_EXECUTABLE) != 0) {
        goto done;
    }
    tmp_out = out.tmp;

    const char *cc_env = getenv("CC");
    char *cc = xstrdup(cc_env && *cc_env ? cc_env : "cc");
    char *flags = xstrdup(GPUC_EXE_FLAGS);
    char *inc1 = xprintf("-I%s", tc.inc_runtime);
    char *inc2 = xprintf("-I%s", tc.inc_runner);
    char *argv[64];
    int n = split_words(cc, argv, 8);
    if (n == 0) {
        argv[n++] = "cc";
    }
    argv[n++] = "-std=c11";
    argv[n++] = "-O2";
    argv[n++] = "-w"; /* generated code: its warnings are the backend's business, not the user's */
    n += split_words(flags, argv + n, 16);
    argv[n++] = inc1;
    argv[n++] = inc2;
    if (img == 0) {
        argv[n++] = "-DGPUC_IMAGES=\"images.h\"";
    }
    argv[n++] = unit;
    argv[n++] = tc.lib_runner;
    argv[n++] = tc.lib_runtime;
    argv[n++] = "-lm";
    argv[n++] = "-ldl";
    argv[n++] = "-lpthread";
    argv[n++] = "-o";
    argv[n++] = tmp_out;
    argv[n] = NULL;
    int cst = drv_spawn(argv, "/dev/null", log, log, 0);
    if (cst != 0) {
        size_t len = 0;
        char *text = drv_read_file(log, &len);
        fprintf(stderr, "gpuc: internal error: the C compiler '%s' failed (exit status %d) on the generated program:\n",
                argv[0], cst);
        if (text && len) {
            fprintf(stderr, "%s%s", text, text[len - 1] == '\n' ? "" : "\n");
        }
        free(text);
    } else {
        status = 0;
    }
    free(cc);
    free(flags);
    free(inc1);
    free(inc2);

done:
    if (tmp_out && !drv_output_close(&out, status == 0)) {
        status = 1;
    }
    if (dir) {
        drv_remove_dir(dir);
    }
    if (unit != gen) {
        free(unit);
    }
    free(gen);
    free(log);
    free(images);
    free(dir);
    toolchain_free(&tc);
    return status;
}

/* ---- gpuc --emit=lib: an ahead-of-time library ---- */

/* Run a tool with its output in log; on failure print what and the log. */
static int run_tool(char **argv, const char *log, const char *what)
{
    int st = drv_spawn(argv, "/dev/null", log, log, 0);
    if (st != 0) {
        size_t len = 0;
        char *text = drv_read_file(log, &len);
        fprintf(stderr, "gpuc: internal error: %s '%s' failed (exit status %d):\n", what, argv[0], st);
        if (text && len) {
            fprintf(stderr, "%s%s", text, text[len - 1] == '\n' ? "" : "\n");
        }
        free(text);
    }
    return st;
}

/* A path for a depfile: blanks and '#' escaped, '$' doubled. */
static void dep_path(FILE *f, const char *p)
{
    for (; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == '\\') {
            fputc('\\', f);
        } else if (*p == '$') {
            fputc('$', f);
        }
        fputc(*p, f);
    }
}

int drv_build_lib(const GpucCompileOptions *co, const DrvBuildOptions *bo, const char *out_path)
{
    if (!out_path) {
        fprintf(stderr, "gpuc: error: --emit=lib needs -o DIR/libNAME (writes libNAME.a, libNAME.so, NAME.h, NAME.json)\n");
        return 1;
    }
    if (bo->arch && drv_check_arch(bo->arch) != 0) {
        return 1;
    }
    if (strcmp(out_path, "-") == 0) {
        fprintf(stderr, "gpuc: error: -o -: --emit=lib writes files (libNAME.a, libNAME.so, NAME.h, NAME.json, NAME.d), "
                        "not standard output; write -o DIR/libNAME\n");
        return 1;
    }
    /* DIR/libNAME or DIR/NAME (a .a, .so or .h suffix is dropped) */
    const char *slash = strrchr(out_path, '/');
    char *dir = slash ? xprintf("%.*s", (int)(slash - out_path + (slash == out_path)), out_path) : xstrdup(".");
    const char *base = slash ? slash + 1 : out_path;
    if (strncmp(base, "lib", 3) == 0 && base[3]) {
        base += 3;
    }
    char *name = xstrdup(base);
    size_t nl = strlen(name);
    static const char *const suffixes[] = { ".a", ".so", ".h" };
    for (int i = 0; i < 3; i++) {
        size_t sl = strlen(suffixes[i]);
        if (nl > sl && strcmp(name + nl - sl, suffixes[i]) == 0) {
            name[nl - sl] = 0;
            break;
        }
    }
    bool ident = (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_';
    for (const char *p = name; ident && *p; p++) {
        ident = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_';
    }
    Toolchain tc = { 0 };
    int status = 1;
    char *tmp = NULL, *archs = NULL, *libdir = NULL;
    GpucCompileResult *lib_result = NULL;
    if (!ident) {
        fprintf(stderr, "gpuc: error: -o %s: the library's name '%s' must be a C identifier (it prefixes every function)\n",
                out_path, name);
        goto done;
    }
    if (!find_toolchain(bo, &tc)) {
        goto done;
    }
    libdir = xstrdup(tc.lib_runtime);
    *strrchr(libdir, '/') = 0;
    char *so_runtime = xprintf("%s/libgpuc_runtime.so", libdir);
    bool have_so = is_file(so_runtime);
    free(so_runtime);
    if (!have_so) {
        fprintf(stderr, "gpuc: error: cannot build a shared library: '%s/libgpuc_runtime.so' not found\n", libdir);
        goto done;
    }
    /* work in DIR, so the results are renamed into place */
    tmp = xprintf("%s/.%s.gpuc-XXXXXX", dir, name);
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "gpuc: error: cannot write in '%s': %s\n", dir, strerror(errno));
        free(tmp);
        tmp = NULL;
        goto done;
    }
    char *images = xprintf("%s/images.h", tmp);
    int img = write_images(co, GPUC_EMIT_CUDA, bo->arch, images, "the library has no kernels (NAME_new will say so)", &archs);
    free(images);
    if (img == 1) {
        goto done;
    }
    char *src = xprintf("%s/%s.c", tmp, name), *hdr = xprintf("%s/%s.h", tmp, name), *man = xprintf("%s/%s.json", tmp, name);
    GpucCompileOptions lib_options = *co;
    lib_options.lib_name = name;
    lib_options.archs = archs;
    lib_result = compile_or_report(&lib_options, GPUC_EMIT_LIB);
    bool written = lib_result != NULL;
    const char *part_names[] = { "source", "header", "manifest" }, *part_paths[] = { src, hdr, man };
    for (int i = 0; i < 3 && written; i++) {
        size_t len = 0;
        const char *text = gpuc_compiler_result_output(lib_result, part_names[i], &len);
        written = text && write_text(part_paths[i], text, len);
    }
    free(hdr);
    free(man);
    if (!written) {
        free(src);
        goto done;
    }
    /* compile once (position-independent), archive, link the shared library */
    const char *cc_env = getenv("CC");
    const char *ar_env = getenv("AR");
    char *cc = xstrdup(cc_env && *cc_env ? cc_env : "cc");
    char *flags = xstrdup(GPUC_EXE_FLAGS);
    char *inc1 = xprintf("-I%s", tc.inc_runtime), *inc2 = xprintf("-I%s", tmp);
    char *obj = xprintf("%s/%s.o", tmp, name), *log = xprintf("%s/cc.log", tmp);
    char *a_tmp = xprintf("%s/lib%s.a", tmp, name), *so_tmp = xprintf("%s/lib%s.so", tmp, name);
    char *soname = xprintf("-Wl,-soname,lib%s.so", name), *ldir = xprintf("-L%s", libdir), *rpath = xprintf("-Wl,-rpath,%s", libdir);
    char *argv[64];
    int n = split_words(cc, argv, 8);
    if (n == 0) {
        argv[n++] = "cc";
    }
    int ncc = n;
    argv[n++] = "-std=c11";
    argv[n++] = "-O2";
    argv[n++] = "-fPIC";
    argv[n++] = "-fvisibility=hidden";
    argv[n++] = "-w";
    n += split_words(flags, argv + n, 16);
    argv[n++] = inc1;
    argv[n++] = inc2;
    if (img == 0) {
        argv[n++] = "-DGPUC_IMAGES=\"images.h\"";
    }
    argv[n++] = "-c";
    argv[n++] = src;
    argv[n++] = "-o";
    argv[n++] = obj;
    argv[n] = NULL;
    bool ok = run_tool(argv, log, "the C compiler") == 0;
    if (ok) {
        char *ar[] = { (char *)(ar_env && *ar_env ? ar_env : "ar"), "rcs", a_tmp, obj, NULL };
        ok = run_tool(ar, log, "the archiver") == 0;
    }
    if (ok) {
        n = ncc;
        argv[n++] = "-shared";
        char *flags2 = xstrdup(GPUC_EXE_FLAGS);
        n += split_words(flags2, argv + n, 16);
        argv[n++] = soname;
        argv[n++] = "-o";
        argv[n++] = so_tmp;
        argv[n++] = obj;
        argv[n++] = ldir;
        argv[n++] = "-lgpuc_runtime";
        argv[n++] = rpath;
        argv[n++] = "-ldl";
        argv[n++] = "-lpthread";
        argv[n++] = "-lm";
        argv[n] = NULL;
        ok = run_tool(argv, log, "the C compiler (linking the shared library)") == 0;
        free(flags2);
    }
    /* the depfile: every source file, for build systems (CMake's DEPFILE) */
    char *dep_tmp = xprintf("%s/%s.d", tmp, name);
    if (ok) {
        FILE *fd = fopen(dep_tmp, "w");
        char *rdir = realpath(dir, NULL);
        if (fd && rdir) {
            char *target = xprintf("%s/lib%s.a", rdir, name);
            dep_path(fd, target);
            fputc(':', fd);
            for (int i = 0; i < gpuc_compiler_result_file_count(lib_result); i++) {
                const char *path = gpuc_compiler_result_file(lib_result, i);
                char *rp = realpath(path, NULL);
                fputs(" \\\n  ", fd);
                dep_path(fd, rp ? rp : path);
                free(rp);
            }
            fputc('\n', fd);
            free(target);
        }
        ok = fd && rdir && fclose(fd) == 0;
        free(rdir);
        if (!ok) {
            fprintf(stderr, "gpuc: error: cannot write '%s'\n", dep_tmp);
        }
    }
    /* into place: libNAME.a, libNAME.so, NAME.h, NAME.json, NAME.d */
    /* (output.c: each with a new file's mode, renamed over a regular file,
     * written into a device or FIFO; a directory in the way is refused first) */
    static const char *const outs[] = { "lib%s.a", "lib%s.so", "%s.h", "%s.json", "%s.d" };
    static const DrvOutputKind out_kinds[] = { DRV_OUTPUT_BINARY, DRV_OUTPUT_EXECUTABLE, DRV_OUTPUT_BINARY,
                                               DRV_OUTPUT_BINARY, DRV_OUTPUT_BINARY };
    for (int i = 0; ok && i < 5; i++) {
        char *leaf = xprintf(outs[i], name);
        char *to = xprintf("%s/%s", dir, leaf);
        ok = drv_output_check(to, out_kinds[i]) == 0;
        free(leaf);
        free(to);
    }
    for (int i = 0; ok && i < 5; i++) {
        char *leaf = xprintf(outs[i], name);
        char *from = xprintf("%s/%s", tmp, leaf), *to = xprintf("%s/%s", dir, leaf);
        ok = drv_output_install(from, to, out_kinds[i]) == 0;
        free(leaf);
        free(from);
        free(to);
    }
    status = ok ? 0 : 1;
    free(dep_tmp);
    free(src);
    free(cc);
    free(flags);
    free(inc1);
    free(inc2);
    free(obj);
    free(log);
    free(a_tmp);
    free(so_tmp);
    free(soname);
    free(ldir);
    free(rpath);
done:
    if (tmp) {
        drv_remove_dir(tmp);
        free(tmp);
    }
    if (tc.lib_runtime) {
        toolchain_free(&tc);
    }
    gpuc_compiler_result_free(lib_result);
    free(archs);
    free(libdir);
    free(name);
    free(dir);
    return status;
}

/* ---- gpuc run: the cache ---- */

/* FNV-1a, two lanes with different offsets: a 128-bit cache key. */
typedef struct Hash {
    uint64_t a, b;
} Hash;

static void hash_bytes(Hash *h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        h->a = (h->a ^ s[i]) * 0x100000001b3ull;
        h->b = (h->b ^ s[i]) * 0x100000001b3ull;
        h->b ^= h->b >> 29;
    }
    /* a separator, so ("ab", "c") and ("a", "bc") differ */
    h->a = (h->a ^ (uint64_t)n) * 0x100000001b3ull;
    h->b = (h->b ^ (uint64_t)n) * 0x100000001b3ull;
}

static char *cache_root(void)
{
    const char *x = getenv("XDG_CACHE_HOME");
    if (x && *x) {
        return xprintf("%s/gpuc/programs", x);
    }
    const char *home = getenv("HOME");
    return xprintf("%s/.cache/gpuc/programs", home && *home ? home : "/tmp");
}

static int mkdir_p(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            int r = mkdir(path, 0755);
            *p = '/';
            if (r != 0 && errno != EEXIST) {
                return -1;
            }
        }
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int drv_run_cached(const GpucCompileOptions *co, const GpucCompileResult *checked, const DrvBuildOptions *bo,
                   const char *key_text, char **args)
{
    Hash h = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    hash_bytes(&h, GPUC_VERSION, strlen(GPUC_VERSION));
    hash_bytes(&h, key_text, strlen(key_text));
    /* what the executable is linked with */
    const char *envs[] = { "GPUC_HOME", "CC" };
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(envs[i]);
        hash_bytes(&h, v ? v : "", v ? strlen(v) : 0);
    }
    /* gpuc itself: a rebuilt compiler (same version) makes new programs */
    struct stat self;
    if (stat("/proc/self/exe", &self) == 0) {
        hash_bytes(&h, &self.st_size, sizeof self.st_size);
        hash_bytes(&h, &self.st_mtime, sizeof self.st_mtime);
    }
    for (int i = 0; i < gpuc_compiler_result_file_count(checked); i++) {
        const char *path = gpuc_compiler_result_file(checked, i);
        size_t len = 0;
        char *text = drv_read_file(path, &len);
        hash_bytes(&h, path, strlen(path));
        if (text) {
            hash_bytes(&h, text, len);
        }
        free(text);
    }
    char *root = cache_root();
    char *dir = xprintf("%s/%016llx%016llx", root, (unsigned long long)h.a, (unsigned long long)h.b);
    char *exe = xprintf("%s/prog", dir);
    int status = 0;
    if (access(exe, X_OK) == 0) {
        if (bo->verbose) {
            fprintf(stderr, "gpuc run: cached %s\n", exe);
        }
    } else {
        if (bo->verbose) {
            fprintf(stderr, "gpuc run: building %s\n", exe);
        }
        if (mkdir_p(dir) != 0) {
            fprintf(stderr, "gpuc: error: cannot create the cache directory '%s': %s\n", dir, strerror(errno));
            status = 1;
        } else {
            status = drv_build_exe(co, bo, exe);
        }
    }
    if (status == 0) {
        fflush(stdout);
        fflush(stderr);
        execv(exe, args);
        fprintf(stderr, "gpuc: error: cannot run '%s': %s\n", exe, strerror(errno));
        status = 1;
    }
    free(root);
    free(dir);
    free(exe);
    return status;
}
