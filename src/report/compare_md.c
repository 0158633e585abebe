/*
 * The comparison report: what the gate decided about a candidate against a
 * baseline, and where the time went, in markdown for a PR reader. It renders a
 * struct gate_result and decides nothing: verdicts, notes, limits and the
 * attribution order are the gate's; this file only orders rows for reading
 * (most severe first) and leaves out what would not show (changes under a
 * display cut). Every profile string goes through report_code() or
 * report_text(). Deterministic: the same result gives the same bytes.
 *
 * Sections, in order, each left out when empty (the metric table never is):
 * title, headline, attribution, metrics, breakdown, top regressed, top
 * improved, new and gone, provenance, quality warnings. Lists are capped so a
 * PR comment stays far below GitHub's 65,536 characters. Plain-text verdict
 * words, no emoji: it reads the same in a screen reader.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../gate/gate.h"

#define NAME_MAX_BYTES 80
#define TEXT_MAX_BYTES 300
/* Caps: metric table rows, attribution entries, movers per kind and
 * direction, new and gone rows per side, quality warnings, ops named after an
 * attributed family. */
#define TABLE_ROWS     30
#define ATTR_SHOWN     6
#define TOP_SHOWN      5
#define NEW_GONE_SHOWN 15
#define QUALITY_SHOWN  20
#define DETAIL_OPS     3
/* Left out, as shares of the baseline step: family and op moves under TOP_CUT
 * (and under 0.05 us, which would print as zero). */
#define TOP_CUT 0.001

/* ---- formatting ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static void pvalue(struct pg_buf *b, double p)
{
	if (!isfinite(p))
		pg_buf_adds(b, "p unknown");
	else if (p < 0.001)
		pg_buf_adds(b, "p < 0.001");
	else
		pg_buf_addf(b, "p = %.2g", p);
}

static const char *verdict_name(enum gate_verdict v)
{
	const char *s = gate_verdict_name(v);
	return s ? s : "unknown";
}

static void upper(struct pg_buf *b, const char *s)
{
	for (; *s; s++)
		pg_buf_addc(b, *s >= 'a' && *s <= 'z' ? (char)(*s - 'a' + 'A') : *s);
}

static const char *kind_name(enum gate_kind k)
{
	switch (k) {
	case GATE_K_STEP: return "step";
	case GATE_K_BREAKDOWN: return "breakdown";
	case GATE_K_FAMILY: return "family";
	case GATE_K_OP: return "op";
	case GATE_K_COLLECTIVE: return "collective";
	case GATE_K_REGION: return "region";
	case GATE_K_THROUGHPUT: return "throughput";
	case GATE_K_HOST: return "host";
	case GATE_K_MEMORY: return "memory";
	}
	return "metric";
}

/* A breakdown part for people (summary_parts): its key, bare or as a metric
 * ("breakdown.exposed_comm_share"), or its name; an unknown name is shown
 * escaped. */
static void part_name(struct pg_buf *b, const char *name)
{
	static const char *const suffixes[] = {"_us_per_step", "_share", "_us"};
	const struct sum_breakdown_part *p;
	const char *s = name ? name : "";
	size_t n;

	if (strncmp(s, "breakdown.", 10) == 0)
		s += 10;
	n = strlen(s);
	for (size_t i = 0; i < PG_ARRAY_LEN(suffixes); i++) {
		if (ends_with(s, suffixes[i])) {
			n -= strlen(suffixes[i]);
			break;
		}
	}
	if ((p = summary_part_named(s, n)))
		pg_buf_adds(b, p->name);
	else
		report_text(b, name ? name : "", NAME_MAX_BYTES);
}

/* A metric's subject: the family or op it is about, else its name. */
static const char *subject_name(const struct gate_metric_result *m)
{
	if ((m->kind == GATE_K_FAMILY || m->kind == GATE_K_OP) && m->subject && *m->subject)
		return m->subject;
	return m->name;
}

/* A metric's subject as people read it, cut as c says: families as text,
 * anything else as code. */
static void subject(struct pg_buf *b, const struct gate_metric_result *m,
		    const struct report_cut *c)
{
	if (m->kind == GATE_K_FAMILY)
		report_text_cut(b, subject_name(m), c);
	else
		report_code_cut(b, subject_name(m), c);
}

/* The cuts of n names, cut together so that they read apart
 * (report_cut_names). The caller frees the result. */
static struct report_cut *cuts_of(const char *const *names, uint32_t n, size_t max)
{
	struct report_cut *cuts = pg_xmalloc((n + 1) * sizeof(*cuts));
	report_cut_names(names, n, max, cuts);
	return cuts;
}

/* The most severe first, for reading order only. */
static int display_rank(enum gate_verdict v)
{
	switch (v) {
	case GATE_INCOMPARABLE: return 0;
	case GATE_FAIL: return 1;
	case GATE_WARN: return 2;
	case GATE_INCONCLUSIVE: return 3;
	case GATE_IMPROVED: return 4;
	case GATE_NEW: return 5;
	case GATE_GONE: return 6;
	case GATE_UNRECORDED: return 7;
	case GATE_PASS: return 8;
	case GATE_RECORDED: return 9;
	case GATE_IGNORE: return 10;
	}
	return 11;
}

static double baseline_step_us(const struct gate_result *r)
{
	if (r->has_step)
		return r->step_baseline_us;
	if (r->baseline && r->baseline->steady.count)
		return r->baseline->steady.median_us;
	return 0;
}

