/*
 * arena.c: the bump allocator every compilation allocates from.
 * Blocks are chained; arena_free() drops them all. Allocations are zeroed
 * and aligned to 16 bytes.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tl.h"

struct ArenaBlock {
	ArenaBlock *next;
	size_t cap, off;
	_Alignas(16) unsigned char data[];
};

enum { ARENA_BLOCK = 64 * 1024 };

void
arena_init(Arena *a)
{
	memset(a, 0, sizeof *a);
}

void
arena_free(Arena *a)
{
	ArenaBlock *b, *n;

	for (b = a->head; b; b = n) {
		n = b->next;
		free(b);
	}
	a->head = NULL;
	a->used = 0;
}

static void *
oom(Arena *a)
{
	if (a->oom)
		longjmp(*(jmp_buf *)a->oom, 1);
	return NULL;
}

void *
arena_alloc(Arena *a, size_t n)
{
	ArenaBlock *b = a->head;
	size_t need = (n + 15) & ~(size_t)15;
	void *p;

	if (need < n)
		return oom(a);
	if (!b || b->cap - b->off < need) {
		size_t cap = need > ARENA_BLOCK / 2 ? need : ARENA_BLOCK;
		b = malloc(sizeof *b + cap);
		if (!b)
			return oom(a);
		b->cap = cap;
		b->off = 0;
		if (need > ARENA_BLOCK / 2 && a->head) {
			/* a big block goes behind the current one so it keeps its space */
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	p = b->data + b->off;
	b->off += need;
	a->used += need;
	memset(p, 0, need);
	return p;
}

void *
arena_realloc(Arena *a, void *p, size_t old, size_t n)
{
	void *q;

	if (n <= old)
		return p;
	q = arena_alloc(a, n);
	if (q && p && old)
		memcpy(q, p, old);
	return q;
}

char *
arena_strndup(Arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);

	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *
arena_strdup(Arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *
arena_printf(Arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p, tmp[256];

	/* formatted once into tmp where it fits, else measured first */
	va_start(ap, fmt);
	n = tl_vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return arena_strdup(a, "");
	if ((size_t)n < sizeof tmp)
		return arena_strndup(a, tmp, (size_t)n);
	p = arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	tl_vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
