/* host.c: what both emitters put around the kernels: the prelude (types,
 * the integer helpers that define the language's arithmetic without
 * undefined behaviour, special float values), the text I/O used by the
 * generated main(), and the entry signatures.
 *
 * Text syntax (docs/testing.md): scalars `1`, `-2.5`, `nan`, `-inf`,
 * `true`; 1-D arrays `[1, 2, 3]`; 2-D arrays `[[1, 2], [3, 4]]`; tuples
 * `(a, b)`.  Integers may carry a type suffix (`7u32`), floats `f32`/`f64`.
 * Results print one per line in the same syntax; f32 with 9 significant
 * digits, f64 with 17.
 */
#include "backend.h"

#include <string.h>

void be_prelude(BeBuf *b, bool cuda) {
    be_printf(b,
        "/* ---- gpuc prelude: types and the language's scalar semantics ---- */\n"
        "#if defined(__CUDACC_RTC__)\n"
        "typedef int int32_t;\n"
        "typedef unsigned int uint32_t;\n"
        "typedef long long int64_t;\n"
        "typedef unsigned long long uint64_t;\n"
        "typedef unsigned long long uintptr_t;\n"
        "#else\n"
        "#include <math.h>\n"
        "#include <stdbool.h>\n"
        "#include <stdint.h>\n"
        "#include <stdio.h>\n"
        "#include <stdlib.h>\n"
        "#include <string.h>\n"
        "#endif\n");
    if (cuda) {
        be_printf(b, "#define GPUC_FN __host__ __device__ __forceinline__\n");
    } else {
        be_printf(b, "#define GPUC_FN static inline\n");
    }
    be_printf(b,
        "/* signed arithmetic wraps: computed in the unsigned type */\n"
        "#define GPUC_SIGNED(S, T, U, W) \\\n"
        "GPUC_FN T gpuc_add_##S(T a, T b) { return (T)((U)a + (U)b); } \\\n"
        "GPUC_FN T gpuc_sub_##S(T a, T b) { return (T)((U)a - (U)b); } \\\n"
        "GPUC_FN T gpuc_mul_##S(T a, T b) { return (T)((U)a * (U)b); } \\\n"
        "GPUC_FN T gpuc_neg_##S(T a) { return (T)((U)0 - (U)a); } \\\n"
        "GPUC_FN T gpuc_div_##S(T a, T b) { return b == 0 ? (T)0 : b == -1 ? (T)((U)0 - (U)a) : (T)(a / b); } \\\n"
        "GPUC_FN T gpuc_rem_##S(T a, T b) { return (b == 0 || b == -1) ? (T)0 : (T)(a %% b); } \\\n"
        "GPUC_FN T gpuc_shl_##S(T a, T b) { return (T)((U)a << ((U)b & (U)(W - 1))); } \\\n"
        "GPUC_FN T gpuc_shr_##S(T a, T b) { return (T)(a >> ((U)b & (U)(W - 1))); } \\\n"
        "GPUC_FN T gpuc_abs_##S(T a) { return a < 0 ? (T)((U)0 - (U)a) : a; } \\\n"
        "GPUC_FN T gpuc_pow_##S(T a, T b) { \\\n"
        "    if (b < 0) { return (T)(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0); } \\\n"
        "    U r = 1, x = (U)a, e = (U)b; \\\n"
        "    while (e) { if (e & 1) { r = (U)(r * x); } x = (U)(x * x); e >>= 1; } \\\n"
        "    return (T)r; }\n"
        "#define GPUC_UNSIGNED(S, T, W) \\\n"
        "GPUC_FN T gpuc_div_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \\\n"
        "GPUC_FN T gpuc_rem_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a %% b); } \\\n"
        "GPUC_FN T gpuc_shl_##S(T a, T b) { return (T)(a << (b & (T)(W - 1))); } \\\n"
        "GPUC_FN T gpuc_shr_##S(T a, T b) { return (T)(a >> (b & (T)(W - 1))); } \\\n"
        "GPUC_FN T gpuc_abs_##S(T a) { return a; } \\\n"
        "GPUC_FN T gpuc_pow_##S(T a, T b) { \\\n"
        "    T r = 1; \\\n"
        "    while (b) { if (b & 1) { r = (T)(r * a); } a = (T)(a * a); b >>= 1; } \\\n"
        "    return r; }\n"
        "GPUC_SIGNED(i32, int32_t, uint32_t, 32)\n"
        "GPUC_SIGNED(i64, int64_t, uint64_t, 64)\n"
        "GPUC_UNSIGNED(u32, uint32_t, 32)\n"
        "GPUC_UNSIGNED(u64, uint64_t, 64)\n");
    /* ptxas 13.0 for sm_90 drops a negation that it folds into a 3-input
     * integer min/max (VIMNMX3), so max(-a, -b) could come out as max(a, -b)
     * (docs/reliability.md); a select written in PTX does not take that road.
     * In every prelude: a CUDA program's host code, compiled by cc, uses them too. */
    be_printf(b,
        "/* 32-bit integer min/max: a PTX select on the device (ptxas 13.0 VIMNMX3 workaround) */\n"
        "#if defined(__CUDA_ARCH__)\n"
        "#define GPUC_MINMAX32(NAME, T, CMP, OP) GPUC_FN T gpuc_##NAME(T a, T b) { T r; \\\n"
        "    asm(\"{ .reg .pred p; setp.\" CMP \" p, %%1, %%2; selp.b32 %%0, %%1, %%2, p; }\" : \"=r\"(r) : \"r\"(a), \"r\"(b)); return r; }\n"
        "#else\n"
        "#define GPUC_MINMAX32(NAME, T, CMP, OP) GPUC_FN T gpuc_##NAME(T a, T b) { return a OP b ? a : b; }\n"
        "#endif\n"
        "GPUC_MINMAX32(min_i32, int32_t, \"lt.s32\", <)\n"
        "GPUC_MINMAX32(max_i32, int32_t, \"gt.s32\", >)\n"
        "GPUC_MINMAX32(min_u32, uint32_t, \"lt.u32\", <)\n"
        "GPUC_MINMAX32(max_u32, uint32_t, \"gt.u32\", >)\n");
    be_printf(b,
        "/* float -> integer saturates, NaN gives 0 (what CUDA's cvt.rzi.sat does) */\n"
        "#define GPUC_CVT(S, T, F, FT, LO, HI) \\\n"
        "GPUC_FN T gpuc_cvt_##S##_##F(FT x) { return x != x ? (T)0 : x <= (FT)(LO) ? (T)(LO) : x >= (FT)(HI) ? (T)(HI) : (T)x; }\n"
        "GPUC_CVT(i32, int32_t, f32, float, -2147483647 - 1, 2147483647)\n"
        "GPUC_CVT(i64, int64_t, f32, float, -9223372036854775807LL - 1, 9223372036854775807LL)\n"
        "GPUC_CVT(u32, uint32_t, f32, float, 0, 4294967295u)\n"
        "GPUC_CVT(u64, uint64_t, f32, float, 0, 18446744073709551615ULL)\n"
        "GPUC_CVT(i32, int32_t, f64, double, -2147483647 - 1, 2147483647)\n"
        "GPUC_CVT(i64, int64_t, f64, double, -9223372036854775807LL - 1, 9223372036854775807LL)\n"
        "GPUC_CVT(u32, uint32_t, f64, double, 0, 4294967295u)\n"
        "GPUC_CVT(u64, uint64_t, f64, double, 0, 18446744073709551615ULL)\n"
        "GPUC_FN float gpuc_inff(void) { union { uint32_t u; float f; } x; x.u = 0x7f800000u; return x.f; }\n"
        "GPUC_FN float gpuc_nanf(void) { union { uint32_t u; float f; } x; x.u = 0x7fc00000u; return x.f; }\n"
        "GPUC_FN double gpuc_inf(void) { union { uint64_t u; double f; } x; x.u = 0x7ff0000000000000ULL; return x.f; }\n"
        "GPUC_FN double gpuc_nan(void) { union { uint64_t u; double f; } x; x.u = 0x7ff8000000000000ULL; return x.f; }\n"
        "/* an index out of bounds is a run-time error: the first one is recorded and\n"
        " * the entry fails after its statements; the read itself gives 0. Every entry\n"
        " * clears the record when it starts, so it describes the last call until the next */\n"
        "#if defined(__CUDACC__)\n"
        "__device__ int gpuc_oob_flag_d;  /* set by the first index out of bounds */\n"
        "/* where that one is written: { 1, index, size } into pinned host memory\n"
        " * mapped for the device, which the host reads after waiting for the\n"
        " * stream (gpuc_h_oob_arm sets it before an entry's kernels run) */\n"
        "__device__ long long *gpuc_oob_rec_d;\n"
        "#endif\n"
        "/* per thread: ranks as threads of one process (sharded entries) each have theirs */\n"
        "#if defined(__cplusplus)\n"
        "#define GPUC_THREAD_LOCAL thread_local\n"
        "#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n"
        "#define GPUC_THREAD_LOCAL _Thread_local\n"
        "#else\n"
        "#define GPUC_THREAD_LOCAL\n"
        "#endif\n"
        "#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n"
        "GPUC_THREAD_LOCAL int gpuc_oob_hit;\n"
        "GPUC_THREAD_LOCAL int64_t gpuc_oob_at[2];\n"
        "#elif !defined(__CUDACC_RTC__)\n"
        "static GPUC_THREAD_LOCAL int gpuc_oob_hit;\n"
        "static GPUC_THREAD_LOCAL int64_t gpuc_oob_at[2];\n"
        "#endif\n"
        "GPUC_FN int gpuc_oob(int64_t i, int64_t n) {\n"
        "#if defined(__CUDA_ARCH__)\n"
        "    volatile long long *r = gpuc_oob_rec_d;\n"
        "    if (atomicCAS(&gpuc_oob_flag_d, 0, 1) == 0 && r) { r[1] = i; r[2] = n; __threadfence_system(); r[0] = 1; }\n"
        "#elif !defined(__CUDACC_RTC__)\n"
        "    if (!gpuc_oob_hit) { gpuc_oob_hit = 1; gpuc_oob_at[0] = i; gpuc_oob_at[1] = n; }\n"
        "#endif\n"
        "    return 0;\n"
        "}\n"
        "/* a run-time size error (two sizes known only at run time that differ\n"
        " * where they meet, a negative size: docs/language.md) is recorded as an\n"
        " * index out of bounds is, the first one's message kept; a failed entry\n"
        " * reports it rather than an index (gpuc_fail_text) */\n"
        "#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n"
        "GPUC_THREAD_LOCAL char gpuc_size_msg[320];\n"
        "#elif !defined(__CUDACC_RTC__)\n"
        "static GPUC_THREAD_LOCAL char gpuc_size_msg[320];\n"
        "#endif\n"
        "#if !defined(__CUDACC_RTC__)\n"
        "#if defined(__GNUC__)\n"
        "#define GPUC_MAYBE_UNUSED __attribute__((unused))  /* nvcc warns of unused static functions */\n"
        "#else\n"
        "#define GPUC_MAYBE_UNUSED\n"
        "#endif\n"
        "static inline GPUC_MAYBE_UNUSED void gpuc_size_same(int64_t a, int64_t b, const char *at, const char *what) {\n"
        "    if (a == b) { return; }\n"
        "    if (!gpuc_size_msg[0]) { snprintf(gpuc_size_msg, sizeof gpuc_size_msg, \"%%s: size mismatch in %%s: %%lld vs %%lld\", at, what, (long long)a, (long long)b); }\n"
        "    gpuc_oob_hit = 1;\n"
        "}\n"
        "static inline GPUC_MAYBE_UNUSED int64_t gpuc_size_nonneg(int64_t n, const char *at, const char *what) {\n"
        "    if (n >= 0) { return n; }\n"
        "    if (!gpuc_size_msg[0]) { snprintf(gpuc_size_msg, sizeof gpuc_size_msg, \"%%s: negative size in %%s: %%lld\", at, what, (long long)n); }\n"
        "    gpuc_oob_hit = 1;\n"
        "    return 0;\n"
        "}\n"
        "/* what a failed entry reports: its size error, else its index out of bounds */\n"
        "static inline GPUC_MAYBE_UNUSED void gpuc_fail_text(char *buf, size_t n) {\n"
        "    if (gpuc_size_msg[0]) { snprintf(buf, n, \"%%s\", gpuc_size_msg); }\n"
        "    else { snprintf(buf, n, \"index %%lld out of bounds for size %%lld\", (long long)gpuc_oob_at[0], (long long)gpuc_oob_at[1]); }\n"
        "}\n"
        "#endif\n"
        "GPUC_FN float gpuc_rsqrtf(float x) { return 1.0f / sqrtf(x); }\n"
        "GPUC_FN double gpuc_rsqrt(double x) { return 1.0 / sqrt(x); }\n"
        "/* ---- end of prelude ---- */\n\n");
}

