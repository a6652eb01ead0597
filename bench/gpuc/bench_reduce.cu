/* bench_reduce.cu: gpuc driver for bench/programs/reduce.gdsl (sum and max
 * for f32, f64, i32, i64; dot and sum of squares in f32).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

/* sum: dyadic floats and small integers, so the reference is exact in any
 * order (integers wrap identically); max: uniform floats, full-range ints */
template <typename T>
static void reduce1(const char *name, int (*fn)(GpucHost *, int64_t, const T *, T *), bool is_max)
{
    const bool flt = (T)0.5 != (T)0;
    int kind = is_max ? (flt ? UNIFORM : FULLINT) : (flt ? DYADIC : SMALLINT);
    for (int64_t n : sizes_for(sizeof(T), true, 1)) {
        T *x = dev_random<T>(n, 201 + n, kind);
        T *dr = dev_scalar<T>(), r;
        Timing t = time_it([&] { fn(0, n, x, dr); });
        poison_cache();
        r = scalar_result(fn(0, n, x, poison_scalar(dr)), dr);
        std::vector<T> h = to_host(x, n);
        T ref = is_max ? h[0] : (T)0;
        for (int64_t i = 0; i < n; i++) {
            if (is_max) ref = h[i] > ref ? h[i] : ref;
            else ref = flt ? (T)(ref + h[i]) : (T)((uint64_t)ref + (uint64_t)h[i]);
        }
        std::string chk = compare(&r, &ref, 1, 0, 0);
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str());
        BK(cudaFree(x));
        BK(cudaFree(dr));
    }
}

BENCH_CASE(sum_f32, [] { reduce1<float>("sum", gpuc_dev_sum_f32_into, false); });
BENCH_CASE(sum_f64, [] { reduce1<double>("sum", gpuc_dev_sum_f64_into, false); });
BENCH_CASE(sum_i32, [] { reduce1<int32_t>("sum", gpuc_dev_sum_i32_into, false); });
BENCH_CASE(sum_i64, [] { reduce1<int64_t>("sum", gpuc_dev_sum_i64_into, false); });
BENCH_CASE(max_f32, [] { reduce1<float>("max", gpuc_dev_max_f32_into, true); });
BENCH_CASE(max_f64, [] { reduce1<double>("max", gpuc_dev_max_f64_into, true); });
BENCH_CASE(max_i32, [] { reduce1<int32_t>("max", gpuc_dev_max_i32_into, true); });
BENCH_CASE(max_i64, [] { reduce1<int64_t>("max", gpuc_dev_max_i64_into, true); });

/* dot of dyadic floats: products are multiples of 1/64 and every partial sum
 * stays far below 2^18, so the result is exact; sum of squares of uniform
 * floats is checked with a tolerance relative to the sum. */
BENCH_CASE(dot_f32, [] {
    for (int64_t n : sizes_for(4, false, 2)) {
        float *x = dev_random<float>(n, 211 + n, DYADIC);
        float *y = dev_random<float>(n, 212 + n, DYADIC);
        float *dr = dev_scalar<float>();
        Timing t = time_it([&] { gpuc_dev_dot_f32_into(0, n, x, y, dr); });
        poison_cache();
        float r = scalar_result(gpuc_dev_dot_f32_into(0, n, x, y, poison_scalar(dr)), dr);
        std::vector<float> hx = to_host(x, n), hy = to_host(y, n);
        double ref = 0;
        for (int64_t i = 0; i < n; i++) ref += (double)hx[i] * hy[i];
        std::string chk = compare(&r, &ref, 1, 0, 0);
        emit("dot", "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(x));
        BK(cudaFree(y));
        BK(cudaFree(dr));
    }
});

BENCH_CASE(sumsq_f32, [] {
    for (int64_t n : sizes_for(4, false, 1)) {
        float *x = dev_random<float>(n, 221 + n, UNIFORM);
        float *dr = dev_scalar<float>();
        Timing t = time_it([&] { gpuc_dev_sumsq_f32_into(0, n, x, dr); });
        poison_cache();
        float r = scalar_result(gpuc_dev_sumsq_f32_into(0, n, x, poison_scalar(dr)), dr);
        std::vector<float> hx = to_host(x, n);
        double ref = 0;
        for (int64_t i = 0; i < n; i++) ref += (double)hx[i] * hx[i];
        std::string chk = compare(&r, &ref, 1, 1e-5, 0);
        emit("sumsq", "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(x));
        BK(cudaFree(dr));
    }
});
