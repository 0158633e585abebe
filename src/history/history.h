/*
 * history: every gate result as one JSON line (profgate.history/1) in a JSONL
 * store on a git branch: the record format and its tolerant reader
 * (record.c), the git store written through libgit2 (store.c), baselines
 * from a window of records (baseline.c), and trends with their change points
 * and the nightly rule (trend.c, trend_json.c).
 *
 * Branch layout: <series>/<YYYY-MM>.jsonl, one line per record, the month
 * taken from the record's time. Records are appended, never rewritten;
 * `history compact` folds the commits into one root commit with the same
 * records, the old commits kept on an archive branch.
 */
#ifndef PG_HISTORY_H
#define PG_HISTORY_H

#include <stdint.h>

#include "../util/util.h"

#define HISTORY_SCHEMA	       "profgate.history/1"
#define HISTORY_SCHEMA_PREFIX  "profgate.history/"
#define HISTORY_DEFAULT_BRANCH "profgate-history"
/* The blob at the root of a compacted branch naming its open month and
 * series refs (store.c): no series may take its name. */
#define HISTORY_INDEX_NAME "profgate-index"
/* The size limit of a record line (its newline excluded), shared by the
 * writer and the readers: history_append() refuses a longer record and every
 * reader skips a longer line, so nothing a reader would skip is ever
 * reported as appended. Check a length with history_line_check(). */
#define HISTORY_MAX_LINE (4u << 20)

/* ---- the record (record.c) ---- */

/* A JSON scalar kept as its text: identity values are strings, numbers or null. */
enum history_value { HISTORY_NULL, HISTORY_STRING, HISTORY_NUMBER };

struct history_field {
	char *key;
	char *text; /* the string, or the number's JSON text; NULL for null */
	enum history_value type;
};

struct history_metric {
	char *name;
	double value; /* the candidate's value, in the metric's unit */
};

struct history_record {
	char *record_id; /* 32 hex digits */
	char *time;	 /* UTC, "2024-05-01T12:00:00Z" */
	char *series;	 /* "<label slug>-<8 hex>": a directory name on the branch */
	char *label;	 /* gate --label; NULL for none */
	char *kind;	 /* "pr", "main", "nightly", "manual" */
	char *verdict;	 /* the overall verdict */
	int exit_code;	 /* what gate exited with for it */
	/* from GitHub Actions; NULL (pr: -1, run_attempt: -1) when unknown */
	char *repo, *sha, *ref, *run_id;
	int64_t pr, run_attempt;
	struct history_field *identity; /* the candidate's identity fields, verdict order */
	uint32_t n_identity;
	struct history_metric *metrics; /* judged and step metrics, sorted by name */
	uint32_t n_metrics;
	/* what the baseline was: kind "file" with its path and digests, or kind
	 * "history" (gate --baseline history:...) with the window as compact JSON */
	char *baseline_kind, *baseline_path, *baseline_sha256, *baseline_summary_sha256;
	char *baseline_window;
	/* when a side had several runs: every run of each side as the verdict
	 * names them, {"baseline": [...], "candidate": [...]} (the verdict's
	 * run_list), compact JSON; NULL when each side was one run */
	char *runs;
	char *summary_sha256; /* the candidate summary's */
	char *thresholds;     /* the thresholds set's name */
	char *profgate_version;
	char *line; /* the line as read (no newline); NULL for a record built here */
};

/* What the CI environment says about this run (GITHUB_* variables). Every
 * field may be NULL. history_env_from_environ() fills it from getenv(). */
struct history_env {
	const char *repo, *sha, *ref, *run_id, *run_attempt;
	const char *event_name, *event_path;
	const char *time; /* PROFGATE_TIME: a fixed record time, for tests */
};

void history_env_from_environ(struct history_env *e);
void history_record_init(struct history_record *r);
void history_record_release(struct history_record *r);

/* The kind of run from the CI environment: pull_request(_target) -> "pr",
 * schedule -> "nightly", a push to the default branch -> "main", anything
 * else -> "manual". */
