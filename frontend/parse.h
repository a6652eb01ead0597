/* parse.h: internal interface between the scanner (lexer.l), the parser
 * (parser.y) and parse.c, which reads files and follows imports. */
#ifndef GPUC_FRONTEND_PARSE_H
#define GPUC_FRONTEND_PARSE_H

#include "frontend.h"

/* Deepest expression nesting accepted; deeper input gets an error instead of
 * risking a stack overflow in the recursive checker and printer. */
enum { FE_MAX_DEPTH = 512 };

/* Growable lists used by grammar actions. */
typedef struct FeExprList {
    FeExpr **items; int n, cap;
    const char **names; int nnames, cap_names; /* struct literal field names */
    SrcLoc *locs; int nlocs, cap_locs;         /* and their locations */
} FeExprList;
typedef struct FePatList { FePattern **items; int n, cap; } FePatList;
typedef struct FeTypeList { FeType **items; int n, cap; } FeTypeList;
typedef struct FeTParamList { FeTParam *items; int n, cap; } FeTParamList;
typedef struct FeParamList { FeParam *items; int n, cap; } FeParamList;
typedef struct FeAttrList { FeAttr *items; int n, cap; } FeAttrList;
typedef struct FeTArgList { FeTArg *items; int n, cap; } FeTArgList;
typedef struct FeFieldList {
    const char **names; int n, cap;
    SrcLoc *locs; int nlocs, cap_locs;
    FeType **types; int ntypes, cap_types;
} FeFieldList;
/* A `let` statement of a block body, before desugaring to nested lets. */
typedef struct FeStmt { SrcLoc loc; FePattern *pat; FeType *annot; FeExpr *value; } FeStmt;
typedef struct FeStmtList { FeStmt *items; int n, cap; } FeStmtList;

/* State shared by the scanner and the parser for one file. */
typedef struct FeParser {
    FeArena *arena;
    const char *file;     /* for locations */
    FeModule *mod;        /* items go here */
    int line, col;        /* scanner position of the next byte */
    bool after_dot;       /* last token was '.': digits are a tuple index, not a float */
    int bracket_depth;    /* open ( [ { */
    bool fatal;           /* a fatal scanner error was reported: silence the parser */
    bool deep_reported;   /* "nested too deeply" already reported for this file */
    SrcLoc comment_start; /* start of the open block comment */
    int cap_imports, cap_structs, cap_funcs, cap_exports; /* capacities of mod's lists */
} FeParser;

/* parse.c: node constructors shared by the grammar actions. */
FeExpr *fe_mk_expr(FeParser *p, FeExprKind k, SrcLoc loc);
void fe_set_depth(FeParser *p, FeExpr *e, int child_depth);
FeType *fe_mk_type(FeParser *p, FeTypeKind k, SrcLoc loc);
int fe_parse_buffer(FeParser *p, const char *text, size_t len);
const char *fe_token_name(int token); /* parser.y */

#endif
