/* bench_elementwise.cu: gpuc driver for bench/programs/elementwise.gdsl
 * (saxpy; the chain exp(-x*x)*sin(y)+2x, which should be one kernel).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

template <typename F, typename R>
static void map2(const char *name, F call, R ref, double rtol, double atol)
{
    for (int64_t n : sizes_for(4, false, 3)) {
        float *x = dev_random<float>(n, 101 + n, UNIFORM);
        float *y = dev_random<float>(n, 102 + n, UNIFORM);
        auto run = [&] {
            float *o = nullptr;
            int64_t shape[2] = {0, 0};
            call(n, x, y, &o, shape);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        float *o = nullptr;
        int64_t shape[2] = {0, 0};
        call(n, x, y, &o, shape);
        std::string chk = "ok";
        if (shape[0] != n) {
            chk = "WRONG shape";
        } else {
            std::vector<float> hx = to_host(x, n), hy = to_host(y, n), g = to_host(o, n);
            std::vector<double> r((size_t)n);
            for (int64_t i = 0; i < n; i++) r[i] = ref((double)hx[i], (double)hy[i]);
            chk = compare(g.data(), r.data(), n, rtol, atol);
        }
        gpuc_h_free(0, o);
        emit(name, "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(x));
        BK(cudaFree(y));
    }
}

BENCH_CASE(saxpy, [] {
    map2(
        "saxpy",
        [](int64_t n, const float *x, const float *y, float **o, int64_t *s) { gpuc_dev_saxpy(0, n, 0.75f, x, y, o, s); },
        [](double x, double y) { return 0.75 * x + y; }, 1e-6, 1e-6);
});

BENCH_CASE(chain, [] {
    map2(
        "chain",
        [](int64_t n, const float *x, const float *y, float **o, int64_t *s) { gpuc_dev_chain(0, n, x, y, o, s); },
        [](double x, double y) { return std::exp(-x * x) * std::sin(y) + 2.0 * x; }, 1e-5, 1e-5);
});