const char *history_kind_infer(const struct history_env *e);
/* 1 when kind is one of the four kinds. */
int history_kind_valid(const char *kind);
/* 1 when v is an overall verdict a record may hold (the one list, record.c). */
int history_verdict_valid(const char *v);

struct gate_result;
/*
 * The record of a gate run from its result, with kind and the CI facts of e
 * as below. r is initialised here; release it in every case. Returns 0, or
 * PG_EUSAGE (a bad kind or PROFGATE_TIME) with the message set.
 */
int history_record_from_result(struct history_record *r, const struct gate_result *g,
			       const struct history_env *e, const char *kind) PG_WUR;

/*
 * The record of a gate run from its verdict JSON (profgate.verdict/1, as
 * `gate --json` writes it): the same record history_record_from_result()
 * gives for that result. kind NULL infers it from e. origin names the input
 * in errors. r is initialised here; release it in every case. Returns
 * 0, or PG_EFORMAT with the message set.
 */
int history_record_from_verdict(struct history_record *r, const char *json, size_t len,
				const char *origin, const struct history_env *e,
				const char *kind) PG_WUR;

/*
 * Parse one record line. r is initialised here; release it in every case.
 * Returns 0; PG_EFORMAT for a line that is not a valid record (the message
 * says why); PG_EUNSUPP for a record of another profgate.history version.
 */
int history_record_parse(struct history_record *r, const char *line, size_t len) PG_WUR;

/*
 * Load RECORD.json for `history append`: a record (one line, or pretty) or a
 * verdict JSON turned into a record (kind as above; a record keeps its own).
 * r is initialised here; release it. 0, PG_EFORMAT or PG_EUNSUPP.
 */
int history_record_load(struct history_record *r, const char *text, size_t len, const char *origin,
			const struct history_env *e, const char *kind) PG_WUR;

/* The record as one JSON line, newline included; deterministic bytes. */
void history_record_write(const struct history_record *r, struct pg_buf *out);
/* 0 when a record line of len bytes (newline excluded) is within
 * HISTORY_MAX_LINE; else PG_ELIMIT with the message set ("the record is N
 * bytes, over the limit of 4 MiB ..."). */
int history_line_check(size_t len) PG_WUR;
/* The shard the record belongs in: "<series>/<YYYY-MM>.jsonl". */
void history_record_shard(const struct history_record *r, struct pg_buf *out);

/* "<slug of label>-<8 hex of the identity>" (series.c rules in record.c). */
void history_series_name(const char *label, const struct history_field *identity, uint32_t n,
			 struct pg_buf *out);

/* 0 when the series folder named series cannot hold a record of label: its
 * name is of profgate's form and of another label's slug (a read filtering
 * by label skips it unread); 1 otherwise. */
int history_series_may_hold(const char *series, const char *label);

/* ---- reading shards (record.c) ---- */

struct history_list {
	struct history_record *r;
	uint32_t n, cap;
};

/* Called with "<name>:<line>: <why>; line skipped" for a corrupt line. */
typedef void (*history_warn_fn)(void *payload, const char *msg);

/*
 * Parse a shard's text (name: its path on the branch, for messages) and add
 * its records to list. Corrupt lines are reported through warn and skipped;
 * a record of an unknown profgate.history version stops the read with
 * PG_EUNSUPP and a message naming name:line. Returns 0 or PG_EUNSUPP.
 */
int history_shard_parse(const char *text, size_t len, const char *name, struct history_list *list,
			history_warn_fn warn, void *payload) PG_WUR;
/* 1 when a line of the shard holds a record with this id. */
int history_shard_has(const char *text, size_t len, const char *record_id);
/* Move r into l (r is left initialised, owning nothing). */
void history_list_move(struct history_list *l, struct history_record *r);
void history_list_release(struct history_list *l);

/* ---- the git store (store.c) ---- */

