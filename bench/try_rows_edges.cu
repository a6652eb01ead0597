/* bench/try_rows_edges.cu: row softmax (or with -DEDGE_LN, LayerNorm) at
 * the edges of the long-row kernels, every element checked against a host
 * float64 reference: rows of 262143..262145 and 1048576 (clusters with a
 * stash; 1048576 also reads beyond it), 32768 (the big block), 65536 (the
 * register-only cluster kernel); one row, a few rows, and more rows than
 * are resident at once (over 33 clusters, over 132 big blocks), counts that
 * do not divide evenly. Built by bench/try_rows.sh with the emitted CUDA C
 * of bench/programs/rows.gdsl (rows_nn.gdsl) included first and each
 * -DGPUC_ROW_PERSIST; prints one line per shape and "edges: PASS" or
 * "edges: FAIL", exit 1 on a wrong result or a failed call. */
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

static int check(int64_t n, int64_t m, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    std::vector<float> a((size_t)(n * m)), out((size_t)(n * m)), w((size_t)m), bias((size_t)m);
    for (auto &x : a) { x = dist(rng); }
    for (auto &x : w) { x = dist(rng); }
    for (auto &x : bias) { x = dist(rng); }
    float *da = nullptr, *dout = nullptr, *dw = nullptr, *db = nullptr;
    size_t bytes = a.size() * sizeof(float);
    if (cudaMalloc(&da, bytes) || cudaMalloc(&dout, bytes) || cudaMalloc(&dw, m * sizeof(float)) || cudaMalloc(&db, m * sizeof(float))) {
        printf("rows of %lld x %lld: cudaMalloc failed\n", (long long)n, (long long)m);
        return 1;
    }
    cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dw, w.data(), m * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, bias.data(), m * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(dout, 0xff, bytes);  /* NaN: an element not written fails */
#ifdef EDGE_LN
    int rc = gpuc_dev_layer_norm_into(0, n, m, da, dw, db, dout);
#else
    int rc = gpuc_dev_row_softmax_into(0, n, m, da, dout);
#endif
    cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(out.data(), dout, bytes, cudaMemcpyDeviceToHost);
    cudaFree(da); cudaFree(dout); cudaFree(dw); cudaFree(db);
    if (rc || e != cudaSuccess) {
        printf("rows of %lld x %lld: call failed (%d, %s)\n", (long long)n, (long long)m, rc, cudaGetErrorString(e));
        return 1;
    }
    int64_t bad = 0, first = -1;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *x = &a[(size_t)(i * m)];
        const float *y = &out[(size_t)(i * m)];
#ifdef EDGE_LN
        double s = 0, q = 0;
        for (int64_t j = 0; j < m; j++) { s += x[j]; q += (double)x[j] * x[j]; }
        double mu = s / m, r = 1.0 / std::sqrt(q / m - mu * mu + 1e-5);
        for (int64_t j = 0; j < m; j++) {
            double ref = (x[j] - mu) * r * w[(size_t)j] + bias[(size_t)j], err = std::fabs(y[j] - ref);
            if (!(err <= 1e-3 + 1e-3 * std::fabs(ref))) { if (first < 0) { first = i * m + j; } bad++; }
            if (err > worst) { worst = err; }
        }
#else
        double mx = -INFINITY, s = 0;
        for (int64_t j = 0; j < m; j++) { mx = x[j] > mx ? x[j] : mx; }
        for (int64_t j = 0; j < m; j++) { s += std::exp(x[j] - mx); }
        for (int64_t j = 0; j < m; j++) {
            double ref = std::exp(x[j] - mx) / s, err = std::fabs(y[j] - ref);
            if (!(err <= 1e-12 + 1e-4 * ref)) { if (first < 0) { first = i * m + j; } bad++; }
            if (err / ref > worst) { worst = err / ref; }
        }
#endif
    }
    printf("rows of %lld x %lld: %s (worst error %.3g%s)\n", (long long)n, (long long)m, bad ? "WRONG" : "ok", worst,
           bad ? ", first wrong element below" : "");
    if (bad) { printf("  %lld wrong, first at %lld: %g\n", (long long)bad, (long long)first, out[(size_t)first]); }
    return bad ? 1 : 0;
}

int main() {
    static const long long shapes[][2] = {
        { 1, 262144 }, { 3, 262143 }, { 2, 262145 }, { 40, 262144 }, { 67, 262147 }, { 3, 1048576 },
        { 1, 32768 }, { 300, 32768 }, { 133, 32772 }, { 45, 65536 },
    };
    int fails = 0;
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) { fails += check(shapes[i][0], shapes[i][1], 1600 + i); }
    printf("edges: %s\n", fails ? "FAIL" : "PASS");
    return fails ? 1 : 0;
}