/* ---- title, headline, attribution ---- */

static const struct gate_metric_result *step_metric(const struct gate_result *r)
{
	const struct gate_metric_result *first = NULL;
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		const struct gate_metric_result *m = &r->metrics[i];
		if (m->kind != GATE_K_STEP)
			continue;
		if (m->name && strcmp(m->name, "step.median_us") == 0)
			return m;
		if (!first && m->note)
			first = m;
	}
	return first;
}

static void title(const struct gate_result *r, struct pg_buf *b)
{
	pg_buf_adds(b, "## profgate: ");
	upper(b, verdict_name(r->verdict));
	if (r->in.label && *r->in.label) {
		pg_buf_adds(b, " — ");
		report_text(b, r->in.label, 100);
	}
	pg_buf_adds(b, "\n\n");
}

static void refused(const struct gate_result *r, struct pg_buf *b)
{
	pg_buf_adds(b, "**Refused: the runs are not comparable.** ");
	if (r->provenance && strcmp(r->provenance, "identical-inputs") == 0) {
		pg_buf_adds(b, "The baseline and candidate inputs are byte-identical");
		if (r->n_diff && r->diff[0].field && r->diff[0].baseline) {
			/* the gate says what matched: the input files or the profiles inside */
			pg_buf_adds(b, " (");
			report_text(b, r->diff[0].field, 40);
			pg_buf_adds(b, " ");
			report_code(b, r->diff[0].baseline, 12);
			pg_buf_adds(b, ")");
		} else if (r->in.baseline_sha256) {
			pg_buf_adds(b, " (sha256 ");
			report_code(b, r->in.baseline_sha256, 12);
			pg_buf_adds(b, ")");
		}
		pg_buf_adds(b, ": a run compared with itself proves nothing.\n\n");
		return;
	}
	if (r->n_diff) {
		pg_buf_addf(b, "%u identity field%s differ%s: ", r->n_diff,
			    r->n_diff == 1 ? "" : "s", r->n_diff == 1 ? "s" : "");
		uint32_t n = r->n_diff < 4 ? r->n_diff : 4;
		for (uint32_t i = 0; i < n; i++) {
			const struct gate_field_diff *d = &r->diff[i];
			pg_buf_adds(b, i ? ", " : "");
			report_code(b, d->field, 40);
			pg_buf_adds(b, " (");
			report_code(b, d->baseline, 60);
			pg_buf_adds(b, " vs ");
			report_code(b, d->candidate, 60);
			pg_buf_adds(b, ")");
		}
		if (n < r->n_diff)
			pg_buf_addf(b, " and %u more", r->n_diff - n);
		pg_buf_adds(b, ". See Provenance below.\n\n");
		return;
	}
	pg_buf_adds(b, "Provenance: ");
	report_code(b, r->provenance ? r->provenance : "unknown", 40);
	pg_buf_adds(b, ".\n\n");
}

/* "Steady median step: A → B (", the opening of both step lines. */
static void step_change(struct pg_buf *b, double baseline_us, double candidate_us)
{
	pg_buf_adds(b, "Steady median step: ");
	report_time(b, baseline_us);
	pg_buf_adds(b, " → ");
	report_time(b, candidate_us);
	pg_buf_adds(b, " (");
}

/* What the step's test said: ", p = …" when it ran, the runs, ", N vs M
 * steps" when there were samples, and where its noise came from. */
static void step_test(const struct gate_result *r, struct pg_buf *b)
{
	const struct gate_metric_result *m = step_metric(r);

	if (r->step_tested) {
		pg_buf_adds(b, ", ");
		pvalue(b, r->step_p_value);
	}
	if (r->baseline_runs || r->candidate_runs)
		pg_buf_addf(b, ", %u vs %u run%s", r->baseline_runs, r->candidate_runs,
			    r->candidate_runs == 1 ? "" : "s");
	if (r->step_n_baseline || r->step_n_candidate)
		pg_buf_addf(b, ", %u vs %u %s", r->step_n_baseline, r->step_n_candidate,
			    r->step_samples ? r->step_samples : "steps");
	if (r->step_tested && m && m->noise_from)
		pg_buf_addf(b, "; noise from %s",
			    strcmp(m->noise_from, "prior") == 0	    ? "the thresholds' prior"
			    : strcmp(m->noise_from, "history") == 0 ? "the history records"
								    : "the spread between runs");
}

static void step_line(const struct gate_result *r, struct pg_buf *b)
{
	step_change(b, r->step_baseline_us, r->step_candidate_us);
	report_signed_time(b, r->step_delta_us);
	pg_buf_adds(b, ", ");
	report_signed_fixed(b, 100 * r->step_delta_share, 1, "%");
	if (r->has_interval) {
		if (r->confidence > 0 && r->confidence < 1)
			pg_buf_addf(b, ", %g%% interval ", 100 * r->confidence);
		else
			pg_buf_adds(b, ", interval ");
		report_signed_fixed(b, 100 * r->interval_lo_share, 1, "%");
		pg_buf_adds(b, " to ");
		report_signed_fixed(b, 100 * r->interval_hi_share, 1, "%");
	}
	step_test(r, b);
	pg_buf_adds(b, ").");
	if (r->noisy) {
		pg_buf_addf(b, " **Too noisy to judge**: the runs spread %.1f%% between them",
			    100 * r->noisy_between_share);
		if (isfinite(r->noisy_within_share))
			pg_buf_addf(b, " and %.1f%% inside a run", 100 * r->noisy_within_share);
		pg_buf_adds(b, " (robust sd); ");
		report_text(b, r->noisy_advice, TEXT_MAX_BYTES);
		pg_buf_adds(b, ".");
	}
	/* the gate's reason when it did not judge the step as the numbers suggest */
	const struct gate_metric_result *m = step_metric(r);
	if (m && m->note && *m->note) {
		pg_buf_addf(b, " Step time verdict: %s (", verdict_name(m->verdict));
		report_text(b, m->note, TEXT_MAX_BYTES);
		pg_buf_adds(b, ").");
	}
	pg_buf_adds(b, "\n\n");
}