struct history_store_opts {
	const char *remote;    /* a path, a file:// URL or an http(s):// URL */
	const char *branch;    /* NULL: HISTORY_DEFAULT_BRANCH */
	const char *cache_dir; /* NULL: history_cache_dir() */
	const char *token;     /* for http(s): user x-access-token; NULL for none */
	uint32_t max_seconds;  /* the time budget; 0: 60 (PROFGATE_HISTORY_TIMEOUT_S) */
	/* where a record whose push failed is kept, and pending records are
	 * looked for, before the cache's folder (the action's output folder);
	 * NULL: the cache's only */
	const char *pending_dir;
	/* retries and their causes, one line each (no "profgate: " prefix) */
	history_warn_fn log;
	void *payload;
};

/* 0 when branch may name the history branch: letters, digits, '.', '_', '-'
 * and '/', a valid git ref name under refs/heads/, not starting with '-' or
 * 'refs/', not HEAD, at most 200 characters; else PG_EUSAGE with the message
 * set. history_append() and history_read() check it too. */
int history_branch_check(const char *branch) PG_WUR;

/* PROFGATE_CACHE_DIR, else $XDG_CACHE_HOME/profgate, else ~/.cache/profgate,
 * else /tmp/profgate-<uid>. Returns a string to free(). */
char *history_cache_dir(void);

/* What a delivery of pending records did. */
struct history_flush_result {
	uint32_t delivered; /* appended now */
	uint32_t already;   /* already on the branch (a push that landed unreported) */
	uint32_t left;	    /* not delivered (the remote failed): still pending */
	uint32_t bad;	    /* files that are not records: reported, left in place */
};

struct history_append_result {
	int appended; /* 1: committed and pushed; 0: the shard already held the record */
	int own_ref;  /* 1: pushed to its own ref (the branch moved meanwhile), which the
			 next compaction folds into the branch */
	uint32_t attempts;
	char *shard;	 /* "<series>/<YYYY-MM>.jsonl"; free() it */
	char commit[41]; /* the pushed commit, or "" when nothing was appended */
	/* the pending records found once the record was on the branch */
	struct history_flush_result pending;
	char pending_why[512]; /* why some were left; "" when none */
};

/*
 * Append r's line to its shard on the branch of the remote: fetch the branch
 * into a private bare repository under the cache, commit on its tip (an
 * orphan commit when the branch does not exist) unless the shard already holds
 * r's id, push without force; on a rejected push fetch and rebuild on the new
 * tip after a jittered exponential backoff, each attempt on a new connection,
 * until the time budget runs out. Once r is on the branch, the pending
 * records of o's folders (history_flush) are delivered in what is left of
 * the budget. res is always initialised (free res->shard). Returns 0;
 * PG_ELIMIT for a record over HISTORY_MAX_LINE (nothing sent); PG_EDELIVERY
 * when the remote refused or could not be reached (the message says why);
 * PG_EUSAGE for a remote that is not a path or an http(s)/file URL.
 */
int history_append(const struct history_store_opts *o, const struct history_record *r,
		   struct history_append_result *res) PG_WUR;

struct history_filter {
	const char *series, *label, *kind, *verdict;
	const char *since; /* "YYYY-MM-DD[THH:MM:SSZ]": records at or after it */
	/* With series: only the newest months, whole, enough to hold this many
	 * records that pass (all when there are fewer); 0: every month. Every
	 * record left out is older than every record read. */
	uint32_t newest;
};

/* 1 when r passes every filter set in f. */
int history_filter_match(const struct history_filter *f, const struct history_record *r);
/* 0, or PG_EUSAGE when since is not a date or time of the record's form. */
int history_filter_check_since(const char *since) PG_WUR;

/*
 * Fetch the branch and the series refs f can match (store.c, "How a read
 * works") and read every shard that can hold records passing f, the branch's
 * first, each in path order (f->newest: newest month first); the records that
 * pass are appended to list (one on both the branch and a series ref once).
 * Corrupt lines go to o->log.
 * *exists says whether the branch or a series ref exists. Returns 0,
 * PG_EDELIVERY (fetch failed), PG_EUNSUPP (a record of an unknown version) or
 * PG_EUSAGE.
 */
