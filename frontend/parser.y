/* parser.y: the .gdsl grammar (docs/language.md, "Grammar"). A pure bison
 * parser with locations; it builds the untyped AST of one file into
 * FeParser.mod. Block bodies are desugared into nested let-expressions here.
 * Syntax errors are reported in clang's format and recovery resumes at the
 * next `;` or `}` at item level, so several errors per file are reported. */
%define api.pure full
%define api.prefix {fe_yy}
%define parse.error detailed
%define api.value.type union
%locations
%expect 0
%param {yyscan_t scanner}
%parse-param {FeParser *p}

%code requires {
#include "parse.h"
typedef void *yyscan_t;
}

%code provides {
int fe_yylex(FE_YYSTYPE *yylval, FE_YYLTYPE *yylloc, yyscan_t scanner);
}

%code {
#include <string.h>
#define LOC(l) ((SrcLoc){p->file, (l).first_line, (l).first_column})

static void fe_yyerror(FE_YYLTYPE *l, yyscan_t scanner, FeParser *p, const char *msg)
{
    (void)scanner;
    if (p->fatal) {
        return; /* the scanner already said why */
    }
    if (strcmp(msg, "memory exhausted") == 0) {
        fe_error(LOC(*l), "expression nested too deeply (the limit is %d levels)", FE_MAX_DEPTH);
        p->fatal = true;
        return;
    }
    fe_error(LOC(*l), "%s", msg);
}

static FeExpr *mk(FeParser *p, FeExprKind k, SrcLoc loc) { return fe_mk_expr(p, k, loc); }

static FeExpr *mk_unary(FeParser *p, FeOp op, FeExpr *a, SrcLoc loc)
{
    FeExpr *e = mk(p, FE_EX_UNARY, loc);
    e->op = op;
    e->a = a;
    fe_set_depth(p, e, a->depth);
    return e;
}

static FeExpr *mk_binary(FeParser *p, FeOp op, FeExpr *a, FeExpr *b, SrcLoc loc)
{
    FeExpr *e = mk(p, FE_EX_BINARY, loc);
    e->op = op;
    e->a = a;
    e->b = b;
    fe_set_depth(p, e, a->depth > b->depth ? a->depth : b->depth);
    return e;
}

static int list_depth(FeExpr **items, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        if (items[i] && items[i]->depth > d) {
            d = items[i]->depth;
        }
    }
    return d;
}

static FePattern *mk_pat(FeParser *p, FePatKind k, SrcLoc loc)
{
    FePattern *pt = fe_alloc(p->arena, sizeof *pt);
    pt->kind = k;
    pt->loc = loc;
    return pt;
}

static FeExprList *elist(FeParser *p, FeExprList *l, FeExpr *e)
{
    if (!l) {
        l = fe_alloc(p->arena, sizeof *l);
    }
    FE_PUSH(p->arena, l->items, l->n, l->cap, e);
    return l;
}

static FeTParamKind tparam_kind(FeParser *p, const char *w, SrcLoc loc)
{
    static const char *words[] = {"type", "num", "float", "int"}; /* grep "ORDER TPARAMKIND" */
    for (int i = 0; i < 4; i++) {
        if (strcmp(w, words[i]) == 0) {
            return (FeTParamKind)i;
        }
    }
    fe_error(loc, "unknown template parameter kind '%s' (expected type, num, float or int)", w);
    return FE_TP_TYPE;
}

static FeTArg targ_of_type(FeType *t)
{
    FeTArg a = {0};
    a.loc = t->loc;
    a.type = t;
    return a;
}

static FeTArg targ_of_int(FeExpr *e)
{
    FeTArg a = {0};
    a.loc = e->loc;
    a.is_int = true;
    a.ival = (int64_t)e->ival;
    if (e->ival > (uint64_t)INT64_MAX) {
        fe_error(e->loc, "template argument '%s' is too large", e->text);
    }
    return a;
}

/* { let a = x; let b = y; return r; } -> let a = x in let b = y in r */
static FeExpr *desugar_block(FeParser *p, FeStmtList *stmts, FeExpr *result)
{
    FeExpr *body = result;
    for (int i = stmts ? stmts->n - 1 : -1; i >= 0; i--) {
        FeStmt *s = &stmts->items[i];
        FeExpr *e = mk(p, FE_EX_LET, s->loc);
        e->pat = s->pat;
        e->annot = s->annot;
        e->a = s->value;
        e->b = body;
        fe_set_depth(p, e, s->value->depth > body->depth ? s->value->depth : body->depth);
        body = e;
    }
    return body;
}
}