/* Host text I/O: compiled only with the generated main. */
void be_text_io(BeBuf *b) {
    be_printf(b,
        "/* ---- text input and output for the generated main ---- */\n"
        "#if defined(__GNUC__)\n"
        "#define GPUC_UNUSED __attribute__((unused))\n"
        "#else\n"
        "#define GPUC_UNUSED\n"
        "#endif\n"
        "typedef struct { const char *p; const char *arg; } GpucIn;\n"
        "static GPUC_UNUSED void gpuc_fail(GpucIn *in, const char *what) {\n"
        "    fprintf(stderr, \"error: argument '%%s': %%s near '%%.20s'\\n\", in->arg ? in->arg : \"?\", what, in->p);\n"
        "    exit(1);\n"
        "}\n"
        "static GPUC_UNUSED void gpuc_ws(GpucIn *in) {\n"
        "    for (;;) {\n"
        "        while (*in->p == ' ' || *in->p == '\\t' || *in->p == '\\n' || *in->p == '\\r') { in->p++; }\n"
        "        if (in->p[0] == '/' && in->p[1] == '/') { while (*in->p && *in->p != '\\n') { in->p++; } continue; }\n"
        "        return;\n"
        "    }\n"
        "}\n"
        "static GPUC_UNUSED int gpuc_peek(GpucIn *in) { gpuc_ws(in); return *in->p; }\n"
        "static GPUC_UNUSED void gpuc_expect(GpucIn *in, char c) {\n"
        "    if (gpuc_peek(in) != c) { char m[32]; snprintf(m, sizeof m, \"expected '%%c'\", c); gpuc_fail(in, m); }\n"
        "    in->p++;\n"
        "}\n"
        "/* type codes: 0 bool 1 i32 2 i64 3 u32 4 u64 5 f32 6 f64 */\n"
        "static const int gpuc_tsize[7] = { 1, 4, 8, 4, 8, 4, 8 };\n"
        "static GPUC_UNUSED void gpuc_scalar(GpucIn *in, int t, void *dst) {\n"
        "    gpuc_ws(in);\n"
        "    char tok[128]; size_t n = 0;\n"
        "    while (in->p[n] && !strchr(\" \\t\\r\\n,[]()\", in->p[n]) && n < sizeof tok - 1) { tok[n] = in->p[n]; n++; }\n"
        "    tok[n] = 0;\n"
        "    if (n == 0) { gpuc_fail(in, \"expected a value\"); }\n"
        "    /* drop a type suffix like i32 / u64 / f32 */\n"
        "    char *s = tok + n;\n"
        "    while (s > tok && s[-1] >= '0' && s[-1] <= '9') { s--; }\n"
        "    if (s > tok + 1 && s < tok + n && (s[-1] == 'i' || s[-1] == 'u' || s[-1] == 'f') && s[-2] != 'e' && s[-2] != 'E') { s[-1] = 0; }\n"
        "    char *end = NULL;\n"
        "    switch (t) {\n"
        "    case 0:\n"
        "        if (strcmp(tok, \"true\") == 0) { *(bool *)dst = true; }\n"
        "        else if (strcmp(tok, \"false\") == 0) { *(bool *)dst = false; }\n"
        "        else { gpuc_fail(in, \"expected true or false\"); }\n"
        "        end = tok + strlen(tok);\n"
        "        break;\n"
        "    case 1: { long long v = strtoll(tok, &end, 0); *(int32_t *)dst = (int32_t)v; break; }\n"
        "    case 2: { long long v = strtoll(tok, &end, 0); *(int64_t *)dst = (int64_t)v; break; }\n"
        "    case 3: { unsigned long long v = strtoull(tok, &end, 0); *(uint32_t *)dst = (uint32_t)v; break; }\n"
        "    case 4: { unsigned long long v = strtoull(tok, &end, 0); *(uint64_t *)dst = (uint64_t)v; break; }\n"
        "    case 5: { float v = strtof(tok, &end); *(float *)dst = v; break; }\n"
        "    default: { double v = strtod(tok, &end); *(double *)dst = v; break; }\n"
        "    }\n"
        "    if (!end || *end) { gpuc_fail(in, \"malformed value\"); }\n"
        "    in->p += n;\n"
        "}\n"
        "typedef struct { char *data; int64_t n, cap; } GpucVec;\n"
        "static GPUC_UNUSED void *gpuc_push(GpucVec *v, int sz) {\n"
        "    if (v->n == v->cap) {\n"
        "        v->cap = v->cap ? 2 * v->cap : 64;\n"
        "        v->data = (char *)realloc(v->data, (size_t)(v->cap * sz));\n"
        "        if (!v->data) { fprintf(stderr, \"error: out of memory\\n\"); exit(1); }\n"
        "    }\n"
        "    return v->data + (v->n++) * sz;\n"
        "}\n"
        "/* an array of rank 1 or 2; shape[] filled in; returns malloc'ed data */\n"
        "static GPUC_UNUSED void *gpuc_array(GpucIn *in, int t, int rank, int64_t *shape) {\n"
        "    GpucVec v = { 0, 0, 0 };\n"
        "    int sz = gpuc_tsize[t];\n"
        "    gpuc_expect(in, '[');\n"
        "    shape[0] = 0; shape[1] = rank == 2 ? 0 : 1;\n"
        "    if (gpuc_peek(in) != ']') {\n"
        "        for (;;) {\n"
        "            if (rank == 1) {\n"
        "                gpuc_scalar(in, t, gpuc_push(&v, sz));\n"
        "            } else {\n"
        "                int64_t cols = 0;\n"
        "                gpuc_expect(in, '[');\n"
        "                if (gpuc_peek(in) != ']') {\n"
        "                    for (;;) {\n"
        "                        gpuc_scalar(in, t, gpuc_push(&v, sz));\n"
        "                        cols++;\n"
        "                        if (gpuc_peek(in) == ',') { in->p++; continue; }\n"
        "                        break;\n"
        "                    }\n"
        "                }\n"
        "                gpuc_expect(in, ']');\n"
        "                if (shape[0] > 0 && cols != shape[1]) { gpuc_fail(in, \"rows of different lengths\"); }\n"
        "                shape[1] = cols;\n"
        "            }\n"
        "            shape[0]++;\n"
        "            if (gpuc_peek(in) == ',') { in->p++; continue; }\n"
        "            break;\n"
        "        }\n"
        "    }\n"
        "    gpuc_expect(in, ']');\n"
        "    if (!v.data) { v.data = (char *)malloc(16); }\n"
        "    return v.data;\n"
        "}\n"
        "static GPUC_UNUSED void gpuc_print_scalar(int t, const void *p) {\n"
        "    char buf[64];\n"
        "    switch (t) {\n"
        "    case 0: fputs(*(const bool *)p ? \"true\" : \"false\", stdout); return;\n"
        "    case 1: printf(\"%%d\", (int)*(const int32_t *)p); return;\n"
        "    case 2: printf(\"%%lld\", (long long)*(const int64_t *)p); return;\n"
        "    case 3: printf(\"%%u\", (unsigned)*(const uint32_t *)p); return;\n"
        "    case 4: printf(\"%%llu\", (unsigned long long)*(const uint64_t *)p); return;\n"
        "    case 5: snprintf(buf, sizeof buf, \"%%.9g\", (double)*(const float *)p); break;\n"
        "    default: snprintf(buf, sizeof buf, \"%%.17g\", *(const double *)p); break;\n"
        "    }\n"
        "    if (!strpbrk(buf, \".eni\")) { strcat(buf, \".0\"); }\n"
        "    fputs(buf, stdout);\n"
        "}\n"
        "static GPUC_UNUSED void gpuc_print_array(int t, int rank, const int64_t *shape, const void *data) {\n"
        "    const char *p = (const char *)data;\n"
        "    int sz = gpuc_tsize[t];\n"
        "    fputc('[', stdout);\n"
        "    if (rank == 1) {\n"
        "        for (int64_t i = 0; i < shape[0]; i++) { if (i) { fputs(\", \", stdout); } gpuc_print_scalar(t, p + i * sz); }\n"
        "    } else {\n"
        "        for (int64_t i = 0; i < shape[0]; i++) {\n"
        "            if (i) { fputs(\", \", stdout); }\n"
        "            gpuc_print_array(t, 1, shape + 1, p + i * shape[1] * sz);\n"
        "        }\n"
        "    }\n"
        "    fputc(']', stdout);\n"
        "}\n"
        "static GPUC_UNUSED char *gpuc_read_all(FILE *f) {\n"
        "    size_t n = 0, cap = 1 << 16;\n"
        "    char *s = (char *)malloc(cap);\n"
        "    size_t k;\n"
        "    while (s && (k = fread(s + n, 1, cap - n - 1, f)) > 0) {\n"
        "        n += k;\n"
        "        if (n + 1 == cap) { cap *= 2; s = (char *)realloc(s, cap); }\n"
        "    }\n"
        "    if (!s) { fprintf(stderr, \"error: out of memory\\n\"); exit(1); }\n"
        "    s[n] = 0;\n"
        "    return s;\n"
        "}\n"
        "static GPUC_UNUSED void gpuc_check_size(const char *arg, const char *name, int64_t *var, int64_t got) {\n"
        "    if (*var < 0) { *var = got; return; }\n"
        "    if (*var != got) {\n"
        "        fprintf(stderr, \"error: argument '%%s': size %%s is %%lld here but %%lld before\\n\", arg, name, (long long)got, (long long)*var);\n"
        "        exit(1);\n"
        "    }\n"
        "}\n\n");
}