int history_read(const struct history_store_opts *o, const struct history_filter *f,
		 struct history_list *list, int *exists) PG_WUR;

struct history_compact_result {
	int exists;	  /* the branch exists */
	int compacted;	  /* 1: the branch is now one root commit; 0: it was one already */
	uint32_t commits; /* the commits of the branch before */
	uint32_t attempts;
	uint32_t series, shards; /* series and closed month shards moved to their refs */
	uint32_t folded;	 /* records folded in from their own refs (history_append) */
	char open[8];		 /* the month the branch keeps ("YYYY-MM"; "" with no shard) */
	char commit[41];	 /* the new root commit, or "" */
	char *archive; /* the branch keeping the old history, "<branch>-archive/..." (NULL: the
			  tip was a root commit already); free() it */
};

/*
 * Compact the branch (store.c, "The tip and its cost"): the month shards
 * before the newest month on the branch move to one ref per series,
 * refs/profgate/series/<branch>@/<series> (fast-forward, merged by record
 * id), and the branch becomes one new root commit holding the newest month
 * and an index, the old history kept as the branch
 * <branch>-archive/<day>-<12 hex of the old tip>. The series refs move
 * first, then the branch from the old tip with a lease: when a record lands
 * meanwhile, fetch and compact again, bounded in time like an append.
 * Appenders that built on the old tip are refused and rebuild on the new
 * one, so no record is lost. res is always initialised (free res->archive).
 * Returns 0, PG_EDELIVERY or PG_EUSAGE.
 */
int history_compact(const struct history_store_opts *o, struct history_compact_result *res) PG_WUR;

/* ---- windows and baselines (baseline.c) ---- */

#define HISTORY_WINDOW_DEFAULT 5
#define HISTORY_WINDOW_MAX     100

struct summary;

struct history_window_opts {
	const char *series;	  /* the series; NULL: the one series of label */
	const char *label;	  /* with series NULL: the gate label naming one series */
	const char *const *kinds; /* NULL-terminated; NULL: main and nightly */
	const char *ref;	  /* "refs/heads/main": only records of that ref; NULL: any */
	uint32_t n;		  /* records wanted, 1..HISTORY_WINDOW_MAX */
	/* identity fields the window must agree on (a thresholds file's list) */
	char *const *identity;
	uint32_t n_identity;
};

struct history_window {
	const struct history_record **r; /* oldest first, borrowed from the list read */
	uint32_t n, requested;
	const char *series, *label; /* borrowed from the newest record */
	const char *const *kinds;   /* as asked (never NULL) */
	const char *ref;
	/* an identity change that ended the window early, else cut_field NULL */
	const char *cut_field, *cut_time; /* the field; the time of the older record */
	char *cut_older, *cut_newer;	  /* its values as text */
};

/*
 * The last o->n records of one series of kinds o->kinds (and ref o->ref),
 * read newest first back to the first one that differs from the newest in a
 * field of o->identity: a window never mixes identities, and an identity
 * change (a framework upgrade under a thresholds file that checks it) starts
 * a new one. w borrows from l; history_window_release() it in every case.
 * Returns 0; PG_ENOTFOUND when no record qualifies; PG_EUSAGE when o->label
 * names several series. The message says which.
 */
int history_window_select(const struct history_list *l, const struct history_window_opts *o,
			  struct history_window *w) PG_WUR;
/* 1 when a record of kind from a run on ref (NULL: outside CI) would enter
 * the windows of o (its kinds and ref): the test of history_window_select,
 * for a record not written yet. */
int history_window_takes(const struct history_window_opts *o, const char *kind, const char *ref);
void history_window_release(struct history_window *w);

/* The window as compact JSON: the history branch, ref, kinds, series, records
 * asked for, the records used (id, time, sha) and the cut. Deterministic. */
