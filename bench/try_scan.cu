/* try_scan.cu: the scan and filter harness of bench/try_scan.sh (issue 16,
 * item 4). Built with the CUDA C of bench/try_scan.gdsl included first
 * (nvcc -DGPUC_CUDA_HOST -include try_scan.cu.gen), it times, with the
 * median of CUDA-event timings (bench/common.cuh: time_it):
 *   gpuc inclusive/exclusive + scans of f32/i32/i64 (gpuc_dev_ENTRY_into:
 *   results in a buffer allocated beforehand, as CUB's), the affine
 *   recurrence, filter (x > 0), and the tile-shape sweep entries at 2^28;
 *   CUB DeviceScan::InclusiveSum/ExclusiveSum and DeviceSelect::If;
 *   a 1 GiB device-to-device copy (the copy rate).
 * Every gpuc result is checked against a host reference after timing (the
 * output poisoned first): exact for integer and dyadic float scans and for
 * filters, 1e-3 relative + 1e-4 absolute for the recurrence. Prints one line
 * per case: "ROW case dtype n gpuc_us cub_us bytes check"; try_scan.sh makes
 * the table. Exit status 1 if a result is wrong.
 *   try_scan [--sizes 10,14,20,28] [--sweep] */
#include "common.cuh"

#include <cub/cub.cuh>

using namespace bench;

static int g_wrong = 0;

static void row(const char *cas, const char *dtype, int64_t n, double us, double cub_us, double bytes, const std::string &chk)
{
    if (chk != "ok") g_wrong = 1;
    printf("ROW %s %s %lld %.3f %.3f %.0f %s\n", cas, dtype, (long long)n, us, cub_us, bytes, chk.c_str());
    fflush(stdout);
}

template <typename T> static T add(T a, T b) { return (T)((uint64_t)a + (uint64_t)b); }
template <> float add<float>(float a, float b) { return a + b; }

/* CUB's inclusive or exclusive sum of x into y: median us */
template <typename T> static double cub_scan(const T *x, T *y, int64_t n, bool inclusive)
{
    void *tmp = nullptr;
    size_t tb = 0;
    if (inclusive) BK(cub::DeviceScan::InclusiveSum(tmp, tb, x, y, n));
    else BK(cub::DeviceScan::ExclusiveSum(tmp, tb, x, y, n));
    BK(cudaMalloc(&tmp, tb > 0 ? tb : 1));
    Timing t = time_it([&] {
        if (inclusive) BK(cub::DeviceScan::InclusiveSum(tmp, tb, x, y, n));
        else BK(cub::DeviceScan::ExclusiveSum(tmp, tb, x, y, n));
    });
    BK(cudaFree(tmp));
    return t.med_us;
}

/* a gpuc scan entry (into a caller's buffer) against CUB and a host reference */
template <typename T>
static void scan_case(const char *cas, int (*fn)(GpucHost *, int64_t, const T *, T *), int64_t n, bool inclusive, bool with_cub,
                      int64_t off = 0)
{
    const bool flt = (T)0.5 != (T)0;
    /* off > 0: input and output start off elements into their blocks (not 16-byte aligned) */
    T *x0 = dev_random<T>(n + off, 301 + n, flt ? DYADIC : SMALLINT), *x = x0 + off;
    T *y0 = nullptr;
    BK(cudaMalloc(&y0, (size_t)(n + off) * sizeof(T)));
    T *y = y0 + off;
    Timing t = time_it([&] {
        if (fn(0, n, x, y) != 0) { fprintf(stderr, "try_scan: %s failed\n", cas); exit(1); }
    });
    poison(y, (size_t)n * sizeof(T));
    BK((cudaError_t)fn(0, n, x, y));
    std::vector<T> h = to_host(x, n), g = to_host(y, n), ref((size_t)n);
    T acc = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!inclusive) ref[i] = acc;
        acc = add(acc, h[i]);
        if (inclusive) ref[i] = acc;
    }
    std::string chk = compare(g.data(), ref.data(), n, 0, 0);
    double cub = with_cub ? cub_scan(x, y, n, inclusive) : -1;
    row(cas, dtype_name<T>(), n, t.med_us, cub, 2.0 * n * sizeof(T), chk);
    BK(cudaFree(x0));
    BK(cudaFree(y0));
}

