/*
 * Ops and families: an event's family from the rules table (rules.c) through
 * a per-thread cache, its op (the canonical name, "fusion.123" -> "fusion",
 * of one family: "<name> [<family>]" when the record's family is not the one
 * its name gives alone), and the totals pass that sums ops, families and
 * collectives over every record (az_totals). An op has one family, so its
 * time is counted where it is listed.
 *
 * How it works: classification is asked once per (name, argument set,
 * category), since an op's events nearly always share them: a slot per name
 * holds the last answer, a hash map the rest. Ops are created in the order
 * their names first meet activity in event order (az_make_ops); a record of a
 * family its name's first event did not have finds no op while the devices
 * are built side by side, and az_resolve_ops makes those in device and
 * record order, so op ids never depend on threads. az_totals walks the
 * devices in order and each device's records by track and start, finding
 * each record's steady window by walking on; it feeds the op sums here, the
 * collective sizes (collectives.c) and the regions (regions.c) in the same
 * pass, so the records are read once.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "../summary/summary.h"

/* Fold compile-specific suffixes: "fusion.123" -> "fusion", "loop_add_fusion_2"
 * -> "loop_add_fusion", "triton_poi_fused_add_0" -> "triton_poi_fused_add". */
static char *canonical(const char *name)
{
	size_t n = strlen(name), end = n;

	while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9')
		end--;
	if (end < n && end > 0 && (name[end - 1] == '.' || name[end - 1] == '_'))
		return pg_xstrndup(name, end - 1);
	return pg_xstrdup(name);
}

static int is_marker_op(const char *canon)
{
	static const char *m[] = {"iota",      "constant", "bitcast",  "get-tuple-element",
				  "parameter", "tuple",	   "after-all"};
	for (size_t i = 0; i < PG_ARRAY_LEN(m); i++)
		if (strcmp(canon, m[i]) == 0)
			return 1;
	return strncmp(canon, "copy-start", 10) == 0 || strncmp(canon, "copy-done", 9) == 0;
}

/* The family an op's name gives by itself, without the event's arguments or
 * category: what an unqualified op name stands for. */
static uint8_t name_family(const char *canon)
{
	struct analyze_event_facts f;
	enum analyze_category c;
	enum analyze_family fam;

	memset(&f, 0, sizeof(f));
	f.name = canon;
	f.name_len = strlen(canon);
	analyze_classify(&f, &c, &fam);
	return (uint8_t)fam;
}

static uint32_t op_new(struct az *z, char *name, uint8_t fam, uint32_t base)
{
	z->ops = grow(z->ops, z->n_ops, &z->cap_ops, sizeof(*z->ops));
	uint32_t j = z->n_ops++;
	memset(&z->ops[j], 0, sizeof(z->ops[j]));
	z->ops[j].name = name;
	z->ops[j].fam = fam;
	z->ops[j].base = base == UINT32_MAX ? j : base;
	return j;
}

/* Up to three distinct raw names, in the order met. */
static void op_example(struct opinfo *o, const char *raw)
{
	for (int k = 0; k < 3; k++) {
		if (o->examples[k] && strcmp(o->examples[k], raw) == 0)
			return;
		if (!o->examples[k]) {
			o->examples[k] = pg_xstrdup(raw);
			return;
		}
	}
}

/* The plain op of an event's name: its canonical name, of the family that
 * name gives by itself. */
static uint32_t plain_op(struct az *z, const struct trace_event *e)
{
	uint32_t i = z->op_of_name[e->name];

	if (i != UINT32_MAX)
		return i;
	const char *raw = trace_str_get(z->t, e->name);
	char *c = canonical(raw[0] ? raw : "(unnamed)");
	uint64_t h = pg_hash(c, strlen(c));
	uint32_t j = pg_u64map_get(&z->op_by_canon, h);
	while (j != UINT32_MAX && strcmp(z->ops[j].name, c) != 0)
		j = pg_u64map_get(&z->op_by_canon, ++h); /* probe on a rare collision */
	if (j == UINT32_MAX) {
		j = op_new(z, c, name_family(c), UINT32_MAX);
		pg_u64map_put(&z->op_by_canon, h, j);
	} else {
		free(c);
	}
	z->op_of_name[e->name] = j;
	return j;
}

