/* emit_program.c: `--emit=program`: one C file with both backends of a
 * program, for the program runner (runner/gpuc_program.h):
 *   - the reference C backend (be_emit_c) and per entry an adapter
 *     gpuc_run_c_NAME(args, results, err, errlen) over gpuc_entry_NAME;
 *   - the CUDA backend's host side: the host interface gpuc_h_* over the gpuc
 *     runtime (GpucHost: a context, the loaded module, the device blocks of
 *     one call), the launchers gpuc_dev_NAME (be_cuda_host_entries, shared
 *     with --emit=cuda), and per entry gpuc_run_cuda_NAME, which uploads the
 *     arguments, runs, and downloads the results;
 *   - the sharded entries (docs/sharding.md) of the entries ir_shard accepts,
 *     with per entry gpuc_run_shard_NAME(comm, args, results, ...) over
 *     gpuc_shard_NAME, and where the CUDA backend shards it too the
 *     launcher gpuc_dev_shard_NAME with gpuc_run_cuda_shard_NAME, for
 *     `prog --ranks N` (runner/rn_ranks.c);
 *   - the GpucProgram table with the gdsl type strings, and main().
 * The kernels themselves are not in this file: they come as images
 * (cubins, PTX) compiled by the driver from --emit=cuda (driver/build_exe.c),
 * in a file named by -DGPUC_IMAGES="images.h" that defines gpuc_images[];
 * without it the program has no images and the runner uses the C backend.
 * Build: cc -std=c11 prog.c -Iruntime -Irunner libgpuc_runner.a libgpuc_runtime.a -lm -ldl */
#include "backend.h"
#include "cuda/cuda_emit.h"   /* cuda_host_into_scalar_entries, cuda_scalar_results */

#include <stdlib.h>

/* The host interface of backend/cuda/launch.c's launchers, over the gpuc
 * runtime. Device pointers travel as typed C pointers (a CUdeviceptr fits).
 * GpucKernels caches the functions of one module by name. Shared with the
 * libraries of --emit=lib (backend/emit_lib.c). */
