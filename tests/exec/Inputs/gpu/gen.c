/* gen TYPE:KIND N SALT: one array argument in gpuc's text syntax (fast, for 2^24+ elements) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
int main(int argc, char **argv) {
    char t[16], k[16];
    if (sscanf(argv[1], "%15[^:]:%15s", t, k) != 2) { return 2; }
    long long n = atoll(argv[2]); unsigned salt = (unsigned)atoi(argv[3]);
    static char buf[1 << 16];
    setvbuf(stdout, buf, _IOFBF, sizeof buf);
    putchar('[');
    uint64_t h = 1469598103934665603ULL ^ salt;
    for (long long i = 0; i < n; i++) {
        h = h * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t r = h >> 20;
        if (i) { fputs(", ", stdout); }
        long long v;
        if (!strcmp(k, "walk")) { v = (long long)(r % 7) - 3; }
        else if (!strcmp(k, "pos")) { v = (long long)(r % 4) + 1; }
        else if (!strcmp(k, "bits")) { v = (long long)(r & 1); }
        else if (!strcmp(k, "big")) { v = (long long)(r & 0xFFFFFFFFFFFULL) - (1LL << 43); }
        else { v = (long long)(r % 2001) - 1000; }  /* rand: /1000 for floats */
        if (!strcmp(t, "bool")) { fputs(v & 1 ? "true" : "false", stdout); }
        else if (t[0] == 'f') { if (!strcmp(k, "rand")) { printf("%.3f", v / 1000.0); } else { printf("%lld.0", v); } }
        else if (t[0] == 'u') { printf("%llu", (unsigned long long)v & (t[1] == '3' ? 0xFFFFFFFFULL : ~0ULL)); }
        else if (!strcmp(t, "i32")) { printf("%d", (int)(int32_t)(uint32_t)v); }
        else { printf("%lld", v); }
    }
    puts("]");
    return 0;
}
