/* bench_rows.cu: gpuc driver for bench/programs/rows.gdsl (row sums and row
 * softmax of 2-D f32 arrays with rows of 256 to 262144 elements; the total
 * element count is the largest size of the list).
 * Built with the emitted CUDA C included first (see driver.cuh). */
#include "driver.cuh"

using namespace bench;

static const int64_t ROW_LENGTHS[] = {256, 1024, 4096, 32768, 262144};

/* BENCH_ROW_LENGTH=M (for a profiler with --once): only rows of M. */
static bool skip_row_length(int64_t m, int64_t total)
{
    const char *only = getenv("BENCH_ROW_LENGTH");
    return m > total || (only && *only && atoll(only) != m);
}

BENCH_CASE(row_sums, [] {
    int64_t total = (int64_t)1 << args().log2s.back();
    for (int64_t m : ROW_LENGTHS) {
        if (skip_row_length(m, total)) continue;
        int64_t rows = total / m;
        float *a = dev_random<float>(total, 601 + m, DYADIC);
        auto run = [&] {
            float *o = nullptr;
            int64_t s[2] = {0, 0};
            gpuc_dev_row_sums(0, rows, m, a, &o, s);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        float *o = nullptr;
        int64_t s[2] = {0, 0};
        gpuc_dev_row_sums(0, rows, m, a, &o, s);
        std::string chk;
        if (s[0] != rows) {
            chk = "WRONG shape";
        } else {
            std::vector<float> h = to_host(a, total), g = to_host(o, rows), ref((size_t)rows);
            for (int64_t i = 0; i < rows; i++) {
                float acc = 0;
                for (int64_t j = 0; j < m; j++) acc += h[i * m + j]; /* exact: dyadic */
                ref[i] = acc;
            }
            chk = compare(g.data(), ref.data(), rows, 0, 0);
        }
        gpuc_h_free(0, o);
        emit("row_sums", "f32", total, m, &t, chk.c_str());
        BK(cudaFree(a));
    }
});

BENCH_CASE(row_softmax, [] {
    int64_t total = (int64_t)1 << args().log2s.back();
    for (int64_t m : ROW_LENGTHS) {
        if (skip_row_length(m, total)) continue;
        int64_t rows = total / m;
        float *a = dev_random<float>(total, 611 + m, UNIFORM);
        auto run = [&] {
            float *o = nullptr;
            int64_t s[2] = {0, 0};
            gpuc_dev_row_softmax(0, rows, m, a, &o, s);
            gpuc_h_free(0, o);
        };
        Timing t = time_it(run);
        poison_cache();
        float *o = nullptr;
        int64_t s[2] = {0, 0};
        gpuc_dev_row_softmax(0, rows, m, a, &o, s);
        std::string chk;
        if (s[0] != rows || s[1] != m) {
            chk = "WRONG shape";
        } else {
            /* every element is checked to be written (no NaN left from the
             * poison, rows summing to 1); the values of the first and last
             * 64 rows and every 61st row against a float64 reference */
            std::vector<float> h = to_host(a, total), g = to_host(o, total);
            std::vector<double> ref((size_t)m);
            for (int64_t i = 0; i < rows && chk.empty(); i++) {
                const float *r = &h[i * m];
                const float *q = &g[i * m];
                double rs = 0;
                for (int64_t j = 0; j < m; j++) rs += q[j];
                if (!(std::fabs(rs - 1.0) <= 1e-3)) {
                    chk = "WRONG row " + std::to_string(i) + " sums to " + std::to_string(rs);
                    break;
                }
                if (!(i < 64 || i >= rows - 64 || i % 61 == 0)) continue;
                double mx = -INFINITY, sum = 0;
                for (int64_t j = 0; j < m; j++) mx = r[j] > mx ? r[j] : mx;
                for (int64_t j = 0; j < m; j++) sum += std::exp((double)r[j] - mx);
                for (int64_t j = 0; j < m; j++) ref[j] = std::exp((double)r[j] - mx) / sum;
                std::string c = compare(q, ref.data(), m, 1e-4, 1e-9);
                if (c != "ok") chk = "WRONG in row " + std::to_string(i) + " (" + c + ")";
            }
            if (chk.empty()) chk = "ok";
        }
        gpuc_h_free(0, o);
        emit("row_softmax", "f32", total, m, &t, chk.c_str());
        BK(cudaFree(a));
    }
});
