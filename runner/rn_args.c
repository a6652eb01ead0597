/* rn_args.c: arguments against an entry's signature: size variables bound
 * and checked across parameters (x: f32[n], y: f32[n]), constants checked,
 * result shapes derived from the bound sizes, and random inputs for
 * benchmarking (--random n=1000000 --seed 7). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

int64_t rn_sizes_get(const RnSizes *s, const char *name)
{
  for (int i = 0; i < s->count; i++) {
    if (strcmp(s->v[i].name, name) == 0) {
      return s->v[i].value;
    }
  }
  return -1;
}

int rn_sizes_bind(RnSizes *s, const char *name, int64_t value, const char *from)
{
  for (int i = 0; i < s->count; i++) {
    if (strcmp(s->v[i].name, name) == 0) {
      s->v[i].value = value;
      snprintf(s->v[i].from, sizeof s->v[i].from, "%s", from);
      return 0;
    }
  }
  if (s->count == (int)(sizeof s->v / sizeof s->v[0])) {
    return -1;
  }
  snprintf(s->v[s->count].name, sizeof s->v[0].name, "%s", name);
  snprintf(s->v[s->count].from, sizeof s->v[0].from, "%s", from);
  s->v[s->count].value = value;
  s->count++;
  return 0;
}

static const char *sizes_from(const RnSizes *s, const char *name)
{
  for (int i = 0; i < s->count; i++) {
    if (strcmp(s->v[i].name, name) == 0) {
      return s->v[i].from;
    }
  }
  return "?";
}

static bool type_uses_size(const RnType *t, const char *name)
{
  if (t->tag == RN_ARRAY) {
    for (int i = 0; i < t->rank; i++) {
      if (t->dims[i].kind == RN_DIM_VAR && strcmp(t->dims[i].name, name) == 0) {
        return true;
      }
    }
    return false;
  }
  for (int i = 0; i < t->count; i++) {
    if (type_uses_size(t->members[i], name)) {
      return true;
    }
  }
  return false;
}

/* Is parameter p an i64 scalar whose name is a size variable of the entry? */
static bool is_size_param(const RnSig *sig, int p)
{
  const RnType *t = sig->params[p];
  const char *name = sig->entry->params[p].name;
  if (t->tag != RN_SCALAR || t->kind != GPUC_KIND_I64) {
    return false;
  }
  for (int i = 0; i < sig->nparams; i++) {
    if (type_uses_size(sig->params[i], name)) {
      return true;
    }
  }
  return type_uses_size(sig->result, name);
}

static const char *dim_word(const RnType *a, int d, int64_t count)
{
  if (count == 1) {
    return a->rank == 1 ? "element" : d == 0 ? "row" : "column";
  }
  return a->rank == 1 ? "elements" : d == 0 ? "rows" : "columns";
}

static void shape_text(const GpucValue *v, char *buf, size_t size)
{
  if (v->rank == 0) {
    snprintf(buf, size, "()");
  } else if (v->rank == 1) {
    snprintf(buf, size, "(%" PRId64 ",)", v->shape[0]);
  } else {
    snprintf(buf, size, "(%" PRId64 ", %" PRId64 ")", v->shape[0], v->shape[1]);
  }
}

/* Check every array node of t (at most the top one, or ones inside a tuple
 * or struct) against the bound sizes. */
static int check_arrays(const RnSig *sig, int p, const RnType *t, const GpucValue *comps, RnSizes *sizes, RnError *e)
{
  const char *pname = sig->entry->params[p].name;
  if (t->tag != RN_ARRAY) {
    for (int i = 0; i < t->count; i++) {
      if (check_arrays(sig, p, t->members[i], comps, sizes, e)) {
        return -1;
      }
    }
    return 0;
  }
  const GpucValue *v = &comps[t->first];
  const RnComp *names = &sig->args[sig->first[p]];
  for (int c = 1; c < t->ncomp; c++) {
    const GpucValue *w = &comps[t->first + c];
    if (w->shape[0] != v->shape[0] || (t->rank == 2 && w->shape[1] != v->shape[1])) {
      char a[64], b[64];
      shape_text(w, a, sizeof a);
      shape_text(v, b, sizeof b);
      rn_err(e, "argument '%s' (%s): component '%s' has shape %s but '%s' has %s", pname, sig->shown[p],
             names[t->first + c].name, a, names[t->first].name, b);
      return -1;
    }
  }
  for (int d = 0; d < t->rank; d++) {
    const RnDim *dim = &t->dims[d];
    int64_t got = v->shape[d];
    if (dim->kind == RN_DIM_CONST && got != dim->value) {
      rn_err(e, "argument '%s' (%s): has %" PRId64 " %s but the type says %" PRId64, pname, sig->shown[p], got,
             dim_word(t, d, got), dim->value);
      return -1;
    }
    if (dim->kind == RN_DIM_VAR) {
      int64_t bound = rn_sizes_get(sizes, dim->name);
      if (bound >= 0 && bound != got) {
        const char *from = sizes_from(sizes, dim->name);
        if (strcmp(from, pname) == 0) {
          rn_err(e, "argument '%s' (%s): has %" PRId64 " %s but size %s = %" PRId64 " from its other dimension", pname,
                 sig->shown[p], got, dim_word(t, d, got), dim->name, bound);
        } else {
          rn_err(e, "argument '%s' (%s): has %" PRId64 " %s but size %s = %" PRId64 " from %s%s%s", pname,
                 sig->shown[p], got, dim_word(t, d, got), dim->name, bound, from[0] == '-' ? "" : "argument '", from,
                 from[0] == '-' ? "" : "'");
        }
        return -1;
      }
      if (bound < 0 && rn_sizes_bind(sizes, dim->name, got, pname)) {
        rn_err(e, "too many size variables");
        return -1;
      }
    }
  }
  return 0;
}