static uint64_t qual_key(uint32_t plain, uint8_t fam)
{
	return ((uint64_t)plain << 8) | fam;
}

/* The op of a record of family fam whose name's plain op is plain (that op
 * when the family is its own, else "<name> [<family>]", made on first use),
 * with raw, the record's name, among its examples. */
static uint32_t op_of_family(struct az *z, uint32_t plain, uint8_t fam, const char *raw)
{
	uint32_t q =
	    fam == z->ops[plain].fam ? plain : pg_u64map_get(&z->op_qual, qual_key(plain, fam));

	if (q == UINT32_MAX) {
		struct pg_buf b = PG_BUF_INIT;
		pg_buf_addf(&b, "%s [%s]", z->ops[plain].name,
			    analyze_family_name((enum analyze_family)fam));
		q = op_new(z, pg_xstrdup(b.ptr), fam, plain);
		pg_buf_release(&b);
		pg_u64map_put(&z->op_qual, qual_key(plain, fam), q);
	}
	op_example(&z->ops[q], raw);
	return q;
}

uint32_t az_record_op(const struct az *z, const struct trace_event *e, uint8_t fam)
{
	uint32_t plain = z->op_of_name[e->name];

	if (fam == z->ops[plain].fam)
		return plain;
	return pg_u64map_get(&z->op_qual, qual_key(plain, fam));
}

void az_resolve_ops(struct az *z)
{
	struct evcur cur = {z->t, NULL, 0, 0};

	for (uint32_t d = 0; d < z->n_devs; d++) {
		struct dev *dv = &z->devs[d];
		for (uint32_t k = 0; k < dv->n && dv->n_pending; k++) {
			struct act *a = &dv->a[k];
			if (a->op != UINT32_MAX)
				continue;
			const struct trace_event *e = ev_at(&cur, a->ev);
			a->op = op_of_family(z, z->op_of_name[e->name], a->fam,
					     trace_str_get(z->t, e->name));
			dv->n_pending--;
		}
	}
	/* read by the split jobs while the totals job writes its sums: the padding
	 * keeps what is allocated next off its cache lines */
	z->op_marker = pg_xmalloc(z->n_ops + 64);
	for (uint32_t i = 0; i < z->n_ops; i++)
		z->op_marker[i] = (uint8_t)is_marker_op(z->ops[z->ops[i].base].name);
}

void az_clscache_init(struct clscache *cc, const struct trace *t)
{
	cc->by_name = pg_xmalloc((t->n_strs + 1) * sizeof(*cc->by_name));
	memset(cc->by_name, 0xff, (t->n_strs + 1) * sizeof(*cc->by_name));
	memset(&cc->by_pair, 0, sizeof(cc->by_pair));
}

void az_clscache_release(struct clscache *cc)
{
	free(cc->by_name);
	pg_u64map_release(&cc->by_pair);
}

void az_classify_slow(const struct az *z, struct clscache *cc, const struct trace_event *e,
		      uint8_t *cat, uint8_t *fam)
{
	uint64_t key = ((uint64_t)e->name << 32) | e->args;
	uint32_t c = pg_u64map_get(&cc->by_pair, key);
	struct analyze_event_facts f;
	enum analyze_category ac;
	enum analyze_family af;

	if (c != UINT32_MAX && (c >> 16) == e->cat) {
		*cat = (uint8_t)(c & 0xff);
		*fam = (uint8_t)((c >> 8) & 0xff);
		return;
	}
	memset(&f, 0, sizeof(f));
	f.name = trace_str_get(z->t, e->name);
	f.name_len = trace_str_len(z->t, e->name);
	f.cat = e->cat ? trace_str_get(z->t, z->t->cats[e->cat].name) : NULL;
	f.hlo_op = arg(z, e, z->k_hlo_op);
	f.hlo_category = arg(z, e, z->k_hlo_cat);
	f.collective_name = arg(z, e, z->k_coll);
	analyze_classify(&f, &ac, &af);
	*cat = (uint8_t)ac;
	*fam = (uint8_t)af;
	pg_u64map_put(&cc->by_pair, key, ((uint32_t)e->cat << 16) | ((uint32_t)af << 8) | ac);
}

