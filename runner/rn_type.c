/* rn_type.c: the gdsl type strings of gpuc_program.h parsed into type trees,
 * and the flattening of a type into components (leaves, depth first), which
 * is the contract between generated entries and the runner. A malformed type
 * string is a bug in the generated program, reported as an internal error. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

typedef struct TypeParser {
  const char *s;
  size_t pos;
  RnError *e;
} TypeParser;

static void skip_ws(TypeParser *p)
{
  while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n') {
    p->pos++;
  }
}

static bool eat(TypeParser *p, char c)
{
  skip_ws(p);
  if (p->s[p->pos] == c) {
    p->pos++;
    return true;
  }
  return false;
}

/* NAME = [A-Za-z_][A-Za-z0-9_]* ; false when none. */
static bool name(TypeParser *p, char *out, size_t size)
{
  skip_ws(p);
  size_t start = p->pos;
  if (!isalpha((unsigned char)p->s[p->pos]) && p->s[p->pos] != '_') {
    return false;
  }
  while (isalnum((unsigned char)p->s[p->pos]) || p->s[p->pos] == '_') {
    p->pos++;
  }
  size_t n = p->pos - start;
  if (n >= size) {
    rn_err(p->e, "name too long at offset %zu", start);
    return false;
  }
  memcpy(out, p->s + start, n);
  out[n] = '\0';
  return true;
}

static RnType *new_type(RnTag tag)
{
  RnType *t = calloc(1, sizeof *t);
  if (t) {
    t->tag = tag;
  }
  return t;
}

void rn_type_free(RnType *t)
{
  if (!t) {
    return;
  }
  for (int i = 0; i < t->count; i++) {
    rn_type_free(t->members[i]);
    if (t->fields) {
      free(t->fields[i]);
    }
  }
  free(t->members);
  free(t->fields);
  free(t->name);
  rn_type_free(t->elem);
  free(t);
}

static bool has_array(const RnType *t)
{
  if (t->tag == RN_ARRAY) {
    return true;
  }
  for (int i = 0; i < t->count; i++) {
    if (has_array(t->members[i])) {
      return true;
    }
  }
  return false;
}

static RnType *parse_type(TypeParser *p, int depth);

/* Add a member (and field name, for structs) to a tuple or struct node. */
static bool add_member(RnType *t, RnType *m, const char *field)
{
  RnType **members = realloc(t->members, (size_t)(t->count + 1) * sizeof *members);
  if (!members) {
    return false;
  }
  t->members = members;
  if (t->tag == RN_STRUCT) {
    char **fields = realloc(t->fields, (size_t)(t->count + 1) * sizeof *fields);
    if (!fields) {
      return false;
    }
    t->fields = fields;
    t->fields[t->count] = strdup(field);
    if (!t->fields[t->count]) {
      return false;
    }
  }
  t->members[t->count++] = m;
  return true;
}

/* base = scalar | "(" type ("," type)+ ")" | NAME "{" NAME ":" type ("," NAME ":" type)* ","? "}" */
static RnType *parse_base(TypeParser *p, int depth)
{
  static const char *const scalars[] = {"bool", "i32", "i64", "u32", "u64", "f32", "f64"};
  if (depth > RN_MAX_DEPTH) {
    rn_err(p->e, "type nested too deeply");
    return NULL;
  }
  if (eat(p, '(')) {
    RnType *t = new_type(RN_TUPLE);
    if (!t) {
      rn_err(p->e, "out of memory");
      return NULL;
    }
    do {
      RnType *m = parse_type(p, depth + 1);
      if (!m || !add_member(t, m, NULL)) {
        rn_type_free(m);
        rn_type_free(t);
        rn_err(p->e, "out of memory");
        return NULL;
      }
    } while (eat(p, ','));
    if (!eat(p, ')') || t->count < 2) {
      rn_err(p->e, "expected ')' closing a tuple of two or more types at offset %zu", p->pos);
      rn_type_free(t);
      return NULL;
    }
    return t;
  }
  char word[64];
  if (!name(p, word, sizeof word)) {
    rn_err(p->e, "expected a type at offset %zu", p->pos);
    return NULL;
  }
  for (int k = 0; k < 7; k++) {
    if (strcmp(word, scalars[k]) == 0) {
      RnType *t = new_type(RN_SCALAR);
      if (!t) {
        rn_err(p->e, "out of memory");
        return NULL;
      }
      t->kind = (GpucKind)k;
      return t;
    }
  }
  if (!eat(p, '{')) {
    rn_err(p->e, "unknown type '%s' (structs are spelled out: %s { field: type, ... })", word, word);
    return NULL;
  }
  RnType *t = new_type(RN_STRUCT);
  if (!t || !(t->name = strdup(word))) {
    rn_type_free(t);
    rn_err(p->e, "out of memory");
    return NULL;
  }
  do {
    char field[64];
    skip_ws(p);
    if (p->s[p->pos] == '}' && t->count > 0) {
      break;
    }
    if (!name(p, field, sizeof field) || !eat(p, ':')) {
      rn_err(p->e, "expected 'field: type' in struct %s at offset %zu", word, p->pos);
      rn_type_free(t);
      return NULL;
    }
    for (int i = 0; i < t->count; i++) {
      if (strcmp(t->fields[i], field) == 0) {
        rn_err(p->e, "field '%s' twice in struct %s", field, word);
        rn_type_free(t);
        return NULL;
      }
    }
    RnType *m = parse_type(p, depth + 1);
    if (!m || !add_member(t, m, field)) {
      rn_type_free(m);
      rn_type_free(t);
      rn_err(p->e, "out of memory");
      return NULL;
    }
  } while (eat(p, ','));
  if (!eat(p, '}')) {
    rn_err(p->e, "expected '}' closing struct %s at offset %zu", word, p->pos);
    rn_type_free(t);
    return NULL;
  }
  return t;
}