%token IMPORT "'import'" STRUCT "'struct'" FN "'fn'" ENTRY "'entry'" EXPORT "'export'"
%token AS "'as'" LET "'let'" RETURN "'return'" IF "'if'" THEN "'then'" ELSE "'else'"
%token FOR "'for'" IN "'in'" TRUE "'true'" FALSE "'false'" UNDERSCORE "'_'"
%token POW "'**'" SHL "'<<'" SHR "'>>'" ANDAND "'&&'" OROR "'||'" EQ "'=='" NE "'!='"
%token LE "'<='" GE "'>='" ARROW "'->'" DARROW "'=>'"
%token <const char *> NAME "identifier"
%token <const char *> STRING "string literal"
%token <FeExpr *> INT "integer literal"
%token <FeExpr *> FLOAT "float literal"
%token <int> SCALAR "scalar type"

%type <FeExpr *> expr binary unary postfix primary index lambda
%type <FeExprList *> exprs args_opt attr_args
%type <FeExprList *> field_inits
%type <FePattern *> pattern lparam
%type <FePatList *> patterns2 lparams
%type <FeType *> type opt_annot
%type <FeTypeList *> types2
%type <FeDim> dim
%type <FeTParamList *> tparams tparams_opt
%type <FeTParam> tparam
%type <FeTArg> targ
%type <FeTArgList *> targs
%type <FeParamList *> params params_opt
%type <FeParam> param
%type <FeAttrList *> attrs
%type <FeFieldList *> fields
%type <FeStmtList *> stmts
%type <FeExpr *> body
%type <bool> fn_kw
%type <FeOp> binop

%left OROR
%left ANDAND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' LE '>' GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%right POW

%start program

%%

program
    : %empty
    | program item
    ;

item
    : IMPORT STRING ';' {
          FeImport im = {0};
          im.loc = LOC(@1);
          im.path = $2;
          FE_PUSH(p->arena, p->mod->imports, p->mod->nimports, p->cap_imports, im);
      }
    | STRUCT NAME '{' fields opt_comma '}' {
          FeStruct *s = fe_alloc(p->arena, sizeof *s);
          s->loc = LOC(@2);
          s->name = $2;
          s->nfields = $4->n;
          s->field_names = $4->names;
          s->field_locs = $4->locs;
          s->field_types = $4->types;
          FE_PUSH(p->arena, p->mod->structs, p->mod->nstructs, p->cap_structs, s);
      }
    | fn_kw NAME tparams_opt '(' params_opt ')' ARROW type attrs body {
          FeFunc *f = fe_alloc(p->arena, sizeof *f);
          f->loc = LOC(@2);
          f->name = $2;
          f->is_entry = $1;
          if ($3) { f->tparams = $3->items; f->ntparams = $3->n; }
          if ($5) { f->params = $5->items; f->nparams = $5->n; }
          f->result = $8;
          if ($9) { f->attrs = $9->items; f->nattrs = $9->n; }
          f->body = $10;
          FE_PUSH(p->arena, p->mod->funcs, p->mod->nfuncs, p->cap_funcs, f);
      }
    | EXPORT NAME '<' targs '>' AS NAME ';' {
          FeExport x = {0};
          x.loc = LOC(@7);
          x.entry = $2;
          x.entry_loc = LOC(@2);
          x.targs = $4->items;
          x.ntargs = $4->n;
          x.as_name = $7;
          FE_PUSH(p->arena, p->mod->exports, p->mod->nexports, p->cap_exports, x);
      }
    | error ';' { yyerrok; }
    | error '}' { yyerrok; }
    ;

fn_kw
    : FN { $$ = false; }
    | ENTRY { $$ = true; }
    ;

opt_comma
    : %empty
    | ','
    ;

fields
    : NAME ':' type {
          $$ = fe_alloc(p->arena, sizeof *$$);
          FE_PUSH(p->arena, $$->names, $$->n, $$->cap, $1);
          FE_PUSH(p->arena, $$->locs, $$->nlocs, $$->cap_locs, LOC(@1));
          FE_PUSH(p->arena, $$->types, $$->ntypes, $$->cap_types, $3);
      }
    | fields ',' NAME ':' type {
          $$ = $1;
          FE_PUSH(p->arena, $$->names, $$->n, $$->cap, $3);
          FE_PUSH(p->arena, $$->locs, $$->nlocs, $$->cap_locs, LOC(@3));
          FE_PUSH(p->arena, $$->types, $$->ntypes, $$->cap_types, $5);
      }
    ;

