/* arena.c: the compiler's allocator. One arena per compilation; every AST node,
 * string and type lives in it and is freed once by fe_arena_free (QBE style). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

typedef struct Chunk {
    struct Chunk *next;
    size_t used, size;
    max_align_t data[]; /* payload */
} Chunk;

struct FeArena {
    Chunk *head;
};

enum { CHUNK_SIZE = 64 * 1024 };

FeArena *fe_arena_new(void)
{
    FeArena *a = calloc(1, sizeof *a);
    if (!a) {
        SrcLoc none = {0};
        fe_fatal("error", none, 1, "out of memory");
    }
    return a;
}

void *fe_alloc(FeArena *a, size_t size)
{
    size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0) {
        size = align;
    }
    Chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cap = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        c = malloc(sizeof(Chunk) + cap);
        if (!c) {
            SrcLoc none = {0};
            fe_fatal("error", none, 1, "out of memory");
        }
        c->used = 0;
        c->size = cap;
        if (a->head && size > CHUNK_SIZE) {
            /* a big block: keep the current chunk in front for small allocations */
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    memset(p, 0, size);
    return p;
}

char *fe_strndup(FeArena *a, const char *s, size_t n)
{
    char *p = fe_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *fe_strdup(FeArena *a, const char *s)
{
    return fe_strndup(a, s, strlen(s));
}

char *fe_printf(FeArena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        n = 0;
    }
    char *p = fe_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *fe_grow(FeArena *a, void *items, int n, int *cap, size_t elem_size)
{
    int ncap = *cap ? *cap * 2 : 8;
    void *p = fe_alloc(a, (size_t)ncap * elem_size);
    if (n > 0) {
        memcpy(p, items, (size_t)n * elem_size);
    }
    *cap = ncap;
    return p;
}

void fe_arena_free(FeArena *a)
{
    if (!a) {
        return;
    }
    Chunk *c = a->head;
    while (c) {
        Chunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}