static int tcode(IrScalar t) { return (int)t; }

void be_entry_signature(BeBuf *b, IrEntry *e, const char *prefix, const char *lead) {
    be_printf(b, "int %s%s(", prefix, e->name);
    bool first = true;
    if (lead) {
        be_printf(b, "%s", lead);
        first = false;
    }
    for (int i = 0; i < e->nsizes; i++) {
        be_printf(b, "%sint64_t %s", first ? "" : ", ", be_vname(e->sizes[i]));
        first = false;
    }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, "%sconst %s *%s", first ? "" : ", ", ir_scalar_ctype(v->elem), be_vname(v)); }
        else { be_printf(b, "%s%s %s", first ? "" : ", ", ir_scalar_ctype(v->elem), be_vname(v)); }
        first = false;
    }
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (v->rank) { be_printf(b, "%s%s **out%d, int64_t *out%d_shape", first ? "" : ", ", ir_scalar_ctype(v->elem), i, i); }
        else { be_printf(b, "%s%s *out%d", first ? "" : ", ", ir_scalar_ctype(v->elem), i); }
        first = false;
    }
    if (first) { be_printf(b, "void"); }
    be_printf(b, ")");
}

static void main_entry(BeBuf *b, IrEntry *e) {
    be_line(b, "static int gpuc_main_%s(GpucIn *in) {", e->name);
    b->indent++;
    be_line(b, "(void)in;");
    for (int i = 0; i < e->nsizes; i++) { be_line(b, "int64_t %s = -1;", be_vname(e->sizes[i])); }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) {
            be_line(b, "%s *%s = NULL;", ir_scalar_ctype(v->elem), be_vname(v));
            be_line(b, "int64_t shape%d[2] = { 0, 0 };", i);
        } else {
            be_line(b, "%s %s;", ir_scalar_ctype(v->elem), be_vname(v));
        }
    }
    for (int g = 0; g < e->ngroups_in; g++) {
        IrGroup *gr = &e->groups_in[g];
        be_line(b, "in->arg = \"%s\";", gr->name);
        if (gr->tuple) { be_line(b, "gpuc_expect(in, '(');"); }
        for (int k = 0; k < gr->count; k++) {
            int i = gr->first + k;
            IrValue *v = e->params[i];
            if (k) { be_line(b, "gpuc_expect(in, ',');"); }
            if (v->rank) {
                be_line(b, "%s = (%s *)gpuc_array(in, %d, %d, shape%d);", be_vname(v), ir_scalar_ctype(v->elem), tcode(v->elem), v->rank, i);
                for (int d = 0; d < v->rank; d++) {
                    IrValue *dv = v->dims[d];
                    if (dv->is_size) {
                        be_line(b, "gpuc_check_size(in->arg, \"%s\", &%s, shape%d[%d]);", dv->name, be_vname(dv), i, d);
                    } else if (dv->has_const) {
                        be_line(b, "if (shape%d[%d] != %lld) { fprintf(stderr, \"error: argument '%%s': expected %lld elements\\n\", in->arg); exit(1); }",
                                i, d, (long long)dv->const_val, (long long)dv->const_val);
                    }
                }
            } else {
                be_line(b, "gpuc_scalar(in, %d, &%s);", tcode(v->elem), be_vname(v));
            }
        }
        if (gr->tuple) { be_line(b, "gpuc_expect(in, ')');"); }
    }
    be_line(b, "in->arg = NULL;");
    be_line(b, "if (gpuc_peek(in) != 0) { fprintf(stderr, \"error: extra input after the last argument\\n\"); exit(1); }");
    for (int i = 0; i < e->nsizes; i++) {
        be_line(b, "if (%s < 0) { %s = 0; }", be_vname(e->sizes[i]), be_vname(e->sizes[i]));
    }
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (v->rank) {
            be_line(b, "%s *out%d = NULL;", ir_scalar_ctype(v->elem), i);
            be_line(b, "int64_t out%d_shape[2] = { 0, 1 };", i);
        } else {
            be_line(b, "%s out%d;", ir_scalar_ctype(v->elem), i);
        }
    }
    be_printf(b, "%*sint rc = gpuc_entry_%s(", b->indent * 4, "", e->name);
    bool first = true;
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, "%s%s", first ? "" : ", ", be_vname(e->sizes[i])); first = false; }
    for (int i = 0; i < e->nparams; i++) { be_printf(b, "%s%s", first ? "" : ", ", be_vname(e->params[i])); first = false; }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_printf(b, "%s&out%d, out%d_shape", first ? "" : ", ", i, i); }
        else { be_printf(b, "%s&out%d", first ? "" : ", ", i); }
        first = false;
    }
    be_printf(b, ");\n");
    be_line(b, "if (rc != 0) {");
    be_line(b, "    if (gpuc_oob_hit) { char g_msg[400]; gpuc_fail_text(g_msg, sizeof g_msg); fprintf(stderr, \"error: %%s\\n\", g_msg); gpuc_oob_hit = 0; return 1; }");
    be_line(b, "    return rc;");
    be_line(b, "}");
    for (int g = 0; g < e->ngroups_out; g++) {
        IrGroup *gr = &e->groups_out[g];
        if (gr->tuple) { be_line(b, "fputc('(', stdout);"); }
        for (int k = 0; k < gr->count; k++) {
            int i = gr->first + k;
            IrValue *v = e->results[i];
            if (k) { be_line(b, "fputs(\", \", stdout);"); }
            if (v->rank) { be_line(b, "gpuc_print_array(%d, %d, out%d_shape, out%d);", tcode(v->elem), v->rank, i, i); }
            else { be_line(b, "gpuc_print_scalar(%d, &out%d);", tcode(v->elem), i); }
        }
        if (gr->tuple) { be_line(b, "fputc(')', stdout);"); }
        be_line(b, "fputc('\\n', stdout);");
    }
    for (int i = 0; i < e->nresults; i++) { if (e->results[i]->rank) { be_line(b, "free(out%d);", i); } }
    for (int i = 0; i < e->nparams; i++) { if (e->params[i]->rank) { be_line(b, "free(%s);", be_vname(e->params[i])); } }
    be_line(b, "return 0;");
    b->indent--;
    be_line(b, "}");
}

