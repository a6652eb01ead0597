# make variants of bench/gen/rows.cu's long-row softmax kernel's post (experiment)
import re, sys
src = open('bench/gen/rows.cu').read()
start = src.index('row_softmax_k0_rowred_st(const int64_t v_n')
end = src.index('\n}\n', start)
k = src[start:end]
helper = r'''
__device__ __forceinline__ float sv_div(float a, float b, float y) {
    /* a / b, correctly rounded, with y = RN(1/b) (Markstein): the fast path in the normal range */
    const float q = a * y;
    const float r = fmaf(-q, b, a);
    const float q2 = fmaf(r, y, q);
    if (fabsf(a) >= 0x1p-100f && fabsf(a) <= 0x1p100f && fabsf(b) >= 0x1p-100f && fabsf(b) <= 0x1p100f) return q2;
    return a / b;
}
'''
def variant(name):
    kk = k
    post = kk.index('float r0_1 = g_tot6_0_1[g_s];')
    kk = kk[:post] + 'float r0_1 = g_tot6_0_1[g_s];\n                const float g_inv = 1.0f / r0_1;' + kk[post+len('float r0_1 = g_tot6_0_1[g_s];'):]
    if name in ('rcp', 'fastexp'):
        kk = re.sub(r'\((t\d+) / r0_1\)', r'(\1 * g_inv)', kk)
    if name == 'mark':
        kk = re.sub(r'\((t\d+) / r0_1\)', r'sv_div(\1, r0_1, g_inv)', kk)
    if name == 'fastexp':
        kk = kk.replace('expf(', '__expf(')
    out = src[:start] + kk + src[end:]
    i = out.index('extern "C" __global__ void __launch_bounds__(640, 1)\nrow_softmax_k0_rowred_st')
    out = out[:i] + helper + out[i:]
    open(f'/tmp/sv/{name}/rows.cu', 'w').write(out)
import os
for n in sys.argv[1:]:
    os.makedirs(f'/tmp/sv/{n}', exist_ok=True); variant(n)
