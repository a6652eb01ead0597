/* fuzz_inputs.c: a fuzz target for the input readers of gpuc executables
 * (runner/): the text value reader and the .npy reader, checked against a
 * few fixed entry signatures the way gpuc_program_main checks arguments,
 * and written back with the text and .npy writers.
 *
 * Input layout: byte 0 chooses the reader (bit 0: 0 text, 1 .npy) and the
 * signature (the other bits); the rest is the payload: text arguments, one
 * value per parameter as on stdin, or the bytes of a .npy file.
 * Any crash, hang, sanitizer report or leak is a finding; rejected input is
 * not. Seeds: tests/fuzz/Inputs_inputs/ (scripts/fuzz fuzz_inputs). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static const GpucParam saxpy_params[] = {{"a", "f32"}, {"x", "f32[n]"}, {"y", "f32[n]"}};
static const GpucParam mixed_params[] = {{"p", "(f32, (i32, bool))[n]"}, {"A", "i64[n][m]"}, {"w", "u64[m]"}};
static const GpucParam struct_params[] = {{"ps", "Point { x: f32, y: f64, id: u32 }[n]"}, {"k", "i64"}};
static const GpucParam tuple_params[] = {{"t", "(u32[n], f64[3], bool)"}, {"m", "f32[n][n]"}};
static const GpucParam size_params[] = {{"n", "i64"}, {"v", "i32[n]"}};

static const GpucEntry entries[] = {
    {"saxpy", 3, saxpy_params, "f32[n]", NULL, NULL, NULL},
    {"mixed", 3, mixed_params, "(f32[n], i64[_][m])", NULL, NULL, NULL},
    {"points", 2, struct_params, "Point { x: f32, y: f64, id: u32 }[n]", NULL, NULL, NULL},
    {"tuple", 2, tuple_params, "(u32[n], f64)", NULL, NULL, NULL},
    {"sized", 2, size_params, "i32[n]", NULL, NULL, NULL},
};
#define NUM_ENTRIES ((int)(sizeof entries / sizeof entries[0]))

static FILE *devnull;

/* Read every parameter of the entry from text, as gpuc_program_main does. */
static void fuzz_text(const RnSig *sig, const char *text, size_t len)
{
  GpucValue *args = calloc((size_t)sig->nargs + 1, sizeof *args);
  GpucValue *res = calloc((size_t)sig->nres + 1, sizeof *res);
  RnSizes sizes;
  memset(&sizes, 0, sizeof sizes);
  RnReader r;
  rn_reader_init(&r, text, len, "<fuzz>");
  bool ok = args && res;
  for (int p = 0; ok && p < sig->nparams; p++) {
    RnError e = {0};
    GpucValue *comps = &args[sig->first[p]];
    ok = !rn_reader_at_end(&r) && rn_text_read(&r, sig->params[p], comps, &e) == 0;
    if (ok) {
      rn_text_write(devnull, sig->params[p], comps);
      ok = rn_check_param(sig, p, comps, &sizes, &e) == 0;
    }
  }
  /* Results get storage for the bound sizes; an i64 size argument may ask
   * for any amount, which the runner reports as out of memory, so only
   * modest sizes are allocated here (ASan aborts on huge requests). */
  for (int i = 0; ok && i < sizes.count; i++) {
    ok = sizes.v[i].value <= 4096;
  }
  if (ok) {
    RnError e = {0};
    (void)rn_reader_at_end(&r);
    if (rn_prepare_results(sig, &sizes, res, &e) == 0) {
      rn_values_free(res, sig->nres);
    }
  }
  if (args) {
    rn_values_free(args, sig->nargs);   /* unread ones are NULL */
  }
  free(args);
  free(res);
}

/* Read a .npy image; check it as an argument of the type its header says. */
static void fuzz_npy(const unsigned char *data, size_t len)
{
  RnError e = {0};
  GpucValue v;
  if (rn_npy_read_mem(data, len, &v, &e)) {
    return;
  }
  rn_npy_write(devnull, &v, &e);
  static const char *const types[3][7] = {
      {"bool", "i32", "i64", "u32", "u64", "f32", "f64"},
      {"bool[n]", "i32[n]", "i64[n]", "u32[n]", "u64[n]", "f32[n]", "f64[n]"},
      {"bool[n][m]", "i32[n][m]", "i64[n][m]", "u32[n][m]", "u64[n][m]", "f32[n][m]", "f64[n][m]"},
  };
  GpucParam param = {"x", types[v.rank][v.kind]};
  GpucEntry entry = {"npy", 1, &param, "f64", NULL, NULL, NULL};
  RnSig sig;
  if (rn_sig_init(&sig, &entry, &e) == 0) {
    RnSizes sizes;
    memset(&sizes, 0, sizeof sizes);
    if (rn_check_param(&sig, 0, &v, &sizes, &e) == 0 && gpuc_value_count(&v) <= 4096) {
      rn_text_write(devnull, sig.params[0], &v);
    }
    rn_sig_free(&sig);
  }
  free(v.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!devnull && !(devnull = fopen("/dev/null", "w"))) {
    return 0;
  }
  if (size < 1) {
    return 0;
  }
  if (data[0] & 1) {
    fuzz_npy(data + 1, size - 1);
    return 0;
  }
  RnError e = {0};
  RnSig sig;
  if (rn_sig_init(&sig, &entries[(data[0] >> 1) % NUM_ENTRIES], &e)) {
    fprintf(stderr, "fuzz_inputs: %s\n", e.msg);
    abort();
  }
  /* the reader wants a NUL-terminated buffer, like rn_read_all gives */
  char *text = malloc(size);
  if (text) {
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    fuzz_text(&sig, text, size - 1);
    free(text);
  }
  rn_sig_free(&sig);
  return 0;
}
