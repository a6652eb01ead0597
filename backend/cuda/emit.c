/* emit.c: the CUDA C backend's entry point be_emit_cuda and the order of
 * its output.
 *
 * One `extern "C" __global__` function per kernel of the kernel IR, each
 * with a comment naming the .gdsl line and what was fused into it; one file
 * per kernel kind (the table below), shared parts in signature.c,
 * element.c, stride.c and combine.c, host launchers in launch.c, preludes
 * in prelude.c, all over the context in cuda_emit.h.  The output, in order:
 *   banner, include guard, the entries' template parameters as macros,
 *   the device prelude (once per translation unit), the kernels of every
 *   entry in order, then (under nvcc or GPUC_CUDA_HOST, unless
 *   GPUC_NO_HOST) the host prelude and the launchers gpuc_dev_NAME,
 *   gpuc_dev_NAME_into, and with GPUC_MAIN gpuc_entry_NAME and the text main.
 * The file needs no headers under NVRTC (docs/cuda_include.md).
 */
#include "cuda_emit.h"

/* The emit function of each kernel kind: adding a kind is one file and one
 * row here; every IrKernelKind (ir/ir.h) has a row.  IR_K_HOST kernels
 * run on the host: launch.c writes them. */
typedef void (*CuKernelEmitter)(CuEmit *c, IrKernel *k);
static const CuKernelEmitter kernel_emitters[] = {
    [IR_K_MAP] = emit_map,               /* map.c */
    [IR_K_REDUCE] = emit_reduce,         /* reduce.c */
    [IR_K_SCAN] = emit_scan,             /* scan.c */
    [IR_K_FILTER] = emit_filter,         /* scan.c */
    [IR_K_SCATTER] = emit_scatter_kernel, /* scatter.c */
    [IR_K_SEGRED_ROW] = emit_segred_row, /* rows.c */
    [IR_K_SEGRED_COL] = emit_segred_col, /* cols.c */
    [IR_K_MATMUL] = emit_matmul,         /* matmul.c */
    [IR_K_HOST] = NULL,
};

void cuda_emit_init(CuEmit *c, BeBuf *b, IrModule *m) {
    memset(c, 0, sizeof *c);
    c->b = b;
    c->m = m;
    c->x.b = b;
    c->x.cuda = true;
}

/* One kernel through its kind's emit function, from fresh temporaries. */
static void emit_kernel(CuEmit *c, IrKernel *k) {
    c->x.ntmp = 0;
    be_expr_reset(&c->x);
    kernel_emitters[k->kind](c, k);
}

/* The kernels of entry e in order (the host ones are the launchers').
 * Sharded (c->shard, shard.c): a sharded statement's kernel indexes from
 * the shard's first row g_shard_off, and a sharded scan has its totals
 * kernel before it and its fix-up kernel after it. */
void cuda_entry_kernels(CuEmit *c, IrEntry *e) {
    c->e = e;
    for (int j = 0; j < e->nkernels; j++) {
        IrKernel *k = &e->kernels[j];
        if (!kernel_emitters[k->kind]) { continue; }
        IrKernel *total = c->shard ? cuda_shard_total(k) : NULL;
        c->x.idx0_offset = c->shard && k->stmt && k->stmt->sharded ? "g_shard_off" : NULL;
        if (total) { emit_kernel(c, total); }
        emit_kernel(c, k);
        c->x.idx0_offset = NULL;
        if (c->shard) { cuda_shard_fix_kernel(c, k); }
    }
}

