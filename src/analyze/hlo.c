/*
 * HLO text parsing: what an XLA op's HLO text ("long_name") says about a
 * collective, its bytes (the output shapes, a tuple's summed) and its replica
 * group size.
 *
 * How it works: a scan of the text, not a parser: the result types run from
 * " = " to the opcode's '(', each "dtype[dims]" in them adds its element
 * count times the dtype's width, and replica_groups is read in its iota form
 * ([groups,size]<=...) or as the first explicit {a,b,...} group. Text that
 * says nothing gives 0, and the caller treats the collective as unsized.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static double hlo_dtype_bytes(const char *t, size_t n)
{
	static const struct {
		const char *name;
		double bytes;
	} tab[] = {{"pred", 1}, {"s8", 1},  {"u8", 1},	  {"s16", 2},  {"u16", 2}, {"f16", 2},
		   {"bf16", 2}, {"s32", 4}, {"u32", 4},	  {"f32", 4},  {"s64", 8}, {"u64", 8},
		   {"f64", 8},	{"c64", 8}, {"c128", 16}, {"s4", 0.5}, {"u4", 0.5}};
	for (size_t i = 0; i < PG_ARRAY_LEN(tab); i++)
		if (strlen(tab[i].name) == n && memcmp(tab[i].name, t, n) == 0)
			return tab[i].bytes;
	if (n >= 2 && t[0] == 'f' && t[1] == '8') /* f8e4m3fn, f8e5m2, ... */
		return 1;
	return 0;
}

/*
 * Bytes and group size of an HLO collective from its text ("%all-reduce =
 * f32[5,1024]{1,0} all-reduce(...), replica_groups=[4,2]<=[2,4]T(1,0)"):
 * the output shapes (a tuple's summed) and the replica group size, from the
 * iota form [groups,size] or the first explicit {a,b,...} group. 0 when the
 * text says nothing.
 */
double az_hlo_collective(const char *text, uint32_t *group)
{
	const char *eq = text ? strstr(text, " = ") : NULL, *p;
	double total = 0;

	*group = 0;
	if (!eq)
		return 0;
	p = eq + 3;
	const char *op_end = p;
	/* shapes run until the opcode: the first '(' after the result types */
	int depth = 0;
	for (; *op_end; op_end++) {
		if (*op_end == '(' && depth == 0 && op_end > p && op_end[-1] != ' ')
			break;
		if (*op_end == '(' && op_end == p)
			depth++;
	}
	for (const char *q = p; q < op_end; q++) {
		if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			continue;
		const char *t = q;
		while (q < op_end && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
			q++;
		if (q >= op_end || *q != '[')
			continue;
		double bytes = hlo_dtype_bytes(t, (size_t)(q - t)), elems = 1;
		q++;
		while (q < op_end && *q != ']') {
			char *end;
			long v = strtol(q, &end, 10);
			if (end == q)
				break;
			elems *= (double)v;
			q = end;
			if (*q == ',')
				q++;
		}
		total += bytes * elems;
	}
	const char *rg = strstr(op_end, "replica_groups=");
	if (rg) {
		rg += 15;
		if (*rg == '[') { /* iota: [groups,size]<=... */
			const char *comma = strchr(rg, ',');
			if (comma)
				*group = (uint32_t)strtoul(comma + 1, NULL, 10);
		} else if (rg[0] == '{' && rg[1] == '{') {
			uint32_t n = 1;
			for (const char *q = rg + 2; *q && *q != '}'; q++)
				n += *q == ',';
			*group = n;
		}
	}
	return total;
}