/* x[i] = a[i] * x[i-1] + b[i] against a sequential float64 reference */
static void recurrence_case(const char *cas, int (*fn)(GpucHost *, int64_t, const float *, const float *, float *), int64_t n)
{
    float *a = dev_random<float>(n, 311 + n, UNIFORM), *b = dev_random<float>(n, 312 + n, UNIFORM), *y = nullptr;
    BK(cudaMalloc(&y, (size_t)n * sizeof(float)));
    Timing t = time_it([&] { BK((cudaError_t)fn(0, n, a, b, y)); });
    poison(y, (size_t)n * sizeof(float));
    BK((cudaError_t)fn(0, n, a, b, y));
    std::vector<float> ha = to_host(a, n), hb = to_host(b, n), g = to_host(y, n);
    std::vector<double> ref((size_t)n);
    double v = 0;
    for (int64_t i = 0; i < n; i++) ref[i] = v = ha[i] * v + hb[i];
    row(cas, "f32", n, t.med_us, -1, 3.0 * n * sizeof(float), compare(g.data(), ref.data(), n, 1e-3, 1e-4));
    BK(cudaFree(a));
    BK(cudaFree(b));
    BK(cudaFree(y));
}

struct Positive {
    template <typename T> __host__ __device__ bool operator()(const T &v) const { return v > (T)0; }
};

/* a gpuc filter (its count comes back to the host) against DeviceSelect::If */
template <typename T>
static void filter_case(const char *cas, int (*fn)(GpucHost *, int64_t, const T *, T **, int64_t *), int64_t n, bool with_cub)
{
    const bool flt = (T)0.5 != (T)0;
    T *x = dev_random<T>(n, 401 + n, flt ? UNIFORM : SMALLINT);
    Timing t = time_it([&] {
        T *o = nullptr;
        int64_t s[2] = {0, 0};
        BK((cudaError_t)fn(0, n, x, &o, s));
        gpuc_h_free(0, o);
    });
    for (int i = 0; i < gpuc_nfree; i++) BK(cudaMemset(gpuc_free_blocks[i].p, 0xff, gpuc_free_blocks[i].n));
    T *o = nullptr;
    int64_t s[2] = {-1, 0};
    BK((cudaError_t)fn(0, n, x, &o, s));
    std::vector<T> h = to_host(x, n), ref;
    for (int64_t i = 0; i < n; i++)
        if (h[i] > (T)0) ref.push_back(h[i]);
    std::string chk;
    if (s[0] != (int64_t)ref.size()) {
        chk = "WRONG_count_" + std::to_string(s[0]) + "_want_" + std::to_string(ref.size());
    } else {
        std::vector<T> g = to_host(o, s[0]);
        chk = compare(g.data(), ref.data(), s[0], 0, 0);
    }
    gpuc_h_free(0, o);
    double cub = -1;
    if (with_cub) {
        T *y = nullptr;
        int *cnt = nullptr;
        void *tmp = nullptr;
        size_t tb = 0;
        BK(cudaMalloc(&y, (size_t)n * sizeof(T)));
        BK(cudaMalloc(&cnt, sizeof(int)));
        BK(cub::DeviceSelect::If(tmp, tb, x, y, cnt, (int)n, Positive()));
        BK(cudaMalloc(&tmp, tb > 0 ? tb : 1));
        cub = time_it([&] { BK(cub::DeviceSelect::If(tmp, tb, x, y, cnt, (int)n, Positive())); }).med_us;
        BK(cudaFree(tmp));
        BK(cudaFree(cnt));
        BK(cudaFree(y));
    }
    row(cas, dtype_name<T>(), n, t.med_us, cub, (double)(n + (int64_t)ref.size()) * sizeof(T), chk);
    BK(cudaFree(x));
}

