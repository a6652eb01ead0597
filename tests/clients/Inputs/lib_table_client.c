/* lib_table_client.c: a C client of the generic entry table of a --emit=lib
 * library (tests/clients/lib_table.test): lists every entry with its gdsl
 * types and component counts, checks that a value of the wrong kind is
 * rejected naming the argument before the library is touched, and tries
 * vec_new (which, without a GPU, reports the runtime's message). */
#include <stdio.h>
#include <string.h>

#include "vec.h"

int main(void)
{
    int n = -1;
    const GpucLibEntryInfo *table = vec_entry_table(&n);
    for (int i = 0; i < n; i++) {
        const GpucLibEntryInfo *e = &table[i];
        printf("%s(", e->name);
        for (int p = 0; p < e->num_params; p++) {
            printf("%s%s: %s", p ? ", " : "", e->param_names[p], e->param_types[p]);
        }
        printf(") -> %s [%d in, %d out]\n", e->result_type, e->num_args, e->num_results);
    }
    printf("sentinel %s\n", table[n].name ? table[n].name : "NULL");
    /* saxpy(a: f32, x: f32[n], y: f32[n]) with x given as f64: rejected by the
     * checks, which run before the library handle is used */
    GpucLibValue args[3], results[1];
    memset(args, 0, sizeof args);
    memset(results, 0, sizeof results);
    args[0].kind = GPUC_LIB_F32;
    args[0].scalar.f32 = 2.0f;
    args[1].kind = GPUC_LIB_F64;
    args[1].rank = 1;
    args[1].shape[0] = 4;
    args[1].data = 0x1000;
    args[2] = args[1];
    args[2].kind = GPUC_LIB_F32;
    results[0].kind = GPUC_LIB_F32;
    results[0].rank = 1;
    int not_a_lib = 0;
    GpucStatus st = table[0].call(&not_a_lib, NULL, args, results);
    printf("wrong kind: %s: %s\n", gpuc_status_name(st), vec_last_error());
    args[1].kind = GPUC_LIB_F32;
    results[0].rank = 2;
    st = table[0].call(&not_a_lib, NULL, args, results);
    printf("wrong result rank: %s: %s\n", gpuc_status_name(st), vec_last_error());
    st = table[0].call(NULL, NULL, args, results);
    printf("no lib: %s: %s\n", gpuc_status_name(st), vec_last_error());
    st = vec_free_device(NULL, 0);
    printf("free 0: %s\n", gpuc_status_name(st));
    vec_lib *lib = NULL;
    st = vec_new(NULL, &lib);
    if (st != GPUC_SUCCESS) {
        printf("no GPU: %s\n", gpuc_status_name(st));
        return 2;
    }
    vec_free(lib);
    return 0;
}