void history_window_json(const struct history_window *w, const char *branch, struct pg_buf *out);

/*
 * The baseline a window stands for, as a summary the gate compares against
 * (docs/history.md "Baselines from history"): identity from the records; one steady
 * "step" per record, its steady median, so the step test sees the spread
 * between runs; steady statistics, families, ops, collectives, breakdown
 * shares and throughput as per-metric medians over the records that hold the
 * metric (a metric counts when more than half of them do). Op families and
 * family categories are not in records: they are taken from like (the
 * candidate) where it has the name, else left unknown. out is initialised
 * here (summary_release it).
 */
void history_baseline_summary(const struct history_window *w, const struct summary *like,
			      struct summary *out);
/* The window's records one by one, as the gate's baseline runs: runs[i] (w->n
 * of them, each initialised here) is the baseline summary of record i alone. */
void history_window_runs(const struct history_window *w, const struct summary *like,
			 struct summary *runs);

/* The series a gate run of this candidate files its record under: the
 * label and the identity fields as the verdict JSON writes them. */
void history_series_of_summary(const char *label, const struct summary *s, struct pg_buf *out);

/* ---- change points (trend.c: pure functions) ---- */

struct history_cp {
	uint32_t index;	      /* the first point after the change */
	double before, after; /* medians of the segments either side (between change points) */
	double p_value;	      /* p of the split within its segment (history_split_p) */
};

struct history_cp_opts {
	uint32_t min_segment; /* points on each side of a split; 0: 3 */
	double alpha;	      /* a split is kept when its p is at most this */
	uint64_t seed;	      /* of the permutations (short series): same inputs, same output */
};

/*
 * The best split of x[0..n) (finite values): the point where the standardized
 * Mann-Whitney rank sum of the part before it is furthest from its mean, at
 * least min_segment points from either end. Returns that |z| (0 when there
 * is no split or every value is equal) and sets *at to the first point after
 * the split (the earliest of equal maxima).
 */
double history_split_scan(const double *x, uint32_t n, uint32_t min_segment, uint32_t *at);
/*
 * The p-value of history_split_scan()'s statistic, the scan over split points
 * included, so a p at most alpha is a real change at that level whichever
 * point it is at. Under 48 points a permutation test: the share of shuffles
 * of x (fixed-seed) whose best split is at least as extreme, with enough
 * shuffles to resolve alpha (at least 999, at most 199,999), stopping early
 * once p cannot reach alpha. From 48 points the tail approximation of the
 * maximum of the standardized rank sums over the splits (trend.c's opening
 * comment), which ignores alpha and seed; never below DBL_MIN.
 */
double history_split_p(const double *x, uint32_t n, uint32_t min_segment, double alpha,
		       uint64_t seed);
/*
 * Change points of x[0..n) by binary segmentation: split where
 * history_split_p() <= alpha, then look inside each part the same way.
 * out (room for n) gets them in index order with the medians of the
 * segments either side; returns how many.
 */
uint32_t history_change_points(const double *x, uint32_t n, const struct history_cp_opts *o,
			       struct history_cp *out);

/* ---- trends (trend.c, trend_json.c) ---- */

struct gate_thresholds;
struct gate_rule;

/* A run of nightly records in a row past the metric's warn limit. */
struct history_trend_run {
	uint32_t first, last; /* record indices of the series */
	uint32_t length;      /* nightly records in the run */
	int reached_fail;     /* one of them was past the fail limit too */
	int ongoing;	      /* it ends at the newest nightly record judged */
};

struct history_trend_metric {
	char *name;
	const char *unit;	      /* "us", "share", "GB/s", "TFLOP/s" or "" */
	int decimals;		      /* in JSON (summary_metric_decimals) */
	const struct gate_rule *rule; /* borrowed from the thresholds; NULL: none */
	double *value;		      /* one per record of the series; NAN where it has none */
	uint32_t n_values;	      /* records holding it */
	int tested;		      /* enough values for the change-point test */
	struct history_cp *cp;	      /* change points past the magnitude, in order */
	uint32_t n_cp;
	uint32_t n_judged;		/* nightly records judged by the rule */
	struct history_trend_run *runs; /* runs of at least K violations */
	uint32_t n_runs;
	int flagged; /* the last run is ongoing */
};

