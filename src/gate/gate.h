/*
 * gate: decide pass, warn or fail on a candidate against a baseline, each one
 * or more runs. It reads a flat catalogue of named metrics taken from each
 * summary, refuses unlike runs (provenance), applies the rules of a
 * thresholds file under a noise model of the spread between runs (noise.c),
 * and explains a step-time change by the family, op and breakdown changes
 * beyond their noise. It renders and sends nothing.
 */
#ifndef PG_GATE_H
#define PG_GATE_H

#include <stdint.h>

#include "../summary/summary.h"
#include "../util/util.h"

#define GATE_VERDICT_SCHEMA    "profgate.verdict/1"
#define GATE_THRESHOLDS_SCHEMA "profgate.thresholds/1"

/* Per metric: pass, improved, warn, fail, inconclusive, new, gone, unrecorded, recorded.
 * Overall: the most severe, incomparable above all (gate_verdict_severity); recorded when
 * there was no baseline to judge against (gate_compare_runs). */
enum gate_verdict {
	GATE_PASS,
	GATE_IMPROVED,
	GATE_WARN,
	GATE_FAIL,
	GATE_INCONCLUSIVE,
	GATE_NEW,
	GATE_GONE,
	GATE_UNRECORDED, /* only the candidate has it, of a group no baseline run carries */
	GATE_RECORDED,	 /* no baseline run at all: the candidate's value recorded, not judged */
	GATE_INCOMPARABLE,
	GATE_IGNORE, /* thresholds "quality" action only: no effect */
};

const char *gate_verdict_name(enum gate_verdict v);
/* pass, new, gone, unrecorded, recorded 0 < improved 1 < inconclusive 2 < warn 3 < fail 4 <
 * incomparable 5 */
int gate_verdict_severity(enum gate_verdict v);
/* The exit code of DESIGN §5 for an overall verdict. */
int gate_verdict_exit(enum gate_verdict v);

/* ---- the metric catalogue (catalogue.c) ---- */

/* The schema's metric groups (enum sum_group), one for one. */
enum gate_kind {
	GATE_K_STEP = SUM_G_STEP,
	GATE_K_BREAKDOWN = SUM_G_BREAKDOWN,
	GATE_K_FAMILY = SUM_G_FAMILY,
	GATE_K_OP = SUM_G_OP,
	GATE_K_COLLECTIVE = SUM_G_COLLECTIVE,
	GATE_K_REGION = SUM_G_REGION,
	GATE_K_THROUGHPUT = SUM_G_THROUGHPUT,
	GATE_K_HOST = SUM_G_HOST,
	GATE_K_MEMORY = SUM_G_MEMORY,
};

struct gate_metric {
	char *name;	     /* "family.matmul.us_per_step" */
	const char *subject; /* the family, op, collective kind or region; NULL for others */
	enum gate_kind kind;
	enum sum_unit unit;
	double value;
	double step_share; /* value over the steady median step; < 0 when not a time per step */
};

struct gate_catalogue {
	struct gate_metric *m; /* sorted by name */
	uint32_t n;
	struct pg_arena arena; /* names */
};

/* The metrics of one summary: its fields the schema names a metric for (step
 * statistics, breakdown shares, families, ops (self time), collectives,
 * regions and throughput). */
void gate_catalogue_build(const struct summary *s, struct gate_catalogue *c);
const struct gate_metric *gate_catalogue_find(const struct gate_catalogue *c, const char *name);
void gate_catalogue_release(struct gate_catalogue *c);

/* ---- thresholds files (thresholds.c) ---- */

enum gate_direction {
	GATE_LOWER_IS_BETTER,
	GATE_HIGHER_IS_BETTER,
	GATE_INFO, /* shown, never judged */
};

struct gate_limit {
	double relative, absolute; /* a change must reach every limit given */
	int has_relative, has_absolute;
};

struct gate_rule {
	char *metric; /* glob: '*' any run of characters, '?' one */
	enum gate_direction direction;
	struct gate_limit warn, fail;
	double floor_share; /* ignore when both sides are under this share of the step; < 0: none */
	int test;	    /* needs min_samples step samples: inconclusive with fewer */
	double significance; /* < 0: the file's */
	int32_t min_samples; /* < 0: the file's */
	uint32_t order;	     /* position in the file, for ties */
	/* the prior between-run noise: the sd of one run's value, relative to the
	 * value, absolute in its unit and a share of the steady median step, the
	 * parts added in quadrature; none: 0 */
	struct gate_limit noise;
	double noise_step_share;
	double
	    min_step_share; /* a warn or fail needs a change of this share of the step; < 0: none */
};