void be_main(BeBuf *b, IrModule *m) {
    be_text_io(b);
    for (int i = 0; i < m->nentries; i++) { main_entry(b, m->entries[i]); }
    be_line(b, "/* usage: prog [-e ENTRY] < arguments.txt */");
    be_line(b, "int main(int argc, char **argv) {");
    b->indent++;
    be_line(b, "const char *entry = NULL;");
    be_line(b, "for (int i = 1; i + 1 < argc; i++) { if (strcmp(argv[i], \"-e\") == 0) { entry = argv[i + 1]; } }");
    be_line(b, "char *text = gpuc_read_all(stdin);");
    be_line(b, "GpucIn in = { text, NULL };");
    be_line(b, "(void)in;");
    be_line(b, "int rc = 2;");
    for (int i = 0; i < m->nentries; i++) {
        be_line(b, "%sif (!entry%s || strcmp(entry, \"%s\") == 0) { rc = gpuc_main_%s(&in); }",
                i ? "else " : "", i ? "" : "", m->entries[i]->name, m->entries[i]->name);
    }
    be_line(b, "%s{ fprintf(stderr, \"error: no entry '%%s'\\n\", entry ? entry : \"\"); }", m->nentries ? "else " : "");
    be_line(b, "free(text);");
    be_line(b, "return rc;");
    b->indent--;
    be_line(b, "}");
}

