/* diag.c: diagnostics in clang's format. Every error goes through fe_verror:
 *   file:line:col: error: message
 *   <the source line>
 *       ^
 * The parser registers each file's text so the line can be shown. Errors are
 * counted; the pipeline (compiler/compile.c) stops between phases when the
 * count is non-zero. Each diagnostic is rendered to text and handed to the
 * handler the compiler installed (fe_diag_redirect), or printed on stderr
 * when there is none. A fatal error (an internal error, out of memory) ends
 * the compilation through the compiler's jmp_buf, or exits without one. */
#define _XOPEN_SOURCE 700 /* strdup, realpath, mkstemp, fdopen */
#include <setjmp.h>
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
static FeDiagHandler *handler; /* NULL: print on stderr */
static void *handler_ctx;
static jmp_buf *stop_at;       /* NULL: a fatal error exits */

void fe_diag_redirect(FeDiagHandler *h, void *ctx, jmp_buf *stop)
{
    handler = h;
    handler_ctx = ctx;
    stop_at = stop;
}

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

/* The length of the valid UTF-8 sequence at q (before end): 1 for ASCII,
 * 2 to 4 for a well-formed multi-byte character, 0 for a byte that starts
 * none (overlong forms, surrogates and stray continuation bytes included). */
static int utf8_length(const unsigned char *q, const unsigned char *end)
{
    if (q[0] < 0x80) {
        return 1;
    }
    int n = q[0] >= 0xC2 && q[0] <= 0xDF ? 2 : q[0] >= 0xE0 && q[0] <= 0xEF ? 3 : q[0] >= 0xF0 && q[0] <= 0xF4 ? 4 : 0;
    if (n == 0 || end - q < n) {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((q[i] & 0xC0) != 0x80) {
            return 0;
        }
    }
    if ((q[0] == 0xE0 && q[1] < 0xA0) || (q[0] == 0xED && q[1] >= 0xA0) || (q[0] == 0xF0 && q[1] < 0x90) ||
        (q[0] == 0xF4 && q[1] >= 0x90)) {
        return 0;
    }
    return n;
}

/* Print line `line` of s and a caret under column `col` (a byte column, as
 * the locations count). Control bytes are shown as spaces and bytes that are
 * not UTF-8 as '?', one column each, so the terminal stays sane; a UTF-8
 * character is one column, so the caret stays under the byte it names. */
static void show_line(FILE *out, const Source *s, int line, int col)
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
    const unsigned char *b = (const unsigned char *)p, *be = (const unsigned char *)e;
    for (const unsigned char *q = b; q < be;) {
        int n = utf8_length(q, be);
        if (n > 1) {
            fwrite(q, 1, (size_t)n, out);
            q += n;
            continue;
        }
        fputc(*q == '\t' ? '\t' : n == 0 ? '?' : (*q < 32 || *q == 127) ? ' ' : *q, out);
        q++;
    }
    fputc('\n', out);
    for (const unsigned char *q = b; q < b + col - 1 && q < be;) {
        int n = utf8_length(q, be);
        fputc(*q == '\t' ? '\t' : ' ', out);
        q += n > 1 ? n : 1;
    }
    fputs("^\n", out);
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

/* Render a diagnostic (with the source line when `show_source`) and hand it
 * to the handler, or print it. */
static void deliver(const char *kind, SrcLoc loc, const char *msg, bool show_source)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = handler ? open_memstream(&text, &len) : NULL;
    FILE *to = out ? out : stderr;
    if (loc.file) {
        fprintf(to, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
    } else {
        fprintf(to, "gpuc: %s: ", kind);
    }
    fputs(msg, to);
    fputc('\n', to);
    const Source *s = show_source && loc.file ? find_source(loc.file) : NULL;
    if (s && loc.line > 0) {
        show_line(to, s, loc.line, loc.col);
    }
    if (out && fclose(out) == 0) {
        FeDiagnostic d = { loc.file, loc.file ? loc.line : 0, loc.file ? loc.col : 0, kind, msg, text };
        handler(handler_ctx, &d);
    } else if (handler) { /* no memory for the text: say it somewhere */
        fprintf(stderr, "%s", text ? text : msg);
    }
    free(text);
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
    deliver(kind, loc, msg, true);
}

_Noreturn void fe_fatal(const char *kind, SrcLoc loc, int status, const char *msg)
{
    error_count++;
    deliver(kind, loc, msg, false);
    if (stop_at) {
        longjmp(*stop_at, status);
    }
    /* a clean stop, not a crash (libFuzzer reports exits too) */
    fflush(stdout);
    exit(status);
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
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof msg) {
        snprintf(msg + n, sizeof msg - (size_t)n, " (at %s:%d; this is a gpuc bug)", cfile, cline);
    }
    fe_fatal("internal error", loc, 70, msg); /* 70: EX_SOFTWARE */
}