struct gate_quality_rule {
	char *code;		  /* a warning code, or "*" */
	enum gate_verdict action; /* GATE_IGNORE, GATE_WARN, GATE_FAIL or GATE_INCONCLUSIVE */
};

struct gate_thresholds {
	char *name, *description;
	double significance;  /* for tested metrics, one-sided */
	uint32_t min_samples; /* per side */
	/* history trend: K nightly records in a row past a warn limit flag the metric */
	uint32_t consecutive_violations;
	/* the share of the baseline's op time in ops the candidate also runs
	 * below which the two are different workloads (0: never) */
	double min_workload_overlap;
	char **identity; /* fields that must match */
	uint32_t n_identity;
	struct gate_rule *rules;
	uint32_t n_rules;
	struct gate_quality_rule *quality;
	uint32_t n_quality;
};

/*
 * Parse a thresholds file's text (origin names it in errors). th is
 * initialised here; gate_thresholds_release() it in every case. Returns 0, or
 * PG_EUSAGE with a message naming origin and the bad key.
 */
int gate_thresholds_parse(const char *text, size_t len, const char *origin,
			  struct gate_thresholds *th) PG_WUR;
/* The built-in set, thresholds/default.json compiled in. */
void gate_thresholds_default(struct gate_thresholds *th);
void gate_thresholds_release(struct gate_thresholds *th);
/* The rule for a metric: exact names beat globs, then the glob with the most
 * literal characters, then the earlier rule. NULL when none matches. */
const struct gate_rule *gate_rule_for(const struct gate_thresholds *th, const char *metric);
int gate_glob_match(const char *glob, const char *s);

/* ---- statistics (stats.c) ---- */

/* A normal distribution's sd per unit of its median absolute deviation: a
 * MAD times this is a robust sd (gate_robust_sd, the pooled noise, a history
 * record's kept step spread). */
#define GATE_MAD_SD 1.4826

double gate_median(const double *x, uint32_t n);
/* The q-quantile of x as the summary computes it (linear between ranks); NAN
 * for no values. */
double gate_quantile(const double *x, uint32_t n, double q);
/* The variance of the q-quantile of x (as the summary computes it) over iters
 * fixed-seed bootstrap resamples: how well one run's steps pin its p90. */
double gate_bootstrap_quantile_var(const double *x, uint32_t n, double q, uint32_t iters);
/* 1.4826 x the median absolute deviation: a robust standard deviation. */
double gate_robust_sd(const double *x, uint32_t n);
/* P(Z >= z) for a standard normal Z, and its inverse (0 < p < 1). */
double gate_norm_upper(double z);
double gate_norm_quantile_upper(double p);

/* ---- the noise between runs (noise.c) ---- */

/* A side needs this many runs for its spread to be estimated from them. */
#define GATE_NOISE_MIN_RUNS 3

/* The rule's prior sd of one run's value (its "noise": relative to ref,
 * absolute, and a share of the steady median step step_us, in quadrature);
 * 0 when the rule gives none. */
double gate_noise_prior_sd(const struct gate_rule *r, double ref, double step_us);
/* The robust sd (1.4826 x MAD) of the runs' deviations from their own
 * group's median, pooled over the k groups with at least GATE_NOISE_MIN_RUNS
 * values; NAN when none has. */
double gate_noise_pooled_sd(const double *const *groups, const uint32_t *n, uint32_t k);
/* The sd of one run's value: est (NAN: none) where it is above the rule's
 * prior, else the prior; *from says which ("prior", or est_from). */
double gate_noise_run_sd(const struct gate_rule *r, double est, double ref, double step_us,
			 const char *est_from, const char **from);
/* The variance of the median of n runs' values, in units of one run's
 * variance: 1/n for one or two runs, more than their mean's 1/n from three
 * (0.449 at 3, 0.287 at 5, about pi / 2n for many). */
double gate_noise_median_var(double n);
/* Whether a change toward worse (absolute, relative) reaches every limit l
 * gives; a limit that gives none is never reached. */
int gate_limit_reaches(const struct gate_limit *l, double worse, double worse_rel);
/* worse / sd, the infinities for sd 0. */
double gate_z(double worse, double sd);
/* A family, op or collective: the parts of a step. */
int gate_metric_is_part(const char *metric);
/* The one-sided level metric is tested at: its rule's significance, else the
 * file's; a part's divided by the m_parts parts judged beside it. */
double gate_level(const struct gate_thresholds *th, const struct gate_rule *r, const char *metric,
		  uint32_t m_parts);

/* ---- compare (compare.c) ---- */