struct history_trend_series {
	const char *series, *label;	 /* borrowed from the records */
	const struct history_record **r; /* oldest first, borrowed */
	uint32_t n;
	struct history_trend_metric *m; /* by name */
	uint32_t n_m;
	uint32_t n_tested;  /* metrics tested for change points: m */
	uint32_t n_changed; /* of them with a change (Benjamini-Hochberg at alpha): k */
	uint32_t n_flagged;
};

struct history_trend_opts {
	const char *metric;	  /* glob; NULL: every metric */
	const char *const *kinds; /* NULL: main and nightly */
	const struct gate_thresholds *th;
	uint32_t window;      /* baseline records of the nightly rule; 0: 5 */
	double alpha;	      /* family-wise per series, across its metrics; 0: 0.01 */
	uint32_t min_segment; /* 0: 3 */
	uint32_t threads;     /* series built on this many threads at once; 0: 1 (the
				 output is the same whatever it is) */
};

struct history_trend {
	struct history_trend_series *s; /* by series name */
	uint32_t n;
	struct history_trend_opts o; /* as used: defaults filled in */
	uint32_t consecutive;	     /* K, from the thresholds */
};

/*
 * Per series and metric of the records in l (of kinds o->kinds): the values
 * over time, change points (each metric's best split is tested; the metrics
 * with a change are chosen by Benjamini-Hochberg at o->alpha over the metrics
 * tested, so a trend of many metrics keeps its share of false changes at
 * alpha; their segments are then searched at that level; a change point is
 * kept when it reaches the metric's warn limit, 1% for metrics without one;
 * its confidence is 1 - p m / k), and the nightly rule: a
 * nightly record violates when its value is past the warn limit against the
 * median of up to o->window earlier main/nightly records that did not
 * violate; K violations in a row (o->th's consecutive_violations) flag the
 * metric. t borrows l and o->th; history_trend_release() it.
 */
void history_trend_build(const struct history_list *l, const struct history_trend_opts *o,
			 struct history_trend *t);
void history_trend_release(struct history_trend *t);
/* 1 - the change point's p adjusted for the metrics of its series (p m / k). */
double history_cp_confidence(const struct history_trend_series *s, const struct history_cp *c);
/* profgate.trend/1, deterministic (docs/cli.md "history trend"). branch: the
 * history branch read; filters: the series, label and since asked for. */
void history_trend_write_json(const struct history_trend *t, const char *branch,
			      const struct history_filter *filters, struct pg_buf *out);

/*
 * Pending records: a record whose push failed is kept as the exact line
 * history_append() would push, in <folder>/<record_id>.json: o->pending_dir
 * when set, else <cache>/pending/<key>, else (the cache cannot be written)
 * ${TMPDIR:-/tmp}/profgate-pending-<uid>/<key> (a folder of this user's
 * only); <key> names o's remote and branch. The path is returned (free() it)
 * or NULL when none can be written (message set).
 */
char *history_pending_save(const struct history_store_opts *o, const struct history_record *r);
/*
 * Deliver pending records to o's remote and branch: the *.json records of
 * dir, or (dir NULL) of o's folders above, oldest first, each appended as
 * history_append() does (one already on the branch is found by its id, so a
 * push that landed unreported is not doubled) and its file removed once on
 * the branch; all within one time budget. res is always initialised. Returns
 * 0 (res->bad may still count files that are not records); PG_EDELIVERY
 * when a record could not be delivered (it and the rest stay, res->left);
 * PG_EUSAGE as history_append().
 */
int history_flush(const struct history_store_opts *o, const char *dir,
		  struct history_flush_result *res) PG_WUR;

#endif
