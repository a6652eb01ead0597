// main.cu: a CUDA program that includes the CUDA C of vec.gdsl
// (gpuc --emit=cuda vec.gdsl -o vec.cuh; docs/cuda_include.md) and calls its
// launchers on device pointers and a stream of its own: no gpuc runtime.
// Checks the results against the same formulas computed here on the host;
// prints PASS (exit 0) or what differs (exit 1); without a GPU prints the
// CUDA runtime's message and exits 2.
// Build: nvcc -std=c++17 -arch=native -I. main.cu -o cuda_client
#include <cmath>
#include <cstdio>
#include <vector>

#include "vec.cuh"

static int failures;

static void check(const char *what, double got, double want, double tol) {
    if (!(std::fabs(got - want) <= tol * (1.0 + std::fabs(want)))) {
        std::printf("FAIL %s: got %.9g, want %.9g\n", what, got, want);
        failures++;
    }
}

#define TRY(call) do { \
        int e_ = (call); \
        if (e_ != 0) { \
            std::printf("FAIL %s: %d (%s)\n", #call, e_, e_ > 0 ? cudaGetErrorString((cudaError_t)e_) : "index out of bounds"); \
            return 1; \
        } \
    } while (0)

int main() {
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        std::printf("no GPU: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
        return 2;
    }
    const int64_t n = 100003;
    std::vector<float> x(n), y(n), r(n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(i % 97) * 0.25f - 3.0f;
        y[i] = (float)(i % 13) - 6.5f;
    }
    cudaStream_t s;
    TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *dx, *dy, *dout;
    TRY(cudaMalloc(&dx, n * sizeof(float)));
    TRY(cudaMalloc(&dy, n * sizeof(float)));
    TRY(cudaMalloc(&dout, n * sizeof(float)));
    TRY(cudaMemcpyAsync(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    TRY(cudaMemcpyAsync(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));

    // into an array we allocated (the result size is n)
    TRY(gpuc_dev_saxpy_into(s, n, 2.5f, dx, dy, dout));
    TRY(cudaMemcpyAsync(r.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    for (int64_t i = 0; i < n; i++) {
        check("saxpy", r[i], 2.5 * x[i] + y[i], 1e-5);
    }

    // a template instance with the result allocated by the launcher, freed
    // with gpuc_h_free; its template parameter as the header defines it
    float *scaled = nullptr;
    int64_t shape[2];
    TRY(gpuc_dev_scale128(s, n, -2.0f, dx, &scaled, shape));
    if (shape[0] != n || GPUC_scale128_BLOCK != 128) {
        std::printf("FAIL scale128: shape %lld, BLOCK %d\n", (long long)shape[0], GPUC_scale128_BLOCK);
        failures++;
    }
    TRY(cudaMemcpyAsync(r.data(), scaled, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    gpuc_h_free(s, scaled);
    for (int64_t i = 0; i < n; i++) {
        check("scale128", r[i], -2.0 * x[i], 0);
    }

    // a reduction to a host scalar (waits for the kernel)
    std::vector<double> xd(n);
    double sq = 0;
    for (int64_t i = 0; i < n; i++) {
        xd[i] = (double)(i % 101) / 7.0;
        sq += xd[i] * xd[i];
    }
    double *dxd, norm = 0;
    TRY(cudaMalloc(&dxd, n * sizeof(double)));
    TRY(cudaMemcpyAsync(dxd, xd.data(), n * sizeof(double), cudaMemcpyHostToDevice, s));
    TRY(gpuc_dev_norm2(s, n, dxd, &norm));
    check("norm2", norm, std::sqrt(sq), 1e-12);
    // the same into a device scalar: the launcher copies the host's sqrt there
    double *dnorm;
    TRY(cudaMalloc(&dnorm, sizeof(double)));
    TRY(cudaMemsetAsync(dnorm, 0xff, sizeof(double), s));
    TRY(gpuc_dev_norm2_into(s, n, dxd, dnorm));
    norm = 0;
    TRY(cudaMemcpyAsync(&norm, dnorm, sizeof(double), cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    check("norm2_into", norm, std::sqrt(sq), 1e-12);

    // an index out of bounds is reported, not a fault
    int64_t bad[2] = { 1, n + 7 }, *dbad;
    TRY(cudaMalloc(&dbad, sizeof bad));
    TRY(cudaMemcpyAsync(dbad, bad, sizeof bad, cudaMemcpyHostToDevice, s));
    int rc = gpuc_dev_pick_into(s, n, 2, dx, dbad, dout);
    if (rc != -1 || !gpuc_oob_hit || gpuc_oob_at[0] != n + 7) {
        std::printf("FAIL pick out of bounds: %d\n", rc);
        failures++;
    } else {
        std::printf("expected error: index %lld out of bounds for size %lld\n", (long long)gpuc_oob_at[0], (long long)gpuc_oob_at[1]);
    }
    // the failed call does not fail the next one: each call starts with a clear record
    int64_t good[2] = { 1, n - 1 };
    TRY(cudaMemcpyAsync(dbad, good, sizeof good, cudaMemcpyHostToDevice, s));
    TRY(gpuc_dev_pick_into(s, n, 2, dx, dbad, dout));
    float picked[2];
    TRY(cudaMemcpyAsync(picked, dout, sizeof picked, cudaMemcpyDeviceToHost, s));
    TRY(cudaStreamSynchronize(s));
    check("pick after a failed pick", picked[1], x[n - 1], 0);
    // and the same bad call fails again: the record was cleared when read
    TRY(cudaMemcpyAsync(dbad, bad, sizeof bad, cudaMemcpyHostToDevice, s));
    rc = gpuc_dev_pick_into(s, n, 2, dx, dbad, dout);
    if (rc != -1 || !gpuc_oob_hit || gpuc_oob_at[0] != n + 7 || gpuc_oob_at[1] != n) {
        std::printf("FAIL pick out of bounds, again: %d\n", rc);
        failures++;
    }

    cudaFree(dbad);
    cudaFree(dnorm);
    cudaFree(dxd);
    cudaFree(dx);
    cudaFree(dy);
    cudaFree(dout);
    cudaStreamDestroy(s);
    std::printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
