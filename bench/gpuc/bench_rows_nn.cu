/* bench_rows_nn.cu: gpuc driver for bench/programs/rows_nn.gdsl (row
 * LayerNorm with a weight and bias vector, row cross-entropy against a
 * target column per row; rows of 256 to 262144 f32, the total element
 * count the largest size of the list).  Results go into arrays allocated
 * here (gpuc_dev_ENTRY_into), as torch's land in its caching allocator.
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

/* the rows checked against float64: the first and last 64 and every 61st */
static bool sampled_row(int64_t i, int64_t rows) { return i < 64 || i >= rows - 64 || i % 61 == 0; }

/* targets in 0..m-1 from the counter hash */
__global__ void targets_kernel(int64_t *t, int64_t rows, int64_t m, uint64_t seed)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows; i += (int64_t)gridDim.x * blockDim.x)
        t[i] = (int64_t)(mix64(seed * 0x100000001b3ULL + (uint64_t)i) % (uint64_t)m);
}

static void must(int rc)
{
    if (rc != 0) {
        fprintf(stderr, "bench: gpuc launcher failed with %d\n", rc);
        exit(1);
    }
}

BENCH_CASE(layer_norm, [] {
    int64_t total = (int64_t)1 << args().log2s.back();
    for (int64_t m : ROW_LENGTHS) {
        if (skip_row_length(m, total)) continue;
        int64_t rows = total / m;
        float *a = dev_random<float>(total, 621 + m, UNIFORM);
        float *w = dev_random<float>(m, 622 + m, POSITIVE);
        float *bias = dev_random<float>(m, 623 + m, UNIFORM);
        float *o = nullptr;
        BK(cudaMalloc(&o, (size_t)total * sizeof(float)));
        Timing t = time_it([&] { must(gpuc_dev_layer_norm_into(0, rows, m, a, w, bias, o)); });
        poison(o, (size_t)total * sizeof(float));
        must(gpuc_dev_layer_norm_into(0, rows, m, a, w, bias, o));
        /* every element written (no NaN left from the poison); sampled rows
         * against float64 (two-pass mean and variance) */
        std::vector<float> h = to_host(a, total), g = to_host(o, total), hw = to_host(w, m), hb = to_host(bias, m);
        std::vector<double> ref((size_t)m);
        std::string chk;
        for (int64_t i = 0; i < total && chk.empty(); i++) {
            if (!std::isfinite(g[i])) chk = "WRONG element " + std::to_string(i) + " not written";
        }
        for (int64_t i = 0; i < rows && chk.empty(); i++) {
            if (!sampled_row(i, rows)) continue;
            const float *r = &h[i * m];
            double mu = 0, var = 0;
            for (int64_t j = 0; j < m; j++) mu += r[j];
            mu /= (double)m;
            for (int64_t j = 0; j < m; j++) var += ((double)r[j] - mu) * ((double)r[j] - mu);
            var /= (double)m;
            double rs = 1.0 / std::sqrt(var + 1e-5);
            for (int64_t j = 0; j < m; j++) ref[j] = ((double)r[j] - mu) * rs * hw[j] + hb[j];
            std::string c = compare(&g[i * m], ref.data(), m, 1e-4, 1e-4);
            if (c != "ok") chk = "WRONG in row " + std::to_string(i) + " (" + c + ")";
        }
        if (chk.empty()) chk = "ok";
        emit("layer_norm", "f32", total, m, &t, chk.c_str());
        BK(cudaFree(a));
        BK(cudaFree(w));
        BK(cudaFree(bias));
        BK(cudaFree(o));
    }
});

BENCH_CASE(xent, [] {
    int64_t total = (int64_t)1 << args().log2s.back();
    for (int64_t m : ROW_LENGTHS) {
        if (skip_row_length(m, total)) continue;
        int64_t rows = total / m;
        /* logits uniform in [-1, 1), targets anywhere in the row */
        float *a = dev_random<float>(total, 631 + m, UNIFORM);
        int64_t *tg = nullptr;
        BK(cudaMalloc(&tg, (size_t)rows * sizeof(int64_t)));
        targets_kernel<<<256, 256>>>(tg, rows, m, 632 + m);
        BK(cudaGetLastError());
        float *o = nullptr;
        BK(cudaMalloc(&o, (size_t)rows * sizeof(float)));
        Timing t = time_it([&] { must(gpuc_dev_xent_into(0, rows, m, a, tg, o)); });
        poison_cache();
        poison(o, (size_t)rows * sizeof(float));
        must(gpuc_dev_xent_into(0, rows, m, a, tg, o));
        std::vector<float> h = to_host(a, total), g = to_host(o, rows);
        std::vector<int64_t> ht = to_host(tg, rows);
        std::string chk;
        for (int64_t i = 0; i < rows && chk.empty(); i++) {
            if (!std::isfinite(g[i])) {
                chk = "WRONG row " + std::to_string(i) + " not written";
                break;
            }
            if (!sampled_row(i, rows)) continue;
            const float *r = &h[i * m];
            double mx = -INFINITY, sum = 0;
            for (int64_t j = 0; j < m; j++) mx = r[j] > mx ? r[j] : mx;
            for (int64_t j = 0; j < m; j++) sum += std::exp((double)r[j] - mx);
            double ref = mx + std::log(sum) - (double)r[ht[i]];
            std::string c = compare(&g[i], &ref, 1, 1e-5, 1e-5);
            if (c != "ok") chk = "WRONG in row " + std::to_string(i) + " (" + c + ")";
        }
        if (chk.empty()) chk = "ok";
        emit("xent", "f32", total, m, &t, chk.c_str());
        BK(cudaFree(a));
        BK(cudaFree(tg));
        BK(cudaFree(o));
    }
});