static void no_step_line(const struct gate_result *r, struct pg_buf *b)
{
	const struct gate_metric_result *m = step_metric(r);

	pg_buf_adds(b, "**The step time could not be compared**: ");
	if (m && m->note && *m->note) {
		report_text(b, m->note, TEXT_MAX_BYTES);
	} else if (r->baseline && r->candidate &&
		   (!r->baseline->steady.count || !r->candidate->steady.count)) {
		pg_buf_addf(b, "steady steps: %u in the baseline, %u in the candidate",
			    r->baseline->steady.count, r->candidate->steady.count);
	} else {
		pg_buf_adds(b, "the gate gave no reason");
	}
	if (m && (m->n_baseline || m->n_candidate))
		pg_buf_addf(b, ", %u vs %u %s", m->n_baseline, m->n_candidate,
			    m->samples ? m->samples : "steps");
	pg_buf_adds(b, ".");
	if (m && m->has_baseline && m->has_candidate) {
		pg_buf_addc(b, ' ');
		step_change(b, m->baseline, m->candidate);
		report_signed_fixed(b, 100 * m->delta_share, 1, "%");
		pg_buf_adds(b, "), not judged.");
	}
	pg_buf_adds(b, "\n\n");
}

static void counts(const struct gate_result *r, struct pg_buf *b)
{
	static const enum gate_verdict order[] = {GATE_FAIL,	   GATE_WARN, GATE_INCONCLUSIVE,
						  GATE_IMPROVED,   GATE_NEW,  GATE_GONE,
						  GATE_UNRECORDED, GATE_PASS};
	uint32_t n[PG_ARRAY_LEN(order)] = {0};
	int any = 0;

	for (uint32_t i = 0; i < r->n_metrics; i++)
		for (size_t k = 0; k < PG_ARRAY_LEN(order); k++)
			if (r->metrics[i].verdict == order[k])
				n[k]++;
	for (size_t k = 0; k < PG_ARRAY_LEN(order); k++) {
		if (!n[k])
			continue;
		pg_buf_addf(b, "%s%u %s", any ? ", " : "Verdicts: ", n[k], verdict_name(order[k]));
		any = 1;
	}
	if (!any)
		return;
	if (r->n_below_floor)
		pg_buf_addf(b, "; %u under the floor on both sides, not judged", r->n_below_floor);
	pg_buf_adds(b, ".\n\n");
}

/* The names an attribution line shows: the ops listed, and the first
 * DETAIL_OPS ops of each family's detail (gate_attribution.detail, names
 * separated by GATE_DETAIL_SEP), each a string of its own. */
struct line_names {
	char **detail; /* every detail name shown, in line order */
	uint32_t n_detail, cap_detail;
	const char **ops; /* the ops listed, in line order */
	uint32_t n_ops;
	struct report_cut *detail_cuts, *op_cuts;
};

/* Split one detail into its names (ln NULL: only count them); returns how
 * many it holds in all. */