/* dim = NAME | INT | "_" */
static bool parse_dim(TypeParser *p, RnDim *d)
{
  skip_ws(p);
  if (isdigit((unsigned char)p->s[p->pos])) {
    char *end;
    d->kind = RN_DIM_CONST;
    d->value = strtoll(p->s + p->pos, &end, 10);
    p->pos = (size_t)(end - p->s);
    return d->value >= 0;
  }
  if (!name(p, d->name, sizeof d->name)) {
    return false;
  }
  d->kind = strcmp(d->name, "_") == 0 ? RN_DIM_ANY : RN_DIM_VAR;
  return true;
}

/* type = base ("[" dim "]")* ; at most two dimensions, arrays of arrays are 2-D */
static RnType *parse_type(TypeParser *p, int depth)
{
  RnType *t = parse_base(p, depth);
  if (!t) {
    return NULL;
  }
  while (eat(p, '[')) {
    RnDim d;
    memset(&d, 0, sizeof d);
    if (!parse_dim(p, &d) || !eat(p, ']')) {
      rn_err(p->e, "expected a size (a name, an integer or _) and ']' at offset %zu", p->pos);
      rn_type_free(t);
      return NULL;
    }
    if (t->tag == RN_ARRAY) {
      if (t->rank == 2) {
        rn_err(p->e, "arrays have at most two dimensions");
        rn_type_free(t);
        return NULL;
      }
      t->dims[t->rank++] = d;
      continue;
    }
    if (has_array(t)) {
      rn_err(p->e, "an array element cannot hold arrays");
      rn_type_free(t);
      return NULL;
    }
    RnType *a = new_type(RN_ARRAY);
    if (!a) {
      rn_type_free(t);
      rn_err(p->e, "out of memory");
      return NULL;
    }
    a->rank = 1;
    a->dims[0] = d;
    a->elem = t;
    t = a;
  }
  return t;
}

/* Number the leaves: first and ncomp of every node. */
static int number(RnType *t, int first)
{
  t->first = first;
  switch (t->tag) {
  case RN_SCALAR:
    t->ncomp = 1;
    break;
  case RN_ARRAY:
    t->ncomp = number(t->elem, first);
    break;
  default:
    t->ncomp = 0;
    for (int i = 0; i < t->count; i++) {
      t->ncomp += number(t->members[i], first + t->ncomp);
    }
  }
  return t->ncomp;
}

RnType *rn_type_parse(const char *text, RnError *e)
{
  TypeParser p = {text ? text : "", 0, e};
  RnType *t = parse_type(&p, 0);
  if (t) {
    skip_ws(&p);
    if (p.s[p.pos] != '\0') {
      rn_err(e, "unexpected '%c' at offset %zu", p.s[p.pos], p.pos);
      rn_type_free(t);
      return NULL;
    }
    number(t, 0);
  }
  return t;
}

