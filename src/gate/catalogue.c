/*
 * The metric catalogue: a summary flattened to named numbers, so rules match
 * names and the gate never walks the summary's structure. Which fields are
 * metrics, their names, when they exist and how their share of the steady
 * step is taken (the rules' floors compare against it) is the schema's
 * (summary/schema.c, summary_metrics_each); the catalogue keeps them sorted
 * by name for lookups.
 */
#include "gate.h"

#include <stdlib.h>
#include <string.h>

struct builder {
	struct gate_catalogue *c;
	uint32_t cap;
};

static void add(void *ctx, const struct sum_metric *x)
{
	struct builder *b = ctx;
	struct gate_catalogue *c = b->c;
	struct gate_metric *m;

	if (c->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		c->m = pg_xrealloc(c->m, b->cap * sizeof(*c->m));
	}
	m = &c->m[c->n++];
	m->name = pg_arena_strndup(&c->arena, x->name, strlen(x->name));
	m->subject =
	    x->subject ? pg_arena_strndup(&c->arena, x->subject, strlen(x->subject)) : NULL;
	m->kind = (enum gate_kind)x->field->group;
	m->unit = x->field->unit;
	m->value = x->value;
	m->step_share = x->step_share;
}

static int cmp_metric(const void *x, const void *y)
{
	const struct gate_metric *a = x, *b = y;
	return strcmp(a->name, b->name);
}

/* Ops of one name can come from several families or categories: their times
 * add up under one metric. */
static void merge_duplicates(struct gate_catalogue *c)
{
	uint32_t w = 0;

	if (c->n > 1)
		qsort(c->m, c->n, sizeof(*c->m), cmp_metric);
	for (uint32_t i = 0; i < c->n; i++) {
		if (w > 0 && strcmp(c->m[w - 1].name, c->m[i].name) == 0) {
			c->m[w - 1].value += c->m[i].value;
			if (c->m[i].step_share > 0)
				c->m[w - 1].step_share += c->m[i].step_share;
			continue;
		}
		c->m[w++] = c->m[i];
	}
	c->n = w;
}

void gate_catalogue_build(const struct summary *s, struct gate_catalogue *c)
{
	struct builder b = {c, 0};

	memset(c, 0, sizeof(*c));
	pg_arena_init(&c->arena, 16384);
	summary_metrics_each(s, add, &b);
	merge_duplicates(c);
}

const struct gate_metric *gate_catalogue_find(const struct gate_catalogue *c, const char *name)
{
	uint32_t lo = 0, hi = c->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int d = strcmp(c->m[mid].name, name);
		if (d == 0)
			return &c->m[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void gate_catalogue_release(struct gate_catalogue *c)
{
	free(c->m);
	pg_arena_release(&c->arena);
	memset(c, 0, sizeof(*c));
}
