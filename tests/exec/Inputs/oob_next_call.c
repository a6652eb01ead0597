/* oob_next_call.c: a client of `gpuc --emit=c` (GPUC_C_FILE) that calls an
 * entry with an index out of bounds, then again with good indices, without
 * touching the out-of-bounds record in between: the failed call reports the
 * index and the size, and the next call succeeds (each entry clears the
 * record when it starts). */
#include GPUC_C_FILE

#include <stdio.h>

int main(void) {
    const float x[4] = { 10, 20, 30, 40 };
    const int64_t bad[2] = { 1, 9 }, good[2] = { 3, 0 };
    float *out = NULL;
    int64_t shape[2];
    int rc = gpuc_entry_pick(4, 2, x, bad, &out, shape);
    printf("bad: rc %d, index %lld, size %lld\n", rc, (long long)gpuc_oob_at[0], (long long)gpuc_oob_at[1]);
    rc = gpuc_entry_pick(4, 2, x, good, &out, shape);
    printf("good: rc %d", rc);
    if (rc == 0) { printf(", %g %g (%lld elements)", out[0], out[1], (long long)shape[0]); free(out); }
    printf("\n");
    return 0;
}