int main(int argc, char **argv)
{
    std::vector<int> log2s = {10, 14, 20, 28};
    bool sweep = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sweep")) {
            sweep = true;
        } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            log2s.clear();
            for (char *p = strtok(argv[++i], ","); p; p = strtok(nullptr, ",")) log2s.push_back(atoi(p));
        } else {
            fprintf(stderr, "usage: try_scan [--sizes 10,14,20,28] [--sweep]\n");
            return 2;
        }
    }
    BK(cudaSetDevice(0));
    Timing c = time_copy((size_t)1 << 30);
    printf("COPY %.3f %.1f\n", c.med_us, 2.0 * (double)((size_t)1 << 30) / (c.med_us * 1e3));
    for (int k : log2s) {
        int64_t n = (int64_t)1 << k;
        scan_case<float>("scan_incl", gpuc_dev_incl_f32_into, n, true, true);
        scan_case<int32_t>("scan_incl", gpuc_dev_incl_i32_into, n, true, true);
        scan_case<int64_t>("scan_incl", gpuc_dev_incl_i64_into, n, true, true);
        scan_case<float>("scan_excl", gpuc_dev_excl_f32_into, n, false, true);
        scan_case<int32_t>("scan_excl", gpuc_dev_excl_i32_into, n, false, true);
        scan_case<int64_t>("scan_excl", gpuc_dev_excl_i64_into, n, false, true);
        recurrence_case("recurrence", gpuc_dev_recurrence_into, n);
        filter_case<float>("filter", gpuc_dev_filter_f32, n, true);
        filter_case<int32_t>("filter", gpuc_dev_filter_i32, n, true);
    }
    /* the bulk kernel's other paths, checked: arrays not 16-byte aligned (every tile
     * through the threads), and sizes that end in a partial tile after many full ones
     * (tile 256 x 55 = 14080) */
    scan_case<float>("unaligned", gpuc_dev_incl_f32_into, ((int64_t)1 << 20) + 3, true, false, 1);
    scan_case<int32_t>("unaligned", gpuc_dev_excl_i32_b512_i31_into, ((int64_t)1 << 20) + 5, false, false, 3);
    scan_case<float>("partial", gpuc_dev_incl_f32_into, 14080 * 1000 + 14079, true, false);
    /* a stage past 48 KiB (dynamic shared memory): 256 x 79 = 20224 */
    scan_case<int32_t>("partial", gpuc_dev_excl_i32_b256_i79_into, 20224 * 1000 + 20223, false, false);
    if (sweep) {
        const int64_t n = (int64_t)1 << 28;
        scan_case<int64_t>("incl_i64_b128_i24", gpuc_dev_incl_i64_b128_i24_into, n, true, false);
        recurrence_case("recurrence_b128_i19", gpuc_dev_recurrence_b128_i19_into, n);
        recurrence_case("recurrence_b128_i24", gpuc_dev_recurrence_b128_i24_into, n);
        recurrence_case("recurrence_b128_i27", gpuc_dev_recurrence_b128_i27_into, n);
        filter_case<float>("filter_f32_b128_i32", gpuc_dev_filter_f32_b128_i32, n, false);
        filter_case<float>("filter_f32_b256_i24", gpuc_dev_filter_f32_b256_i24, n, false);
        filter_case<float>("filter_f32_b512_i16", gpuc_dev_filter_f32_b512_i16, n, false);
        filter_case<float>("filter_f32_b256_i40", gpuc_dev_filter_f32_b256_i40, n, false);
        filter_case<float>("filter_f32_b256_i45", gpuc_dev_filter_f32_b256_i45, n, false);
        filter_case<float>("filter_f32_b128_i48", gpuc_dev_filter_f32_b128_i48, n, false);
        filter_case<float>("filter_f32_b128_i64", gpuc_dev_filter_f32_b128_i64, n, false);
        /* SCAN BULK mode 2 tiles (rows bB_iI_incl / _excl; the default, 256 x 55, is scan_) */
#define SWEEP(B, I)                                                                                                 \
    scan_case<float>("b" #B "_i" #I "_incl", gpuc_dev_incl_f32_b##B##_i##I##_into, n, true, false);                \
    scan_case<int32_t>("b" #B "_i" #I "_incl", gpuc_dev_incl_i32_b##B##_i##I##_into, n, true, false);              \
    scan_case<float>("b" #B "_i" #I "_excl", gpuc_dev_excl_f32_b##B##_i##I##_into, n, false, false);               \
    scan_case<int32_t>("b" #B "_i" #I "_excl", gpuc_dev_excl_i32_b##B##_i##I##_into, n, false, false);
        SWEEP(128, 73)
        SWEEP(256, 55)
        SWEEP(256, 63)
        SWEEP(256, 79)
        SWEEP(384, 43)
        SWEEP(512, 43)
        SWEEP(512, 31)
#undef SWEEP
    }
    return g_wrong;
}
