/* bench_scan.cu: gpuc driver for bench/programs/scan.gdsl (inclusive and
 * exclusive prefix sums on i32, f32, i64; the affine recurrence tuple scan).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

/* dyadic floats and small integers: every prefix is exact whatever the
 * association, so results are compared exactly */
template <typename T>
static void scan1(const char *name, int (*fn)(GpucHost *, int64_t, const T *, T **, int64_t *), bool inclusive)
{
    const bool flt = (T)0.5 != (T)0;
    for (int64_t n : sizes_for(sizeof(T), inclusive, 2)) {
        T *x = dev_random<T>(n, 301 + n, flt ? DYADIC : SMALLINT);
        auto run = [&] {
            T *o = nullptr;
            int64_t s[2] = {0, 0};
            fn(0, n, x, &o, s);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        T *o = nullptr;
        int64_t s[2] = {0, 0};
        fn(0, n, x, &o, s);
        std::string chk;
        if (s[0] != n) {
            chk = "WRONG shape";
        } else {
            std::vector<T> h = to_host(x, n), g = to_host(o, n), ref((size_t)n);
            T acc = 0;
            for (int64_t i = 0; i < n; i++) {
                if (!inclusive) ref[i] = acc;
                acc = flt ? (T)(acc + h[i]) : (T)((uint64_t)acc + (uint64_t)h[i]);
                if (inclusive) ref[i] = acc;
            }
            chk = compare(g.data(), ref.data(), n, 0, 0);
        }
        gpuc_h_free(0, o);
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str());
        BK(cudaFree(x));
    }
}

BENCH_CASE(incl_i32, [] { scan1<int32_t>("scan_incl", gpuc_dev_incl_i32, true); });
BENCH_CASE(incl_f32, [] { scan1<float>("scan_incl", gpuc_dev_incl_f32, true); });
BENCH_CASE(incl_i64, [] { scan1<int64_t>("scan_incl", gpuc_dev_incl_i64, true); });
BENCH_CASE(excl_i32, [] { scan1<int32_t>("scan_excl", gpuc_dev_excl_i32, false); });
BENCH_CASE(excl_f32, [] { scan1<float>("scan_excl", gpuc_dev_excl_f32, false); });
BENCH_CASE(excl_i64, [] { scan1<int64_t>("scan_excl", gpuc_dev_excl_i64, false); });

/* x[i] = a[i] * x[i-1] + b[i], a and b uniform in [-1, 1): a sequential
 * double-precision reference; a wrong (commuted) composition is far off */
BENCH_CASE(recurrence, [] {
    for (int64_t n : sizes_for(4, false, 3)) {
        float *a = dev_random<float>(n, 311 + n, UNIFORM);
        float *b = dev_random<float>(n, 312 + n, UNIFORM);
        auto run = [&] {
            float *o = nullptr;
            int64_t s[2] = {0, 0};
            gpuc_dev_recurrence(0, n, a, b, &o, s);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        float *o = nullptr;
        int64_t s[2] = {0, 0};
        gpuc_dev_recurrence(0, n, a, b, &o, s);
        std::string chk;
        if (s[0] != n) {
            chk = "WRONG shape";
        } else {
            std::vector<float> ha = to_host(a, n), hb = to_host(b, n), g = to_host(o, n);
            std::vector<double> ref((size_t)n);
            double v = 0;
            for (int64_t i = 0; i < n; i++) ref[i] = v = ha[i] * v + hb[i];
            chk = compare(g.data(), ref.data(), n, 1e-3, 1e-4);
        }
        gpuc_h_free(0, o);
        emit("recurrence", "f32", n, 0, &t, chk.c_str());
        BK(cudaFree(a));
        BK(cudaFree(b));
    }
});
