// Runs gpuc's generated negmax_k0_reduce (max(-(i32)x) over u32, 16-byte vector path) against the host.
#define GPUC_NO_HOST
#include "negmax.cu"   /* gpuc --emit=cuda of negmax.gdsl */
#include <cstdio>
#include <cstdlib>
int main() {
    int bad = 0;
    for (int n : {4, 5, 64, 129, 4096, 100000}) {
        uint32_t *h = (uint32_t *)malloc(n * 4); int want = -2147483647 - 1;
        srand(n); for (int i = 0; i < n; i++) { h[i] = 5 + rand() % 995; int v = -(int)h[i]; if (v > want) want = v; }
        uint32_t *d; int *o, *part; unsigned *done; int r = 0;
        cudaMalloc(&d, n * 4); cudaMalloc(&o, 4); cudaMalloc(&part, 4096 * 4); cudaMalloc(&done, 4); cudaMemset(done, 0, 4);
        cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
        long long nn = n; unsigned grid = (n + 767) / 768; if (grid > 132) grid = 132;
        negmax_k0_reduce<<<grid, 64>>>(nn, d, o, part, done);
        cudaMemcpy(&r, o, 4, cudaMemcpyDeviceToHost);
        printf("  n=%d want %d got %d %s\n", n, want, r, r == want ? "ok" : "WRONG");
        bad += r != want;
        cudaFree(d); cudaFree(o); cudaFree(part); cudaFree(done); free(h);
    }
    return bad != 0;
}
