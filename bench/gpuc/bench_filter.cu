/* bench_filter.cu: gpuc driver for bench/programs/filter.gdsl (compaction of
 * the positive elements, about half, of f32 and i32 arrays).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

template <typename T>
static void filter1(const char *name, int (*fn)(GpucHost *, int64_t, const T *, T **, int64_t *))
{
    const bool flt = (T)0.5 != (T)0;
    for (int64_t n : sizes_for(sizeof(T), false, 2)) {
        T *x = dev_random<T>(n, 401 + n, flt ? UNIFORM : SMALLINT);
        auto run = [&] {
            T *o = nullptr;
            int64_t s[2] = {0, 0};
            fn(0, n, x, &o, s);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        T *o = nullptr;
        int64_t s[2] = {-1, 0};
        fn(0, n, x, &o, s);
        std::vector<T> h = to_host(x, n), ref;
        for (int64_t i = 0; i < n; i++)
            if (h[i] > (T)0) ref.push_back(h[i]);
        std::string chk;
        if (s[0] != (int64_t)ref.size()) {
            chk = "WRONG count " + std::to_string(s[0]) + " want " + std::to_string(ref.size());
        } else {
            std::vector<T> g = to_host(o, s[0]);
            chk = compare(g.data(), ref.data(), s[0], 0, 0);
        }
        gpuc_h_free(0, o);
        char ex[64];
        snprintf(ex, sizeof ex, ", \"out_n\": %lld", (long long)ref.size());
        emit(name, dtype_name<T>(), n, 0, &t, chk.c_str(), ex);
        BK(cudaFree(x));
    }
}

BENCH_CASE(filter_f32, [] { filter1<float>("filter", gpuc_dev_filter_f32); });
BENCH_CASE(filter_i32, [] { filter1<int32_t>("filter", gpuc_dev_filter_i32); });
