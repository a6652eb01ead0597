/* main.c: a C program using the ahead-of-time library of vec.gdsl
 * (gpuc --emit=lib vec.gdsl -o DIR/libvec; docs/library.md). It runs every
 * entry on the GPU, checks the results against the same formulas computed
 * here in C, and prints "PASS" (exit 0) or what differs (exit 1). Without a
 * GPU it prints the runtime's message and exits 2.
 * Build: cc -std=c11 main.c -IDIR -IPREFIX/include DIR/libvec.a \
 *          $(pkg-config --libs --static gpuc) */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "vec.h"

static int failures;

static void check(const char *what, double got, double want, double tol) {
    if (!(fabs(got - want) <= tol * (1.0 + fabs(want)))) {
        printf("FAIL %s: got %.9g, want %.9g\n", what, got, want);
        failures++;
    }
}

/* Stop on an unexpected error, with the library's message. */
#define TRY(call) do { \
        GpucStatus st_ = (call); \
        if (st_ != GPUC_SUCCESS) { \
            printf("FAIL %s: %s: %s\n", #call, gpuc_status_name(st_), vec_last_error()); \
            return 1; \
        } \
    } while (0)

int main(void) {
    vec_lib *lib = NULL;
    GpucStatus st = vec_new(NULL, &lib); /* a context of its own on device 0 */
    if (st != GPUC_SUCCESS) {
        printf("no GPU: %s: %s\n", gpuc_status_name(st), vec_last_error());
        return 2;
    }
    enum { N = 100003 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *r = malloc(N * sizeof *r);
    double *xd = malloc(N * sizeof *xd);
    if (!x || !y || !r || !xd) {
        return 1;
    }
    double sq = 0;
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 97) * 0.25f - 3.0f;
        y[i] = (float)(i % 13) - 6.5f;
        xd[i] = (double)(i % 101) / 7.0;
        sq += xd[i] * xd[i];
    }

    /* saxpy: host arrays in, a new device array out, read back */
    vec_f32_1d *dx, *dy, *out;
    TRY(vec_f32_1d_new(lib, x, N, &dx));
    TRY(vec_f32_1d_new(lib, y, N, &dy));
    TRY(vec_saxpy(lib, 2.5f, dx, dy, &out));
    if (vec_f32_1d_shape(out)[0] != N) {
        printf("FAIL saxpy shape %lld\n", (long long)vec_f32_1d_shape(out)[0]);
        failures++;
    }
    TRY(vec_f32_1d_read(lib, out, r));
    for (int i = 0; i < N; i++) {
        check("saxpy", r[i], 2.5 * x[i] + y[i], 1e-5);
    }

    /* scale128 (a template instance) on a device pointer the caller owns:
     * the result of saxpy, wrapped without a copy */
    vec_f32_1d *view, *scaled;
    TRY(vec_f32_1d_from_device(lib, vec_f32_1d_device(out), N, &view));
    TRY(vec_scale128(lib, -2.0f, view, &scaled));
    TRY(vec_f32_1d_read(lib, scaled, r));
    for (int i = 0; i < N; i++) {
        check("scale128", r[i], -2.0 * (2.5 * x[i] + y[i]), 1e-5);
    }
    TRY(vec_f32_1d_free(lib, view)); /* the wrapper only */
    TRY(vec_f32_1d_free(lib, scaled));
    TRY(vec_f32_1d_free(lib, out));

    /* norm2: a scalar result */
    vec_f64_1d *dxd;
    double norm = 0;
    TRY(vec_f64_1d_new(lib, xd, N, &dxd));
    TRY(vec_norm2(lib, dxd, &norm));
    check("norm2", norm, sqrt(sq), 1e-12);
    TRY(vec_f64_1d_free(lib, dxd));

    /* move: a struct of arrays in and out */
    vec_f32_1d *mx, *my;
    TRY(vec_move(lib, dx, dy, &mx, &my));
    TRY(vec_f32_1d_read(lib, mx, r));
    for (int i = 0; i < N; i++) {
        check("move.x", r[i], x[i] * 2.0, 1e-7);
    }
    TRY(vec_f32_1d_read(lib, my, r));
    for (int i = 0; i < N; i++) {
        check("move.y", r[i], y[i] + 1.0, 1e-7);
    }
    TRY(vec_f32_1d_free(lib, mx));
    TRY(vec_f32_1d_free(lib, my));

    /* pick: a gather, then the same with an index out of bounds */
    int64_t idx[3] = { 5, 0, N - 1 };
    vec_i64_1d *di;
    vec_f32_1d *picked;
    TRY(vec_i64_1d_new(lib, idx, 3, &di));
    TRY(vec_pick(lib, dx, di, &picked));
    TRY(vec_f32_1d_read(lib, picked, r));
    for (int i = 0; i < 3; i++) {
        check("pick", r[i], x[idx[i]], 0);
    }
    TRY(vec_f32_1d_free(lib, picked));
    TRY(vec_i64_1d_free(lib, di));
    int64_t bad[2] = { 1, N + 7 };
    TRY(vec_i64_1d_new(lib, bad, 2, &di));
    st = vec_pick(lib, dx, di, &picked);
    if (st != GPUC_ERROR_INVALID_VALUE || picked) {
        printf("FAIL pick out of bounds: %s, %s\n", gpuc_status_name(st), vec_last_error());
        failures++;
    } else {
        printf("expected error: %s\n", vec_last_error());
    }
    /* a good call after it succeeds, and the same bad call fails again:
     * the record is cleared when it is read */
    int64_t good[2] = { 1, N - 1 };
    vec_i64_1d *dg;
    TRY(vec_i64_1d_new(lib, good, 2, &dg));
    TRY(vec_pick(lib, dx, dg, &picked));
    TRY(vec_f32_1d_read(lib, picked, r));
    check("pick after a failed pick", r[1], x[N - 1], 0);
    TRY(vec_f32_1d_free(lib, picked));
    TRY(vec_i64_1d_free(lib, dg));
    st = vec_pick(lib, dx, di, &picked);
    if (st != GPUC_ERROR_INVALID_VALUE || picked || !strstr(vec_last_error(), "out of bounds")) {
        printf("FAIL pick out of bounds, again: %s, %s\n", gpuc_status_name(st), vec_last_error());
        failures++;
    }
    TRY(vec_i64_1d_free(lib, di));

    /* sizes that disagree are an error, not a fault */
    vec_f32_1d *shorter;
    TRY(vec_f32_1d_new(lib, y, N - 1, &shorter));
    st = vec_saxpy(lib, 1.0f, dx, shorter, &out);
    if (st != GPUC_ERROR_INVALID_VALUE) {
        printf("FAIL saxpy size mismatch: %s\n", gpuc_status_name(st));
        failures++;
    } else {
        printf("expected error: %s\n", vec_last_error());
    }
    TRY(vec_f32_1d_free(lib, shorter));

    TRY(vec_f32_1d_free(lib, dx));
    TRY(vec_f32_1d_free(lib, dy));
    TRY(vec_free(lib));
    free(x);
    free(y);
    free(r);
    free(xd);
    printf("%s\n", failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}