void be_runtime_host_prelude(BeBuf *b) {
    be_printf(b,
        "/* ---- the CUDA backend: host interface over the gpuc runtime ---- */\n"
        "typedef struct GpucKernels {\n"
        "    GpucModule *module;\n"
        "    int sms, smem, n;           /* multiprocessors and shared bytes a block may opt in to (0: not read yet); functions looked up */\n"
        "    int mps;                    /* 1 + whether the device's contexts are shared through MPS (0: not read yet) */\n"
        "    const char *names[64];\n"
        "    GpucFunction *fns[64];\n"
        "    unsigned fit_block[64];     /* the block size of fit[i] (0: not asked yet) */\n"
        "    int fit[64];                /* blocks of fns[i] that fit on one multiprocessor */\n"
        "    volatile long long *oob;    /* the module's out-of-bounds record (NULL: not mapped yet) */\n"
        "} GpucKernels;\n"
        "typedef struct GpucHost {\n"
        "    GpucContext *ctx;\n"
        "    GpucKernels *kernels;  /* the module and its functions */\n"
        "    int failed;            /* a host read of a device element failed */\n"
        "    int nlive, caplive;    /* device blocks of this call, in order of allocation */\n"
        "    GpucDevPtr *live;\n"
        "} GpucHost;\n"
        "#define GPUC_HAPI static inline\n"
        "#define GPUC_HOST_FN static\n"
        "#define GPUC_KERNEL(k) #k\n"
        "#define GPUC_TRY(x) do { int g_e_ = (int)(x); if (g_e_ != 0) { gpuc_h_release(gpuc_h, g_mark); return g_e_; } } while (0)\n"
        "#define GPUC_DP(p) ((GpucDevPtr)(uintptr_t)(p))\n"
        "GPUC_HAPI void gpuc_h_init(GpucHost *h, GpucContext *ctx, GpucModule *module, GpucKernels *k) {\n"
        "    memset(h, 0, sizeof *h);\n"
        "    h->ctx = ctx;\n"
        "    h->kernels = k;\n"
        "    if (k->module != module) { memset(k, 0, sizeof *k); k->module = module; }\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_sms(GpucHost *h) {\n"
        "    if (!h->kernels->sms) {\n"
        "        GpucDeviceInfo info;\n"
        "        h->kernels->sms = gpuc_context_device_info(h->ctx, &info) == GPUC_SUCCESS && info.multiprocessors > 0 ? info.multiprocessors : 1;\n"
        "    }\n"
        "    return h->kernels->sms;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_shared_max(GpucHost *h) {\n"
        "    if (!h->kernels->smem) {\n"
        "        GpucDeviceInfo info;\n"
        "        h->kernels->smem = gpuc_context_device_info(h->ctx, &info) == GPUC_SUCCESS && info.max_shared_per_block_optin > 0 ? info.max_shared_per_block_optin : 48 * 1024;\n"
        "    }\n"
        "    return h->kernels->smem;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_mps(GpucHost *h) {\n"
        "    if (!h->kernels->mps) {\n"
        "        GpucDeviceInfo info;\n"
        "        h->kernels->mps = 1 + (gpuc_context_device_info(h->ctx, &info) == GPUC_SUCCESS && info.mps_enabled);\n"
        "    }\n"
        "    return h->kernels->mps - 1;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_alloc(GpucHost *h, void **out, size_t n) {\n"
        "    if (h->nlive == h->caplive) {\n"
        "        int cap = h->caplive ? 2 * h->caplive : 32;\n"
        "        GpucDevPtr *l = (GpucDevPtr *)realloc(h->live, sizeof *l * (size_t)cap);\n"
        "        if (!l) { return GPUC_ERROR_OUT_OF_MEMORY; }\n"
        "        h->live = l; h->caplive = cap;\n"
        "    }\n"
        "    GpucDevPtr p = 0;\n"
        "    GpucStatus st = gpuc_mem_alloc(h->ctx, n ? n : 1, &p);\n"
        "    if (st != GPUC_SUCCESS) { return (int)st; }\n"
        "    h->live[h->nlive++] = p;\n"
        "    *out = (void *)(uintptr_t)p;\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI void gpuc_h_free(GpucHost *h, const void *p) {\n"
        "    for (int i = h->nlive - 1; i >= 0; i--) {\n"
        "        if (h->live[i] == GPUC_DP(p)) {\n"
        "            gpuc_mem_free(h->ctx, h->live[i]);\n"
        "            memmove(h->live + i, h->live + i + 1, sizeof *h->live * (size_t)(h->nlive - i - 1));\n"
        "            h->nlive--;\n"
        "            return;\n"
        "        }\n"
        "    }\n"
        "}\n"
        "/* keep p (a result handed to the caller): no longer freed with the call's blocks */\n"
        "GPUC_HAPI void gpuc_h_keep(GpucHost *h, const void *p) {\n"
        "    for (int i = h->nlive - 1; i >= 0; i--) {\n"
        "        if (h->live[i] == GPUC_DP(p)) {\n"
        "            memmove(h->live + i, h->live + i + 1, sizeof *h->live * (size_t)(h->nlive - i - 1));\n"
        "            h->nlive--;\n"
        "            return;\n"
        "        }\n"
        "    }\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_mark(GpucHost *h) { return h->nlive; }\n"
        "GPUC_HAPI void gpuc_h_release(GpucHost *h, int mark) {\n"
        "    while (h->nlive > mark) { gpuc_mem_free(h->ctx, h->live[--h->nlive]); }\n"
        "}\n"
        "GPUC_HAPI void gpuc_h_done(GpucHost *h) { gpuc_h_release(h, 0); free(h->live); h->live = NULL; h->caplive = 0; }\n"
        "GPUC_HAPI int gpuc_h_zero(GpucHost *h, void *p, size_t n) { return (int)gpuc_memset_async(h->ctx, GPUC_DP(p), 0, n, NULL); }\n"
        "/* a zero counter for a last-block reduction: the context's word for its\n"
        " * current stream, kept for the context's life (each kernel that counts on it\n"
        " * leaves it at zero again), so a reduction is one launch, with no memset */\n"
        "GPUC_HAPI int gpuc_h_counter(GpucHost *h, unsigned int **out) {\n"
        "    GpucDevPtr p = 0;\n"
        "    int rc = (int)gpuc_context_zero_word(h->ctx, &p);\n"
        "    *out = (unsigned int *)(uintptr_t)p;\n"
        "    return rc;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_d2d(GpucHost *h, void *d, const void *s, size_t n) { return (int)gpuc_memcpy_dtod_async(h->ctx, GPUC_DP(d), GPUC_DP(s), n, NULL); }\n"
        "GPUC_HAPI int gpuc_h_h2d(GpucHost *h, void *d, const void *s, size_t n) { return (int)gpuc_memcpy_htod_async(h->ctx, GPUC_DP(d), s, n, NULL); }\n"
        "GPUC_HAPI int gpuc_h_d2h(GpucHost *h, void *d, const void *s, size_t n) {\n"
        "    GpucStatus st = gpuc_memcpy_dtoh_async(h->ctx, d, GPUC_DP(s), n, NULL);\n"
        "    return (int)(st != GPUC_SUCCESS ? st : gpuc_stream_synchronize(h->ctx, NULL));\n"
        "}\n"
        "/* a filter's count slot: the context's count word for its current stream,\n"
        " * pinned host memory mapped for the device; the kernel writes the count\n"
        " * there, so reading it takes a wait for the stream and no copy (a copy and\n"
        " * an allocation cost microseconds of every filter) */\n"
        "GPUC_HAPI int gpuc_h_count_slot(GpucHost *h, int64_t **out) {\n"
        "    GpucDevPtr p = 0;\n"
        "    volatile int64_t *host = NULL;\n"
        "    int rc = (int)gpuc_context_count_word(h->ctx, &p, &host);\n"
        "    *out = (int64_t *)(uintptr_t)p;\n"
        "    return rc;\n"
        "}\n"
        "/* the count the kernels before on the stream wrote into slot */\n"
        "GPUC_HAPI int gpuc_h_count_read(GpucHost *h, int64_t *out, const int64_t *slot) {\n"
        "    GpucDevPtr p = 0;\n"
        "    volatile int64_t *host = NULL;\n"
        "    GpucStatus st = gpuc_stream_synchronize(h->ctx, NULL);\n"
        "    if (st == GPUC_SUCCESS) { st = gpuc_context_count_word(h->ctx, &p, &host); }\n"
        "    if (st != GPUC_SUCCESS) { return (int)st; }\n"
        "    if (p != GPUC_DP(slot)) { return (int)GPUC_ERROR_INVALID_VALUE; }\n"
        "    *out = *host;\n"
        "    return 0;\n"
        "}\n"
        "/* the kernel called name: *slot its index in h->kernels (-1: not kept) */\n"
        "GPUC_HAPI int gpuc_h_function(GpucHost *h, const char *name, GpucFunction **out, int *slot) {\n"
        "    GpucKernels *k = h->kernels;\n"
        "    for (int i = 0; i < k->n; i++) { if (strcmp(k->names[i], name) == 0) { *out = k->fns[i]; *slot = i; return 0; } }\n"
        "    GpucStatus st = k->module ? gpuc_module_get_function(k->module, name, out) : GPUC_ERROR_NOT_FOUND;\n"
        "    if (st != GPUC_SUCCESS) { return (int)st; }\n"
        "    *slot = -1;\n"
        "    if (k->n < 64) { k->names[k->n] = name; k->fns[k->n] = *out; k->fit_block[k->n] = 0; *slot = k->n++; }\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_resident(GpucHost *h, const char *name, unsigned block, int *out) {\n"
        "    GpucFunction *f = NULL;\n"
        "    int i = -1, rc = gpuc_h_function(h, name, &f, &i);\n"
        "    if (rc) { return rc; }\n"
        "    GpucKernels *k = h->kernels;\n"
        "    if (i >= 0 && k->fit_block[i] == block) { *out = k->fit[i]; return 0; }\n"
        "    int n = 0;\n"
        "    GpucStatus st = gpuc_function_occupancy(f, block, 0, &n);\n"
        "    if (st != GPUC_SUCCESS) { return (int)st; }\n"
        "    *out = n > 0 ? n : 1;\n"
        "    if (i >= 0) { k->fit_block[i] = block; k->fit[i] = *out; }\n"
        "    return 0;\n"
        "}\n"
        "/* clusters of a kernel with compile-time cluster dimensions (`cluster` blocks) resident at once (the row\n"
        " * kernels' persistent grid: backend/cuda/rows.c, grep \"ROW PERSIST\"); 0 where the driver cannot tell:\n"
        " * one cluster a row then, never a failure */\n"
        "GPUC_HAPI int gpuc_h_clusters(GpucHost *h, const char *name, unsigned cluster, unsigned block, unsigned shared, int *out) {\n"
        "    GpucFunction *f = NULL;\n"
        "    int i = -1;\n"
        "    *out = 0;\n"
        "    if (gpuc_h_function(h, name, &f, &i) != 0 || gpuc_function_cluster_occupancy(f, cluster, block, shared, out) != GPUC_SUCCESS) { *out = 0; }\n"
        "    return 0;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_launch(GpucHost *h, const char *name, unsigned gx, unsigned gy, unsigned block, unsigned shared, void **args) {\n"
        "    GpucFunction *f = NULL;\n"
        "    int slot = -1, rc = gpuc_h_function(h, name, &f, &slot);\n"
        "    if (rc) { return rc; }\n"
        "    GpucLaunchConfig cfg;\n"
        "    memset(&cfg, 0, sizeof cfg);\n"
        "    cfg.grid[0] = gx; cfg.grid[1] = gy; cfg.grid[2] = 1;\n"
        "    cfg.block[0] = block; cfg.block[1] = 1; cfg.block[2] = 1;\n"
        "    cfg.shared_bytes = shared;  /* over 48 KiB gpuc_launch opts the kernel in */\n"
        "    return (int)gpuc_launch(f, &cfg, args);\n"
        "}\n"
        "/* the module's out-of-bounds record { hit, index, size }: pinned host memory\n"
        " * mapped for the device at the kernels' gpuc_oob_rec_d, read after a wait\n"
        " * for the stream with no copy (copies cost about 25 us of every call) */\n"
        "GPUC_HAPI int gpuc_h_oob_arm(GpucHost *h) {\n"
        "    if (h->kernels->oob) { return 0; }\n"
        "    volatile void *p = NULL;\n"
        "    int rc = (int)gpuc_module_map_host(h->kernels->module, \"gpuc_oob_rec_d\", 3 * sizeof(long long), &p);\n"
        "    h->kernels->oob = (volatile long long *)p;\n"
        "    return rc;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_oob(GpucHost *h, int *hit, long long at[2]) {\n"
        "    volatile long long *r = h->kernels->oob;\n"
        "    GpucDevPtr flag = 0;\n"
        "    GpucStatus st = gpuc_stream_synchronize(h->ctx, NULL);\n"
        "    if (st != GPUC_SUCCESS) { return (int)st; }\n"
        "    if (!r) { return (int)GPUC_ERROR_INVALID_VALUE; }  /* gpuc_h_oob_arm was not called */\n"
        "    *hit = r[0] != 0;\n"
        "    if (!*hit) { return 0; }\n"
        "    at[0] = r[1]; at[1] = r[2]; r[0] = 0;\n"
        "    st = gpuc_module_get_global(h->kernels->module, \"gpuc_oob_flag_d\", &flag, NULL);\n"
        "    if (st == GPUC_SUCCESS) { st = gpuc_memset(h->ctx, flag, 0, sizeof(int)); }\n"
        "    return (int)st;\n"
        "}\n"
        "GPUC_HAPI int gpuc_h_status(GpucHost *h) { int e = h->failed; h->failed = 0; return e; }\n"
        "/* one element of a device array, read from the host (0 outside: as in kernels) */\n"
        "#define GPUC_DREAD(S, T) \\\n"
        "GPUC_HAPI T gpuc_dread_##S(GpucHost *h, const T *p, int64_t i, int64_t n, int64_t j, int64_t m) { \\\n"
        "    T v = (T)0; \\\n"
        "    if ((uint64_t)i < (uint64_t)n && (uint64_t)j < (uint64_t)m) { \\\n"
        "        int e = gpuc_h_d2h(h, &v, p + i * m + j, sizeof(T)); \\\n"
        "        if (e && !h->failed) { h->failed = e; } \\\n"
        "    } else { gpuc_oob((uint64_t)i < (uint64_t)n ? j : i, (uint64_t)i < (uint64_t)n ? m : n); } \\\n"
        "    return v; \\\n"
        "}\n"
        "GPUC_DREAD(bool, bool) GPUC_DREAD(i32, int32_t) GPUC_DREAD(i64, int64_t) GPUC_DREAD(u32, uint32_t)\n"
        "GPUC_DREAD(u64, uint64_t) GPUC_DREAD(f32, float) GPUC_DREAD(f64, double)\n"
        "#define gpuc_dread(h, p, i, n, j, m) _Generic((p), \\\n"
        "    bool *: gpuc_dread_bool, const bool *: gpuc_dread_bool, int32_t *: gpuc_dread_i32, const int32_t *: gpuc_dread_i32, \\\n"
        "    int64_t *: gpuc_dread_i64, const int64_t *: gpuc_dread_i64, uint32_t *: gpuc_dread_u32, const uint32_t *: gpuc_dread_u32, \\\n"
        "    uint64_t *: gpuc_dread_u64, const uint64_t *: gpuc_dread_u64, float *: gpuc_dread_f32, const float *: gpuc_dread_f32, \\\n"
        "    double *: gpuc_dread_f64, const double *: gpuc_dread_f64)(h, p, i, n, j, m)\n\n");
}