int rn_check_param(const RnSig *sig, int p, const GpucValue *comps, RnSizes *sizes, RnError *e)
{
  const char *pname = sig->entry->params[p].name;
  if (is_size_param(sig, p)) {
    int64_t v;
    memcpy(&v, comps[0].data, sizeof v);
    int64_t bound = rn_sizes_get(sizes, pname);
    if (v < 0) {
      rn_err(e, "argument '%s' (i64): is %" PRId64 " but it is the size %s, which cannot be negative", pname, v, pname);
      return -1;
    }
    if (bound >= 0 && bound != v) {
      rn_err(e, "argument '%s' (i64): is %" PRId64 " but size %s = %" PRId64 " from argument '%s'", pname, v, pname,
             bound, sizes_from(sizes, pname));
      return -1;
    }
    if (rn_sizes_bind(sizes, pname, v, pname)) {
      rn_err(e, "too many size variables");
      return -1;
    }
    return 0;
  }
  return check_arrays(sig, p, sig->params[p], comps, sizes, e);
}

int rn_prepare_results(const RnSig *sig, const RnSizes *sizes, GpucValue *res, RnError *e)
{
  for (int i = 0; i < sig->nres; i++) {
    const RnComp *c = &sig->res[i];
    GpucValue *v = &res[i];
    memset(v, 0, sizeof *v);
    v->kind = c->kind;
    v->rank = c->rank;
    bool known = true;
    for (int d = 0; d < c->rank; d++) {
      const RnDim *dim = &c->array->dims[d];
      int64_t n = dim->kind == RN_DIM_CONST ? dim->value : dim->kind == RN_DIM_VAR ? rn_sizes_get(sizes, dim->name) : -1;
      v->shape[d] = n;
      known = known && n >= 0;
    }
    if (known && gpuc_value_alloc(v)) {
      rn_err(e, "out of memory allocating the result '%s'", c->name);
      return -1;
    }
  }
  return 0;
}

/* splitmix64 (Steele, Lea, Flood 2014): one independent stream per component. */
static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void fill_random(GpucValue *v, uint64_t state)
{
  int64_t n = gpuc_value_count(v);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = splitmix64(&state);
    double u = (double)(r >> 11) * 0x1.0p-53;
    switch (v->kind) {
    case GPUC_KIND_BOOL:
      ((unsigned char *)v->data)[i] = (unsigned char)(r & 1);
      break;
    case GPUC_KIND_I32:
      ((int32_t *)v->data)[i] = (int32_t)(r % 100);
      break;
    case GPUC_KIND_I64:
      ((int64_t *)v->data)[i] = (int64_t)(r % 100);
      break;
    case GPUC_KIND_U32:
      ((uint32_t *)v->data)[i] = (uint32_t)(r % 100);
      break;
    case GPUC_KIND_U64:
      ((uint64_t *)v->data)[i] = r % 100;
      break;
    case GPUC_KIND_F32:
      ((float *)v->data)[i] = (float)u;
      break;
    case GPUC_KIND_F64:
      ((double *)v->data)[i] = u;
      break;
    }
  }
}

int rn_random_param(const RnSig *sig, int p, RnSizes *sizes, uint64_t seed, GpucValue *comps, RnError *e)
{
  const char *pname = sig->entry->params[p].name;
  const RnComp *cs = &sig->args[sig->first[p]];
  int n = sig->params[p]->ncomp;
  for (int c = 0; c < n; c++) {
    memset(&comps[c], 0, sizeof comps[c]);
  }
  if (is_size_param(sig, p)) {
    int64_t v = rn_sizes_get(sizes, pname);
    if (v < 0) {
      rn_err(e, "argument '%s' (i64): it is the size %s: give it with --random %s=N", pname, pname, pname);
      return -1;
    }
    comps[0].kind = GPUC_KIND_I64;
    if (gpuc_value_alloc(&comps[0])) {
      rn_err(e, "out of memory");
      return -1;
    }
    memcpy(comps[0].data, &v, sizeof v);
    return 0;
  }
  for (int c = 0; c < n; c++) {
    GpucValue *v = &comps[c];
    v->kind = cs[c].kind;
    v->rank = cs[c].rank;
    for (int d = 0; d < v->rank; d++) {
      const RnDim *dim = &cs[c].array->dims[d];
      if (dim->kind == RN_DIM_CONST) {
        v->shape[d] = dim->value;
      } else if (dim->kind == RN_DIM_VAR && (v->shape[d] = rn_sizes_get(sizes, dim->name)) >= 0) {
        continue;
      } else {
        rn_err(e, "argument '%s' (%s): --random needs its size %s: add %s=N to --random", pname, sig->shown[p],
               dim->name, dim->kind == RN_DIM_VAR ? dim->name : "_");
        rn_values_free(comps, n);
        return -1;
      }
    }
    if (gpuc_value_alloc(v)) {
      rn_err(e, "argument '%s' (%s): out of memory generating %" PRId64 " elements", pname, sig->shown[p],
             gpuc_value_count(v));
      rn_values_free(comps, n);
      return -1;
    }
    fill_random(v, seed ^ (0xD1B54A32D192ED03ull * (uint64_t)(sig->first[p] + c + 1)));
  }
  return 0;
}