/* An identifier from the source file's name, for the include guard. */
static void guard_name(BeBuf *b, const char *file) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    be_printf(b, "GPUC_CUH_");
    for (const char *p = base; *p; p++) {
        char ch = *p;
        be_printf(b, "%c", (ch >= 'a' && ch <= 'z') ? ch - 32 : ((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_');
    }
}

/* The entries' template parameters as macros with the values gpuc chose.
 * They are baked into the kernels (unrolled loops, shared-memory arrays,
 * launch bounds), so none can change after generation: a different value
 * defined before the #include is an error naming the gpuc -D that does it. */
static void template_defines(BeBuf *b, IrModule *m) {
    bool any = false;
    for (int i = 0; i < m->nentries; i++) {
        IrEntry *e = m->entries[i];
        for (int t = 0; t < e->ntargs; t++) {
            IrTemplateArg *a = &e->targs[t];
            if (!any) {
                be_printf(b, "/* Template parameters of the entries, as chosen when this file was generated.\n"
                             " * They shape the kernels, so they cannot be overridden here: a different value\n"
                             " * defined before the #include is an error; regenerate with gpuc -D ENTRY.NAME=VALUE. */\n");
                any = true;
            }
            const char *val = a->is_type ? ct(a->type) : NULL;
            char num[32];
            if (!val) { snprintf(num, sizeof num, "%lld", (long long)a->value); val = num; }
            be_printf(b, "#ifndef GPUC_%s_%s\n#define GPUC_%s_%s %s\n", e->name, a->name, e->name, a->name, val);
            if (a->is_type) {
                be_printf(b, "#else\n#error \"GPUC_%s_%s: the type parameter is fixed at generation (%s); regenerate with gpuc -D %s.%s=TYPE\"\n",
                          e->name, a->name, ir_scalar_name(a->type), e->name, a->name);
            } else {
                be_printf(b, "#elif GPUC_%s_%s != %s\n#error \"GPUC_%s_%s differs from the value the kernels were generated with (%s); regenerate with gpuc -D %s.%s=VALUE\"\n",
                          e->name, a->name, val, e->name, a->name, val, e->name, a->name);
            }
            be_printf(b, "#endif\n");
        }
    }
    if (any) { be_printf(b, "\n"); }
}

int be_emit_cuda(FILE *out, IrModule *m) {
    BeBuf b = { 0 };
    CuEmit c;
    cuda_emit_init(&c, &b, m);
    shared_id = 0;
    be_printf(&b, "/* Generated by gpuc from %s: CUDA C, one extern \"C\" __global__ per kernel.\n"
                  " * Compiles with NVRTC as is. Included in a .cu file compiled by nvcc it also\n"
                  " * has static host launchers over the CUDA runtime API (no gpuc runtime), per\n"
                  " * entry NAME:\n"
                  " *   int gpuc_dev_NAME(cudaStream_t, sizes, params, T **outI, int64_t *outI_shape)\n"
                  " *     array results are device arrays allocated by the launcher: free each\n"
                  " *     with gpuc_h_free(stream, p) (not cudaFree); outI_shape gets rows, columns\n"
                  " *   int gpuc_dev_NAME_into(cudaStream_t, sizes, params, T *outI)\n"
                  " *     (when the result sizes follow from the arguments) into device memory\n"
                  " *     the caller allocated: arrays, and scalars (one element each)\n"
                  " * Arrays are device pointers; sizes come first, one int64_t per size name.\n"
                  " * Launchers return 0, a cudaError_t, or -1 for an index out of bounds\n"
                  " * (gpuc_oob_at[0] is the index, gpuc_oob_at[1] the size, until the next call)\n"
                  " * or a run-time size error (gpuc_size_msg is then its message, else empty).\n"
                  " * They are asynchronous on the stream except where the host needs a scalar\n"
                  " * or an array is indexed (the bounds check waits). Not thread-safe (device\n"
                  " * blocks are cached per translation unit). Include it in one .cu file of a\n"
                  " * program. -DGPUC_NO_HOST leaves the launchers out; -DGPUC_MAIN adds a main\n"
                  " * reading arguments as text on stdin. See docs/cuda_include.md. */\n", m->file);
    be_printf(&b, "#ifndef ");
    guard_name(&b, m->file);
    be_printf(&b, "\n#define ");
    guard_name(&b, m->file);
    be_printf(&b, "\n\n");
    template_defines(&b, m);
    /* the preludes once per translation unit (several programs may be
     * included); under nvcc the prelude's five global variables get the
     * program's name, so programs in several .cu files of one executable
     * link (its functions are inline) */
    be_printf(&b, "#ifndef GPUC_CUDA_PRELUDE_\n#define GPUC_CUDA_PRELUDE_\n"
                  "#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n");
    static const char *const globals[] = { "gpuc_oob_hit", "gpuc_oob_at", "gpuc_oob_flag_d", "gpuc_oob_rec_d", "gpuc_size_msg" };
    for (int i = 0; i < 5; i++) {
        be_printf(&b, "#define %s %s_", globals[i], globals[i]);
        guard_name(&b, m->file);
        be_printf(&b, "\n");
    }
    be_printf(&b, "#endif\n");
    be_prelude(&b, true);
    cuda_device_prelude(&b);
    be_printf(&b, "#endif /* GPUC_CUDA_PRELUDE_ */\n\n");
    for (int i = 0; i < m->nentries; i++) { cuda_entry_kernels(&c, m->entries[i]); }
    be_printf(&b, "#if (defined(GPUC_CUDA_HOST) || (defined(__CUDACC__) && !defined(__CUDACC_RTC__))) && !defined(GPUC_NO_HOST)\n");
    be_printf(&b, "#ifndef GPUC_CUDA_HOST_PRELUDE_\n#define GPUC_CUDA_HOST_PRELUDE_\n");
    nvcc_host_prelude(&b);
    be_printf(&b, "#endif /* GPUC_CUDA_HOST_PRELUDE_ */\n");
    be_cuda_host_entries(&b, m);
    cuda_host_into_entries(&b, m);
    be_printf(&b, "#ifdef GPUC_MAIN\n");
    for (int i = 0; i < m->nentries; i++) { host_array_entry(&c, m->entries[i]); }
    be_main(&b, m);
    be_printf(&b, "#endif /* GPUC_MAIN */\n");
    be_printf(&b, "#endif /* host launchers */\n");
    be_printf(&b, "#endif /* include guard */\n");
    fwrite(b.p, 1, b.n, out);
    be_buf_free(&b);
    be_expr_free(&c.x);
    return 0;
}