tparams_opt
    : %empty { $$ = NULL; }
    | '<' tparams '>' { $$ = $2; }
    ;

tparams
    : tparam { $$ = fe_alloc(p->arena, sizeof *$$); FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1); }
    | tparams ',' tparam { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

tparam
    : NAME ':' NAME {
          memset(&$$, 0, sizeof $$);
          $$.loc = LOC(@1); $$.name = $1; $$.kind = tparam_kind(p, $3, LOC(@3));
      }
    | NAME ':' NAME '=' targ {
          memset(&$$, 0, sizeof $$);
          $$.loc = LOC(@1); $$.name = $1; $$.kind = tparam_kind(p, $3, LOC(@3));
          $$.has_default = true; $$.def = $5;
      }
    ;

targ
    : type { $$ = targ_of_type($1); }
    | INT { $$ = targ_of_int($1); }
    ;

targs
    : targ { $$ = fe_alloc(p->arena, sizeof *$$); FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1); }
    | targs ',' targ { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

params_opt
    : %empty { $$ = NULL; }
    | params { $$ = $1; }
    ;

params
    : param { $$ = fe_alloc(p->arena, sizeof *$$); FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1); }
    | params ',' param { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

param
    : NAME ':' type { memset(&$$, 0, sizeof $$); $$.loc = LOC(@1); $$.name = $1; $$.type = $3; }
    ;

attrs
    : %empty { $$ = NULL; }
    | attrs '@' NAME '(' attr_args ')' {
          $$ = $1 ? $1 : fe_alloc(p->arena, sizeof *$$);
          FeAttr a = {0};
          a.loc = LOC(@3);
          const char *n = $3;
          static const char *names[] = {"block", "unroll", "items", "tile"}; /* ORDER FeAttrKind */
          int k = 0;
          while (k < 4 && strcmp(n, names[k]) != 0) {
              k++;
          }
          if (k == 4) {
              fe_error(LOC(@3), "unknown attribute '@%s' (expected @block, @unroll, @items or @tile)", n);
          } else if ($5->n != 1) {
              fe_error(LOC(@3), "attribute '@%s' takes one argument, not %d", n, $5->n);
          } else {
              a.kind = (FeAttrKind)k;
              a.arg = $5->items[0];
              FE_PUSH(p->arena, $$->items, $$->n, $$->cap, a);
          }
      }
    ;

attr_args
    : expr { $$ = elist(p, NULL, $1); }
    | attr_args ',' expr { $$ = elist(p, $1, $3); }
    ;

body
    : '=' expr ';' { $$ = $2; }
    | '{' stmts RETURN expr ';' '}' { $$ = desugar_block(p, $2, $4); }
    ;

stmts
    : %empty { $$ = NULL; }
    | stmts LET pattern opt_annot '=' expr ';' {
          $$ = $1 ? $1 : fe_alloc(p->arena, sizeof *$$);
          FeStmt s = {LOC(@2), $3, $4, $6};
          FE_PUSH(p->arena, $$->items, $$->n, $$->cap, s);
      }
    | stmts error ';' { $$ = $1; yyerrok; }
    ;

opt_annot
    : %empty { $$ = NULL; }
    | ':' type { $$ = $2; }
    ;

pattern
    : NAME { $$ = mk_pat(p, FE_PAT_NAME, LOC(@1)); $$->bind = fe_alloc(p->arena, sizeof *$$->bind);
             $$->bind->name = $1; $$->bind->loc = LOC(@1); }
    | UNDERSCORE { $$ = mk_pat(p, FE_PAT_WILD, LOC(@1)); }
    | '(' patterns2 ')' { $$ = mk_pat(p, FE_PAT_TUPLE, LOC(@1)); $$->elems = $2->items; $$->nelems = $2->n; }
    ;

patterns2
    : pattern ',' pattern {
          $$ = fe_alloc(p->arena, sizeof *$$);
          FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1);
          FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3);
      }
    | patterns2 ',' pattern { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

type
    : SCALAR { $$ = fe_mk_type(p, (FeTypeKind)$1, LOC(@1)); }
    | NAME { $$ = fe_mk_type(p, FE_TY_NAME, LOC(@1)); $$->name = $1; }
    | '(' types2 ')' { $$ = fe_mk_type(p, FE_TY_TUPLE, LOC(@1)); $$->elems = $2->items; $$->nelems = $2->n; }
    | type '[' dim ']' {
          if ($1->kind == FE_TY_ARRAY && $1->rank == 2) {
              fe_error(LOC(@2), "arrays have at most 2 dimensions");
              $$ = $1;
          } else if ($1->kind == FE_TY_ARRAY) {
              $$ = $1;
              $$->rank = 2;
              $$->dims[1] = $3;
          } else {
              $$ = fe_mk_type(p, FE_TY_ARRAY, $1->loc);
              $$->elem = $1;
              $$->rank = 1;
              $$->dims[0] = $3;
          }
      }
    ;

types2
    : type ',' type {
          $$ = fe_alloc(p->arena, sizeof *$$);
          FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1);
          FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3);
      }
    | types2 ',' type { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

dim
    : NAME { memset(&$$, 0, sizeof $$); $$.kind = FE_DIM_VAR; $$.name = $1; $$.loc = LOC(@1); }
    | INT {
          memset(&$$, 0, sizeof $$); $$.kind = FE_DIM_CONST; $$.value = (int64_t)$1->ival; $$.loc = LOC(@1);
          if ($1->ival < 1 || $1->ival > (uint64_t)INT32_MAX) {
              fe_error(LOC(@1), "array size %s is out of range (1 to 2147483647)", $1->text);
              $$.value = 1;
          }
      }
    | UNDERSCORE { memset(&$$, 0, sizeof $$); $$.kind = FE_DIM_RUNTIME; $$.loc = LOC(@1); }
    ;

expr
    : IF expr THEN expr ELSE expr {
          $$ = mk(p, FE_EX_IF, LOC(@1)); $$->a = $2; $$->b = $4; $$->c = $6;
          int d = $2->depth > $4->depth ? $2->depth : $4->depth;
          fe_set_depth(p, $$, d > $6->depth ? d : $6->depth);
      }
    | lambda { $$ = $1; }
    | FOR NAME IN expr DARROW expr {
          $$ = mk(p, FE_EX_FOR, LOC(@1));
          $$->rank = 1;
          $$->loop_vars[0] = fe_alloc(p->arena, sizeof(FeBinding));
          $$->loop_vars[0]->name = $2; $$->loop_vars[0]->loc = LOC(@2);
          $$->a = $4; $$->b = $6;
          fe_set_depth(p, $$, $4->depth > $6->depth ? $4->depth : $6->depth);
      }
    | FOR '(' NAME ',' NAME ')' IN expr DARROW expr {
          $$ = mk(p, FE_EX_FOR, LOC(@1));
          $$->rank = 2;
          for (int i = 0; i < 2; i++) {
              $$->loop_vars[i] = fe_alloc(p->arena, sizeof(FeBinding));
          }
          $$->loop_vars[0]->name = $3; $$->loop_vars[0]->loc = LOC(@3);
          $$->loop_vars[1]->name = $5; $$->loop_vars[1]->loc = LOC(@5);
          if ($8->kind == FE_EX_TUPLE && $8->nargs == 2) {
              $$->a = $8->args[0]; $$->c = $8->args[1];
          } else {
              fe_error($8->loc, "a 2-D comprehension needs two extents: for (i, j) in (n, m) => ...");
              $$->a = $8; $$->c = $8;
          }
          $$->b = $10;
          fe_set_depth(p, $$, $8->depth > $10->depth ? $8->depth : $10->depth);
      }
    | LET pattern opt_annot '=' expr IN expr {
          $$ = mk(p, FE_EX_LET, LOC(@1)); $$->pat = $2; $$->annot = $3; $$->a = $5; $$->b = $7;
          fe_set_depth(p, $$, $5->depth > $7->depth ? $5->depth : $7->depth);
      }
    | binary { $$ = $1; }
    ;

lambda
    : '|' lparams '|' expr {
          $$ = mk(p, FE_EX_LAMBDA, LOC(@1)); $$->params = $2->items; $$->nparams = $2->n; $$->a = $4;
          fe_set_depth(p, $$, $4->depth);
      }
    ;

lparams
    : lparam { $$ = fe_alloc(p->arena, sizeof *$$); FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $1); }
    | lparams ',' lparam { $$ = $1; FE_PUSH(p->arena, $$->items, $$->n, $$->cap, $3); }
    ;

