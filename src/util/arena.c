/*
 * Arena: a list of large blocks, bump-allocated and freed together. The trace
 * model keeps its interned strings here, so a file's strings cost their bytes
 * and nothing per allocation.
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct pg_arena_block {
	struct pg_arena_block *next;
	size_t used, cap;
	max_align_t data[];
};

void pg_arena_init(struct pg_arena *a, size_t block_size)
{
	memset(a, 0, sizeof(*a));
	a->block_size = block_size ? block_size : 1 << 20;
}

#ifdef PG_DEBUG_ARENA
void *pg_arena_alloc(struct pg_arena *a, size_t n)
{
	void *p = pg_xmalloc(n);

	if (a->debug_n == a->debug_cap) {
		a->debug_cap = a->debug_cap ? 2 * a->debug_cap : 64;
		a->debug_ptrs = pg_xrealloc(a->debug_ptrs, a->debug_cap * sizeof(void *));
	}
	a->debug_ptrs[a->debug_n++] = p;
	a->total_bytes += n;
	return p;
}

void pg_arena_release(struct pg_arena *a)
{
	for (size_t i = 0; i < a->debug_n; i++)
		free(a->debug_ptrs[i]);
	free(a->debug_ptrs);
	memset(a, 0, sizeof(*a));
}
#else
void *pg_arena_alloc(struct pg_arena *a, size_t n)
{
	struct pg_arena_block *b = a->head;
	size_t align = sizeof(max_align_t);

	n = (n + align - 1) & ~(align - 1);
	if (!b || b->cap - b->used < n) {
		size_t cap = n > a->block_size ? n : a->block_size;

		b = pg_xmalloc(sizeof(*b) + cap);
		b->cap = cap;
		b->used = 0;
		b->next = a->head;
		a->head = b;
		a->total_bytes += cap;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void pg_arena_release(struct pg_arena *a)
{
	struct pg_arena_block *b = a->head;

	while (b) {
		struct pg_arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->total_bytes = 0;
}
#endif

char *pg_arena_strndup(struct pg_arena *a, const char *s, size_t n)
{
	char *p = pg_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}
