/* driver.h: the gpuc command's own pieces beyond the pipeline in main.c:
 * building executables (`gpuc prog.gdsl -o prog`, build_exe.c), running them
 * through a cache (`gpuc run`), the test-block runner (`gpuc test`,
 * test_cmd.c) and the benchmark runner (`gpuc bench`, bench_cmd.c), which
 * share blocks.c and tb_values.c (blocks.h). Prefix drv_. */
#ifndef GPUC_DRIVER_H
#define GPUC_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuc_compiler.h"

/* How an executable is built. */
typedef struct DrvBuildOptions {
    const char *entry;      /* -e NAME: the entry run when the command line names none; NULL = none */
    const char *arch;       /* --arch=sm_80,sm_90 (NULL = the default list) */
    const char *gpuc_home;  /* --gpuc-home PREFIX; NULL = $GPUC_HOME, else the build tree */
    bool verbose;           /* gpuc run -v: say whether the cache was hit */
} DrvBuildOptions;

/* Check an --arch list (sm_NN[,sm_NN...]); 0 if good, else report and -1. */
int drv_check_arch(const char *arch);

/* Compile the program of `co` (already checked) through the compiler library
 * (--emit=program and, for the kernel images, --emit=cuda), compile and link
 * it into the executable out_path (written under a temporary name and
 * renamed, so nothing partial appears). Prints the diagnostics. Returns the
 * exit status: 0, 1 after errors, 70 after an internal error. */
int drv_build_exe(const GpucCompileOptions *co, const DrvBuildOptions *bo, const char *out_path);

/* `gpuc --emit=lib -o DIR/libNAME`: the library's C file (--emit=lib of the
 * compiler library) with the kernel images, compiled into libNAME.a and
 * libNAME.so, with NAME.h, NAME.json and the depfile NAME.d. Exit status. */
int drv_build_lib(const GpucCompileOptions *co, const DrvBuildOptions *bo, const char *out_path);

/* `gpuc run`: build into the cache unless the key (key_text: the options,
 * hashed with every source file `checked` read and gpuc's version) is there,
 * then exec the program with args (args[0] is the program name). Returns
 * only on failure, with the exit status. */
int drv_run_cached(const GpucCompileOptions *co, const GpucCompileResult *checked, const DrvBuildOptions *bo,
                   const char *key_text, char **args);

/* `gpuc test [options] files-or-dirs...` (argv[0] = "test"). Exit status. */
int drv_test_main(int argc, char **argv);

/* `gpuc bench [options] files-or-dirs...` (argv[0] = "bench"). Exit status. */
int drv_bench_main(int argc, char **argv);

/* `gpuc tune [options] file.gdsl` (argv[0] = "tune"). Exit status. */
int drv_tune_main(int argc, char **argv);

/* ---- outputs (output.c): what -o names, written like cc -o writes it ---- */

/* What an output is: its mode when new (0666 or 0777 minus the umask) and
 * whether `-o -` (standard output) can take it. */
typedef enum DrvOutputKind {
    DRV_OUTPUT_TEXT,       /* --emit text, a tuning file: 0666 minus the umask; `-` is stdout */
    DRV_OUTPUT_BINARY,     /* a static library, a header beside it: 0666 minus the umask */
    DRV_OUTPUT_EXECUTABLE, /* an executable or a shared library: 0777 minus the umask */
} DrvOutputKind;

/* An output being written: to f, a temporary file (tmp) put in place by
 * drv_output_close, or standard output (tmp NULL). */
typedef struct DrvOutput {
    const char *path;   /* as -o gave it; NULL or "-" = standard output */
    DrvOutputKind kind;
    FILE *f;            /* where to write */
    char *tmp;          /* the temporary file's path (malloc'd); NULL for standard output */
} DrvOutput;

/* Refuse what cannot be an output of this kind: a directory, a socket, `-`
 * for a binary. Returns 0, or 1 after reporting. */
int drv_output_check(const char *path, DrvOutputKind kind);
/* Is `output` the same existing file as `input` (which -o would destroy)? */
bool drv_output_same_file(const char *output, const char *input);
/* Start writing `path` (NULL: standard output). Returns 0, or 1 after reporting. */
int drv_output_open(DrvOutput *o, const char *path, DrvOutputKind kind);
/* Finish: if ok, put the output in place (renamed over a regular file or a
 * new one, written into a device, FIFO or link), else remove the temporary
 * and leave `path` untouched. Returns ok, false after reporting an error. */
bool drv_output_close(DrvOutput *o, bool ok);
/* Put the complete file `tmp` in place as `path`, as drv_output_close does;
 * tmp is gone afterwards. Returns 0, or 1 after reporting. */
int drv_output_install(const char *tmp, const char *path, DrvOutputKind kind);

/* Run argv[0] (searched in PATH) with stdin/stdout/stderr from/to the given
 * files (NULL: inherited), killed by SIGALRM after timeout_s seconds (0: no
 * limit). Returns the exit status, 128+signal when killed, or 127 when it
 * could not be started. */
int drv_spawn(char *const argv[], const char *in, const char *out, const char *err, unsigned timeout_s);

/* A fresh temporary directory (malloc'd path) and its removal with its files. */
char *drv_temp_dir(void);
void drv_remove_dir(const char *dir);
/* Whole file into a malloc'd NUL-terminated buffer; NULL on failure. */
char *drv_read_file(const char *path, size_t *len);

#endif
