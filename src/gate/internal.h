/*
 * What compare.c shares with the stages it hands work to, provenance.c,
 * attribution.c and runs.c; not part of the gate's API (gate.h).
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

/* A candidate whose steps spread this many times as wide as the baseline's,
 * or whose mean step is this many times further above its median, was
 * disturbed (compare.c, check_disturbed); a run of a side, as many times its
 * side's typical excess (runs.c). */
#define GATE_DISTURBED_RATIO 3.0
/* The least a run's mean step must be above its median to count as a burst
 * that hit part of it (docs/noise.md). */
#define GATE_SET_ASIDE_EXCESS 0.10

/* What the thresholds file says to do about a quality note of this code. */
enum gate_verdict gate_quality_action(const struct gate_thresholds *th, const char *code);

/* sha256 of s as `profgate summarize` writes it. */
void gate_summary_sha256(const struct summary *s, char hex[65]);

/* How far the mean of s's steady steps is above their median, relative;
 * NAN for fewer than 5 steady steps. */
double gate_run_excess_share(const struct summary *s);

/* How far a burst over one stretch of a run's steady steps moved its p90
 * step: 1 - (the p90 of the steps outside the stretch) / (the p90 of all),
 * with the stretch's first and last step numbers in *first, *last; 0 when
 * no burst is found, NAN for fewer than 10 steady steps (runs.c). */
double gate_run_burst_share(const struct summary *s, int64_t *first, int64_t *last);

/* The most a run's mean step may exceed its median before a burst is taken
 * to have hit part of it: GATE_DISTURBED_RATIO times typical (its side's,
 * or the baseline's for a candidate of few runs; NAN: unknown), and at least
 * GATE_SET_ASIDE_EXCESS. */
double gate_excess_limit(double typical);

/* Side k's runs (as given, g) into r->runs[k], each named and digested, the
 * disturbed ones marked (r->set_aside[k]). */
void gate_runs_name(struct gate_result *r, int k, const struct gate_side *g);
/* Marks the run of side k whose summary the report shows. */
void gate_runs_mark_shown(struct gate_result *r, int k, const struct gate_side *g,
			  const struct summary *shown);
/* The runs of side k not set aside, as a side of their own into out (kept:
 * room for g->n_runs, owned by the caller). */
void gate_runs_kept(const struct gate_result *r, int k, const struct gate_side *g,
		    const struct summary **kept, struct gate_side *out);
/* The series' recent records (g) without the disturbed ones, by the same
 * rule, into out (kept as gate_runs_kept's); returns out. */
const struct gate_side *gate_runs_keep_undisturbed(const struct gate_result *r,
						   const struct gate_side *g,
						   const struct summary **kept,
						   struct gate_side *out);
/* A run of a side of fewer than GATE_NOISE_MIN_RUNS whose steps exceed its
 * ops at their fastest by GATE_SLOWED_MIN more than the runs' typical, and
 * whose median step is GATE_SLOWED_STEP_MIN above theirs, relative, was
 * slowed from outside; its time metrics are judged at its ops' speed, known
 * to within GATE_SLOWED_SD per unit of the log of the factor (docs/noise.md
 * "Slowed from outside"). */
#define GATE_SLOWED_MIN	     0.35
#define GATE_SLOWED_STEP_MIN 0.20
#define GATE_SLOWED_SD	     0.10
/* ... unless its largest part did not slow with it: a co-tenant slows every
 * part alike, so the part's share of the step holds, where a step that grew
 * by g elsewhere (a wait the code added) takes g/(1+g) off it. A share that
 * fell by more than GATE_SLOWED_SHARE_FALL of that is the code's. */
#define GATE_SLOWED_SHARE_FALL 0.5
/* The family called name among s's judged families (the host's for a host
 * profile), or NULL. */
const struct sum_family *gate_find_family(const struct summary *s, const char *name);
/* Marks the runs slowed from outside (slowed_share) on the sides of fewer
 * than GATE_NOISE_MIN_RUNS runs, against the typical of every run and of the
 * series' recent records (noise; may be NULL), and notes them ("slowed"). g
 * are the two sides as given, whose runs r->runs name in order. */
void gate_runs_slowed(struct gate_result *r, const struct gate_side *const g[2],
		      const struct gate_side *noise);
/* The factor side k's run i is judged at (1 unless slowed: 1 / (1 + slowed)). */
double gate_run_scale(const struct gate_result *r, int k, uint32_t i);
/* Whether side k has too few runs left to judge. */
int gate_runs_too_few(const struct gate_result *r, int k);
/* The quality note "runs-disturbed" per side that set runs aside; sets
 * r->too_few_runs when a side has too few left. */
void gate_runs_note_set_aside(struct gate_result *r);

#endif