/* A size as the entry takes it: a sharded size's local value after ir_shard. */
static IrValue *size_as_taken(IrEntry *e, IrValue *sv) {
    for (int z = 0; z < e->nshards; z++) {
        if (e->shards[z].global == sv) { return e->shards[z].local; }
    }
    return sv;
}

/* Sizes of an entry, from the first array argument that has them. */
static void sizes_from_args(BeBuf *b, IrEntry *e) {
    for (int i = 0; i < e->nsizes; i++) {
        IrValue *sv = size_as_taken(e, e->sizes[i]);
        const char *src = NULL;
        char buf[64];
        for (int j = 0; j < e->nparams && !src; j++) {
            for (int d = 0; d < e->params[j]->rank; d++) {
                if (e->params[j]->dims[d] == sv) { snprintf(buf, sizeof buf, "args[%d].shape[%d]", j, d); src = buf; break; }
            }
        }
        be_line(b, "const int64_t %s = %s;", be_vname(sv), src ? src : "0");
    }
}

/* Give results[i] storage for shape out<i>_shape (when it has none or a
 * different shape); on failure `fail` runs. */
static void result_storage(BeBuf *b, IrValue *v, int i, const char *fail) {
    be_line(b, "GpucValue *r = &results[%d];", i);
    if (v->rank == 2) {
        be_line(b, "if (!r->data || r->shape[0] != out%d_shape[0] || r->shape[1] != out%d_shape[1]) {", i, i);
    } else {
        be_line(b, "if (!r->data || r->shape[0] != out%d_shape[0]) {", i);
    }
    b->indent++;
    be_line(b, "r->shape[0] = out%d_shape[0];", i);
    if (v->rank == 2) { be_line(b, "r->shape[1] = out%d_shape[1];", i); }
    be_line(b, "if (gpuc_value_alloc(r) != 0) {");
    be_line(b, "    %s", fail);
    be_line(b, "}");
    b->indent--;
    be_line(b, "}");
    be_line(b, "const int64_t cnt = out%d_shape[0] * out%d_shape[1];", i, i);
}