lparam
    : pattern { $$ = $1; }
    | pattern ':' type { $$ = $1; $$->annot = $3; }
    ;

binary
    : binary OROR binary { $$ = mk_binary(p, FE_OP_OR, $1, $3, LOC(@2)); }
    | binary ANDAND binary { $$ = mk_binary(p, FE_OP_AND, $1, $3, LOC(@2)); }
    | binary '|' binary { $$ = mk_binary(p, FE_OP_BITOR, $1, $3, LOC(@2)); }
    | binary '^' binary { $$ = mk_binary(p, FE_OP_BITXOR, $1, $3, LOC(@2)); }
    | binary '&' binary { $$ = mk_binary(p, FE_OP_BITAND, $1, $3, LOC(@2)); }
    | binary EQ binary { $$ = mk_binary(p, FE_OP_EQ, $1, $3, LOC(@2)); }
    | binary NE binary { $$ = mk_binary(p, FE_OP_NE, $1, $3, LOC(@2)); }
    | binary '<' binary { $$ = mk_binary(p, FE_OP_LT, $1, $3, LOC(@2)); }
    | binary LE binary { $$ = mk_binary(p, FE_OP_LE, $1, $3, LOC(@2)); }
    | binary '>' binary { $$ = mk_binary(p, FE_OP_GT, $1, $3, LOC(@2)); }
    | binary GE binary { $$ = mk_binary(p, FE_OP_GE, $1, $3, LOC(@2)); }
    | binary SHL binary { $$ = mk_binary(p, FE_OP_SHL, $1, $3, LOC(@2)); }
    | binary SHR binary { $$ = mk_binary(p, FE_OP_SHR, $1, $3, LOC(@2)); }
    | binary '+' binary { $$ = mk_binary(p, FE_OP_ADD, $1, $3, LOC(@2)); }
    | binary '-' binary { $$ = mk_binary(p, FE_OP_SUB, $1, $3, LOC(@2)); }
    | binary '*' binary { $$ = mk_binary(p, FE_OP_MUL, $1, $3, LOC(@2)); }
    | binary '/' binary { $$ = mk_binary(p, FE_OP_DIV, $1, $3, LOC(@2)); }
    | binary '%' binary { $$ = mk_binary(p, FE_OP_MOD, $1, $3, LOC(@2)); }
    | binary POW binary { $$ = mk_binary(p, FE_OP_POW, $1, $3, LOC(@2)); }
    | unary { $$ = $1; }
    ;

