/* ast.c: small helpers over the AST types of ast.h: scalar type singletons,
 * type predicates and structural equality, and names for printing. */
#include <stdio.h>
#include <string.h>

#include "frontend.h"

/* grep "ORDER TYPEKIND" */
static FeType scalar_types[] = {
    {.kind = FE_TY_BOOL}, {.kind = FE_TY_I32}, {.kind = FE_TY_I64}, {.kind = FE_TY_U32},
    {.kind = FE_TY_U64},  {.kind = FE_TY_F32}, {.kind = FE_TY_F64},
};
static FeType error_type = {.kind = FE_TY_ERROR};

FeType *fe_type_scalar(FeTypeKind k)
{
    if (k > FE_TY_F64) {
        return &error_type;
    }
    return &scalar_types[k];
}

bool fe_type_is_scalar(const FeType *t)
{
    return t && t->kind <= FE_TY_F64;
}

bool fe_type_is_int(const FeType *t)
{
    return t && t->kind >= FE_TY_I32 && t->kind <= FE_TY_U64;
}

bool fe_type_is_float(const FeType *t)
{
    return t && (t->kind == FE_TY_F32 || t->kind == FE_TY_F64);
}

bool fe_type_is_numeric(const FeType *t)
{
    return fe_type_is_int(t) || fe_type_is_float(t);
}

bool fe_dim_equal(const FeDim *a, const FeDim *b)
{
    if (a->kind == FE_DIM_RUNTIME || b->kind == FE_DIM_RUNTIME) {
        return true; /* checked at run time */
    }
    if (a->kind != b->kind) {
        return false;
    }
    if (a->kind == FE_DIM_CONST) {
        return a->value == b->value;
    }
    return strcmp(a->name, b->name) == 0;
}

bool fe_type_equal(const FeType *a, const FeType *b)
{
    if (a == b) {
        return true;
    }
    if (!a || !b) {
        return false;
    }
    if (a->kind == FE_TY_ERROR || b->kind == FE_TY_ERROR) {
        return true; /* poison agrees with everything: no follow-on errors */
    }
    if (a->kind != b->kind) {
        return false;
    }
    switch (a->kind) {
    case FE_TY_TUPLE:
    case FE_TY_FUNC:
        if (a->nelems != b->nelems) {
            return false;
        }
        for (int i = 0; i < a->nelems; i++) {
            if (!fe_type_equal(a->elems[i], b->elems[i])) {
                return false;
            }
        }
        return a->kind == FE_TY_TUPLE || fe_type_equal(a->ret, b->ret);
    case FE_TY_STRUCT:
        return a->sdecl == b->sdecl;
    case FE_TY_ARRAY:
        if (a->rank != b->rank || !fe_type_equal(a->elem, b->elem)) {
            return false;
        }
        for (int i = 0; i < a->rank; i++) {
            if (!fe_dim_equal(&a->dims[i], &b->dims[i])) {
                return false;
            }
        }
        return true;
    case FE_TY_NAME:
        return strcmp(a->name, b->name) == 0;
    default:
        return true; /* scalars */
    }
}

const char *fe_scalar_name(FeTypeKind k)
{
    static const char *names[] = {"bool", "i32", "i64", "u32", "u64", "f32", "f64"};
    return k <= FE_TY_F64 ? names[k] : "?";
}

/* Append the spelling of t to buf (size cap, position *n). */
static void type_str(char *buf, size_t cap, size_t *n, const FeType *t)
{
#define PUT(...)                                                                     \
    do {                                                                             \
        if (*n < cap) {                                                              \
            int w_ = snprintf(buf + *n, cap - *n, __VA_ARGS__);                      \
            *n += w_ > 0 ? (size_t)w_ : 0;                                           \
        }                                                                            \
    } while (0)
    if (!t) {
        PUT("?");
        return;
    }
    switch (t->kind) {
    case FE_TY_TUPLE:
        PUT("(");
        for (int i = 0; i < t->nelems; i++) {
            if (i) {
                PUT(", ");
            }
            type_str(buf, cap, n, t->elems[i]);
        }
        PUT(")");
        break;
    case FE_TY_FUNC:
        PUT("fn(");
        for (int i = 0; i < t->nelems; i++) {
            if (i) {
                PUT(", ");
            }
            type_str(buf, cap, n, t->elems[i]);
        }
        PUT(") -> ");
        type_str(buf, cap, n, t->ret);
        break;
    case FE_TY_STRUCT:
    case FE_TY_NAME:
        PUT("%s", t->name);
        break;
    case FE_TY_ARRAY:
        type_str(buf, cap, n, t->elem);
        for (int i = 0; i < t->rank; i++) {
            const FeDim *d = &t->dims[i];
            if (d->kind == FE_DIM_VAR) {
                PUT("[%s]", d->name);
            } else if (d->kind == FE_DIM_CONST) {
                PUT("[%lld]", (long long)d->value);
            } else {
                PUT("[_]");
            }
        }
        break;
    case FE_TY_ERROR:
        PUT("<error>");
        break;
    default:
        PUT("%s", fe_scalar_name(t->kind));
        break;
    }
#undef PUT
}

const char *fe_type_str(FeArena *arena, const FeType *t)
{
    char buf[1024];
    size_t n = 0;
    buf[0] = 0;
    type_str(buf, sizeof buf, &n, t);
    return fe_strdup(arena, buf);
}

const char *fe_op_name(FeOp op)
{
    /* grep "ORDER FEOP" */
    static const char *names[] = {"-",  "!",  "~",  "+",  "-",  "*",  "/",  "%",
                                  "**", "&",  "|",  "^",  "<<", ">>", "&&", "||",
                                  "==", "!=", "<",  "<=", ">",  ">="};
    return (size_t)op < sizeof names / sizeof names[0] ? names[op] : "?";
}

const char *fe_builtin_name(FeBuiltin b)
{
    static const char *names[] = {
        "<none>",
#define FE_BUILTIN(id, name, ...) name,
#include "builtins.def"
#undef FE_BUILTIN
    };
    return (size_t)b < sizeof names / sizeof names[0] ? names[b] : "?";
}
