/*
 * A u64 -> u32 hash map with open addressing and linear probing, for the
 * readers' id lookups (track keys, metadata ids).
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

static uint32_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

static void grow(struct pg_u64map *m)
{
	struct pg_u64map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = pg_xmalloc((size_t)m->cap * sizeof(uint64_t));
	m->vals = pg_xmalloc((size_t)m->cap * sizeof(uint32_t));
	memset(m->vals, 0xff, (size_t)m->cap * sizeof(uint32_t));
	m->n = 0;
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.vals[i] != UINT32_MAX)
			pg_u64map_put(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
}

void pg_u64map_put(struct pg_u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	uint32_t h = mix(key) & (m->cap - 1);
	while (m->vals[h] != UINT32_MAX && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	if (m->vals[h] == UINT32_MAX)
		m->n++;
	m->keys[h] = key;
	m->vals[h] = val;
}

uint32_t pg_u64map_get(const struct pg_u64map *m, uint64_t key)
{
	if (!m->cap)
		return UINT32_MAX;
	uint32_t h = mix(key) & (m->cap - 1);
	while (m->vals[h] != UINT32_MAX) {
		if (m->keys[h] == key)
			return m->vals[h];
		h = (h + 1) & (m->cap - 1);
	}
	return UINT32_MAX;
}

void pg_u64map_release(struct pg_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
