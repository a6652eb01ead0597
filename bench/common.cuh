/* common.cuh: shared by the bench harnesses (peers_cub.cu and the gpuc
 * drivers in bench/gpuc/): CUDA error checks, random input generation on the
 * device (never zeros), event timing with the median of many runs after a
 * warm-up (calls shorter than BATCH_UNDER_US also as batches of back-to-back
 * calls), the device-to-device copy rate, and JSON-lines output.
 * Header-only; include it once per program. */
#ifndef BENCH_COMMON_CUH
#define BENCH_COMMON_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define BK(x)                                                                                     \
    do {                                                                                          \
        cudaError_t bk_e = (x);                                                                   \
        if (bk_e != cudaSuccess) {                                                                \
            fprintf(stderr, "bench: CUDA error %s at %s:%d (%s)\n", cudaGetErrorString(bk_e),     \
                    __FILE__, __LINE__, #x);                                                      \
            exit(3);                                                                              \
        }                                                                                         \
    } while (0)

namespace bench {

/* ---- random inputs: a counter-based hash, so the host can regenerate ---- */
__host__ __device__ inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Kinds of data:
 *   DYADIC   k/8 with k in [-8, 8] \ {0}: sums over any contiguous range are
 *            exact in f32 while below 2^21, so sums and scans of floats can be
 *            compared exactly whatever the association order;
 *   UNIFORM  uniform in [-1, 1) (never exactly 0 after the nudge);
 *   POSITIVE uniform in [0.5, 1.5);
 *   SMALLINT integers in [-1000, 1000] \ {0};
 *   FULLINT  the type's full range. */
enum Kind { DYADIC, UNIFORM, POSITIVE, SMALLINT, FULLINT };

template <typename T>
__host__ __device__ inline T gen_value(uint64_t seed, int64_t i, int kind)
{
    uint64_t h = mix64(seed * 0x100000001b3ULL + (uint64_t)i);
    double u = (double)(h >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    switch (kind) {
    case DYADIC: {
        int k = (int)(h % 16) - 8; /* -8..7 */
        if (k >= 0) k += 1;       /* -8..-1, 1..8 */
        return (T)((double)k / 8.0);
    }
    case UNIFORM: {
        double v = 2.0 * u - 1.0;
        if (v == 0.0) v = 0.5;
        return (T)v;
    }
    case POSITIVE:
        return (T)(0.5 + u);
    case SMALLINT: {
        int k = (int)(h % 2000) - 1000;
        if (k >= 0) k += 1;
        return (T)k;
    }
    default:
        return (T)h; /* wraps: the full range of integer types */
    }
}

template <typename T>
__global__ void gen_kernel(T *p, int64_t n, uint64_t seed, int kind)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        p[i] = gen_value<T>(seed, i, kind);
    }
}

template <typename T>
T *dev_random(int64_t n, uint64_t seed, int kind)
{
    T *p = nullptr;
    BK(cudaMalloc(&p, (size_t)(n > 0 ? n : 1) * sizeof(T)));
    gen_kernel<T><<<1024, 256>>>(p, n, seed, kind);
    BK(cudaGetLastError());
    BK(cudaDeviceSynchronize());
    return p;
}

template <typename T>
std::vector<T> to_host(const T *d, int64_t n)
{
    std::vector<T> h((size_t)n);
    if (n > 0) BK(cudaMemcpy(h.data(), d, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

/* Poison a device buffer (0xff bytes: NaN for floats, -1 for integers). */
inline void poison(void *d, size_t bytes) { BK(cudaMemset(d, 0xff, bytes)); }

/* ---- timing ---- */
struct Timing {
    double med_us, min_us; /* per call: of the batches when batched, else of single calls */
    int reps;
    double call_us;        /* median of single calls, each between its own event pair */
    int batch;             /* calls per batch; 1: not batched */
};

/* A single call shorter than this is timed again in batches: an event pair
 * around one short call measures the host's launch latency and its jitter as
 * much as the GPU's work (2026-11-25 on the H100: the median of single calls
 * of one scan at 2^10 was 17.2 us in one run, its minimum 11.1, and 10.7 in
 * another). A batch is `batch` calls back to back between one
 * event pair, about BATCH_US long, so the GPU is kept busy while the host
 * launches (nvbench's "batch" time); CUB and gpuc are timed the same way. */
inline constexpr double BATCH_UNDER_US = 100.0;
inline constexpr double BATCH_US = 1000.0;

inline double median_of(std::vector<double> &t)
{
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
}

/* --once (for a profiler): the first timed call runs f() once and exits. */
inline bool g_once = false;

/* Time f() with an event pair around each call, after warm-up calls; reps
 * adapt to the duration (at least 10, at most max_reps, about budget_ms).
 * A call under BATCH_UNDER_US is then timed as batches too (as many, same
 * bounds), and med_us/min_us are per call of the batches. */
template <typename F>
Timing time_it(F f, int max_reps = 200, double budget_ms = 20.0)
{
    if (g_once) {
        f();
        BK(cudaDeviceSynchronize());
        BK(cudaGetLastError());
        exit(0);
    }
    static cudaEvent_t e0 = nullptr, e1 = nullptr;
    if (!e0) {
        BK(cudaEventCreate(&e0));
        BK(cudaEventCreate(&e1));
    }
    /* warm-up: 3 calls, the last one timed to size the loop */
    for (int i = 0; i < 2; i++) f();
    BK(cudaEventRecord(e0));
    f();
    BK(cudaEventRecord(e1));
    BK(cudaEventSynchronize(e1));
    BK(cudaGetLastError());
    float ms = 0;
    BK(cudaEventElapsedTime(&ms, e0, e1));
    int reps = ms > 0 ? (int)(budget_ms / ms) : max_reps;
    reps = std::max(10, std::min(max_reps, reps));
    std::vector<double> t;
    t.reserve(reps);
    for (int r = 0; r < reps; r++) {
        BK(cudaEventRecord(e0));
        f();
        BK(cudaEventRecord(e1));
        BK(cudaEventSynchronize(e1));
        BK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1000.0);
    }
    BK(cudaGetLastError());
    Timing out;
    out.call_us = median_of(t);
    out.med_us = out.call_us;
    out.min_us = t[0];
    out.reps = reps;
    out.batch = 1;
    if (out.call_us >= BATCH_UNDER_US) return out;
    const int batch = std::max(2, (int)(BATCH_US / out.call_us));
    t.clear();
    for (int r = 0; r < reps; r++) {
        BK(cudaEventRecord(e0));
        for (int i = 0; i < batch; i++) f();
        BK(cudaEventRecord(e1));
        BK(cudaEventSynchronize(e1));
        BK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms * 1000.0 / batch);
    }
    BK(cudaGetLastError());
    out.med_us = median_of(t);
    out.min_us = t[0];
    out.batch = batch;
    return out;
}

/* Device-to-device copy of `bytes` with cudaMemcpy: median time. The copy
 * rate is 2 * bytes / time (each byte read once and written once). */
inline Timing time_copy(size_t bytes)
{
    void *a = nullptr, *b = nullptr;
    BK(cudaMalloc(&a, bytes));
    BK(cudaMalloc(&b, bytes));
    BK(cudaMemset(a, 0x5a, bytes));
    Timing t = time_it([&] { BK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 100, 60.0);
    BK(cudaFree(a));
    BK(cudaFree(b));
    return t;
}

/* ---- output: one JSON object per line ---- */
struct Out {
    FILE *f = stdout;
    std::string src;
};

inline Out &out()
{
    static Out o;
    return o;
}

/* extra: already-formatted ", \"key\": value" pairs (may be empty). */
inline void emit(const char *cas, const char *dtype, int64_t n, int64_t m, const Timing *t, const char *check,
                 const std::string &extra = "")
{
    Out &o = out();
    fprintf(o.f, "{\"src\": \"%s\", \"case\": \"%s\", \"dtype\": \"%s\", \"n\": %lld, \"m\": %lld", o.src.c_str(), cas,
            dtype, (long long)n, (long long)m);
    if (t) fprintf(o.f, ", \"us\": %.3f, \"us_min\": %.3f, \"reps\": %d, \"us_call\": %.3f, \"batch\": %d", t->med_us,
                   t->min_us, t->reps, t->call_us, t->batch);
    fprintf(o.f, ", \"check\": \"%s\"%s}\n", check, extra.c_str());
    fflush(o.f);
    fprintf(stderr, "  %-10s %-16s %-4s n=%-11lld m=%-6lld %10.2f us  %s\n", o.src.c_str(), cas, dtype, (long long)n,
            (long long)m, t ? t->med_us : -1.0, check);
}

/* ---- command line: --out FILE, --sizes 10,12,..., --max-log2 N ---- */
struct Args {
    std::vector<int> log2s;
    std::string only; /* run only the case of this name (empty: all) */
    bool list = false;
};

inline Args parse_args(int argc, char **argv, const char *src)
{
    Args a;
    out().src = src;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out().f = fopen(argv[++i], "a");
            if (!out().f) {
                perror(argv[i]);
                exit(2);
            }
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            std::string s = argv[++i];
            size_t p = 0;
            while (p < s.size()) {
                size_t q = s.find(',', p);
                if (q == std::string::npos) q = s.size();
                a.log2s.push_back(atoi(s.substr(p, q - p).c_str()));
                p = q + 1;
            }
        } else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
            a.only = argv[++i];
        } else if (!strcmp(argv[i], "--list")) {
            a.list = true;
        } else if (!strcmp(argv[i], "--once")) {
            g_once = true;
        } else {
            fprintf(stderr, "usage: %s [--out FILE] [--sizes 10,12,...] [--case NAME] [--list] [--once]\n", argv[0]);
            exit(2);
        }
    }
    if (a.log2s.empty()) {
        for (int k = 10; k <= 28; k += 2) a.log2s.push_back(k);
    }
    return a;
}

