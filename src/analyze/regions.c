/*
 * Regions: the time of steady records summed along the scope paths they run
 * under. A record's scope is its tf_op argument; on XLA GPU kernels, whose
 * tf_op is the module annotation ("XlaModule:..."), the name stat instead
 * (docs/summary.md). A record with neither takes the Kineto GPU user
 * annotation around it, else its own name when that is a path joined with
 * "=>". Nothing else makes a region: an op without a scope is in none.
 *
 * How it works: a scope string is cut at '/' and at "=>", each segment
 * trimmed, unwrapped from JAX transforms ("transpose(jvp(Transformer))" ->
 * "Transformer") and skipped when it names only plumbing (xla, pallas_call,
 * ...); every prefix left is a region, and the innermost one left takes the
 * record's exclusive time, even when the segments after it were plumbing.
 * That parse is done once per distinct scope, into a chain of region indices,
 * and each argument set, annotation and name remembers its chain, so a record
 * costs one lookup and one walk of its chain.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

static int wrapper(const char *seg, size_t n)
{
	static const char *w[] = {"jit",  "jvp",	"transpose", "vmap",
				  "pjit", "named_call", "remat",     "checkpoint"};
	for (size_t i = 0; i < PG_ARRAY_LEN(w); i++)
		if (strlen(w[i]) == n && memcmp(seg, w[i], n) == 0)
			return 1;
	return 0;
}

/* "transpose(jvp(Transformer))" -> "Transformer"; bare wrappers -> "". */
static void unwrap(const char *seg, size_t n, const char **out, size_t *out_n)
{
	for (;;) {
		const char *p = memchr(seg, '(', n);
		if (!p || seg[n - 1] != ')' || !wrapper(seg, (size_t)(p - seg)))
			break;
		n = n - (size_t)(p - seg) - 2;
		seg = p + 1;
	}
	if (wrapper(seg, n))
		n = 0;
	*out = seg;
	*out_n = n;
}

static int skip_segment(const char *seg, size_t n)
{
	static const char *exact[] = {"xla",  "XlaModule", "pallas_call", "shard_map",
				      "call", "execute",   "launch"};
	for (size_t i = 0; i < PG_ARRAY_LEN(exact); i++)
		if (strlen(exact[i]) == n && memcmp(seg, exact[i], n) == 0)
			return 1;
	return n == 0;
}

/* The end of the segment starting at p: the next '/' or "=>", or the end. */
static const char *segment_end(const char *p)
{
	for (; *p; p++)
		if (*p == '/' || (p[0] == '=' && p[1] == '>'))
			return p;
	return p;
}

static uint32_t chain_for(struct chains *c, uint64_t key, const char *scope, struct region_acc **r,
			  uint32_t *n, uint32_t *cap, struct pg_u64map *idx, struct pg_buf *path)
{
	uint32_t ci = pg_u64map_get(&c->by_key, key);

	if (ci != UINT32_MAX)
		return ci;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->off = pg_xrealloc(c->off, c->cap * sizeof(uint32_t));
		c->len = pg_xrealloc(c->len, c->cap * sizeof(uint32_t));
	}
	ci = c->n++;
	c->off[ci] = c->n_ent;
	pg_buf_reset(path);
	uint32_t depth = 0;
	const char *p = scope;
	for (;;) {
		const char *end = segment_end(p);
		const char *seg = p;
		size_t len = (size_t)(end - p), sn;
		while (len > 0 && *seg == ' ')
			seg++, len--;
		while (len > 0 && seg[len - 1] == ' ')
			len--;
		unwrap(seg, len, &seg, &sn);
		while (sn > 0 && seg[sn - 1] == ':')
			sn--;
		if (!skip_segment(seg, sn)) {
			if (path->len)
				pg_buf_adds(path, "/");
			pg_buf_add(path, seg, sn);
			depth++;
			uint64_t h = pg_hash(path->ptr, path->len);
			uint32_t i = pg_u64map_get(idx, h);
			while (i != UINT32_MAX && strcmp((*r)[i].path, path->ptr) != 0)
				i = pg_u64map_get(idx, ++h);
			if (i == UINT32_MAX) {
				*r = grow(*r, *n, cap, sizeof(**r));
				i = (*n)++;
				(*r)[i] =
				    (struct region_acc){pg_xstrdup(path->ptr), depth, 0, 0, 0};
				pg_u64map_put(idx, h, i);
			}
			c->ent = grow(c->ent, c->n_ent, &c->cap_ent, sizeof(uint32_t));
			c->ent[c->n_ent++] = i;
		}
		if (!*end)
			break;
		p = end + (*end == '/' ? 1 : 2);
	}
	c->len[ci] = c->n_ent - c->off[ci];
	if (c->len[ci]) /* the innermost region left holds the record */
		c->ent[c->n_ent - 1] |= 0x80000000u;
	pg_u64map_put(&c->by_key, key, ci);
	return ci;
}