/* Ops in the order their names first appear, as one pass in event order
 * creates them: each name's plain op and the op of its first event's family. */
void az_make_ops(struct az *z, struct clscache *cc)
{
	z->op_of_name = pg_xmalloc((z->t->n_strs + 1) * sizeof(uint32_t));
	memset(z->op_of_name, 0xff, (z->t->n_strs + 1) * sizeof(uint32_t));
	for (uint32_t k = 0; k + 1 < z->f.first.n; k += 2) {
		if (z->op_of_name[z->f.first.v[k]] != UINT32_MAX)
			continue;
		const struct trace_event *e = trace_event_at(z->t, z->f.first.v[k + 1]);
		uint8_t cat, fam;
		classify(z, cc, e, &cat, &fam);
		op_of_family(z, plain_op(z, e), fam, trace_str_get(z->t, e->name));
	}
}

/* Ops, families and collectives over the activity starting in steady windows
 * (exact: integer ns summed in doubles, written as us with three decimals). */
struct opsum {
	double *count, *self_ns, *total_ns; /* per op */
	double fam_self[ANALYZE_FAM_COUNT], fam_count[ANALYZE_FAM_COUNT];
	struct {
		double count, ns, bytes, cap_count, cap_ns, cap_bytes;
		uint32_t group;
		int sized, cap_sized;
	} coll[ANALYZE_FAM_COUNT];
	struct asetcache ac;
};

/* A communication leaf anywhere in the capture. */
static void opsum_capture(struct opsum *os, const struct az *z, const struct act *a,
			  const struct trace_event *e)
{
	double b = 0;
	uint32_t g = 0;

	os->coll[a->fam].cap_count += 1;
	os->coll[a->fam].cap_ns += (double)(a->e - a->s);
	if (az_collective_size_cached(z, &os->ac, e, a->fam, &b, &g)) {
		os->coll[a->fam].cap_bytes += b;
		os->coll[a->fam].cap_sized = 1;
		if (g > os->coll[a->fam].group)
			os->coll[a->fam].group = g;
	}
}

/* A record starting in a steady window. */
static void opsum_add(struct opsum *os, struct az *z, const struct act *a,
		      const struct trace_event *e)
{
	struct summary *s = z->s;
	double fl;

	os->count[a->op] += 1;
	os->self_ns[a->op] += (double)a->self;
	os->total_ns[a->op] += (double)(a->e - a->s);
	os->fam_self[a->fam] += (double)a->self;
	os->fam_count[a->fam] += 1;
	if (az_flops_of(z, &os->ac, e, &fl)) {
		s->flops_total += fl;
		s->has_flops = 1;
	}
	if (a->cat != ANALYZE_CAT_COMMUNICATION || !a->leaf)
		return;
	os->coll[a->fam].count += 1;
	os->coll[a->fam].ns += (double)(a->e - a->s);
	double b = 0;
	uint32_t g = 0;
	if (az_collective_size_cached(z, &os->ac, e, a->fam, &b, &g)) {
		os->coll[a->fam].bytes += b;
		if (g > os->coll[a->fam].group)
			os->coll[a->fam].group = g;
		os->coll[a->fam].sized = 1;
	}
}