static const char *rc_message(bool shard) {
    return shard ? "    snprintf(err, errlen, rc == 3 ? \"a collective failed\" : \"the entry failed (%d)\", rc);"
                 : "    snprintf(err, errlen, \"the entry failed (%d)\", rc);";
}

/* gpuc_run_c_NAME: the entry on the C backend for the runner; with `shard`,
 * gpuc_run_shard_NAME: one rank's call of gpuc_shard_NAME on its shards. */
static void adapter(BeBuf *b, IrEntry *e, bool shard) {
    if (shard) {
        be_line(b, "static int gpuc_run_shard_%s(const GpucComm *comm, const GpucValue *args, GpucValue *results, char *err, size_t errlen) {", e->name);
    } else {
        be_line(b, "static int gpuc_run_c_%s(const GpucValue *args, GpucValue *results, char *err, size_t errlen) {", e->name);
    }
    b->indent++;
    be_line(b, "(void)args; (void)results; (void)err; (void)errlen;");
    sizes_from_args(b, e);
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        if (v->rank) {
            be_line(b, "%s *out%d = NULL;", ir_scalar_ctype(v->elem), i);
            be_line(b, "int64_t out%d_shape[2] = { 0, 1 };", i);
        } else {
            be_line(b, "%s out%d;", ir_scalar_ctype(v->elem), i);
        }
    }
    be_printf(b, "%*sint rc = %s%s(%s", b->indent * 4, "", shard ? "gpuc_shard_" : "gpuc_entry_", e->name, shard ? "comm" : "");
    bool first = !shard;
    for (int i = 0; i < e->nsizes; i++) {
        be_printf(b, "%s%s", first ? "" : ", ", be_vname(size_as_taken(e, e->sizes[i])));
        first = false;
    }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, "%s(const %s *)args[%d].data", first ? "" : ", ", ir_scalar_ctype(v->elem), i); }
        else { be_printf(b, "%s*(const %s *)args[%d].data", first ? "" : ", ", ir_scalar_ctype(v->elem), i); }
        first = false;
    }
    for (int i = 0; i < e->nresults; i++) {
        if (e->results[i]->rank) { be_printf(b, "%s&out%d, out%d_shape", first ? "" : ", ", i, i); }
        else { be_printf(b, "%s&out%d", first ? "" : ", ", i); }
        first = false;
    }
    be_printf(b, ");\n");
    be_line(b, "if (rc != 0) {");
    be_line(b, "    if (gpuc_oob_hit) {");
    be_line(b, "        gpuc_fail_text(err, errlen);");
    be_line(b, "        gpuc_oob_hit = 0;");
    be_line(b, "        return rc;");
    be_line(b, "    }");
    be_line(b, "%s", rc_message(shard));
    be_line(b, "    return rc;");
    be_line(b, "}");
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        const char *t = ir_scalar_ctype(v->elem);
        if (!v->rank) {
            be_line(b, "*(%s *)results[%d].data = out%d;", t, i, i);
            continue;
        }
        be_line(b, "{");
        b->indent++;
        char fail[128];
        snprintf(fail, sizeof fail, "free(out%d); snprintf(err, errlen, \"out of memory for the result\"); return 1;", i);
        result_storage(b, v, i, fail);
        be_line(b, "if (cnt > 0) {");
        be_line(b, "    memcpy(r->data, out%d, (size_t)cnt * sizeof(%s));", i, t);
        be_line(b, "}");
        be_line(b, "free(out%d);", i);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "return 0;");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "\n");
}

