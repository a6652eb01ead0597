/* diag.c: diagnostics in clang's format. Every error goes through fe_verror:
 *   file:line:col: error: message
 *   <the source line>
 *       ^
 * The parser registers each file's text so the line can be shown. Errors are
 * counted; the driver stops between phases when the count is non-zero. */
#define _XOPEN_SOURCE 700 /* strdup, realpath, mkstemp, fdopen */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

typedef struct Source {
    struct Source *next;
    char *file;
    char *text;
    size_t len;
} Source;

static Source *sources;
static int error_count;

/* Errors already reported (location + text): a template body checked for
 * several instances reports each of its errors once. */
typedef struct Seen {
    struct Seen *next;
    SrcLoc loc;
    char *msg;
} Seen;
enum { SEEN_BUCKETS = 4096 };
static Seen *seen[SEEN_BUCKETS]; /* hashed by line and column */

void fe_diag_add_source(const char *file, const char *text, size_t len)
{
    Source *s = calloc(1, sizeof *s);
    if (!s) {
        return;
    }
    s->file = strdup(file);
    s->text = malloc(len + 1);
    if (!s->file || !s->text) {
        free(s->file);
        free(s->text);
        free(s);
        return;
    }
    memcpy(s->text, text, len);
    s->text[len] = 0;
    s->len = len;
    s->next = sources;
    sources = s;
}

void fe_diag_reset(void)
{
    while (sources) {
        Source *n = sources->next;
        free(sources->file);
        free(sources->text);
        free(sources);
        sources = n;
    }
    for (int b = 0; b < SEEN_BUCKETS; b++) {
        while (seen[b]) {
            Seen *n = seen[b]->next;
            free(seen[b]->msg);
            free(seen[b]);
            seen[b] = n;
        }
    }
    error_count = 0;
}

int fe_error_count(void)
{
    return error_count;
}

static const Source *find_source(const char *file)
{
    for (const Source *s = sources; s; s = s->next) {
        if (file && strcmp(s->file, file) == 0) {
            return s;
        }
    }
    return NULL;
}

/* Print line `line` of s and a caret under column `col`. Control bytes are
 * shown as spaces so the caret stays aligned and the terminal stays sane. */
static void show_line(const Source *s, int line, int col)
{
    const char *p = s->text, *end = s->text + s->len;
    for (int l = 1; l < line && p < end; l++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            return;
        }
        p = nl + 1;
    }
    const char *e = p;
    while (e < end && *e != '\n') {
        e++;
    }
    if (e > p && e[-1] == '\r') {
        e--;
    }
    if (e - p > 500) {
        return; /* a huge line helps nobody */
    }
    for (const char *q = p; q < e; q++) {
        unsigned char ch = (unsigned char)*q;
        fputc(ch == '\t' ? '\t' : (ch < 32 || ch == 127) ? ' ' : ch, stderr);
    }
    fputc('\n', stderr);
    for (int i = 1; i < col && p + i - 1 < e; i++) {
        fputc(p[i - 1] == '\t' ? '\t' : ' ', stderr);
    }
    fputs("^\n", stderr);
}


static bool already_reported(SrcLoc loc, const char *msg)
{
    unsigned b = ((unsigned)loc.line * 131u + (unsigned)loc.col) % SEEN_BUCKETS;
    for (Seen *s = seen[b]; s; s = s->next) {
        if (s->loc.line == loc.line && s->loc.col == loc.col && strcmp(s->msg, msg) == 0 &&
            ((!s->loc.file && !loc.file) || (s->loc.file && loc.file && strcmp(s->loc.file, loc.file) == 0))) {
            return true;
        }
    }
    Seen *s = calloc(1, sizeof *s);
    if (s) {
        s->loc = loc;
        s->msg = strdup(msg);
        s->next = seen[b];
        seen[b] = s;
    }
    return false;
}

void fe_verror(const char *kind, SrcLoc loc, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    bool is_error = strcmp(kind, "error") == 0 || strcmp(kind, "internal error") == 0;
    if (is_error && already_reported(loc, msg)) {
        return;
    }
    if (is_error) {
        error_count++;
    }
    if (loc.file) {
        fprintf(stderr, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
    } else {
        fprintf(stderr, "gpuc: %s: ", kind);
    }
    fputs(msg, stderr);
    fputc('\n', stderr);
    const Source *s = loc.file ? find_source(loc.file) : NULL;
    if (s && loc.line > 0) {
        show_line(s, loc.line, loc.col);
    }
}

void fe_report(const char *kind, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fe_verror(kind, loc, fmt, ap);
    va_end(ap);
}

void fe_error(SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fe_verror("error", loc, fmt, ap);
    va_end(ap);
}

void fe_note(SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fe_verror("note", loc, fmt, ap);
    va_end(ap);
}

void fe_error_noloc(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    SrcLoc none = {0};
    fe_verror("error", none, fmt, ap);
    va_end(ap);
}

_Noreturn void fe_internal_error(const char *cfile, int cline, SrcLoc loc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (loc.file) {
        fprintf(stderr, "%s:%d:%d: ", loc.file, loc.line, loc.col);
    } else {
        fprintf(stderr, "gpuc: ");
    }
    fprintf(stderr, "internal error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (at %s:%d; this is a gpuc bug)\n", cfile, cline);
    va_end(ap);
    /* a clean stop with EX_SOFTWARE, not a crash (libFuzzer reports exits too) */
    fflush(stdout);
    exit(70);
}
