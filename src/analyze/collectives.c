/*
 * Collectives: the bytes a collective moves and its group size, from Kineto's
 * NCCL arguments (In/Out msg nelems x dtype, Group size) or else from the HLO
 * text of an XLA op (hlo.c); and the cache of what the totals read from an
 * event's arguments (flops, collective size).
 *
 * Why a cache: string lookups and number parsing per event were most of the
 * totals' cost, and events of one op share an argument set, so the answers
 * are worked out once per argument set (struct asetcache). A size depends on
 * the family too (all-gather reads its output count), so the family it was
 * worked out for is kept beside it.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static double dtype_bytes(const char *d)
{
	static const struct {
		const char *n;
		double b;
	} t[] = {{"Float", 4}, {"Int", 4},  {"Long", 8},	  {"BFloat16", 2},
		 {"Bool", 1},  {"Byte", 1}, {"Double", 8},	  {"Half", 2},
		 {"Short", 2}, {"Char", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}};
	for (size_t i = 0; d && i < PG_ARRAY_LEN(t); i++)
		if (strcmp(d, t[i].n) == 0)
			return t[i].b;
	return 0;
}

/* Bytes a collective moves and its group size: Kineto NCCL args (In/Out msg
 * nelems x dtype, Group size), else the HLO text of an XLA op. 0 when unknown. */
static int collective_size(const struct az *z, const struct trace_event *e, uint8_t fam,
			   double *bytes_out, uint32_t *group_out)
{
	const char *in = arg(z, e, z->k_in), *outn = arg(z, e, z->k_out);
	const char *ne = fam == ANALYZE_FAM_ALL_GATHER ? outn : in;
	double dbytes = dtype_bytes(arg(z, e, z->k_dtype));

	*bytes_out = 0;
	*group_out = 0;
	if (ne && dbytes > 0) {
		const char *gs = arg(z, e, z->k_group);
		long n = gs ? strtol(gs, NULL, 10) : 0;
		*bytes_out = strtod(ne, NULL) * dbytes;
		*group_out = n > 0 ? (uint32_t)n : 0;
		return 1;
	}
	const char *hlo = arg(z, e, z->k_long_name);
	if (!hlo)
		return 0;
	double b = az_hlo_collective(hlo, group_out);
	if (b <= 0)
		return 0;
	/* reduce-scatter moves its input: group-size times its output */
	if (fam == ANALYZE_FAM_REDUCE_SCATTER && *group_out > 0)
		b *= *group_out;
	*bytes_out = b;
	return 1;
}

void az_asetcache_init(struct asetcache *c, const struct trace *t)
{
	size_t n = (size_t)t->n_argsets + 1;

	c->state = pg_xcalloc(n, 1);
	c->flops = pg_xmalloc(n * sizeof(double));
	c->bytes = pg_xmalloc(n * sizeof(double));
	c->group = pg_xmalloc(n * sizeof(uint32_t));
	c->fam = pg_xmalloc(n);
}

void az_asetcache_release(struct asetcache *c)
{
	free(c->state);
	free(c->flops);
	free(c->bytes);
	free(c->group);
	free(c->fam);
}

/* The event's "flops" argument as a number; 0 when it has none. Only a number
 * from 0 to 1e30 counts: a negative, NaN or huge one would make a total the
 * summary cannot hold (it is written as null and read back as none). */
int az_flops_of(const struct az *z, struct asetcache *c, const struct trace_event *e, double *out)
{
	uint32_t i = e->args;

	if (!(c->state[i] & ASC_FLOPS_KNOWN)) {
		const char *fl = arg(z, e, z->k_flops);
		char *end = NULL;
		double v = fl ? strtod(fl, &end) : 0;
		int ok = fl && end != fl && v >= 0 && v <= 1e30;
		c->state[i] |= ASC_FLOPS_KNOWN | (ok ? ASC_HAS_FLOPS : 0);
		c->flops[i] = ok ? v : 0;
	}
	*out = c->flops[i];
	return (c->state[i] & ASC_HAS_FLOPS) != 0;
}

int az_collective_size_cached(const struct az *z, struct asetcache *c, const struct trace_event *e,
			      uint8_t fam, double *bytes, uint32_t *group)
{
	uint32_t i = e->args;

	if (!(c->state[i] & ASC_COLL_KNOWN) || c->fam[i] != fam) {
		int sized = collective_size(z, e, fam, &c->bytes[i], &c->group[i]);
		c->state[i] = (uint8_t)((c->state[i] & ~ASC_SIZED) | ASC_COLL_KNOWN |
					(sized ? ASC_SIZED : 0));
		c->fam[i] = fam;
	}
	*bytes = c->bytes[i];
	*group = c->group[i];
	return (c->state[i] & ASC_SIZED) != 0;
}