/* gpuc_run_cuda_NAME: the entry on the GPU for the runner; with `shard`,
 * gpuc_run_cuda_shard_NAME: one rank's call of gpuc_dev_shard_NAME on its
 * own context, with its own kernel cache (ranks are threads). */
static void cuda_adapter(BeBuf *b, IrEntry *e, bool shard) {
    if (shard) {
        be_line(b, "static inline int gpuc_run_cuda_shard_%s(const GpucComm *comm, GpucContext *ctx, GpucModule *module, GpucRun *run, const GpucValue *args, GpucValue *results, char *err, size_t errlen) {", e->name);
        b->indent++;
        be_line(b, "GpucKernels g_kernels;");
        be_line(b, "memset(&g_kernels, 0, sizeof g_kernels);");
    } else {
        be_line(b, "static inline int gpuc_run_cuda_%s(GpucContext *ctx, GpucModule *module, GpucRun *run, const GpucValue *args, GpucValue *results, char *err, size_t errlen) {", e->name);
        b->indent++;
        be_line(b, "static GpucKernels g_kernels;");
    }
    be_line(b, "GpucHost g_host, *gpuc_h = &g_host;");
    be_line(b, "gpuc_h_init(gpuc_h, ctx, module, &g_kernels);");
    be_line(b, "int g_rc = 0;");
    be_line(b, "(void)args; (void)results;");
    sizes_from_args(b, e);
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        const char *t = ir_scalar_ctype(v->elem);
        if (!v->rank) { continue; }
        be_line(b, "%s *g_d%d = NULL;", t, i);
        be_line(b, "{");
        be_line(b, "    const size_t g_bytes = (size_t)gpuc_value_count(&args[%d]) * sizeof(%s);", i, t);
        be_line(b, "    if ((g_rc = gpuc_run_input(run, %d, args[%d].data, g_bytes, (void **)&g_d%d)) != 0) { goto fail; }", i, i, i);
        be_line(b, "    if (!g_d%d && ((g_rc = gpuc_h_alloc(gpuc_h, (void **)&g_d%d, g_bytes)) != 0 || (g_bytes && (g_rc = gpuc_h_h2d(gpuc_h, g_d%d, args[%d].data, g_bytes)) != 0))) { goto fail; }", i, i, i, i);
        be_line(b, "}");
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
    /* scalar results: into device slots, copied back after the end mark, so
     * -t times up to the last kernel as for array results */
    bool slots = !shard && cuda_scalar_results(e);
    if (slots) {
        be_line(b, "(void)gpuc_dev_%s;   /* the _into form is the one timed */", e->name);
        be_line(b, "char *g_slots = NULL;");
        be_line(b, "if ((g_rc = gpuc_h_alloc(gpuc_h, (void **)&g_slots, %d)) != 0) { goto fail; }", 8 * e->nresults);
    }
    be_line(b, "gpuc_run_mark_start(run);");
    if (shard) { be_printf(b, "%*sg_rc = gpuc_dev_shard_%s(gpuc_h, comm", b->indent * 4, "", e->name); }
    else { be_printf(b, "%*sg_rc = gpuc_dev_%s%s(gpuc_h", b->indent * 4, "", e->name, slots ? "_into" : ""); }
    for (int i = 0; i < e->nsizes; i++) { be_printf(b, ", %s", be_vname(size_as_taken(e, e->sizes[i]))); }
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        if (v->rank) { be_printf(b, ", g_d%d", i); }
        else { be_printf(b, ", *(const %s *)args[%d].data", ir_scalar_ctype(v->elem), i); }
    }
    for (int i = 0; i < e->nresults; i++) {
        if (slots) { be_printf(b, ", (%s *)(g_slots + %d)", ir_scalar_ctype(e->results[i]->elem), 8 * i); }
        else if (e->results[i]->rank) { be_printf(b, ", &out%d, out%d_shape", i, i); }
        else { be_printf(b, ", &out%d", i); }
    }
    be_printf(b, ");\n");
    be_line(b, "gpuc_run_mark_end(run);");
    be_line(b, "if (g_rc != 0) { goto fail; }");
    for (int i = 0; slots && i < e->nresults; i++) {
        be_line(b, "if ((g_rc = gpuc_h_d2h(gpuc_h, &out%d, g_slots + %d, sizeof out%d)) != 0) { goto fail; }", i, 8 * i, i);
    }
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        const char *t = ir_scalar_ctype(v->elem);
        if (!v->rank) {
            be_line(b, "*(%s *)results[%d].data = out%d;", t, i, i);
            continue;
        }
        be_line(b, "{");
        b->indent++;
        result_storage(b, v, i, "gpuc_h_done(gpuc_h); snprintf(err, errlen, \"out of memory for the result\"); return 1;");
        be_line(b, "if (cnt > 0 && gpuc_run_wants_results(run) && (g_rc = gpuc_h_d2h(gpuc_h, r->data, out%d, (size_t)cnt * sizeof(%s))) != 0) { goto fail; }", i, t);
        b->indent--;
        be_line(b, "}");
    }
    be_line(b, "gpuc_h_done(gpuc_h);");
    be_line(b, "return 0;");
    b->indent--;
    be_line(b, "fail:");
    b->indent++;
    be_line(b, "if (gpuc_oob_hit) {");
    be_line(b, "    gpuc_fail_text(err, errlen);");
    be_line(b, "    gpuc_oob_hit = 0;");
    be_line(b, "} else {");
    be_line(b, "    const char *g_msg = gpuc_context_error(ctx);");
    be_line(b, "    snprintf(err, errlen, \"%%s\", g_msg ? g_msg : gpuc_status_string((GpucStatus)g_rc));");
    be_line(b, "}");
    be_line(b, "gpuc_h_done(gpuc_h);");
    be_line(b, "return 1;");
    b->indent--;
    be_line(b, "}");
    be_printf(b, "\n");
}