static uint32_t detail_split(struct line_names *ln, const char *detail)
{
	uint32_t n = 0;

	for (const char *p = detail; p && *p;) {
		const char *e = strchr(p, GATE_DETAIL_SEP);
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len) {
			if (ln && n < DETAIL_OPS) {
				if (ln->n_detail == ln->cap_detail) {
					ln->cap_detail = ln->cap_detail ? 2 * ln->cap_detail : 8;
					ln->detail = pg_xrealloc(
					    ln->detail, ln->cap_detail * sizeof(*ln->detail));
				}
				ln->detail[ln->n_detail++] = pg_xstrndup(p, len);
			}
			n++;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return n;
}

static void line_names_release(struct line_names *ln)
{
	for (uint32_t i = 0; i < ln->n_detail; i++)
		free(ln->detail[i]);
	free(ln->detail);
	free(ln->ops);
	free(ln->detail_cuts);
	free(ln->op_cuts);
}

/* A family's detail ops from *next on, each as code; their count in all. */
static void detail_ops(struct pg_buf *b, struct line_names *ln, uint32_t *next, uint32_t total)
{
	uint32_t shown = total < DETAIL_OPS ? total : DETAIL_OPS;

	for (uint32_t k = 0; k < shown; k++, (*next)++) {
		pg_buf_adds(b, k ? ", " : "");
		report_code_cut(b, ln->detail[*next], &ln->detail_cuts[*next]);
	}
	if (total > DETAIL_OPS)
		pg_buf_addf(b, ", %u more", total - DETAIL_OPS);
}

/* Whether attribution entry i may be on the line: an op whose family the line
 * names is inside that family's time (gate_attribution_nested), and listing it
 * again would read as double counting. */
static int attr_listed(const struct gate_result *r, uint32_t i)
{
	return !gate_attribution_nested(r, i);
}

/* The op names the line shows, gathered first so that they are cut together. */
static void line_names_of(const struct gate_result *r, struct line_names *ln)
{
	uint32_t shown = 0;

	memset(ln, 0, sizeof(*ln));
	ln->ops = pg_xmalloc((r->n_attribution + 1) * sizeof(*ln->ops));
	for (uint32_t i = 0; i < r->n_attribution && shown < ATTR_SHOWN; i++) {
		const struct gate_attribution *a = &r->attribution[i];
		if (!attr_listed(r, i))
			continue;
		if (a->kind == GATE_ATTR_OP)
			ln->ops[ln->n_ops++] = a->name;
		detail_split(ln, a->detail);
		shown++;
	}
	ln->op_cuts = cuts_of(ln->ops, ln->n_ops, NAME_MAX_BYTES);
	ln->detail_cuts = cuts_of((const char *const *)ln->detail, ln->n_detail, 60);
}

/* The parts listed are those beyond their own noise (gate_result.attribution_z);
 * the remainder is the step change they leave unexplained. */
static void attribution(const struct gate_result *r, struct pg_buf *b)
{
	uint32_t shown = 0, left = 0, next_op = 0, next_detail = 0;
	struct line_names ln;
	double rest = r->attribution_remainder_us; /* with the parts listed but not shown */

	if (!r->has_step)
		return;
	line_names_of(r, &ln);
	pg_buf_adds(b, "Where the time went: ");
	report_signed_time(b, r->step_delta_us);
	pg_buf_adds(b, " per step: ");
	for (uint32_t i = 0; i < r->n_attribution; i++) {
		const struct gate_attribution *a = &r->attribution[i];
		if (!attr_listed(r, i))
			continue;
		if (shown >= ATTR_SHOWN) {
			left++;
			rest += a->delta_us_per_step;
			continue;
		}
		pg_buf_adds(b, shown ? ", " : "");
		report_signed_time(b, a->delta_us_per_step);
		pg_buf_adds(b, " ");
		switch (a->kind) {
		case GATE_ATTR_FAMILY: report_text(b, a->name, NAME_MAX_BYTES); break;
		case GATE_ATTR_OP:
			report_code_cut(b, a->name, &ln.op_cuts[next_op]);
			next_op++;
			break;
		case GATE_ATTR_BREAKDOWN: part_name(b, a->name); break;
		}
		pg_buf_addf(b, " (z %.1f", a->z);
		uint32_t total = detail_split(NULL, a->detail);
		if (total) {
			pg_buf_adds(b, "; ");
			detail_ops(b, &ln, &next_detail, total);
		}
		pg_buf_adds(b, ")");
		shown++;
	}
	line_names_release(&ln);
	if (!shown) {
		pg_buf_adds(b, "no part changed beyond noise.\n\n");
		return;
	}
	if (left) {
		pg_buf_addf(b, "; %u more not shown, with the other parts: ", left);
		report_signed_time(b, rest);
		pg_buf_adds(b, " together (listed: ");
	} else {
		pg_buf_adds(b, "; the other parts: ");
		report_signed_time(b, rest);
		pg_buf_adds(b, " together, none beyond its noise (listed: ");
	}
	if (r->attribution_z_against != r->attribution_z)
		pg_buf_addf(b, "z of at least %.2f toward the step's change, %.2f against it",
			    r->attribution_z, r->attribution_z_against);
	else
		pg_buf_addf(b, "|z| of at least %.2f", r->attribution_z);
	pg_buf_adds(b, ", or a rule's warn or fail).\n\n");
}

/* ---- the metric table ---- */

static void limit_cell(struct pg_buf *b, const struct gate_metric_result *m, enum report_unit u)
{
	const struct gate_rule *rule = m->rule;
	int warn = rule && (rule->warn.has_relative || rule->warn.has_absolute);
	int fail = rule && (rule->fail.has_relative || rule->fail.has_absolute);

	if (!rule || rule->direction == GATE_INFO || (!warn && !fail)) {
		pg_buf_adds(b, rule && rule->direction == GATE_INFO ? "— (info)" : "—");
		return;
	}
	if (warn) {
		pg_buf_adds(b, "warn ");
		report_limit(b, &rule->warn, rule->direction, u);
	}
	if (fail) {
		pg_buf_adds(b, warn ? ", fail " : "fail ");
		report_limit(b, &rule->fail, rule->direction, u);
	}
}

static void change_cell(struct pg_buf *b, const struct gate_metric_result *m)
{
	report_metric_change(b, m);
}

static void verdict_cell(struct pg_buf *b, const struct gate_metric_result *m)
{
	const char *note = m->note && *m->note ? m->note : NULL;
	int p = m->tested && !(note && (strstr(note, "p =") || strstr(note, "p <")));
	int strong = m->verdict == GATE_FAIL || m->verdict == GATE_WARN;

	pg_buf_addf(b, strong ? "**%s**" : "%s", verdict_name(m->verdict));
	if (!note && !p)
		return;
	pg_buf_adds(b, " (");
	if (note)
		report_text(b, note, 160);
	if (p) {
		pg_buf_adds(b, note ? ", " : "");
		pvalue(b, m->p_value);
	}
	pg_buf_adds(b, ")");
}

static void metric_row(struct pg_buf *b, const struct gate_metric_result *m,
		       const struct report_cut *c)
{
	enum report_unit u = report_metric_unit(m->name);

	pg_buf_adds(b, "| ");
	report_code_cut(b, m->name, c);
	pg_buf_adds(b, " | ");
	if (m->has_baseline)
		report_value(b, u, m->baseline);
	else
		pg_buf_adds(b, "—");
	pg_buf_adds(b, " | ");
	if (m->has_candidate)
		report_value(b, u, m->candidate);
	else
		pg_buf_adds(b, "—");
	pg_buf_adds(b, " | ");
	change_cell(b, m);
	pg_buf_adds(b, " | ");
	limit_cell(b, m, u);
	pg_buf_adds(b, " | ");
	verdict_cell(b, m);
	pg_buf_adds(b, " |\n");
}

struct row {
	const struct gate_metric_result *m;
	uint32_t index;
	double key;
};

/* Within one verdict, the headline metrics before the parts that explain them. */
static int kind_rank(enum gate_kind k)
{
	switch (k) {
	case GATE_K_STEP: return 0;
	case GATE_K_BREAKDOWN: return 1;
	case GATE_K_THROUGHPUT:
	case GATE_K_MEMORY: return 2;
	case GATE_K_FAMILY: return 3;
	case GATE_K_COLLECTIVE: return 4;
	case GATE_K_OP: return 5;
	case GATE_K_REGION: return 6;
	case GATE_K_HOST: return 7;
	}
	return 8;
}

static int by_rank(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int ra = display_rank(a->m->verdict), rb = display_rank(b->m->verdict);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	ra = kind_rank(a->m->kind);
	rb = kind_rank(b->m->kind);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Larger key first, then catalogue order. */
static int by_key(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key > b->key ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

static int headline_kind(const struct gate_metric_result *m)
{
	return m->kind == GATE_K_STEP || m->kind == GATE_K_BREAKDOWN;
}

static void metrics(const struct gate_result *r, struct pg_buf *b)
{
	struct row *rows = pg_xmalloc((r->n_metrics + 1) * sizeof(*rows));
	uint32_t n = 0, n_pass_hidden = 0;

	pg_buf_adds(b, "### Metrics\n\n");
	counts(r, b);
	/* every metric not passing, most severe first, then the step and breakdown passes */
	for (uint32_t i = 0; i < r->n_metrics; i++)
		if (r->metrics[i].verdict != GATE_PASS)
			rows[n++] = (struct row){&r->metrics[i], i, 0};
	qsort(rows, n, sizeof(*rows), by_rank);
	uint32_t first_pass = n;
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		if (r->metrics[i].verdict != GATE_PASS)
			continue;
		if (headline_kind(&r->metrics[i]))
			rows[n++] = (struct row){&r->metrics[i], i, 0};
		else
			n_pass_hidden++;
	}
	qsort(rows + first_pass, n - first_pass, sizeof(*rows), by_rank);
	if (!n) {
		pg_buf_adds(b, r->n_metrics ? "Every metric passed.\n\n"
					    : "No metrics were compared.\n\n");
		free(rows);
		return;
	}
	/* past the cap, drop the least severe rows that are not step or breakdown metrics */
	uint32_t cut[GATE_IGNORE + 1] = {0}, n_cut = 0, keep = n;
	for (uint32_t i = n; i-- > 0 && keep > TABLE_ROWS;) {
		if (headline_kind(rows[i].m))
			continue;
		cut[rows[i].m->verdict <= GATE_IGNORE ? rows[i].m->verdict : GATE_IGNORE]++;
		rows[i].m = NULL;
		n_cut++;
		keep--;
	}
	pg_buf_adds(b, "| metric | baseline | candidate | change | limit | verdict |\n"
		       "|---|---:|---:|---:|---|---|\n");
	const char **names = pg_xmalloc((keep + 1) * sizeof(*names));
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (rows[i].m)
			names[k++] = rows[i].m->name;
	struct report_cut *cuts = cuts_of(names, k, NAME_MAX_BYTES + 30);
	k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (rows[i].m)
			metric_row(b, rows[i].m, &cuts[k++]);
	pg_buf_adds(b, "\n");
	free(names);
	free(cuts);
	if (n_cut) {
		pg_buf_addf(b, "%u more not shown (", n_cut);
		int any = 0;
		for (int v = GATE_PASS; v <= GATE_IGNORE; v++) {
			if (!cut[v])
				continue;
			pg_buf_addf(b, "%s%u %s", any ? ", " : "", cut[v],
				    verdict_name((enum gate_verdict)v));
			any = 1;
		}
		pg_buf_adds(b, n_pass_hidden ? "); " : ").\n\n");
	}
	if (n_pass_hidden)
		pg_buf_addf(b, "%u more metric%s passed.\n\n", n_pass_hidden,
			    n_pass_hidden == 1 ? "" : "s");
	free(rows);
}

/* ---- breakdown, top movers, new and gone ---- */

static void breakdown(const struct gate_result *r, struct pg_buf *b)
{
	double tb = 0, tc = 0;

	for (int i = 0; i < SUM_N_PARTS; i++) {
		tb += r->bd_baseline_us[i];
		tc += r->bd_candidate_us[i];
	}
	if (!(tb > 0) && !(tc > 0))
		return;
	pg_buf_adds(b, "### Breakdown per step (mean over the devices with steady work)\n\n"
		       "| part | baseline | candidate | change | share of step |\n"
		       "|---|---:|---:|---:|---:|\n");
	for (int i = 0; i < SUM_N_PARTS; i++) {
		double x = r->bd_baseline_us[i], y = r->bd_candidate_us[i];
		pg_buf_adds(b, "| ");
		pg_buf_adds(b, summary_parts[i].name);
		pg_buf_adds(b, " | ");
		report_time(b, x);
		pg_buf_adds(b, " | ");
		report_time(b, y);
		pg_buf_adds(b, " | ");
		report_signed_time(b, y - x);
		pg_buf_addf(b, " | %.1f%% → %.1f%% |\n", tb > 0 ? 100 * x / tb : 0,
			    tc > 0 ? 100 * y / tc : 0);
	}
	pg_buf_adds(b, "| total | ");
	report_time(b, tb);
	pg_buf_adds(b, " | ");
	report_time(b, tc);
	pg_buf_adds(b, " | ");
	report_signed_time(b, tc - tb);
	pg_buf_adds(b, " | |\n\n");
}

static void mover_row(struct pg_buf *b, const struct gate_metric_result *m,
		      const struct report_cut *c)
{
	pg_buf_addf(b, "| %s | ", kind_name(m->kind));
	subject(b, m, c);
	pg_buf_adds(b, " | ");
	report_time(b, m->baseline);
	pg_buf_adds(b, " | ");
	report_time(b, m->candidate);
	pg_buf_adds(b, " | ");
	change_cell(b, m);
	pg_buf_adds(b, " | ");
	verdict_cell(b, m);
	pg_buf_adds(b, " |\n");
}

/* The cuts of the subjects of rows[0, n), cut together. The caller frees the
 * result. */
static struct report_cut *subject_cuts(const struct row *rows, uint32_t n)
{
	const char **names = pg_xmalloc((n + 1) * sizeof(*names));
	for (uint32_t i = 0; i < n; i++)
		names[i] = subject_name(rows[i].m);
	struct report_cut *cuts = cuts_of(names, n, NAME_MAX_BYTES);
	free(names);
	return cuts;
}

/* Families, then ops, that moved most in one direction (sign +1: grew). */
static void top(const struct gate_result *r, struct pg_buf *b, int sign, const char *heading)
{
	static const enum gate_kind kinds[] = {GATE_K_FAMILY, GATE_K_OP};
	struct row *rows = pg_xmalloc((r->n_metrics + 1) * sizeof(*rows));
	double min_move = fmax(0.05, TOP_CUT * fabs(baseline_step_us(r)));
	int header = 0;

	for (size_t k = 0; k < PG_ARRAY_LEN(kinds); k++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < r->n_metrics; i++) {
			const struct gate_metric_result *m = &r->metrics[i];
			if (m->kind != kinds[k] || !m->has_baseline || !m->has_candidate ||
			    m->verdict == GATE_NEW || m->verdict == GATE_GONE ||
			    report_metric_unit(m->name) != REPORT_U_TIME ||
			    !(sign * m->delta >= min_move))
				continue;
			rows[n++] = (struct row){m, i, sign * m->delta};
		}
		qsort(rows, n, sizeof(*rows), by_key);
		n = n < TOP_SHOWN ? n : TOP_SHOWN;
		struct report_cut *cuts = subject_cuts(rows, n);
		for (uint32_t i = 0; i < n; i++) {
			if (!header) {
				pg_buf_addf(
				    b,
				    "### %s\n\n| kind | name | baseline | candidate | change "
				    "| verdict |\n|---|---|---:|---:|---:|---|\n",
				    heading);
				header = 1;
			}
			mover_row(b, rows[i].m, &cuts[i]);
		}
		free(cuts);
	}
	if (header)
		pg_buf_adds(b, "\n");
	free(rows);
}

static void new_gone(const struct gate_result *r, struct pg_buf *b)
{
	static const enum gate_verdict sides[] = {GATE_NEW, GATE_GONE};
	struct row *rows = pg_xmalloc((r->n_metrics + 1) * sizeof(*rows));
	uint32_t n = 0, start[PG_ARRAY_LEN(sides) + 1], total[PG_ARRAY_LEN(sides)];

	/* the rows shown of each side, then their names cut together: a kernel
	 * gone and the one that replaced it often differ only deep inside */
	for (size_t k = 0; k < PG_ARRAY_LEN(sides); k++) {
		start[k] = n;
		for (uint32_t i = 0; i < r->n_metrics; i++) {
			const struct gate_metric_result *m = &r->metrics[i];
			if (m->verdict != sides[k])
				continue;
			double v = m->has_candidate ? m->candidate : m->baseline;
			rows[n++] = (struct row){
			    m, i, report_metric_unit(m->name) == REPORT_U_TIME ? fabs(v) : -1};
		}
		qsort(rows + start[k], n - start[k], sizeof(*rows), by_key);
		total[k] = n - start[k];
		n = start[k] + (total[k] < NEW_GONE_SHOWN ? total[k] : NEW_GONE_SHOWN);
	}
	start[PG_ARRAY_LEN(sides)] = n;
	if (!n) {
		free(rows);
		return;
	}
	struct report_cut *cuts = subject_cuts(rows, n);
	pg_buf_adds(b, "### New and gone\n\n| | kind | name | per step | share of step |\n"
		       "|---|---|---|---:|---:|\n");
	for (size_t k = 0; k < PG_ARRAY_LEN(sides); k++) {
		for (uint32_t i = start[k]; i < start[k + 1]; i++) {
			const struct gate_metric_result *m = rows[i].m;
			pg_buf_addf(b, "| %s | %s | ", verdict_name(m->verdict),
				    kind_name(m->kind));
			subject(b, m, &cuts[i]);
			pg_buf_adds(b, " | ");
			if (m->has_candidate || m->has_baseline)
				report_value(b, report_metric_unit(m->name),
					     m->has_candidate ? m->candidate : m->baseline);
			else
				pg_buf_adds(b, "—");
			if (m->step_share >= 0)
				pg_buf_addf(b, " | %.1f%% |\n", 100 * m->step_share);
			else
				pg_buf_adds(b, " | — |\n");
		}
		if (total[k] > NEW_GONE_SHOWN)
			pg_buf_addf(b, "| %s | | %u more | | |\n", verdict_name(sides[k]),
				    total[k] - NEW_GONE_SHOWN);
	}
	pg_buf_adds(b, "\n");
	free(cuts);
	free(rows);
}

/* ---- provenance and quality ---- */

static void run_context(struct pg_buf *b, const char *side, const char *path, const char *sha,
			const struct summary *s)
{
	pg_buf_addf(b, "- %s: ", side);
	report_code(b, path ? path : "unknown", 120);
	if (sha) {
		pg_buf_adds(b, ", sha256 ");
		report_code(b, sha, 12);
	}
	if (s) {
		pg_buf_addf(b, "; %u steady step%s of %u captured, ", s->steady.count,
			    s->steady.count == 1 ? "" : "s", s->steps_captured);
		if (report_host_profile(s))
			pg_buf_adds(b, "a host profile (CPU)");
		else
			pg_buf_addf(b, "%u device%s", s->device_count,
				    s->device_count == 1 ? "" : "s");
		if (s->device_kind && !report_host_profile(s)) {
			pg_buf_adds(b, " (");
			report_text(b, s->device_kind, 60);
			pg_buf_adds(b, ")");
		}
		if (s->framework) {
			pg_buf_adds(b, ", ");
			report_text(b, s->framework, 40);
			if (s->framework_version) {
				pg_buf_adds(b, " ");
				report_text(b, s->framework_version, 40);
			}
		}
	}
	pg_buf_adds(b, "\n");
}

/* The run a side of several shows (its representative), else NULL. */
static const struct gate_run *shown_run(const struct gate_result *r, int k)
{
	for (uint32_t i = 0; r->n_runs[k] > 1 && i < r->n_runs[k]; i++)
		if (r->runs[k][i].shown)
			return &r->runs[k][i];
	return NULL;
}

static const char *side_path(const struct gate_result *r, int k, const char *given)
{
	return shown_run(r, k) ? shown_run(r, k)->path : given;
}

static const char *side_sha(const struct gate_result *r, int k, const char *given)
{
	return shown_run(r, k) ? shown_run(r, k)->sha256 : given;
}

/* Every run of a side of several, one sub-item each: its file and digests,
 * its profiles, its step, and whether it was set aside as disturbed. */
static void run_list(struct pg_buf *b, const struct gate_result *r, int k)
{
	if (r->n_runs[k] < 2)
		return;
	for (uint32_t i = 0; i < r->n_runs[k]; i++) {
		const struct gate_run *x = &r->runs[k][i];
		pg_buf_addf(b, "  - run %u: ", i + 1);
		if (x->path)
			report_code(b, x->path, 120);
		else
			pg_buf_addf(b, "history record %u of the window", i + 1);
		if (x->sha256) {
			pg_buf_adds(b, ", sha256 ");
			report_code(b, x->sha256, 12);
		}
		if (x->summary_sha256[0]) {
			pg_buf_adds(b, ", summary sha256 ");
			report_code(b, x->summary_sha256, 12);
		}
		for (uint32_t f = 0; f < x->n_profiles && f < 4; f++) {
			pg_buf_adds(b, f ? ", " : "; profiles ");
			report_code(b, x->profile_path[f] ? x->profile_path[f] : "unknown", 80);
			if (x->profile_sha256[f]) {
				pg_buf_adds(b, " (sha256 ");
				report_code(b, x->profile_sha256[f], 12);
				pg_buf_adds(b, ")");
			}
		}
		if (x->n_profiles > 4)
			pg_buf_addf(b, " and %u more", x->n_profiles - 4);
		if (isfinite(x->step_median_us)) {
			pg_buf_adds(b, "; median step ");
			report_time(b, x->step_median_us);
		}
		if (isfinite(x->slowed_share))
			pg_buf_addf(b,
				    "; **slowed from outside** by %.0f%%: judged at its ops' speed",
				    100 * x->slowed_share);
		if (x->set_aside) {
			pg_buf_adds(b, "; **set aside**: ");
			report_text(b, x->why, TEXT_MAX_BYTES);
		}
		pg_buf_adds(b, x->shown ? " (the run shown)\n" : "\n");
	}
}

static void provenance(const struct gate_result *r, struct pg_buf *b)
{
	const struct gate_thresholds *th = r->thresholds;

	pg_buf_adds(b, "### Provenance\n\n");
	if (r->provenance && strcmp(r->provenance, "identical-inputs") == 0)
		pg_buf_adds(b, "The two inputs are byte-identical.\n\n");
	if (r->n_diff) {
		pg_buf_adds(b, "| field | baseline | candidate |\n|---|---|---|\n");
		for (uint32_t i = 0; i < r->n_diff; i++) {
			pg_buf_adds(b, "| ");
			report_code(b, r->diff[i].field, 40);
			pg_buf_adds(b, " | ");
			report_code(b, r->diff[i].baseline, NAME_MAX_BYTES);
			pg_buf_adds(b, " | ");
			report_code(b, r->diff[i].candidate, NAME_MAX_BYTES);
			pg_buf_adds(b, " |\n");
		}
		pg_buf_adds(b, "\n");
		/* the gate's one-line reason: both models and the workload evidence */
		if (r->refusal) {
			pg_buf_adds(b, "Why: ");
			report_text(b, r->refusal, 2000);
			pg_buf_adds(b, "\n\n");
		}
	} else if (r->verdict != GATE_INCOMPARABLE && th) {
		if (th->n_identity) {
			pg_buf_adds(b, "Identity matched on ");
			for (uint32_t i = 0; i < th->n_identity; i++) {
				pg_buf_adds(b, i ? ", " : "");
				report_code(b, th->identity[i], 40);
			}
			pg_buf_adds(b, ".\n\n");
		} else {
			pg_buf_adds(
			    b, "No identity fields were checked: the thresholds name none.\n\n");
		}
	}
	run_context(b, "baseline", side_path(r, 0, r->in.baseline_path),
		    side_sha(r, 0, r->in.baseline_sha256), r->baseline);
	run_list(b, r, 0);
	run_context(b, "candidate", side_path(r, 1, r->in.candidate_path),
		    side_sha(r, 1, r->in.candidate_sha256), r->candidate);
	run_list(b, r, 1);
	pg_buf_adds(b, "- thresholds: ");
	if (th && th->name) {
		report_code(b, th->name, 60);
		pg_buf_adds(b, " from ");
	}
	report_text(b, r->in.thresholds_origin ? r->in.thresholds_origin : "unknown", 160);
	pg_buf_adds(b, "\n\n");
}

static void quality(const struct gate_result *r, struct pg_buf *b)
{
	if (!r->n_quality)
		return;
	pg_buf_adds(b, "### Quality warnings\n\n");
	uint32_t n = r->n_quality < QUALITY_SHOWN ? r->n_quality : QUALITY_SHOWN;
	for (uint32_t i = 0; i < n; i++) {
		const struct gate_quality_hit *q = &r->quality[i];
		pg_buf_addf(b, "- %s: ", q->candidate ? "candidate" : "baseline");
		report_code(b, q->code, 40);
		pg_buf_adds(b, ": ");
		report_text(b, q->message, TEXT_MAX_BYTES);
		if (q->action != GATE_IGNORE)
			pg_buf_addf(b, " (action: %s)", verdict_name(q->action));
		pg_buf_adds(b, "\n");
	}
	if (n < r->n_quality)
		pg_buf_addf(b, "- and %u more\n", r->n_quality - n);
	pg_buf_adds(b, "\n");
}

/* No baseline run (an empty history window): what was recorded instead of a
 * verdict, with no metric table, since no value was judged. */
static void recorded(const struct gate_result *r, struct pg_buf *b)
{
	if (r->in.recorded_why) {
		pg_buf_adds(b, "**The window is filling: nothing judged yet.** The baseline ");
		report_code(b, r->in.baseline_path ? r->in.baseline_path : "unknown", 120);
		pg_buf_addf(b,
			    ": %s; this run's %u metric%s are recorded as one more of its "
			    "records, and the runs after it are judged once it holds enough.\n\n",
			    r->in.recorded_why, r->n_metrics, r->n_metrics == 1 ? "" : "s");
	} else {
		pg_buf_adds(b, "**First record of this series: nothing to compare against.** The "
			       "baseline ");
		report_code(b, r->in.baseline_path ? r->in.baseline_path : "unknown", 120);
		pg_buf_addf(b,
			    " holds no record of this series with numbers yet, so nothing was "
			    "judged; this run's %u metric%s are recorded as the reference the next "
			    "runs are gated against.\n\n",
			    r->n_metrics, r->n_metrics == 1 ? "" : "s");
	}
	if (r->candidate && r->candidate->steady.count) {
		pg_buf_adds(b, "Steady median step: ");
		report_time(b, r->candidate->steady.median_us);
		pg_buf_addf(b, " (%u steady step%s).\n\n", r->candidate->steady.count,
			    r->candidate->steady.count == 1 ? "" : "s");
	}
	pg_buf_adds(b, "### Provenance\n\n");
	run_context(b, "candidate", side_path(r, 1, r->in.candidate_path),
		    side_sha(r, 1, r->in.candidate_sha256), r->candidate);
	run_list(b, r, 1);
	pg_buf_adds(b, "\n");
	quality(r, b);
}

void report_compare_md(const struct gate_result *r, struct pg_buf *out)
{
	title(r, out);
	if (r->verdict == GATE_RECORDED) {
		recorded(r, out);
		goto out;
	}
	if (r->verdict == GATE_INCOMPARABLE)
		refused(r, out);
	else if (r->has_step)
		step_line(r, out);
	else
		no_step_line(r, out);
	attribution(r, out);
	metrics(r, out);
	breakdown(r, out);
	top(r, out, 1, "Top regressed");
	top(r, out, -1, "Top improved");
	new_gone(r, out);
	provenance(r, out);
	quality(r, out);
out:
	pg_buf_addf(out, "<sub>profgate %s · %s</sub>\n", r->in.version ? r->in.version : "",
		    GATE_VERDICT_SCHEMA);
}
