/* cmp A B REL: compare two printed results token by token; integers exactly,
 * floats within |a-b| <= REL * max(1, |b|); prints the first difference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *slurp(const char *p) {
    FILE *f = fopen(p, "rb"); if (!f) { return NULL; }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1); if (fread(s, 1, (size_t)n, f) != (size_t)n) { n = 0; } s[n] = 0; fclose(f); return s;
}
int main(int argc, char **argv) {
    char *a = slurp(argv[1]), *b = slurp(argv[2]); double rel = atof(argv[3]);
    if (!a || !b) { printf("missing output\n"); return 1; }
    const char *sep = " \t\r\n[](),";
    char *sa, *sb; char *ta = strtok_r(a, sep, &sa), *tb = strtok_r(b, sep, &sb);
    long long k = 0, bad = 0; double worst = 0;
    while (ta && tb) {
        int isf = strpbrk(tb, ".eni") != NULL;
        if (!isf || !strcmp(tb, "true") || !strcmp(tb, "false")) { if (strcmp(ta, tb)) { if (!bad) printf("item %lld: got %s want %s\n", k, ta, tb); bad++; } }
        else {
            double x = strtod(ta, NULL), y = strtod(tb, NULL);
            if (isnan(y) ? !isnan(x) : isinf(y) ? x != y : fabs(x - y) > rel * fmax(1.0, fabs(y))) { if (!bad) printf("item %lld: got %s want %s\n", k, ta, tb); bad++; }
            else if (!isinf(y) && !isnan(y)) { double e = fabs(x - y) / fmax(1.0, fabs(y)); if (e > worst) worst = e; }
        }
        k++; ta = strtok_r(NULL, sep, &sa); tb = strtok_r(NULL, sep, &sb);
    }
    if (ta || tb) { printf("different lengths after %lld items\n", k); return 1; }
    printf("%lld items, %lld differ, max rel err %.3g\n", k, bad, worst);
    return bad != 0;
}