/* free device memory in bytes */
inline size_t free_mem()
{
    size_t f = 0, t = 0;
    BK(cudaMemGetInfo(&f, &t));
    return f;
}

/* ---- checks ---- */
/* Compare arrays; floats within atol + rtol * scale[i] (scale defaults to
 * |ref|), integers exactly. Returns "ok" or a short message. */
template <typename T, typename R>
std::string compare(const T *got, const R *ref, int64_t n, double rtol, double atol, const double *scale = nullptr)
{
    for (int64_t i = 0; i < n; i++) {
        double g = (double)got[i], r = (double)ref[i];
        double tol = atol + rtol * (scale ? scale[i] : std::fabs(r));
        bool bad = std::isnan(g) != std::isnan(r) || (!std::isnan(r) && !(std::fabs(g - r) <= tol));
        if (rtol == 0 && atol == 0) bad = !(got[i] == (T)ref[i]);
        if (bad) {
            char b[160];
            snprintf(b, sizeof b, "WRONG at %lld: got %.9g want %.9g", (long long)i, g, r);
            return b;
        }
    }
    return "ok";
}

template <typename T>
const char *dtype_name();
template <> inline const char *dtype_name<float>() { return "f32"; }
template <> inline const char *dtype_name<double>() { return "f64"; }
template <> inline const char *dtype_name<int32_t>() { return "i32"; }
template <> inline const char *dtype_name<int64_t>() { return "i64"; }
template <> inline const char *dtype_name<long long>() { return "i64"; }

} // namespace bench
#endif
