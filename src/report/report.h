/*
 * report: markdown for people. Renders what the summary (and, later, the gate)
 * decided; decides nothing. Every string that comes from a profile goes
 * through report_code() or report_text(), so a kernel name cannot mention
 * anyone, open HTML or break a table.
 */
#ifndef PG_REPORT_H
#define PG_REPORT_H

#include "../gate/gate.h"
#include "../summary/summary.h"
#include "../util/util.h"

struct gate_result;
struct history_trend;

/* The one-profile report: read top to bottom. */
void report_summary_md(const struct summary *s, struct pg_buf *out);
/* The comparison report: what the gate decided and where the time went. */
void report_compare_md(const struct gate_result *r, struct pg_buf *out);
/* The trend of a history (trend_md.c): per series the metrics with change
 * points or a nightly flag, and Mermaid xychart-beta charts. */
void report_trend_md(const struct history_trend *t, struct pg_buf *out);

/* How one name of a list is shown within a cell's bytes (names.c): its first
 * head bytes; when len > 0, an ellipsis and the len bytes from from; an
 * ellipsis after whatever part does not reach the name's end. */
struct report_cut {
	size_t head;
	size_t from, len;
};
/* The cuts of the n names of one table or line, at most max bytes of each
 * name shown: a name that fits is whole; a name that reads like another when
 * cut plainly keeps its head and the part where it differs (names.c explains
 * how). Every cut falls on a UTF-8 boundary; cuts[] is the caller's, n long. */
void report_cut_names(const char *const *names, uint32_t n, size_t max, struct report_cut *cuts);
/* A name as report_code() and report_text() write it, cut as c says. */
void report_code_cut(struct pg_buf *b, const char *s, const struct report_cut *c);
void report_text_cut(struct pg_buf *b, const char *s, const struct report_cut *c);

/* A profile string as an inline code span, safe in a table cell: backticks
 * become ', pipes are escaped, control characters become spaces, and the text
 * is cut to max bytes (on a UTF-8 boundary) with an ellipsis: the cut of a
 * one-name list. */
void report_code(struct pg_buf *b, const char *s, size_t max);
/* A profile string as plain markdown text, safe anywhere: markdown and HTML
 * characters escaped, '@' and '#' followed by a zero-width joiner so they
 * never mention or link. */
void report_text(struct pg_buf *b, const char *s, size_t max);
/* A profile string inside a double-quoted Mermaid label (a chart title or
 * axis category): letters, digits, bytes of UTF-8 sequences and
 * " ._-+:/()=,'" are kept, anything else becomes '_', so no quote, '#'
 * entity, '%%' comment, backtick or newline can end the label or the code
 * block; cut to max bytes on a UTF-8 boundary. */
void report_mermaid(struct pg_buf *b, const char *s, size_t max);
/* A profile string as HTML text or a double-quoted attribute value: & < > " '
 * as entities, control characters as spaces, bytes that are not UTF-8 and
 * bidirectional controls as U+FFFD. NULL writes nothing. */
void report_html(struct pg_buf *b, const char *s);
/* A profile string as a double-quoted JavaScript string literal that is also
 * JSON, safe inside a <script> element: quotes and backslashes escaped,
 * control characters, < > & ' and U+2028/U+2029 as \u escapes, bytes that are
 * not UTF-8 and bidirectional controls as \ufffd. NULL writes "". */
void report_js_string(struct pg_buf *b, const char *s);
/* A summary whose steps, ops and families are the host's (basis
 * profgate.host/1, no devices): reports call it a host profile (CPU) rather
 * than count its 0 devices. */
int report_host_profile(const struct summary *s);
/* ---- profgate query's answers (query.c) ---- */

#define REPORT_QUERY_SCHEMA "profgate.query/1"
enum report_query_topic {
	REPORT_Q_OPS,
	REPORT_Q_BREAKDOWN,
	REPORT_Q_GAPS,
	REPORT_Q_REGIONS,
	REPORT_Q_OP,
	REPORT_Q_NEXT,
	REPORT_Q_COUNT
};
/* One question to a summary; strings are the caller's. */
struct report_query {
	enum report_query_topic topic;
	const char *question;	       /* --question's text, or NULL */
	uint32_t top;		       /* ops, collectives, gaps: at most this many (10) */
	const char *family, *category; /* ops: only these */
	const char *before;	       /* gaps: only those before this op (payload or marker) */
	int32_t depth;		       /* regions: down to this depth; -1 all */
	const char *op;		       /* op: the op's name, or a part of only one op's name */
};
void report_query_init(struct report_query *q);
const char *report_query_topic_name(enum report_query_topic t);
/* The topic named name, or -1. */
int report_query_topic_find(const char *name);
/* The answer as JSON (profgate.query/1) or as lines a person reads, appended
 * to out. 0, or PG_EUSAGE with the message set (an op no name or several
 * names match). */
int report_query_json(const struct summary *s, const struct report_query *q, struct pg_buf *out);
int report_query_text(const struct summary *s, const struct report_query *q, struct pg_buf *out);

