/* client.c: a host program of the compiler library (compiler/gpuc_compiler.h),
 * compiled and run by tests/compiler/api.test. Each command prints what the
 * library returned, for FileCheck:
 *   client emit KIND FILE [DEFINE...]   compile a file; status, outputs, diagnostics
 *   client text NAME KIND TEXT          compile source text shown as NAME ("-": none)
 *   client rendered FILE                only the rendered diagnostics (as gpuc prints them)
 *   client twice FILE                   the same compile twice, an error between: same bytes?
 *   client threads FILE                 four threads compiling at once: same bytes?
 *   client options                      malformed options: statuses and messages */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuc_compiler.h"

static void print_result(const GpucCompileResult *r)
{
    printf("status %d errors %d diagnostics %d\n", gpuc_compiler_result_status(r),
           gpuc_compiler_result_error_count(r), gpuc_compiler_result_diagnostic_count(r));
    static const char *const names[] = { "source", "header", "manifest" };
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        const char *text = gpuc_compiler_result_output(r, names[i], &len);
        if (text) {
            printf("output %s: %zu bytes, strlen %zu\n", names[i], len, strlen(text));
        }
    }
    for (int i = 0; i < gpuc_compiler_result_diagnostic_count(r); i++) {
        const GpucDiagnostic *d = gpuc_compiler_result_diagnostic(r, i);
        printf("diagnostic %d: file=%s line=%d col=%d severity=%s message=%s\n", i, d->file ? d->file : "(none)",
               d->line, d->col, d->severity, d->message);
    }
    for (int i = 0; i < gpuc_compiler_result_file_count(r); i++) {
        printf("file %d: %s\n", i, gpuc_compiler_result_file(r, i));
    }
}

static char *compile_text_of(const char *path, GpucEmit emit)
{
    GpucCompileOptions o;
    gpuc_compiler_options_init(&o);
    o.path = path;
    GpucCompileResult *r = NULL;
    gpuc_compiler_compile(&o, emit, &r);
    const char *text = gpuc_compiler_result_output(r, "source", NULL);
    char *copy = strdup(text ? text : "(none)");
    gpuc_compiler_result_free(r);
    return copy;
}

static void *thread_main(void *path)
{
    return compile_text_of(path, GPUC_EMIT_CUDA);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return 2;
    }
    GpucCompileOptions o;
    gpuc_compiler_options_init(&o);
    GpucCompileResult *r = NULL;
    if (strcmp(argv[1], "emit") == 0 && argc >= 4) {
        int kind = gpuc_compiler_emit_kind(argv[2]);
        o.path = argv[3];
        o.defines = (const char *const *)argv + 4;
        o.ndefines = argc - 4;
        if (strcmp(argv[2], "ir-O0") == 0) {
            kind = GPUC_EMIT_IR;
            o.opt_level = 0;
        }
        gpuc_compiler_compile(&o, (GpucEmit)kind, &r);
        print_result(r);
        const char *text = gpuc_compiler_result_output(r, "source", NULL);
        const char *manifest = gpuc_compiler_result_output(r, "manifest", NULL);
        printf("---- source\n%s---- manifest\n%s\n---- rendered\n%s", text ? text : "", manifest ? manifest : "",
               gpuc_compiler_result_rendered(r));
    } else if (strcmp(argv[1], "text") == 0 && argc == 5) {
        o.source = argv[4];
        o.source_name = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
        gpuc_compiler_compile(&o, (GpucEmit)gpuc_compiler_emit_kind(argv[3]), &r);
        print_result(r);
        const char *text = gpuc_compiler_result_output(r, "source", NULL);
        printf("---- source\n%s---- rendered\n%s", text ? text : "", gpuc_compiler_result_rendered(r));
    } else if (strcmp(argv[1], "rendered") == 0 && argc == 3) {
        o.path = argv[2];
        gpuc_compiler_compile(&o, GPUC_EMIT_CUDA, &r);
        fputs(gpuc_compiler_result_rendered(r), stdout);
    } else if (strcmp(argv[1], "twice") == 0 && argc == 3) {
        char *first = compile_text_of(argv[2], GPUC_EMIT_CUDA);
        GpucCompileOptions bad;
        gpuc_compiler_options_init(&bad);
        bad.source = "entry f(x: f32) -> f32 = y;\n";
        gpuc_compiler_compile(&bad, GPUC_EMIT_CUDA, &r);
        printf("between: status %d errors %d\n", gpuc_compiler_result_status(r), gpuc_compiler_result_error_count(r));
        gpuc_compiler_result_free(r);
        r = NULL;
        o.path = argv[2];
        gpuc_compiler_compile(&o, GPUC_EMIT_CUDA, &r);
        const char *second = gpuc_compiler_result_output(r, "source", NULL);
        printf("second: status %d diagnostics %d, %s (%zu bytes)\n", gpuc_compiler_result_status(r),
               gpuc_compiler_result_diagnostic_count(r), strcmp(first, second) == 0 ? "same" : "DIFFERENT",
               strlen(first));
        free(first);
    } else if (strcmp(argv[1], "threads") == 0 && argc == 3) {
        char *expected = compile_text_of(argv[2], GPUC_EMIT_CUDA);
        pthread_t t[4];
        for (int i = 0; i < 4; i++) {
            pthread_create(&t[i], NULL, thread_main, argv[2]);
        }
        int same = 0;
        for (int i = 0; i < 4; i++) {
            void *text = NULL;
            pthread_join(t[i], &text);
            same += strcmp(text, expected) == 0;
            free(text);
        }
        printf("threads: %d of 4 same (%zu bytes)\n", same, strlen(expected));
        free(expected);
    } else if (strcmp(argv[1], "options") == 0) {
        printf("NULL options: %d\n", gpuc_compiler_compile(NULL, GPUC_EMIT_CHECK, &r));
        print_result(r);
        gpuc_compiler_result_free(r);
        printf("NULL result: %d\n", gpuc_compiler_compile(&o, GPUC_EMIT_CHECK, NULL));
        printf("no program: %d\n", gpuc_compiler_compile(&o, GPUC_EMIT_CHECK, &r));
        print_result(r);
        gpuc_compiler_result_free(r);
        o.source = "entry f(x: f32) -> f32 = x;";
        const char *defines[] = { "BLOCK" };
        o.defines = defines;
        o.ndefines = 1;
        printf("bad define: %d\n", gpuc_compiler_compile(&o, GPUC_EMIT_CHECK, &r));
        print_result(r);
        gpuc_compiler_result_free(r);
        o.ndefines = 0;
        o.lib_name = "not-an-identifier";
        printf("bad lib name: %d\n", gpuc_compiler_compile(&o, GPUC_EMIT_LIB, &r));
        print_result(r);
        gpuc_compiler_result_free(r);
        o.lib_name = NULL;
        printf("bad emit kind: %d\n", gpuc_compiler_compile(&o, (GpucEmit)99, &r));
        print_result(r);
        gpuc_compiler_result_free(r);
        printf("tokens of text: %d\n", gpuc_compiler_compile(&o, GPUC_EMIT_TOKENS, &r));
        print_result(r);
        printf("emit kind names: %d %d %d\n", gpuc_compiler_emit_kind("cuda"), gpuc_compiler_emit_kind("manifest"),
               gpuc_compiler_emit_kind("nonsense"));
        printf("version %s\n", gpuc_compiler_version());
    } else {
        return 2;
    }
    gpuc_compiler_result_free(r);
    return 0;
}
