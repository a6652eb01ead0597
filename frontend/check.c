#include "frontend.h"
int fe_check(FeArena *a, FeProgram *p, const FeOptions *opts) { (void)a; (void)p; (void)opts; return 0; }