/* Which components of the arguments and results are split over the ranks. */
static void rank_table(BeBuf *b, IrEntry *e, bool gpu) {
    be_printf(b, "static const unsigned char gpuc_rank_args_%s[] = {", e->name);
    for (int i = 0; i < e->nparams; i++) {
        IrValue *v = e->params[i];
        bool split = false;
        for (int z = 0; z < e->nshards && v->rank; z++) { split = split || e->shards[z].local == v->dims[0]; }
        be_printf(b, " %d,", split ? 1 : 0);
    }
    be_printf(b, " 0 };\nstatic const unsigned char gpuc_rank_results_%s[] = {", e->name);
    for (int i = 0; i < e->nresults; i++) {
        IrValue *v = e->results[i];
        bool split = false;
        for (int z = 0; z < e->nshards && v->rank; z++) { split = split || e->shards[z].local == v->dims[0]; }
        be_printf(b, " %d,", split ? 1 : 0);
    }
    be_printf(b, " 0 };\n");
    be_printf(b, "static const GpucShardInfo gpuc_shard_info_%s = { gpuc_run_shard_%s, gpuc_rank_args_%s, gpuc_rank_results_%s, ",
              e->name, e->name, e->name, e->name);
    if (gpu) { be_printf(b, "GPUC_RUN_CUDA(gpuc_run_cuda_shard_%s) };\n\n", e->name); }
    else { be_printf(b, "NULL };\n\n"); }
}