static void opsum_finish(struct opsum *os, struct az *z)
{
	struct summary *s = z->s;

	s->ops = pg_xcalloc(z->n_ops + 1, sizeof(*s->ops));
	for (uint32_t i = 0; i < z->n_ops; i++) {
		struct opinfo *o = &z->ops[i];
		if (os->count[i] == 0)
			continue;
		struct sum_op *x = &s->ops[s->n_ops++];
		x->name = pg_xstrdup(o->name);
		x->family = pg_xstrdup(analyze_family_name((enum analyze_family)o->fam));
		x->category = pg_xstrdup(
		    analyze_category_name(analyze_family_category((enum analyze_family)o->fam)));
		for (int k = 0; k < 3; k++)
			x->examples[k] = o->examples[k] ? pg_xstrdup(o->examples[k]) : NULL;
		x->count_total = os->count[i];
		x->self_us_total = os->self_ns[i] / 1000.0;
		x->total_us_total = os->total_ns[i] / 1000.0;
	}
	s->families = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->families));
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++) {
		if (os->fam_count[f] == 0)
			continue;
		struct sum_family *x = &s->families[s->n_families++];
		x->family = pg_xstrdup(analyze_family_name((enum analyze_family)f));
		x->category = pg_xstrdup(
		    analyze_category_name(analyze_family_category((enum analyze_family)f)));
		x->count_total = os->fam_count[f];
		x->us_total = os->fam_self[f] / 1000.0;
	}
	s->collectives = pg_xcalloc(ANALYZE_FAM_COUNT, sizeof(*s->collectives));
	for (int f = ANALYZE_FAM_ALL_REDUCE; f <= ANALYZE_FAM_COLLECTIVE_OTHER; f++) {
		if (os->coll[f].cap_count == 0)
			continue;
		struct sum_collective *c = &s->collectives[s->n_collectives++];
		c->kind = pg_xstrdup(f == ANALYZE_FAM_COLLECTIVE_OTHER
					 ? "other"
					 : analyze_family_name((enum analyze_family)f));
		c->count_total = os->coll[f].count;
		c->us_total = os->coll[f].ns / 1000.0;
		c->bytes_total = os->coll[f].bytes;
		c->group_size = os->coll[f].group;
		c->sized = os->coll[f].sized;
		c->capture_count_total = os->coll[f].cap_count;
		c->capture_bytes_total = os->coll[f].cap_bytes;
		c->capture_sized = os->coll[f].cap_sized;
		c->capture_us_total = os->coll[f].cap_ns / 1000.0;
	}
	az_asetcache_release(&os->ac);
	free(os->count);
	free(os->self_ns);
	free(os->total_ns);
}

/*
 * Ops, families, collectives and regions in one pass over every device's
 * records, in device order (the flops total is a sum of parsed doubles: its
 * order is kept). Steady flags are set on the way: a track's records come by
 * start, so each finds its window by walking on.
 */
void az_totals(struct az *z)
{
	struct opsum os;
	struct regsum rs;
	struct evcur cur = {z->t, NULL, 0, 0};

	memset(&os, 0, sizeof(os));
	az_asetcache_init(&os.ac, z->t);
	os.count = pg_xcalloc(z->n_ops + 1, sizeof(double));
	os.self_ns = pg_xcalloc(z->n_ops + 1, sizeof(double));
	os.total_ns = pg_xcalloc(z->n_ops + 1, sizeof(double));
	az_regsum_init(&rs, z);
	for (uint32_t d = 0; d < z->n_devs; d++) {
		const struct dev *dv = &z->devs[d];
		uint32_t lo = 0, track = UINT32_MAX;
		int64_t prev = INT64_MIN;
		az_regsum_device(&rs, dv);
		for (uint32_t k = 0; k < dv->n; k++) {
			const struct act *a = &dv->a[k];
			const struct trace_event *e = NULL;
			if (a->track != track || a->s < prev) {
				lo = az_count_le(dv->win_s, dv->n_win, a->s);
				track = a->track;
			}
			while (lo < dv->n_win && dv->win_s[lo] <= a->s)
				lo++;
			prev = a->s;
			int steady = lo > 0 && a->s < dv->win_e[lo - 1];
			if (a->cat == ANALYZE_CAT_COMMUNICATION && a->leaf) {
				e = ev_at(&cur, a->ev);
				opsum_capture(&os, z, a, e);
			}
			if (!steady)
				continue;
			if (!e)
				e = ev_at(&cur, a->ev);
			opsum_add(&os, z, a, e);
			az_regsum_add(&rs, z, d, a, e);
		}
	}
	opsum_finish(&os, z);
	az_regsum_finish(&rs, z->s);
}
