/*
 * What compare.c shares with the two stages it hands work to, provenance.c
 * and attribution.c; not part of the gate's API (gate.h).
 */
#ifndef PG_GATE_INTERNAL_H
#define PG_GATE_INTERNAL_H

#include "gate.h"

/* The metric result named name in r; NULL when r has none. */
const struct gate_metric_result *gate_find_result(const struct gate_result *r, const char *name);

/* Refuses r (GATE_INCOMPARABLE, each differing field in r->diff) when its
 * sides' identities, profile bytes or workloads say they are not alike. */
void gate_check_provenance(struct gate_result *r);

/* What attribution needs of the comparison's test. */
struct gate_attr_ctx {
	double step_us;		 /* the larger side's steady median step */
	uint32_t runs_b, runs_c; /* runs each side's median rests on */
	uint32_t m_parts;	 /* families, ops and collectives judged: they share alpha */
};

/* Lists in r->attribution the parts of the step change beyond their noise,
 * and sets r->attribution_remainder_us; the metrics are judged already. */
void gate_attribute(struct gate_result *r, const struct gate_attr_ctx *t);

#endif