int be_emit_program(FILE *out, IrModule *m) {
    if (be_emit_c(out, m) != 0) {
        return 1;
    }
    BeBuf b = { 0 };
    be_printf(&b, "\n/* ---- the program table for the runner (runner/gpuc_program.h) ---- */\n");
    be_printf(&b, "#include \"gpuc_program.h\"\n\n");
    for (int i = 0; i < m->nentries; i++) { adapter(&b, m->entries[i], false); }
    be_runtime_host_prelude(&b);
    be_cuda_host_entries(&b, m);
    cuda_host_into_scalar_entries(&b, m);
    for (int i = 0; i < m->nentries; i++) { cuda_adapter(&b, m->entries[i], false); }
    be_printf(&b, "/* the kernel images (driver/build_exe.c); without them, the C backend only */\n"
                  "#ifdef GPUC_IMAGES\n"
                  "#include GPUC_IMAGES\n"
                  "#define GPUC_NUM_IMAGES ((int)(sizeof gpuc_images / sizeof gpuc_images[0]))\n"
                  "#define GPUC_IMAGE_TABLE gpuc_images\n"
                  "#define GPUC_RUN_CUDA(f) f\n"
                  "#else\n"
                  "#define GPUC_NUM_IMAGES 0\n"
                  "#define GPUC_IMAGE_TABLE NULL\n"
                  "#define GPUC_RUN_CUDA(f) NULL\n"
                  "#endif\n\n");
    /* the sharded entries: ir_shard rewrites the module in place, so after
     * everything above (text already) that needs the plain IR */
    fwrite(b.p, 1, b.n, out);
    b.n = 0;
    ir_shard(m, false);
    if (be_emit_c_shard(out, m, false) != 0) {
        be_buf_free(&b);
        return 1;
    }
    /* the GPU's sharded launchers over the runtime (the kernels are in the
     * images, GPUC_EMIT_CUDA_KERNELS); the C backend's gpuc_shard_size above
     * has other parameters than the launchers' */
    bool *gpu = calloc((size_t)m->nentries + 1, sizeof *gpu);
    be_printf(&b, "/* ---- the sharded entries on the GPU (prog --ranks N, runner/rn_ranks.c) ---- */\n"
                  "#define GPUC_H_COMM_STREAM(h) gpuc_stream_handle((h)->ctx, NULL)\n"
                  "#define GPUC_H_COMM_SYNC(h) ((int)gpuc_stream_synchronize((h)->ctx, NULL))\n"
                  "#define gpuc_shard_size gpuc_dev_shard_size\n");
    be_cuda_shard_launchers(&b, m, gpu);
    be_printf(&b, "#undef gpuc_shard_size\n\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        if (!e->sharded) { continue; }
        adapter(&b, e, true);
        if (gpu[i]) { cuda_adapter(&b, e, true); }
        rank_table(&b, e, gpu[i]);
    }
    free(gpu);
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        be_printf(&b, "static const GpucParam gpuc_params_%s[] = {\n", e->name);
        for (int g = 0; g < e->ngroups_in; g++) {
            be_printf(&b, "    { ");
            be_c_string(&b, e->groups_in[g].name);
            be_printf(&b, ", ");
            be_c_string(&b, e->param_types ? e->param_types[g] : "?");
            be_printf(&b, " },\n");
        }
        if (!e->ngroups_in) { be_printf(&b, "    { 0, 0 },\n"); }
        be_printf(&b, "};\n");
    }
    be_printf(&b, "static const GpucEntry gpuc_entries[] = {\n");
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        be_printf(&b, "    { \"%s\", %d, gpuc_params_%s, ", e->name, e->ngroups_in, e->name);
        be_c_string(&b, e->result_type ? e->result_type : "?");
        be_printf(&b, ", gpuc_run_c_%s, GPUC_RUN_CUDA(gpuc_run_cuda_%s), ", e->name, e->name);
        if (e->sharded) { be_printf(&b, "&gpuc_shard_info_%s },\n", e->name); }
        else { be_printf(&b, "NULL },\n"); }
    }
    if (!m->nentries) { be_printf(&b, "    { 0, 0, 0, 0, 0, 0, 0 },\n"); }
    be_printf(&b, "};\n");
    be_printf(&b, "static const GpucProgram gpuc_program = { \"%s\", %d, gpuc_entries, GPUC_NUM_IMAGES, GPUC_IMAGE_TABLE };\n\n", "gpuc", m->nentries);
    be_printf(&b, "int main(int argc, char **argv) {\n    return gpuc_program_main(&gpuc_program, argc, argv);\n}\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    return 0;
}