unary
    : '-' unary { $$ = mk_unary(p, FE_OP_NEG, $2, LOC(@1)); }
    | '!' unary { $$ = mk_unary(p, FE_OP_NOT, $2, LOC(@1)); }
    | '~' unary { $$ = mk_unary(p, FE_OP_BITNOT, $2, LOC(@1)); }
    | postfix { $$ = $1; }
    ;

postfix
    : primary { $$ = $1; }
    | postfix '(' args_opt ')' {
          $$ = mk(p, FE_EX_CALL, $1->loc);
          $$->a = $1;
          $$->axis = -1;
          if ($1->kind == FE_EX_NAME) { $$->text = $1->text; }
          if ($3) { $$->args = $3->items; $$->nargs = $3->n; }
          fe_set_depth(p, $$, $3 ? list_depth($3->items, $3->n) > $1->depth ? list_depth($3->items, $3->n) : $1->depth : $1->depth);
      }
    | postfix '[' index ']' {
          $$ = mk(p, FE_EX_INDEX, LOC(@2)); $$->a = $1; $$->idx[0] = $3; $$->nidx = 1;
          if (!$3) { fe_error(LOC(@3), "a 1-D index cannot be ':'"); }
          fe_set_depth(p, $$, $3 && $3->depth > $1->depth ? $3->depth : $1->depth);
      }
    | postfix '[' index ',' index ']' {
          $$ = mk(p, FE_EX_INDEX, LOC(@2)); $$->a = $1; $$->idx[0] = $3; $$->idx[1] = $5; $$->nidx = 2;
          if (!$3 && !$5) { fe_error(LOC(@2), "A[:, :] selects the whole array: write A"); }
          int d = $1->depth;
          if ($3 && $3->depth > d) d = $3->depth;
          if ($5 && $5->depth > d) d = $5->depth;
          fe_set_depth(p, $$, d);
      }
    | postfix '.' NAME {
          $$ = mk(p, FE_EX_FIELD, LOC(@3)); $$->a = $1; $$->text = $3; fe_set_depth(p, $$, $1->depth);
      }
    | postfix '.' INT {
          $$ = mk(p, FE_EX_TUPIDX, LOC(@3)); $$->a = $1; fe_set_depth(p, $$, $1->depth);
          $$->field_index = $3->ival > 1000 ? 1000 : (int)$3->ival;
          if ($3->suffix != FE_TY_ERROR) { fe_error(LOC(@3), "a tuple index has no type suffix"); }
      }
    | postfix AS SCALAR {
          $$ = mk(p, FE_EX_CAST, LOC(@2)); $$->a = $1; $$->cast_to = fe_mk_type(p, (FeTypeKind)$3, LOC(@3));
          fe_set_depth(p, $$, $1->depth);
      }
    | postfix AS NAME {
          $$ = mk(p, FE_EX_CAST, LOC(@2)); $$->a = $1; $$->cast_to = fe_mk_type(p, FE_TY_NAME, LOC(@3));
          $$->cast_to->name = $3;
          fe_set_depth(p, $$, $1->depth);
      }
    ;