/* s as a C string literal: quotes and backslashes escaped, other bytes
 * outside printable ASCII in octal; NULL as "". */
void be_c_string(BeBuf *b, const char *s) {
    be_printf(b, "\"");
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { be_printf(b, "\\%c", ch); }
        else if (ch < 0x20 || ch >= 0x7f) { be_printf(b, "\\%03o", ch); }
        else { be_printf(b, "%c", ch); }
    }
    be_printf(b, "\"");
}

/* A size check statement (ir/ops.def: nonneg_size, same_size) on the host:
 * a failed one is recorded (the prelude's gpuc_size_same, gpuc_size_nonneg)
 * with the operation and the .gdsl line; with `fail` (the CUDA launchers)
 * the launcher then returns as GPUC_TRY does. */
void be_size_check(BeExprCtx *x, const char *file, const IrStmt *s, const char *fail) {
    BeBuf *b = x->b;
    const char *res[2] = { NULL, NULL };
    be_lambda(x, s->map, NULL, res);
    BeBuf where = { 0 }, at = { 0 };  /* at: "FILE:LINE", "WHAT" */
    be_printf(&where, "%s:%d", file, s->line);
    be_c_string(&at, where.p);
    be_printf(&at, ", ");
    be_c_string(&at, s->what ? s->what : "an operation");
    be_buf_free(&where);
    if (s->src == IR_AOP_nonneg_size) {
        be_line(b, "const int64_t %s = gpuc_size_nonneg(%s, %s);", be_vname(s->outs[0]), res[0], at.p);
    } else {
        be_line(b, "gpuc_size_same(%s, %s, %s);", res[0], res[1], at.p);
    }
    if (fail) { be_line(b, "if (gpuc_size_msg[0]) { %s }", fail); }
    be_buf_free(&at);
}