struct gate_inputs {
	const char *baseline_path, *candidate_path;
	const char *baseline_sha256, *candidate_sha256; /* of the input bytes; NULL if unknown */
	const char *label;				/* NULL for none */
	const char *thresholds_origin;			/* "built-in default" or a path */
	const char *version;
	/* a baseline made from a history window: the window as compact JSON
	 * (written as the baseline's "history"); NULL for a file */
	const char *baseline_history_json;
	/* recent runs of the candidate's series (history records), for the
	 * noise model alone when neither side has GATE_NOISE_MIN_RUNS; NULL: none */
	const struct gate_side *noise;
	/* why a baseline of no runs judged nothing when its window has records
	 * (too few to judge: the window is filling); NULL: the window is empty */
	const char *recorded_why;
};

struct gate_metric_result {
	char *name;
	enum gate_kind kind;
	char *subject; /* the family, op, collective kind or region; NULL for others */
	int has_baseline, has_candidate;
	double baseline, candidate;
	double delta;		      /* candidate - baseline */
	double delta_share;	      /* delta / baseline; NAN when the baseline is 0 or absent */
	double step_share;	      /* the larger side's share of the step; < 0 when not a time */
	const struct gate_rule *rule; /* NULL: no rule matched (info) */
	enum gate_verdict verdict;
	int tested;	 /* p_value and the sample counts are set */
	double p_value;	 /* one-sided: the chance of a change this far toward worse under noise */
	double noise_sd; /* the standard deviation of delta under the noise model; NAN: none */
	const char *noise_from; /* "runs", "history" (between-run spread), "prior" (the rule's) */
	double alpha;		/* the level it was tested at: parts share the file's */
	uint32_t n_baseline, n_candidate;
	const char *samples; /* "steps", "device-steps" */
	char *note;	     /* why, in a few words; NULL for none */
	int slowed;	     /* the step or a rate judged at a slowed run's ops' speed (runs.c) */
};

enum gate_attr_kind { GATE_ATTR_FAMILY, GATE_ATTR_OP, GATE_ATTR_BREAKDOWN };

struct gate_attribution {
	enum gate_attr_kind kind;
	char *name;
	double delta_us_per_step;
	char *detail; /* families: the ops that moved most, separated by GATE_DETAIL_SEP; NULL for
			 none */
	const char *family; /* ops: their family (borrowed from a summary); NULL otherwise */
	double z;	    /* the change over its standard deviation under the noise model */
};

/* Whether attribution entry i is an op whose family is also listed: its time
 * is inside that family's, so a line that names the family leaves the op out
 * and the remainder (attribution_remainder_us: the step change less every
 * entry not nested) counts it once. */
struct gate_result;
int gate_attribution_nested(const struct gate_result *r, uint32_t i);

/* Between op names in gate_attribution.detail: kernel names hold ", ". */
#define GATE_DETAIL_SEP '\x1f'

/* The default of a thresholds file's min_workload_overlap: measured on the
 * corpus (docs/gate.md, "Provenance"). */
#define GATE_MIN_WORKLOAD_OVERLAP 0.5

struct gate_field_diff {
	char *field, *baseline, *candidate; /* values as text, "null" when absent */
};

struct gate_quality_hit {
	int candidate; /* 0: baseline, 1: candidate */
	char *code, *message;
	enum gate_verdict action;
};

/* One run of a side, as the verdict names it: its input, its summary's
 * digest, its step values, and whether it was set aside as disturbed (a run
 * far slower than the side's other runs, beyond run-to-run noise: a co-tenant
 * burst, docs/noise.md "Disturbed runs"). */
struct gate_run {
	const char *path, *sha256; /* borrowed from the side (as gate_inputs); NULL: unknown */
	char summary_sha256[65];   /* "" for a history record */
	char **profile_path, **profile_sha256; /* owned: the run's profiles */
	uint32_t n_profiles;
	int shown; /* the run whose summary the report shows for the side */
	double step_median_us, step_p90_us; /* NAN: no steady steps */
	double from_share;   /* how far its step is above the side's typical run, relative */
	double excess_share; /* its mean steady step over their median, less 1; NAN: < 5 */
	double fastest_us; /* its step with every op at its fastest (step.fastest_us); NAN: none */
	/* how much more its steps exceed fastest_us than the runs' typical do,
	 * relative; NAN unless it was slowed from outside (runs.c) */
	double slowed_share;
	/* how far a burst over one stretch of its steps moved its p90 step, and
	 * the stretch's first and last step (runs.c); 0: none, NAN: unknown */
	double burst_share;
	int64_t burst_first, burst_last;
	int set_aside;
	char *why; /* why it was set aside; NULL when kept */
};

struct gate_result {
	enum gate_verdict verdict;
	const char *provenance; /* "comparable", "incomparable", "identical-inputs" */
	struct gate_field_diff *diff;
	uint32_t n_diff;
	/* the share of the baseline's op time in ops the candidate also runs
	 * (NAN: a side has no op time); refusal: why the runs are not
	 * comparable, one line naming both sides' models, or NULL */
	double workload_overlap;
	char *refusal;

