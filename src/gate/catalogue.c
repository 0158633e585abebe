/*
 * The metric catalogue: a summary flattened to named numbers, so rules match
 * names and the gate never walks the summary's structure. Names carry units
 * (`_us`, `_share`, `_gbps`); times per step also carry their share of the
 * steady step, which the rules' floors compare against.
 */
#include "gate.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct builder {
	struct gate_catalogue *c;
	uint32_t cap;
	double step_us; /* the denominator of step shares */
};

static void add(struct builder *b, enum gate_kind kind, double value, double share,
		const char *subject, const char *fmt, ...) PG_PRINTF(6, 7);

static void add(struct builder *b, enum gate_kind kind, double value, double share,
		const char *subject, const char *fmt, ...)
{
	struct gate_catalogue *c = b->c;
	struct gate_metric *m;
	char *name = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&name, fmt, ap) < 0)
		name = NULL;
	va_end(ap);
	if (!name) {
		fprintf(stderr, "profgate: out of memory\n");
		abort();
	}
	if (c->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		c->m = pg_xrealloc(c->m, b->cap * sizeof(*c->m));
	}
	m = &c->m[c->n++];
	m->name = pg_arena_strndup(&c->arena, name, strlen(name));
	m->subject = subject ? pg_arena_strndup(&c->arena, subject, strlen(subject)) : NULL;
	m->kind = kind;
	m->value = value;
	m->step_share = share;
	free(name);
}

static double share_of(const struct builder *b, double us)
{
	return b->step_us > 0 ? us / b->step_us : -1;
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

static void add_steps(struct builder *b, const struct summary *s)
{
	if (s->steady.count == 0)
		return;
	add(b, GATE_K_STEP, s->steady.median_us, -1, NULL, "step.median_us");
	add(b, GATE_K_STEP, s->steady.p90_us, -1, NULL, "step.p90_us");
	add(b, GATE_K_STEP, s->steady.mean_us, -1, NULL, "step.mean_us");
	add(b, GATE_K_STEP, s->steady.max_us, -1, NULL, "step.max_us");
	if (s->n_devices > 1)
		add(b, GATE_K_STEP, s->skew_us, -1, NULL, "step.skew_us");
}

static void add_breakdown(struct builder *b, const struct summary *s)
{
	const struct sum_breakdown_view *v = &s->mean;

	if (s->n_devices == 0)
		return;
	add(b, GATE_K_BREAKDOWN, v->compute_share, -1, NULL, "breakdown.compute_share");
	add(b, GATE_K_BREAKDOWN, v->exposed_comm_share, -1, NULL, "breakdown.exposed_comm_share");
	add(b, GATE_K_BREAKDOWN, v->exposed_memcpy_share, -1, NULL,
	    "breakdown.exposed_memcpy_share");
	add(b, GATE_K_BREAKDOWN, v->idle_share, -1, NULL, "breakdown.idle_share");
	add(b, GATE_K_BREAKDOWN, v->comm_overlap_share, -1, NULL, "breakdown.comm_overlap_share");
}

static void add_lists(struct builder *b, const struct summary *s)
{
	for (uint32_t i = 0; i < s->n_families; i++) {
		const struct sum_family *f = &s->families[i];
		double share = b->step_us > 0 ? share_of(b, f->us_per_step) : f->share;
		add(b, GATE_K_FAMILY, f->us_per_step, share, f->family, "family.%s.us_per_step",
		    f->family);
	}
	for (uint32_t i = 0; i < s->n_ops; i++) {
		const struct sum_op *o = &s->ops[i];
		add(b, GATE_K_OP, o->self_us_per_step, share_of(b, o->self_us_per_step), o->name,
		    "op.%s.us_per_step", o->name);
	}
	for (uint32_t i = 0; i < s->n_collectives; i++) {
		const struct sum_collective *k = &s->collectives[i];
		add(b, GATE_K_COLLECTIVE, k->us_per_step, share_of(b, k->us_per_step), k->kind,
		    "collective.%s.us_per_step", k->kind);
		if (k->busbw_gbps >= 0)
			add(b, GATE_K_COLLECTIVE, k->busbw_gbps, -1, k->kind,
			    "collective.%s.busbw_gbps", k->kind);
	}
	for (uint32_t i = 0; i < s->n_regions; i++) {
		const struct sum_region *g = &s->regions[i];
		add(b, GATE_K_REGION, g->inclusive_us_per_step,
		    share_of(b, g->inclusive_us_per_step), g->path, "region.%s.us_per_step",
		    g->path);
	}
	if (s->has_flops && s->tflops_per_device >= 0)
		add(b, GATE_K_THROUGHPUT, s->tflops_per_device, -1, NULL,
		    "throughput.tflops_per_device");
}

/* The step the shares are of: the steady median, or without steps the busy
 * time per step the families add up to. */
static double step_denominator(const struct summary *s)
{
	double sum = 0;

	if (s->steady.count > 0 && s->steady.median_us > 0)
		return s->steady.median_us;
	for (uint32_t i = 0; i < s->n_families; i++)
		sum += s->families[i].us_per_step;
	return sum;
}

void gate_catalogue_build(const struct summary *s, struct gate_catalogue *c)
{
	struct builder b = {c, 0, step_denominator(s)};

	memset(c, 0, sizeof(*c));
	pg_arena_init(&c->arena, 16384);
	add_steps(&b, s);
	add_breakdown(&b, s);
	add_lists(&b, s);
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