/* An event's scope from its arguments: tf_op, or on XLA GPU kernels (tf_op
 * "XlaModule:...", the module's annotation, not a scope) the name stat; 0
 * when they give none. The name stat alone is no scope: only the XLA GPU
 * runtime's annotations put a scope there (formats.md, section 3.4). */
static trace_str scope_arg(const struct az *z, const struct trace_event *e)
{
	trace_str sid = z->k_tf_op && e->args ? trace_arg_get(z->t, e->args, z->k_tf_op) : 0;
	const char *scope = sid ? trace_str_get(z->t, sid) : NULL;

	if (!scope)
		return 0;
	if (strncmp(scope, "XlaModule", 9) == 0) {
		sid = z->k_name ? trace_arg_get(z->t, e->args, z->k_name) : 0;
		scope = sid ? trace_str_get(z->t, sid) : NULL;
	}
	return scope && *scope ? sid : 0;
}

#define NO_CHAIN (UINT32_MAX - 1)

void az_regsum_init(struct regsum *rs, const struct az *z)
{
	memset(rs, 0, sizeof(*rs));
	rs->path = (struct pg_buf)PG_BUF_INIT;
	rs->by_args = pg_xmalloc(((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));
	memset(rs->by_args, 0xff, ((size_t)z->t->n_argsets + 1) * sizeof(uint32_t));
}

void az_regsum_device(struct regsum *rs, const struct dev *dv)
{
	free(rs->by_ann);
	rs->by_ann = pg_xmalloc((dv->n_ann + 1) * sizeof(uint32_t));
	memset(rs->by_ann, 0xff, (dv->n_ann + 1) * sizeof(uint32_t));
}

/* The chain of an event name that is itself a path ("train_step=>forward=>
 * matmul"), or NO_CHAIN: a plain op name is no scope. */
static uint32_t name_chain(struct regsum *rs, const struct az *z, trace_str name)
{
	uint32_t ci = pg_u64map_get(&rs->by_name, name);

	if (ci != UINT32_MAX)
		return ci;
	const char *s = trace_str_get(z->t, name);
	ci = s && strstr(s, "=>") ? chain_for(&rs->ch, (2ULL << 62) | name, s, &rs->r, &rs->n,
					      &rs->cap, &rs->idx, &rs->path)
				  : NO_CHAIN;
	pg_u64map_put(&rs->by_name, name, ci);
	return ci;
}

void az_regsum_add(struct regsum *rs, const struct az *z, uint32_t d, const struct act *a,
		   const struct trace_event *e)
{
	const struct dev *dv = &z->devs[d];
	uint32_t ci = rs->by_args[e->args];

	if (ci == UINT32_MAX) {
		trace_str sid = scope_arg(z, e);
		ci = sid ? chain_for(&rs->ch, sid, trace_str_get(z->t, sid), &rs->r, &rs->n,
				     &rs->cap, &rs->idx, &rs->path)
			 : NO_CHAIN;
		rs->by_args[e->args] = ci;
	}
	if (ci == NO_CHAIN) {
		/* Kineto: the GPU user annotation around the kernel */
		const struct ann *an = dv->n_ann ? az_annotation_at(dv, a->s) : NULL;
		if (an && *an->path) {
			uint32_t ai = (uint32_t)(an - dv->ann);
			if (rs->by_ann[ai] == UINT32_MAX)
				rs->by_ann[ai] = chain_for(
				    &rs->ch, (1ULL << 62) | ((uint64_t)d << 32) | (uint64_t)ai,
				    an->path, &rs->r, &rs->n, &rs->cap, &rs->idx, &rs->path);
			ci = rs->by_ann[ai];
		} else {
			ci = name_chain(rs, z, e->name);
		}
	}
	if (ci == NO_CHAIN)
		return;
	for (uint32_t q = 0; q < rs->ch.len[ci]; q++) {
		uint32_t en = rs->ch.ent[rs->ch.off[ci] + q], i = en & 0x7fffffffu;
		rs->r[i].count += 1;
		rs->r[i].incl += (double)a->self;
		if (en & 0x80000000u)
			rs->r[i].excl += (double)a->self;
	}
}

void az_regsum_finish(struct regsum *rs, struct summary *s)
{
	s->regions = pg_xcalloc(rs->n + 1, sizeof(*s->regions));
	for (uint32_t i = 0; i < rs->n; i++) {
		struct sum_region *x = &s->regions[s->n_regions++];
		x->path = rs->r[i].path;
		x->depth = rs->r[i].depth;
		x->count_total = rs->r[i].count;
		x->inclusive_us_total = rs->r[i].incl / 1000.0;
		x->exclusive_us_total = rs->r[i].excl / 1000.0;
	}
	free(rs->r);
	free(rs->by_args);
	free(rs->by_ann);
	pg_u64map_release(&rs->idx);
	pg_u64map_release(&rs->ch.by_key);
	pg_u64map_release(&rs->by_name);
	free(rs->ch.off);
	free(rs->ch.len);
	free(rs->ch.ent);
	pg_buf_release(&rs->path);
}