	/* the headline: steady median step time */
	int has_step;
	double step_baseline_us, step_candidate_us, step_delta_us, step_delta_share;
	int has_interval;
	double interval_lo_share, interval_hi_share, confidence;
	int step_tested;
	double step_p_value;
	uint32_t step_n_baseline, step_n_candidate;
	const char *step_samples;

	struct gate_metric_result *metrics; /* judged or shown, in catalogue order */
	uint32_t n_metrics;
	uint32_t n_below_floor;		      /* metrics left out: under the floor on both sides */
	struct gate_attribution *attribution; /* beyond noise, furthest first */
	uint32_t n_attribution;
	double attribution_z;	      /* the z a part needs to be listed: toward the step's change
				       * when it moved beyond noise, else either way */
	double attribution_z_against; /* ... and against the step's change */
	double attribution_remainder_us;	/* the step change the entries not nested (families,
						 * breakdown, ops whose family is not listed) leave */
	uint32_t baseline_runs, candidate_runs; /* the runs each side's values rest on */
	struct gate_run *runs[2];		/* every run given: [0] baseline, [1] candidate */
	uint32_t n_runs[2];
	uint32_t set_aside[2];	      /* runs set aside as disturbed, per side */
	double set_aside_limit_share; /* a run this far above its side's typical run is set
					 aside; NAN: no side had runs enough to tell */
	/* the median relative spread (robust sd) of a run's steady steps; NAN: unknown */
	double jitter_baseline, jitter_candidate;
	double excess_candidate; /* its mean steady step over its median, less 1; NAN: unknown */
	int disturbed;	  /* the candidate's steps spread far beyond the baseline's, or a burst
			     slowed some of them */
	int too_few_runs; /* a side had too few runs left when the disturbed were set aside */
	/* the noise decided the step's verdict (inconclusive for disturbance, or
	 * past a limit but within noise): noisy is set, with the spreads used,
	 * relative to the baseline's median step: between runs (the sd of one
	 * run's value the test took) and inside them (the larger side's median
	 * robust spread of a run's steps; NAN: unknown), and the advice */
	int noisy;
	double noisy_between_share, noisy_within_share;
	char *noisy_advice;
	struct gate_quality_hit *quality;
	uint32_t n_quality;

	/* breakdown before and after, microseconds per step (mean over devices) */
	double bd_baseline_us[SUM_N_PARTS], bd_candidate_us[SUM_N_PARTS]; /* summary_parts' order */

	/* sha256 of each summary as `profgate summarize` writes it */
	char baseline_summary_sha256[65], candidate_summary_sha256[65];

	struct gate_inputs in;			    /* borrowed */
	const struct summary *baseline, *candidate; /* borrowed, for reports */
	const struct gate_thresholds *thresholds;   /* borrowed */
};

/* One side of a comparison: runs of one capture setup (a history window: one
 * summary per record), and the summary the report shows for the side (NULL:
 * the run whose median step is the median). */
struct gate_side {
	const struct summary *const *runs;
	uint32_t n_runs;
	const struct summary *rep;
	int history; /* the runs are history records: their spread is "history" noise */
	/* each run's input file and its bytes' sha256 (NULL, or a NULL entry:
	 * unknown, as for a history record) */
	const char *const *paths, *const *sha256;
};

/* gate_compare for sides of several runs: every metric's value on a side is
 * the median over its runs; the noise model takes the spread between them.
 * A baseline of no runs (a history window that holds no usable record yet;
 * b->rep then the summary its report shows, an empty one) judges nothing:
 * the verdict is GATE_RECORDED, every metric of the candidate a GATE_RECORDED
 * row with its value (the record the next run is gated against), provenance
 * "no-baseline". */
void gate_compare_runs(const struct gate_side *b, const struct gate_side *c,
		       const struct gate_thresholds *th, const struct gate_inputs *in,
		       struct gate_result *r);

/*
 * Compare candidate c against baseline b under th. r is initialised here and
 * borrows b, c, th and in until gate_result_release(). Never fails: refused
 * comparisons give the verdict GATE_INCOMPARABLE with the reason in
 * provenance and diff.
 */
void gate_compare(const struct summary *b, const struct summary *c,
		  const struct gate_thresholds *th, const struct gate_inputs *in,
		  struct gate_result *r);
void gate_result_release(struct gate_result *r);
/* The verdict JSON (profgate.verdict/1), deterministic. */
void gate_result_write_json(const struct gate_result *r, struct pg_buf *out);

#endif