static void show(const RnType *t, char *buf, size_t size, size_t *n)
{
#define PUT(...) (*n += (size_t)snprintf(buf + (*n < size ? *n : size - 1), *n < size ? size - *n : 1, __VA_ARGS__))
  switch (t->tag) {
  case RN_SCALAR:
    PUT("%s", rn_kind_name(t->kind));
    break;
  case RN_STRUCT:
    PUT("%s", t->name);
    break;
  case RN_TUPLE:
    PUT("(");
    for (int i = 0; i < t->count; i++) {
      PUT(i ? ", " : "");
      show(t->members[i], buf, size, n);
    }
    PUT(")");
    break;
  case RN_ARRAY:
    show(t->elem, buf, size, n);
    for (int i = 0; i < t->rank; i++) {
      if (t->dims[i].kind == RN_DIM_CONST) {
        PUT("[%lld]", (long long)t->dims[i].value);
      } else {
        PUT("[%s]", t->dims[i].name);
      }
    }
    break;
  }
#undef PUT
}

void rn_type_show(const RnType *t, char *buf, size_t size)
{
  size_t n = 0;
  buf[0] = '\0';
  show(t, buf, size, &n);
}

static void components(const RnType *t, const char *prefix, int value, const RnType *array, RnComp *comps)
{
  switch (t->tag) {
  case RN_SCALAR: {
    RnComp *c = &comps[t->first];
    snprintf(c->name, sizeof c->name, "%s", prefix);
    c->kind = t->kind;
    c->rank = array ? array->rank : 0;
    c->array = array;
    c->value = value;
    break;
  }
  case RN_ARRAY:
    components(t->elem, prefix, value, t, comps);
    break;
  default:
    for (int i = 0; i < t->count; i++) {
      char sub[256];
      if (t->tag == RN_STRUCT) {
        snprintf(sub, sizeof sub, "%s.%s", prefix, t->fields[i]);
      } else {
        snprintf(sub, sizeof sub, "%s.%d", prefix, i);
      }
      components(t->members[i], sub, value, array, comps);
    }
  }
}

void rn_type_components(const RnType *t, const char *prefix, int value, RnComp *comps)
{
  components(t, prefix, value, NULL, comps);
}

void rn_sig_free(RnSig *sig)
{
  for (int i = 0; sig->params && i < sig->nparams; i++) {
    rn_type_free(sig->params[i]);
  }
  free(sig->params);
  free(sig->shown);
  free(sig->first);
  free(sig->args);
  rn_type_free(sig->result);
  free(sig->res);
  memset(sig, 0, sizeof *sig);
}

int rn_sig_init(RnSig *sig, const GpucEntry *entry, RnError *e)
{
  memset(sig, 0, sizeof *sig);
  sig->entry = entry;
  sig->nparams = entry->num_params;
  int n = entry->num_params > 0 ? entry->num_params : 1;
  sig->params = calloc((size_t)n, sizeof *sig->params);
  sig->shown = calloc((size_t)n, sizeof *sig->shown);
  sig->first = calloc((size_t)n + 1, sizeof *sig->first);
  if (!sig->params || !sig->shown || !sig->first) {
    rn_err(e, "out of memory");
    rn_sig_free(sig);
    return -1;
  }
  for (int i = 0; i < entry->num_params; i++) {
    sig->params[i] = rn_type_parse(entry->params[i].type, e);
    if (!sig->params[i]) {
      rn_err_prefix(e, "internal error: entry '%s': parameter '%s': bad type \"%s\"", entry->name,
                    entry->params[i].name, entry->params[i].type);
      rn_sig_free(sig);
      return -1;
    }
    rn_type_show(sig->params[i], sig->shown[i], sizeof sig->shown[i]);
    sig->first[i] = sig->nargs;
    sig->nargs += sig->params[i]->ncomp;
  }
  sig->first[entry->num_params] = sig->nargs;
  sig->result = rn_type_parse(entry->result_type, e);
  if (!sig->result) {
    rn_err_prefix(e, "internal error: entry '%s': bad result type \"%s\"", entry->name,
                  entry->result_type ? entry->result_type : "(null)");
    rn_sig_free(sig);
    return -1;
  }
  rn_type_show(sig->result, sig->result_shown, sizeof sig->result_shown);
  sig->nres = sig->result->ncomp;
  sig->args = calloc((size_t)sig->nargs + 1, sizeof *sig->args);
  sig->res = calloc((size_t)sig->nres + 1, sizeof *sig->res);
  if (!sig->args || !sig->res) {
    rn_err(e, "out of memory");
    rn_sig_free(sig);
    return -1;
  }
  for (int i = 0; i < entry->num_params; i++) {
    rn_type_components(sig->params[i], entry->params[i].name, i, sig->args + sig->first[i]);
  }
  rn_type_components(sig->result, "result", 0, sig->res);
  return 0;
}
