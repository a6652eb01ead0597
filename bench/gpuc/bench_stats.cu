/* bench_stats.cu: gpuc driver for bench/programs/stats.gdsl (logsumexp,
 * softmax statistics (max, sum of exp(x - max)), mean and variance; each
 * should read its input once).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

/* x uniform in [-4, 4): generated in [-1, 1) and scaled on the device */
__global__ void scale_kernel(float *x, int64_t n, float s)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        x[i] *= s;
}

template <typename F, typename R>
static void stat2(const char *name, int nres, F call, R ref, double rtol, double atol = 0)
{
    for (int64_t n : sizes_for(4, false, 1)) {
        float *x = dev_random<float>(n, 501 + n, UNIFORM);
        scale_kernel<<<1024, 256>>>(x, n, 4.0f);
        BK(cudaGetLastError());
        float *d = dev_scalar<float>() , *d1 = dev_scalar<float>();
        Timing t = time_it([&] { call(n, x, d, d1); });
        poison_cache();
        int rc = call(n, x, poison_scalar(d), poison_scalar(d1));
        float r0 = scalar_result(rc, d), r1 = scalar_result(rc, d1);
        std::vector<float> h = to_host(x, n);
        double q0 = 0, q1 = 0;
        ref(h, &q0, &q1);
        float g[2] = {r0, r1};
        double q[2] = {q0, q1};
        std::string chk = compare(g, q, nres, rtol, atol);
        emit(name, "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(x));
        BK(cudaFree(d));
        BK(cudaFree(d1));
    }
}

static void ref_stats(const std::vector<float> &h, double *m, double *s)
{
    double mx = -INFINITY;
    for (float v : h) mx = v > mx ? v : mx;
    double acc = 0;
    for (float v : h) acc += std::exp((double)v - mx);
    *m = mx;
    *s = acc;
}

BENCH_CASE(logsumexp, [] {
    stat2(
        "logsumexp", 1, [](int64_t n, const float *x, float *r0, float *r1) {
            (void)r1;  /* one result: r1 stays poisoned and is not compared */
            return gpuc_dev_logsumexp_f32_into(0, n, x, r0);
        },
        [](const std::vector<float> &h, double *a, double *b) {
            double m, s;
            ref_stats(h, &m, &s);
            *a = m + std::log(s);
            *b = 0;
        },
        1e-5);
});

BENCH_CASE(softmax_stats, [] {
    stat2(
        "softmax_stats", 2, [](int64_t n, const float *x, float *r0, float *r1) { return gpuc_dev_softmax_stats_into(0, n, x, r0, r1); },
        ref_stats, 1e-5);
});

BENCH_CASE(mean_var, [] {
    stat2(
        "mean_var", 2, [](int64_t n, const float *x, float *r0, float *r1) { return gpuc_dev_mean_var_f32_into(0, n, x, r0, r1); },
        [](const std::vector<float> &h, double *m, double *v) {
            double s = 0;
            for (float x : h) s += x;
            double mean = s / (double)h.size(), q = 0;
            for (float x : h) q += ((double)x - mean) * ((double)x - mean);
            *m = mean;
            *v = q / (double)h.size();
        },
        1e-4, 1e-5);
});