index
    : expr { $$ = $1; }
    | ':' { $$ = NULL; }
    ;

args_opt
    : %empty { $$ = NULL; }
    | exprs { $$ = $1; }
    ;

exprs
    : expr { $$ = elist(p, NULL, $1); }
    | exprs ',' expr { $$ = elist(p, $1, $3); }
    ;

primary
    : INT { $$ = $1; }
    | FLOAT { $$ = $1; }
    | TRUE { $$ = mk(p, FE_EX_BOOL, LOC(@1)); $$->ival = 1; }
    | FALSE { $$ = mk(p, FE_EX_BOOL, LOC(@1)); $$->ival = 0; }
    | NAME { $$ = mk(p, FE_EX_NAME, LOC(@1)); $$->text = $1; }
    | '(' expr ')' { $$ = $2; }
    | '(' expr ',' exprs ')' {
          $$ = mk(p, FE_EX_TUPLE, LOC(@1));
          FeExprList *l = elist(p, NULL, $2);
          for (int i = 0; i < $4->n; i++) { l = elist(p, l, $4->items[i]); }
          $$->args = l->items; $$->nargs = l->n;
          fe_set_depth(p, $$, list_depth(l->items, l->n));
      }
    | NAME '{' field_inits opt_comma '}' {
          $$ = mk(p, FE_EX_STRUCT, LOC(@1)); $$->text = $1;
          $$->args = $3->items; $$->nargs = $3->n; $$->fields = $3->names; $$->field_locs = $3->locs;
          fe_set_depth(p, $$, list_depth($3->items, $3->n));
      }
    | '[' exprs ']' {
          $$ = mk(p, FE_EX_ARRAY, LOC(@1)); $$->args = $2->items; $$->nargs = $2->n;
          fe_set_depth(p, $$, list_depth($2->items, $2->n));
      }
    | '(' binop ')' { $$ = mk(p, FE_EX_SECTION, LOC(@2)); $$->op = $2; }
    ;

field_inits
    : NAME ':' expr {
          $$ = elist(p, NULL, $3);
          FE_PUSH(p->arena, $$->names, $$->nnames, $$->cap_names, $1);
          FE_PUSH(p->arena, $$->locs, $$->nlocs, $$->cap_locs, LOC(@1));
      }
    | field_inits ',' NAME ':' expr {
          $$ = elist(p, $1, $5);
          FE_PUSH(p->arena, $$->names, $$->nnames, $$->cap_names, $3);
          FE_PUSH(p->arena, $$->locs, $$->nlocs, $$->cap_locs, LOC(@3));
      }
    ;

binop
    : '+' { $$ = FE_OP_ADD; } | '-' { $$ = FE_OP_SUB; } | '*' { $$ = FE_OP_MUL; }
    | '/' { $$ = FE_OP_DIV; } | '%' { $$ = FE_OP_MOD; } | POW { $$ = FE_OP_POW; }
    | '&' { $$ = FE_OP_BITAND; } | '|' { $$ = FE_OP_BITOR; } | '^' { $$ = FE_OP_BITXOR; }
    | SHL { $$ = FE_OP_SHL; } | SHR { $$ = FE_OP_SHR; } | ANDAND { $$ = FE_OP_AND; }
    | OROR { $$ = FE_OP_OR; } | EQ { $$ = FE_OP_EQ; } | NE { $$ = FE_OP_NE; }
    | '<' { $$ = FE_OP_LT; } | LE { $$ = FE_OP_LE; } | '>' { $$ = FE_OP_GT; } | GE { $$ = FE_OP_GE; }
    ;

%%

/* The name bison uses for token t (for --emit=tokens). */
const char *fe_token_name(int t)
{
    return yysymbol_name(YYTRANSLATE(t));
}
