/* driver.cuh: the part of every gpuc bench driver (bench/gpuc/bench_*.cu)
 * that is not about one program. A driver is compiled with the CUDA C that
 * `gpuc --emit=cuda` wrote for one bench program, included first with its
 * host launchers (nvcc -DGPUC_CUDA_HOST -include bench/gen/PROG.cu), and calls
 * the emitted `gpuc_dev_ENTRY` functions on device arrays: the launches, grid
 * sizes, temporaries and result copies are the generated code's own.
 *
 * What is timed: one call of gpuc_dev_ENTRY (and gpuc_dfree of its array
 * results, which only returns the block to the generated code's cache), with
 * a CUDA event pair around it; the median of many calls after warm-up.
 * Reductions are timed through gpuc_dev_ENTRY_into, whose scalar results are
 * written into device memory (as CUB's are), so no device-to-host copy is
 * timed unless the entry needs the value on the host itself (logsumexp and
 * mean/variance finish in the reduction kernel's epilogue: no copy).
 *
 * Checks: after timing, every free block of the generated code's device
 * cache is poisoned (0xff bytes), the entry is called once more and its
 * result is compared with a host reference computed here, independently of
 * gpuc (exactly for integers and for the dyadic float data whose sums are
 * exact, with a tolerance otherwise). A wrong result is reported as WRONG and
 * makes the suite fail (bench/report.py). */
#ifndef BENCH_GPUC_DRIVER_CUH
#define BENCH_GPUC_DRIVER_CUH

#include <functional>
#include <utility>

#include "../common.cuh"

namespace bench {

struct Case {
    std::string name;
    std::function<void()> run;
};

inline std::vector<Case> &cases()
{
    static std::vector<Case> v;
    return v;
}

inline Args &args()
{
    static Args a;
    return a;
}

inline bool g_big_flag = false;

/* the sizes of a case: the list, plus 2^30 for 4-byte types with --big when
 * `buffers` arrays of that size fit with room to spare */
inline std::vector<int64_t> sizes_for(size_t elem, bool allow_big, int buffers)
{
    std::vector<int64_t> v;
    for (int k : args().log2s) v.push_back((int64_t)1 << k);
    if (g_big_flag && allow_big && elem == 4) {
        int64_t n = (int64_t)1 << 30;
        if ((size_t)n * elem * buffers + ((size_t)2 << 30) < free_mem()) v.push_back(n);
    }
    return v;
}

/* poison the generated code's free device blocks (where results will land) */
/* A device scalar for a gpuc_dev_ENTRY_into scalar result. */
template <typename T> T *dev_scalar()
{
    T *p = nullptr;
    BK(cudaMalloc(&p, sizeof(T)));
    return p;
}
template <typename T> T *poison_scalar(T *d)
{
    poison(d, sizeof(T));
    return d;
}
/* The value of the device scalar d after the launcher call that returned rc. */
template <typename T> T scalar_result(int rc, const T *d)
{
    if (rc != 0) {
        fprintf(stderr, "bench: gpuc launcher failed with %d\n", rc);
        exit(1);
    }
    T v;
    BK(cudaMemcpy(&v, d, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

inline void poison_cache()
{
    for (int i = 0; i < gpuc_nfree; i++) BK(cudaMemset(gpuc_free_blocks[i].p, 0xff, gpuc_free_blocks[i].n));
    BK(cudaDeviceSynchronize());
}

inline int driver_main(int argc, char **argv)
{
    std::vector<char *> rest;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--big")) g_big_flag = true;
        else rest.push_back(argv[i]);
    }
    args() = parse_args((int)rest.size(), rest.data(), "gpuc");
    if (args().list) {
        for (auto &c : cases()) printf("%s\n", c.name.c_str());
        return 0;
    }
    BK(cudaSetDevice(0));
    BK(cudaFree(0));
    int ran = 0;
    for (auto &c : cases()) {
        if (!args().only.empty() && args().only != c.name) continue;
        c.run();
        ran++;
    }
    if (!ran) {
        fprintf(stderr, "no case '%s'\n", args().only.c_str());
        return 2;
    }
    return 0;
}

#define BENCH_CASE(NAME, ...) \
    static int bench_reg_##NAME = (cases().push_back(Case{#NAME, __VA_ARGS__}), 0)

} // namespace bench

int main(int argc, char **argv) { return bench::driver_main(argc, argv); }

#endif
