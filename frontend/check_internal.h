/* check_internal.h: what the checker's files share (frontend/check*.c):
 * the checker's state, the helpers one file calls from another, and where
 * each lives.  The checker's files, in pipeline order:
 *   check.c           fe_check: the program (globals, structs, -D defines),
 *                     names (scopes, "did you mean") and declared types
 *   check_instance.c  instances: cloning a declaration with its template
 *                     arguments, attributes, checking a function's body
 *   check_expr.c      expressions: literals, operators, broadcasting,
 *                     patterns, indexing, comprehensions, calls
 *   check_calls.c     calls of user functions (size unification, template
 *                     inference) and function arguments of builtins
 *   check_builtins.c  builtin calls: arity and one typing rule per kind of
 *                     builtin, driven by builtins.def
 * Internal to the frontend: the rest of the compiler sees frontend.h. */
#ifndef GPUC_FRONTEND_CHECK_INTERNAL_H
#define GPUC_FRONTEND_CHECK_INTERNAL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"
#include "parse.h" /* FE_MAX_DEPTH */


/* A lexical scope entry: one variable. */
typedef struct Scope {
    struct Scope *next;
    const char *name;
    FeBinding *bind;
} Scope;

/* A global name: a struct or a function declaration. */
typedef struct Global {
    const char *name;
    SrcLoc loc;
    FeStruct *sdecl;
    FeFunc *func;
} Global;

typedef struct Checker {
    FeArena *a;
    FeProgram *prog;
    const FeOptions *opts;
    Global *globals;
    int nglobals, cap_globals;
    int *gindex;         /* hash of global names: index + 1 into globals, 0 = empty */
    int gindex_size;     /* a power of two, at least twice nglobals */
    int suggestions;     /* "did you mean" searches so far (capped: they are quadratic) */
    int cap_instances;
    int next_bind_id;
    int next_dim_id;
    /* the instance being checked */
    FeFunc *cur;
    Scope *scope;
    const FeTParam *tps; /* its template parameters and arguments */
    const FeTArg *targs;
    int ntps;
    FeFunc **stack;      /* instances being checked, for recursion messages */
    int nstack, cap_stack;
    bool neg_literal;    /* the literal being checked is the operand of unary minus */
    bool col_ok;         /* the expression being checked is an operand of a lifted operation */
    int depth;           /* nesting of check() calls, across instances checked from calls */
    bool deep_reported;
} Checker;

typedef enum OpClass { CL_NUM, CL_INT, CL_BOOL, CL_INTBOOL, CL_ANY, CL_FLOAT } OpClass;

/* The checker of this compilation (fe_instantiate uses it). */
extern Checker *fe_checker;
#define C fe_checker

/* A "did you mean" search: the closest candidate so far. */
typedef struct Suggest {
    const char *name;
    const char *best;
    size_t dist;
} Suggest;

/* Expressions nest at most FE_MAX_DEPTH levels (the parser's limit), but a
 * call checks its callee's body from inside the caller's: the total nesting is
 * capped here so that chains of calls cannot overflow the stack either. */
enum { CHECK_MAX_DEPTH = 4 * FE_MAX_DEPTH, MAX_CALL_DEPTH = 128 };

/* check.c */
FeType *err_type(void);
bool is_err(const FeType *t);
const char *tstr(const FeType *t);
FeType *new_type(FeTypeKind k);
FeType *array_of(FeType *elem, int rank, const FeDim *dims);
FeType *elem_of(FeType *t);
bool has_array(const FeType *t);
FeDim runtime_dim(void);
const char *dim_str(const FeDim *d);
void suggest(Suggest *s, const char *cand);
FeBuiltin find_builtin(const char *name);
Global *find_global(const char *name);
FeBinding *find_var(const char *name);
bool is_size_var(const char *name);
const char *did_you_mean(const char *name, bool values, bool funcs, bool types);
FeBinding *new_binding(const char *name, SrcLoc loc, FeType *t);
void push_var(FeBinding *b);
const FeTArg *tparam_value(const char *name, FeTParamKind *kind);
FeType *resolve_type(FeType *t);

/* check_expr.c */
bool is_flex(const FeExpr *e);
FeType *scalar_hint(FeType *hint);
OpClass op_class(FeOp op);
bool class_ok(OpClass cl, const FeType *t);
const char *class_name(OpClass cl);
bool is_compare(FeOp op);
FeType *broadcast(FeExpr **ops, int n, FeType *elem, SrcLoc loc, const char *what);
void check_operands(FeExpr **ops, int n, FeType *hint, bool lifting);
bool any_error(FeExpr **ops, int n);
FeType *common_elem(FeExpr **ops, int n, OpClass cl, SrcLoc loc, const char *what);
FeDim dim_of(const FeExpr *e);
bool need_int_scalar(FeExpr *e, const char *what);
void check_dup_names(FePattern **pats, int npats);
bool bind_pattern(FePattern *p, FeType *t);
FeType *func_type(FeType **params, int n, FeType *ret);
const char *plural(int n, const char *word);
FeType *check(FeExpr *e, FeType *hint);

/* check_calls.c */
FeType *apply_user(FeFunc *decl, FeExpr **args, FeType **argtys, int n, SrcLoc loc, FeFunc **inst,
                   bool *lifted);
FeType *op_param_hint(FeExpr *op);
FeType *check_fnarg(FeExpr *e, FeType **argtys, int n, const char *who, FeType *ret_hint);

/* check_builtins.c */
bool math_signature(FeBuiltin b, OpClass *cl, int *arity, FeTypeKind *result);
FeType *check_builtin(FeExpr *e, FeBuiltin b, FeType *hint);

/* check_instance.c */
bool check_targ_kind(const FeFunc *decl, int i, FeTArg *v, SrcLoc at);
FeFunc *instantiate(FeFunc *decl, const FeTArg *targs, int ntargs, const char *inst_name, SrcLoc at);

#endif
