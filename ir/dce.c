/* dce.c: dead statement elimination.
 *
 * requires: nothing.  preserves: SSA, results, order of live statements.
 * A statement none of whose outputs is read (by a live statement, a size
 * or the entry's results) is marked dead; repeated to a fixpoint.
 */
#include "ir.h"

void ir_dce(IrModule *m) {
    for (int ei = 0; ei < m->nentries; ei++) {
        IrEntry *e = m->entries[ei];
        bool changed = true;
        while (changed) {
            changed = false;
            ir_count_uses(e);
            /* sizes of live values count as uses */
            for (int i = 0; i < e->nstmts; i++) {
                IrStmt *s = e->stmts[i];
                if (s->dead) { continue; }
                for (int o = 0; o < s->nouts; o++) {
                    for (int d = 0; d < s->outs[o]->rank; d++) { s->outs[o]->dims[d]->nuses++; }
                }
            }
            for (int i = e->nstmts - 1; i >= 0; i--) {
                IrStmt *s = e->stmts[i];
                if (s->dead) { continue; }
                if (s->kind == IR_S_SCREMA) {
                    /* drop unused mapped outputs, keep the rest */
                    int first = s->nouts - ir_stmt_nmapped(s);
                    for (int o = s->nouts - 1; o >= first && s->nouts > 1; o--) {
                        if (s->outs[o]->nuses > 0) { continue; }
                        int r = s->map->nres - (s->nouts - o);
                        for (int k = o; k + 1 < s->nouts; k++) { s->outs[k] = s->outs[k + 1]; }
                        for (int k = r; k + 1 < s->map->nres; k++) { s->map->res[k] = s->map->res[k + 1]; }
                        s->nouts--;
                        s->map->nres--;
                        changed = true;
                    }
                }
                bool used = false;
                for (int o = 0; o < s->nouts; o++) { used = used || s->outs[o]->nuses > 0; }
                if (!used) { s->dead = true; changed = true; }
            }
        }
    }
}