/* Microseconds for people: "812 us", "3.41 ms", "1.205 s". */
void report_time(struct pg_buf *b, double us);

/* ---- a metric's change (change.c): one unit per kind of metric ---- */
enum report_unit {
	REPORT_U_TIME,
	REPORT_U_SHARE,
	REPORT_U_GBPS,
	REPORT_U_TFLOPS,
	REPORT_U_BYTES,
	REPORT_U_NUMBER
};
/* The unit of a metric from the metric table (summary_metric_unit). */
enum report_unit report_metric_unit(const char *metric);
/* A byte count, decimal: "2.09 GB", "18.3 MB", "512 B". */
void report_bytes(struct pg_buf *b, double v);
/* v with a sign and d decimals and suffix; what rounds to zero prints as +0;
 * "—" when not finite. */
void report_signed_fixed(struct pg_buf *b, double v, int d, const char *suffix);
/* A signed time ("+5.86 ms"); under 0.05 us prints as +0. */
void report_signed_time(struct pg_buf *b, double us);
/* The decimals a change of x (percent when relative, else percentage points)
 * needs so that, as printed, it reaches each limit of rule exactly when the
 * exact change does: 1, or more up to 6. */
int report_change_decimals(const struct gate_rule *rule, double x, int relative);
/* A metric's value in its unit: a time, a share in percent, GB/s, TFLOP/s. */
void report_value(struct pg_buf *b, enum report_unit u, double v);
/* A limit as the thresholds file gives it, signed toward worse: "+25%",
 * "+2 pp", "+25% and +50 us", with every digit the file has. */
void report_limit(struct pg_buf *b, const struct gate_limit *l, enum gate_direction dir,
		  enum report_unit u);
/* A change of metric (delta in its unit, delta_share relative to the
 * baseline, NAN when the baseline is 0): shares in percentage points, the
 * rest relative, with the time beside it when with_time; digits as
 * report_change_decimals says for rule (NULL: one decimal). */
void report_change(struct pg_buf *b, const char *metric, double delta, double delta_share,
		   const struct gate_rule *rule, int with_time);
/* A metric's change: shares in percentage points ("+17.3 pp"), the rest
 * relative to the baseline ("+25.0%", times with "(+5.86 ms)" beside it), the
 * absolute change when the baseline is 0; "—" when a side is absent. */
void report_metric_change(struct pg_buf *b, const struct gate_metric_result *m);

/* The step time of a series' recent records and this run's (recent_md.c). */
struct report_recent {
	const char *label, *series; /* the chart's title: the label, else the series */
	const char *const *time;    /* the records' times, oldest first */
	const double *value;	    /* their step.median_us */
	uint32_t n;
	double candidate;     /* this run's step.median_us; NAN: no chart */
	const char *page_url; /* the series' dashboard page; NULL: no link */
	/* the last change point of the records (history_change_points, as the
	 * trend finds it): the index of its first record, n when none, and the
	 * levels either side */
	uint32_t change_at;
	double change_before, change_after;
};
/* A Mermaid xychart-beta of c (nothing when it has no records or no
 * candidate value), then the link to the page. */
void report_recent_md(const struct report_recent *c, struct pg_buf *out);

/* ---- the dashboard (dashboard.c): a static site of the history's trend ---- */

/* A file compiled into the binary (the Makefile embeds them): the chart
 * library, its licence, the site's script and style. */
struct report_asset {
	const char *name; /* the source file's base name */
	const unsigned char *data;
	size_t len;
};
extern const struct report_asset report_dashboard_assets[];
extern const size_t report_dashboard_n_assets;

/* One file of a site: its path under the site's folder ("s/x.html") and bytes. */
struct report_file {
	char *path;
	struct pg_buf body;
};
struct report_site {
	struct report_file *f;
	uint32_t n;
};

struct report_dashboard_opts {
	const char *branch;	/* the history branch read, shown; NULL: the default */
	const char *server_url; /* links to commits, PRs and runs: "https://github.com" */
};

/*
 * The dashboard of a trend (history_trend_build over every metric): an
 * index.html of its series, and per series a page s/<name>.html whose data
 * (records, every metric's values, change points, nightly runs) is the
 * script data/<name>.js, loaded by that page only; assets/ holds the
 * embedded files. Renders the trend; decides nothing. Deterministic bytes.
 * site is initialised here; report_site_release() it.
 */
void report_dashboard(const struct history_trend *t, const struct report_dashboard_opts *o,
		      struct report_site *site);
void report_site_release(struct report_site *site);
/* The page of a series, relative to the site's root: "s/<name>.html", the
 * name the series itself when it is a safe file name, else a digest of it. */
void report_dashboard_page(const char *series, struct pg_buf *out);
/* 1 when url may prefix the dashboard's links: http(s)://, then letters,
 * digits and -._~:/%, no trailing slash. */
int report_url_ok(const char *url);

#endif
