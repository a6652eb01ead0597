/* bench_matmul.cu: gpuc driver for bench/programs/matmul.gdsl (the seed's
 * templated tiled float64 product, 1024 x 1024, TILE 32), checked against a
 * host float64 product.
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

BENCH_CASE(matmul, [] {
    const int64_t N = 1024;
    double *A = dev_random<double>(N * N, 71, POSITIVE);
    double *B = dev_random<double>(N * N, 72, POSITIVE);
    auto run = [&] {
        double *o = nullptr;
        int64_t s[2] = {0, 0};
        gpuc_dev_matmul(0, N, N, N, A, B, &o, s);
        gpuc_h_free(0, o);
    };
    Timing t = time_it(run, 100, 100.0);
    poison_cache();
    double *o = nullptr;
    int64_t s[2] = {0, 0};
    gpuc_dev_matmul(0, N, N, N, A, B, &o, s);
    std::string chk;
    if (s[0] != N || s[1] != N) {
        chk = "WRONG shape";
    } else {
        std::vector<double> ha = to_host(A, N * N), hb = to_host(B, N * N), g = to_host(o, N * N);
        std::vector<double> ref((size_t)(N * N), 0.0);
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = 0; k < N; k++) {
                const double aik = ha[i * N + k];
                for (int64_t j = 0; j < N; j++) ref[i * N + j] += aik * hb[k * N + j];
            }
        chk = compare(g.data(), ref.data(), N * N, 1e-12, 0);
    }
    gpuc_h_free(0, o);
    char ex[64];
    snprintf(ex, sizeof ex, ", \"gflops\": %.1f", 2.0 * N * N * N / (t.med_us * 1e3));
    emit("matmul", "f64", N, N, &t, chk.c_str(), ex);
    BK(cudaFree(A));
    BK(cudaFree(B));
});
