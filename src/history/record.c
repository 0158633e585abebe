/*
 * The history record (profgate.history/1): built from a gate's result (or
 * from its verdict JSON, for `history append`) and the CI environment, written as one deterministic
 * JSON line, and read back by a tolerant reader (a corrupt line is skipped with its file and line
 * number; a record of another profgate.history version is refused, never guessed at). A line in
 * the writer's own form is read directly (canonical_parse), every other line through cJSON: the
 * same record either way. Fields in docs/history.md "The history record".
 */
#include "record.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../gate/gate.h"
#include "../summary/summary.h"

#define EVENT_MAX_BYTES (16u << 20)

static const char *const kinds[] = {"pr", "main", "nightly", "manual"};
/* The overall verdicts a gate gives (docs/gate.md "The verdict JSON"); recorded:
 * the first record of a series, judged against nothing. */
static const char *const verdicts[] = {"pass",	       "improved",     "warn",	  "fail",
				       "inconclusive", "incomparable", "recorded"};

void history_record_init(struct history_record *r)
{
	memset(r, 0, sizeof(*r));
	r->pr = -1;
	r->run_attempt = -1;
}

void history_record_release(struct history_record *r)
{
	char **strs[] = {&r->record_id,
			 &r->time,
			 &r->series,
			 &r->label,
			 &r->kind,
			 &r->verdict,
			 &r->repo,
			 &r->sha,
			 &r->ref,
			 &r->run_id,
			 &r->baseline_kind,
			 &r->baseline_path,
			 &r->baseline_sha256,
			 &r->baseline_summary_sha256,
			 &r->baseline_window,
			 &r->runs,
			 &r->summary_sha256,
			 &r->thresholds,
			 &r->profgate_version,
			 &r->line};

	for (size_t i = 0; i < PG_ARRAY_LEN(strs); i++)
		free(*strs[i]);
	for (uint32_t i = 0; i < r->n_identity; i++) {
		free(r->identity[i].key);
		free(r->identity[i].text);
	}
	free(r->identity);
	for (uint32_t i = 0; i < r->n_metrics; i++)
		free(r->metrics[i].name);
	free(r->metrics);
	history_record_init(r);
}

static const char *env_or_null(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

void history_env_from_environ(struct history_env *e)
{
	e->repo = env_or_null("GITHUB_REPOSITORY");
	e->sha = env_or_null("GITHUB_SHA");
	e->ref = env_or_null("GITHUB_REF");
	e->run_id = env_or_null("GITHUB_RUN_ID");
	e->run_attempt = env_or_null("GITHUB_RUN_ATTEMPT");
	e->event_name = env_or_null("GITHUB_EVENT_NAME");
	e->event_path = env_or_null("GITHUB_EVENT_PATH");
	e->time = env_or_null("PROFGATE_TIME");
}

static char *dup_or_null(const char *s)
{
	return s ? pg_xstrdup(s) : NULL;
}

/* ---- the CI environment ---- */

/* The event payload GitHub writes for the run, parsed; NULL when absent or
 * unreadable (the kind then falls back to the variables alone). */
static cJSON *read_event(const struct history_env *e)
{
	struct pg_buf b = PG_BUF_INIT;
	cJSON *root = NULL;

	if (e->event_path && pg_read_small(e->event_path, EVENT_MAX_BYTES, 0, &b) == 0)
		root = cJSON_ParseWithLength(b.ptr, b.len);
	pg_buf_release(&b);
	return root;
}

static const cJSON *member(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static int is_pr_event(const char *name)
{
	return name &&
	       (strcmp(name, "pull_request") == 0 || strcmp(name, "pull_request_target") == 0);
}

const char *history_kind_infer(const struct history_env *e)
{
	const char *kind = "manual";

	if (is_pr_event(e->event_name))
		return "pr";
	if (e->event_name && strcmp(e->event_name, "schedule") == 0)
		return "nightly";
	if (e->event_name && strcmp(e->event_name, "push") == 0 && e->ref &&
	    strncmp(e->ref, "refs/heads/", 11) == 0) {
		cJSON *ev = read_event(e);
		const cJSON *def = member(member(ev, "repository"), "default_branch");
		const char *branch = e->ref + 11;

		if (cJSON_IsString(def)
			? strcmp(branch, def->valuestring) == 0
			: strcmp(branch, "main") == 0 || strcmp(branch, "master") == 0)
			kind = "main";
		cJSON_Delete(ev);
	}
	return kind;
}

int history_verdict_valid(const char *v)
{
	for (size_t i = 0; v && i < PG_ARRAY_LEN(verdicts); i++)
		if (strcmp(v, verdicts[i]) == 0)
			return 1;
	return 0;
}

int history_kind_valid(const char *kind)
{
	for (size_t i = 0; kind && i < PG_ARRAY_LEN(kinds); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return 1;
	return 0;
}

/* The PR number: the event's pull_request.number (or number), else the N of
 * refs/pull/N/merge; -1 outside pull requests. */
static int64_t pr_number(const struct history_env *e)
{
	int64_t pr = -1;

	if (!is_pr_event(e->event_name))
		return -1;
	cJSON *ev = read_event(e);
	const cJSON *n = member(member(ev, "pull_request"), "number");
	if (!cJSON_IsNumber(n))
		n = member(ev, "number");
	if (cJSON_IsNumber(n) && pg_whole(n->valuedouble, &pr) && pr < 1)
		pr = -1;
	cJSON_Delete(ev);
	if (pr < 0 && e->ref && strncmp(e->ref, "refs/pull/", 10) == 0) {
		char *end;
		long long v = strtoll(e->ref + 10, &end, 10);
		if (v > 0 && *end == '/')
			pr = v;
	}
	return pr;
}

static int64_t attempt_number(const char *s)
{
	int64_t v;

	return s && pg_parse_int(s, 1, INT64_MAX, &v) == 0 ? v : -1;
}

/* ---- times ---- */

static int digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int two(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* "YYYY-MM", "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SSZ" with fields in range;
 * returns the length matched (7, 10 or 20) or 0. */
static size_t time_form(const char *s)
{
	size_t n = strlen(s);

	if (n < 7 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || two(s + 5) < 1 ||
	    two(s + 5) > 12)
		return 0;
	if (n == 7)
		return 7;
	if (n < 10 || s[7] != '-' || !digits(s + 8, 2) || two(s + 8) < 1 || two(s + 8) > 31)
		return 0;
	if (n == 10)
		return 10;
	if (n != 20 || s[10] != 'T' || !digits(s + 11, 2) || s[13] != ':' || !digits(s + 14, 2) ||
	    s[16] != ':' || !digits(s + 17, 2) || s[19] != 'Z' || two(s + 11) > 23 ||
	    two(s + 14) > 59 || two(s + 17) > 60)
		return 0;
	return 20;
}

static int time_valid(const char *s)
{
	return time_form(s) == 20;
}

static char *time_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return pg_xstrdup(buf);
}

int history_filter_check_since(const char *since)
{
	if (time_form(since))
		return 0;
	return pg_error_set(PG_EUSAGE,
			    "--since '%s': give a UTC date or time: 2024-05, 2024-05-01 or "
			    "2024-05-01T12:00:00Z",
			    since);
}

int history_filter_match(const struct history_filter *f, const struct history_record *r)
{
	if (f->series && strcmp(f->series, r->series) != 0)
		return 0;
	if (f->label && (!r->label || strcmp(f->label, r->label) != 0))
		return 0;
	if (f->kind && strcmp(f->kind, r->kind) != 0)
		return 0;
	if (f->verdict && strcmp(f->verdict, r->verdict) != 0)
		return 0;
	/* every time has the same form, so a prefix orders correctly */
	return !f->since || strcmp(r->time, f->since) >= 0;
}

/* A record id names the pending file of a record: letters, digits, '_' and
 * '-' only (profgate's are 32 hex digits). */
static int record_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 128)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') || id[i] == '_' || id[i] == '-'))
			return 0;
	return 1;
}

/* ---- series ---- */

/* A series names a directory on the branch: lowercase letters, digits, '.',
 * '_' and '-', not starting with '.' or '-'. profgate's own are runs of
 * [a-z0-9_] from the label joined by '-', then '-' and 8 hex digits. */
static int series_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 100 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '.' ||
		      s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

static void slug(const char *label, struct pg_buf *out)
{
	size_t start = out->len;
	int dash = 0;

	for (const char *p = label ? label : ""; *p && out->len - start < 48; p++) {
		char c = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
		int keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
		if (!keep) {
			dash = out->len > start;
			continue;
		}
		if (dash)
			pg_buf_addc(out, '-');
		dash = 0;
		pg_buf_addc(out, c);
	}
	if (out->len == start)
		pg_buf_adds(out, "default");
}

static const struct history_field *field_find(const struct history_field *f, uint32_t n,
					      const char *key)
{
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(f[i].key, key) == 0)
			return &f[i];
	return NULL;
}

static int cmp_field_key(const void *a, const void *b)
{
	return strcmp((*(const struct history_field *const *)a)->key,
		      (*(const struct history_field *const *)b)->key);
}

/* "key=value\n" per series field and per label, labels sorted: the bytes the
 * series hash is taken over, so two runs of one benchmark on one setup share
 * a series whatever order their labels came in. */
void history_series_name(const char *label, const struct history_field *identity, uint32_t n,
			 struct pg_buf *out)
{
	struct pg_buf text = PG_BUF_INIT;
	const struct history_field **labels = pg_xcalloc(n + 1, sizeof(*labels));
	struct pg_sha256 sha;
	uint32_t n_labels = 0;
	char hex[65];

	pg_buf_addf(&text, "label=%s\n", label ? label : "");
	for (size_t i = 0; i < SUMMARY_ID_N; i++) {
		const char *key = summary_id_fields[i].name;
		const struct history_field *f = field_find(identity, n, key);
		if (summary_id_fields[i].series)
			pg_buf_addf(&text, "%s=%s\n", key, f && f->text ? f->text : "null");
	}
	for (uint32_t i = 0; i < n; i++)
		if (strncmp(identity[i].key, "labels.", 7) == 0)
			labels[n_labels++] = &identity[i];
	if (n_labels > 1)
		qsort(labels, n_labels, sizeof(*labels), cmp_field_key);
	for (uint32_t i = 0; i < n_labels; i++)
		pg_buf_addf(&text, "%s=%s\n", labels[i]->key,
			    labels[i]->text ? labels[i]->text : "null");
	pg_sha256_init(&sha);
	pg_sha256_update(&sha, text.ptr, text.len);
	pg_sha256_hex(&sha, hex);
	slug(label, out);
	pg_buf_addf(out, "-%.8s", hex);
	free(labels);
	pg_buf_release(&text);
}

int history_series_may_hold(const char *series, const char *label)
{
	struct pg_buf want = PG_BUF_INIT;
	size_t n = strlen(series);
	int may = 1;

	/* a name of profgate's form, "<slug>-<8 hex>", holds the records of its
	 * slug's labels only; any other name (made by hand) may hold anything */
	if (n > 9 && series[n - 9] == '-' && strspn(series + n - 8, "0123456789abcdef") == 8) {
		slug(label, &want);
		may = want.len == n - 9 && memcmp(want.ptr, series, want.len) == 0;
	}
	pg_buf_release(&want);
	return may;
}

/* profgate writes UTF-8 with control characters escaped: text that is not
 * (raw control bytes but JSON's blanks, which a pretty file has) did not come
 * from it, would reach a terminal through `history show --json`, and would not
 * be written back the same. */
#define BYTES_OF(b) (0x0101010101010101ULL * (b))

/* Eight bytes all printable ASCII (0x20..0x7e): no byte under 0x20 and none
 * over 0x7e (the "has a byte less / more than" word tricks, which never miss
 * one; a false alarm only sends the bytes through the slow path). */
static int printable8(const char *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return !((((w - BYTES_OF(0x20)) & ~w) | ((w + BYTES_OF(0x7f - 0x7e)) | w)) &
		 BYTES_OF(0x80));
}

static int text_check(const char *text, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned char c = (unsigned char)text[i];
		size_t k;

		if (i + 8 <= len && printable8(text + i)) { /* most of a record */
			i += 8;
			continue;
		}
		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		k = pg_utf8_seq((const unsigned char *)text + i, len - i);
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f)
			return pg_error_set(PG_EFORMAT, "control byte 0x%02x at byte %zu", c,
					    i + 1);
		if (k == 0)
			return pg_error_set(PG_EFORMAT, "not UTF-8 at byte %zu", i + 1);
		i += k;
	}
	return 0;
}

/* ---- building a record from a verdict JSON ---- */

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *x = member(o, key);
	return cJSON_IsString(x) ? x->valuestring : NULL;
}

/* A number's text as the record writes it: integers exactly, others with
 * enough digits to read back the same double. */
char *record_number_text(double v)
{
	char buf[64];

	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		snprintf(buf, sizeof(buf), "%.0f", v);
	else
		snprintf(buf, sizeof(buf), "%.17g", v);
	return pg_xstrdup(buf);
}

/* An identity field taking text (NULL: null), which it then owns. */
void record_put_field(struct history_record *r, char *key, char *text, enum history_value type)
{
	r->identity = pg_xrealloc(r->identity, (r->n_identity + 1) * sizeof(*r->identity));
	r->identity[r->n_identity++] =
	    (struct history_field){key, text, text ? type : HISTORY_NULL};
}

static void add_field(struct history_record *r, const char *key, const cJSON *v)
{
	char *text = NULL;
	enum history_value type = HISTORY_NULL;

	if (cJSON_IsString(v)) {
		type = HISTORY_STRING;
		text = pg_xstrdup(v->valuestring);
	} else if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) { /* 1e999: not JSON to write */
		type = HISTORY_NUMBER;
		text = record_number_text(v->valuedouble);
	}
	record_put_field(r, pg_xstrdup(key), text, type);
}

/* The identity object of a verdict side or a record: scalars, and "labels"
 * flattened to labels.KEY. */
static int read_identity(struct history_record *r, const cJSON *id)
{
	const cJSON *x;

	cJSON_ArrayForEach (x, id) {
		if (strcmp(x->string, "labels") == 0 && cJSON_IsObject(x)) {
			const cJSON *l;
			cJSON_ArrayForEach (l, x) {
				struct pg_buf k = PG_BUF_INIT;
				pg_buf_addf(&k, "labels.%s", l->string);
				add_field(r, k.ptr, l);
				pg_buf_release(&k);
			}
		} else if (cJSON_IsNumber(x) && !isfinite(x->valuedouble)) {
			return pg_error_set(PG_EFORMAT, "identity.%s is not a finite number",
					    x->string);
		} else if (cJSON_IsString(x) || cJSON_IsNumber(x) || cJSON_IsNull(x)) {
			add_field(r, x->string, x);
		} else {
			return pg_error_set(PG_EFORMAT, "identity.%s is not a string or number",
					    x->string);
		}
	}
	return 0;
}

/* A copy of s as it reads back from JSON text: bytes that are not UTF-8
 * become U+FFFD, as pg_json writes them. NULL for NULL. */
static char *json_text(const char *s, size_t n)
{
	struct pg_buf b = PG_BUF_INIT;

	if (!s)
		return NULL;
	pg_buf_grow(&b, n);
	for (size_t i = 0; i < n;) {
		size_t k = (unsigned char)s[i] < 0x80
			       ? 1
			       : pg_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0) {
			pg_buf_adds(&b, PG_UTF8_REPLACEMENT);
			k = 1;
		} else {
			pg_buf_add(&b, s + i, k);
		}
		i += k;
	}
	return pg_buf_detach(&b, NULL);
}

static char *dup_json_text(const char *s)
{
	return s ? json_text(s, strlen(s)) : NULL;
}

/* The identity of s as the verdict JSON writes a side's and read_identity()
 * reads it back: the same fields, keys, texts and types. */
static void identity_of_summary(struct history_record *r, const struct summary *s)
{
	for (size_t i = 0; i < SUMMARY_ID_N; i++) {
		const struct summary_id_field *f = &summary_id_fields[i];
		struct pg_buf v = PG_BUF_INIT;
		int set = summary_id_text(s, f, &v);
		record_put_field(r, pg_xstrdup(f->name),
				 set ? json_text(v.ptr ? v.ptr : "", v.len) : NULL,
				 f->type == SUMMARY_ID_STRING ? HISTORY_STRING : HISTORY_NUMBER);
		pg_buf_release(&v);
	}
	for (uint32_t i = 0; i < s->n_labels; i++) {
		size_t n;
		const char *v = summary_label_split(s->labels[i], &n);
		char *key = json_text(s->labels[i], n);
		record_put_field(r, pg_xasprintf("labels.%s", key), dup_json_text(v),
				 HISTORY_STRING);
		free(key);
	}
}

void history_series_of_summary(const char *label, const struct summary *s, struct pg_buf *out)
{
	struct history_record r;
	char *l = dup_json_text(label);

	history_record_init(&r);
	identity_of_summary(&r, s);
	history_series_name(l, r.identity, r.n_identity, out);
	history_record_release(&r);
	free(l);
}

/* The array doubles at each power of two of its count (which implies its
 * capacity): a record's metrics take a handful of reallocations, not one each. */
void record_add_metric(struct history_record *r, const char *name, double value)
{
	uint32_t n = r->n_metrics;

	if ((n & (n - 1)) == 0)
		r->metrics = pg_xrealloc(r->metrics, (n ? 2 * (size_t)n : 1) * sizeof(*r->metrics));
	r->metrics[r->n_metrics].name = pg_xstrdup(name);
	r->metrics[r->n_metrics++].value = value;
}

static int cmp_metric(const void *a, const void *b)
{
	return strcmp(((const struct history_metric *)a)->name,
		      ((const struct history_metric *)b)->name);
}

/* A metric a record keeps: one judged by a rule that is not "info", a step
 * metric or a breakdown share: what a trend or a window baseline needs. */
static int metric_kept(const char *name, int judged)
{
	return judged || strncmp(name, "step.", 5) == 0 || strncmp(name, "breakdown.", 10) == 0;
}

/* By name; a record as profgate writes it is in order already (a check, not
 * a sort, per record read). */
void record_sort_metrics(struct history_record *r)
{
	for (size_t i = 1; i < r->n_metrics; i++)
		if (cmp_metric(&r->metrics[i - 1], &r->metrics[i]) > 0) {
			qsort(r->metrics, r->n_metrics, sizeof(*r->metrics), cmp_metric);
			return;
		}
}

static void hex32(const void *data, size_t n, const char *prefix, char out[33])
{
	struct pg_sha256 sha;
	char hex[65];

	pg_sha256_init(&sha);
	pg_sha256_update(&sha, prefix, strlen(prefix));
	pg_sha256_update(&sha, data, n);
	pg_sha256_hex(&sha, hex);
	memcpy(out, hex, 32);
	out[32] = 0;
}

/* In CI, one per gate: the run, attempt and series, and what the gate judged
 * (the candidate summary, the baseline file or window), so a re-append of a
 * gate's record (its verdict JSON, its kept copy) is a no-op while two gates
 * of one run under one label (matrix jobs, a second step) are two records.
 * These come from the record, never from the job's environment, so the
 * verdict appended in another step or job gets the gate's own id. Outside
 * CI, the verdict bytes themselves (the same result appended twice is one
 * record). */
static char *record_id(const struct history_record *r, const struct history_env *e,
		       const char *json, size_t len)
{
	struct pg_buf key = PG_BUF_INIT;
	char id[33];

	if (e->run_id) {
		pg_buf_addf(&key, "%s\n%s\n%s\n%s\n", e->repo ? e->repo : "", e->run_id,
			    e->run_attempt ? e->run_attempt : "", r->series);
		pg_buf_addf(&key, "%s\n%s\n%s\n%s\n", r->summary_sha256 ? r->summary_sha256 : "",
			    r->baseline_summary_sha256 ? r->baseline_summary_sha256 : "",
			    r->baseline_sha256 ? r->baseline_sha256 : "",
			    r->baseline_window ? r->baseline_window : "");
		hex32(key.ptr, key.len, HISTORY_SCHEMA " run\n", id);
	} else {
		hex32(json, len, HISTORY_SCHEMA " verdict\n", id);
	}
	pg_buf_release(&key);
	return pg_xstrdup(id);
}

/* What a record keeps of a gate run besides its identity and metrics,
 * whether the run arrives as a struct gate_result or as its verdict JSON. */
struct run_facts {
	const char *label, *verdict;
	double exit_code;
	const char *window; /* the baseline's history window as compact JSON; NULL: a file */
	const char *baseline_path, *baseline_sha256, *baseline_summary_sha256;
	const char *summary_sha256, *thresholds, *profgate_version;
};

/* The fields of f into r, whose identity is already read: the one place a
 * record is filled from a gate run, so both ways in give the same record. */
static int run_fields(struct history_record *r, const struct run_facts *f)
{
	struct pg_buf series = PG_BUF_INIT;
	int64_t code;

	if (!history_verdict_valid(f->verdict))
		return pg_error_set(PG_EFORMAT, "verdict '%.40s' is not one a gate gives",
				    f->verdict);
	/* a process's exit code; anything else is no gate's (and -1 would read back as null) */
	if (!pg_whole(f->exit_code, &code) || code < 0 || code > 255)
		return pg_error_set(PG_EFORMAT, "exit_code %g is not one a gate gives",
				    f->exit_code);
	r->label = dup_json_text(f->label);
	r->verdict = pg_xstrdup(f->verdict);
	r->exit_code = (int)code;
	history_series_name(r->label, r->identity, r->n_identity, &series);
	r->series = pg_buf_detach(&series, NULL);
	r->baseline_kind = pg_xstrdup(f->window ? "history" : "file");
	r->baseline_window = dup_or_null(f->window);
	r->baseline_path = dup_json_text(f->baseline_path);
	r->baseline_sha256 = dup_json_text(f->baseline_sha256);
	r->baseline_summary_sha256 = dup_json_text(f->baseline_summary_sha256);
	r->summary_sha256 = dup_json_text(f->summary_sha256);
	r->thresholds = dup_json_text(f->thresholds);
	r->profgate_version = dup_json_text(f->profgate_version);
	return 0;
}

static void verdict_metrics(struct history_record *r, const cJSON *metrics)
{
	const cJSON *m;

	cJSON_ArrayForEach (m, metrics) {
		const char *name = str_of(m, "name");
		const cJSON *cand = member(m, "candidate"), *limit = member(m, "limit");
		const char *dir = str_of(limit, "direction");
		int judged = cJSON_IsObject(limit) && dir && strcmp(dir, "info") != 0;

		if (name && cJSON_IsNumber(cand) && isfinite(cand->valuedouble) &&
		    metric_kept(name, judged))
			record_add_metric(r, name, cand->valuedouble);
	}
	record_sort_metrics(r);
}

/* The runs of a verdict whose side had several (record field "runs"), as
 * compact JSON; NULL when each side was one run. */
static char *runs_text(const cJSON *root)
{
	const cJSON *b = member(member(root, "baseline"), "run_list");
	const cJSON *c = member(member(root, "candidate"), "run_list");
	cJSON *o;
	char *text;

	if (!cJSON_IsArray(b) || !cJSON_IsArray(c) ||
	    (cJSON_GetArraySize(b) < 2 && cJSON_GetArraySize(c) < 2))
		return NULL;
	o = cJSON_CreateObject();
	if (!o || !cJSON_AddItemToObject(o, "baseline", cJSON_Duplicate(b, 1)) ||
	    !cJSON_AddItemToObject(o, "candidate", cJSON_Duplicate(c, 1)) ||
	    !(text = cJSON_PrintUnformatted(o)))
		pg_oom(0);
	cJSON_Delete(o);
	return text;
}

static int verdict_fields(struct history_record *r, const cJSON *root)
{
	const cJSON *cand = member(root, "candidate"), *base = member(root, "baseline");
	const cJSON *ec = member(root, "exit_code");
	struct run_facts f;
	char *window = NULL;
	int rc;

	if (!str_of(root, "verdict") || !cJSON_IsNumber(ec) || !cJSON_IsObject(cand) ||
	    !cJSON_IsObject(base) || !cJSON_IsArray(member(root, "metrics")))
		return pg_error_set(PG_EFORMAT, "verdict, exit_code, baseline, candidate or "
						"metrics missing");
	if (!cJSON_IsObject(member(cand, "identity")))
		return pg_error_set(PG_EFORMAT, "candidate.identity missing (written by an older "
						"profgate: run gate again)");
	if ((rc = read_identity(r, member(cand, "identity"))))
		return rc;
	if (cJSON_IsObject(member(base, "history")) &&
	    !(window = cJSON_PrintUnformatted(member(base, "history"))))
		pg_oom(0);
	f = (struct run_facts){str_of(root, "label"),
			       str_of(root, "verdict"),
			       ec->valuedouble,
			       window,
			       str_of(base, "path"),
			       str_of(base, "sha256"),
			       str_of(base, "summary_sha256"),
			       str_of(cand, "summary_sha256"),
			       str_of(member(root, "thresholds"), "name"),
			       str_of(root, "profgate_version")};
	rc = run_fields(r, &f);
	free(window);
	if (rc == 0) {
		verdict_metrics(r, member(root, "metrics"));
		r->runs = runs_text(root);
	}
	return rc;
}

static int env_fields(struct history_record *r, const struct history_env *e, const char *kind)
{
	if (e->time && !time_valid(e->time))
		return pg_error_set(
		    PG_EUSAGE, "PROFGATE_TIME '%s' is not a UTC time like 2024-05-01T12:00:00Z",
		    e->time);
	if (kind && !history_kind_valid(kind))
		return pg_error_set(PG_EUSAGE, "--kind '%s': give pr, main, nightly or manual",
				    kind);
	r->time = e->time ? pg_xstrdup(e->time) : time_now();
	r->kind = pg_xstrdup(kind ? kind : history_kind_infer(e));
	r->repo = dup_or_null(e->repo);
	r->sha = dup_or_null(e->sha);
	r->ref = dup_or_null(e->ref);
	r->run_id = dup_or_null(e->run_id);
	r->run_attempt = attempt_number(e->run_attempt);
	r->pr = pr_number(e);
	return 0;
}

int history_record_from_verdict(struct history_record *r, const char *json, size_t len,
				const char *origin, const struct history_env *e, const char *kind)
{
	cJSON *root = cJSON_ParseWithLength(json, len);
	const char *schema = str_of(root, "schema");
	int rc;

	history_record_init(r);
	if (!schema || strcmp(schema, GATE_VERDICT_SCHEMA) != 0) {
		rc =
		    pg_error_set(PG_EFORMAT, "%s: not a verdict JSON (profgate.verdict/1)", origin);
		goto out;
	}
	if ((rc = text_check(json, len))) {
		char why[512];
		snprintf(why, sizeof(why), "%s", pg_error_last());
		rc = pg_error_set(rc, "%s: %s", origin, why);
		goto out;
	}
	if ((rc = env_fields(r, e, kind)))
		goto out;
	if ((rc = verdict_fields(r, root))) {
		char why[512];
		snprintf(why, sizeof(why), "%s", pg_error_last());
		rc = pg_error_set(rc, "%s: %s", origin, why);
		goto out;
	}
	r->record_id = record_id(r, e, json, len);
out:
	cJSON_Delete(root);
	return rc;
}

/* The window as the verdict path gets it: cJSON's compact form of the
 * "history" member, so both ways in write the same bytes. */
static char *window_text(const char *json)
{
	cJSON *w = json ? cJSON_Parse(json) : NULL;
	char *text = cJSON_IsObject(w) ? cJSON_PrintUnformatted(w) : NULL;

	cJSON_Delete(w);
	return text;
}

int history_record_from_result(struct history_record *r, const struct gate_result *g,
			       const struct history_env *e, const char *kind)
{
	struct pg_buf json = PG_BUF_INIT;
	struct run_facts f;
	char *window = window_text(g->in.baseline_history_json);
	int rc;

	history_record_init(r);
	if ((rc = env_fields(r, e, kind)))
		goto out;
	identity_of_summary(r, g->candidate);
	f = (struct run_facts){g->in.label,
			       gate_verdict_name(g->verdict),
			       gate_verdict_exit(g->verdict),
			       window,
			       g->in.baseline_path,
			       g->in.baseline_sha256,
			       g->baseline_summary_sha256[0] ? g->baseline_summary_sha256 : NULL,
			       g->candidate_summary_sha256,
			       g->thresholds->name,
			       g->in.version};
	if ((rc = run_fields(r, &f)))
		goto out;
	for (uint32_t i = 0; i < g->n_metrics; i++) {
		const struct gate_metric_result *m = &g->metrics[i];
		int judged = m->rule && m->rule->direction != GATE_INFO;
		if (m->has_candidate && isfinite(m->candidate) && metric_kept(m->name, judged))
			record_add_metric(r, m->name, m->candidate);
	}
	record_sort_metrics(r);
	gate_result_write_json(g, &json);
	if (g->n_runs[0] > 1 || g->n_runs[1] > 1) {
		/* through the verdict JSON, so both ways in keep the same bytes */
		cJSON *root = cJSON_ParseWithLength(json.ptr, json.len);
		r->runs = runs_text(root);
		cJSON_Delete(root);
	}
	r->record_id = record_id(r, e, json.ptr, json.len);
out:
	free(window);
	pg_buf_release(&json);
	return rc;
}

/* ---- reading a record ---- */

/* Optional string member: absent or null gives NULL; another type is an error. */
static int opt_str(const cJSON *o, const char *key, char **out)
{
	const cJSON *x = member(o, key);

	if (!x || cJSON_IsNull(x))
		return 0;
	if (!cJSON_IsString(x))
		return pg_error_set(PG_EFORMAT, "%s is not a string", key);
	*out = pg_xstrdup(x->valuestring);
	return 0;
}

static int req_str(const cJSON *o, const char *key, char **out)
{
	if (!cJSON_IsString(member(o, key)))
		return pg_error_set(PG_EFORMAT, "%s missing or not a string", key);
	return opt_str(o, key, out);
}

static int opt_int(const cJSON *o, const char *key, int64_t *out)
{
	const cJSON *x = member(o, key);

	if (!x || cJSON_IsNull(x))
		return 0;
	if (!cJSON_IsNumber(x) || !pg_whole(x->valuedouble, out))
		return pg_error_set(PG_EFORMAT, "%s is not a whole number", key);
	return 0;
}

static int record_metrics(struct history_record *r, const cJSON *metrics)
{
	const cJSON *m;

	if (!cJSON_IsObject(metrics))
		return pg_error_set(PG_EFORMAT, "metrics missing or not an object");
	cJSON_ArrayForEach (m, metrics) {
		if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble))
			return pg_error_set(PG_EFORMAT, "metrics.%s is not a number", m->string);
		record_add_metric(r, m->string, m->valuedouble);
	}
	record_sort_metrics(r);
	return 0;
}

static int record_baseline(struct history_record *r, const cJSON *b)
{
	const cJSON *w;
	int rc;

	if (!b || cJSON_IsNull(b))
		return 0;
	if (!cJSON_IsObject(b))
		return pg_error_set(PG_EFORMAT, "baseline is not an object");
	if ((rc = opt_str(b, "kind", &r->baseline_kind)) ||
	    (rc = opt_str(b, "path", &r->baseline_path)) ||
	    (rc = opt_str(b, "sha256", &r->baseline_sha256)) ||
	    (rc = opt_str(b, "summary_sha256", &r->baseline_summary_sha256)))
		return rc;
	w = member(b, "window");
	if (w && !cJSON_IsNull(w)) {
		if (!cJSON_IsObject(w))
			return pg_error_set(PG_EFORMAT, "baseline.window is not an object");
		if (!(r->baseline_window = cJSON_PrintUnformatted(w)))
			pg_oom(0);
	}
	return 0;
}

static int record_runs(struct history_record *r, const cJSON *o)
{
	const cJSON *runs = member(o, "runs");

	if (!runs || cJSON_IsNull(runs))
		return 0;
	if (!cJSON_IsObject(runs))
		return pg_error_set(PG_EFORMAT, "runs is not an object");
	if (!(r->runs = cJSON_PrintUnformatted(runs)))
		pg_oom(0);
	return 0;
}

/* Every field checked for its type; the required ones present. */
static int record_fields(struct history_record *r, const cJSON *o)
{
	const cJSON *id = member(o, "identity");
	int64_t ec = -1; /* absent or null: unknown, written back as null */
	int rc;

	if ((rc = req_str(o, "record_id", &r->record_id)) || (rc = req_str(o, "time", &r->time)) ||
	    (rc = req_str(o, "series", &r->series)) || (rc = req_str(o, "kind", &r->kind)) ||
	    (rc = req_str(o, "verdict", &r->verdict)) || (rc = opt_str(o, "label", &r->label)) ||
	    (rc = opt_str(o, "repo", &r->repo)) || (rc = opt_str(o, "sha", &r->sha)) ||
	    (rc = opt_str(o, "ref", &r->ref)) || (rc = opt_str(o, "run_id", &r->run_id)) ||
	    (rc = opt_int(o, "pr", &r->pr)) || (rc = opt_int(o, "run_attempt", &r->run_attempt)) ||
	    (rc = opt_int(o, "exit_code", &ec)) ||
	    (rc = opt_str(o, "summary_sha256", &r->summary_sha256)) ||
	    (rc = opt_str(o, "thresholds", &r->thresholds)) ||
	    (rc = opt_str(o, "profgate_version", &r->profgate_version)) ||
	    (rc = record_metrics(r, member(o, "metrics"))) ||
	    (rc = record_baseline(r, member(o, "baseline"))) || (rc = record_runs(r, o)))
		return rc;
	r->exit_code = (int)ec;
	if (id && !cJSON_IsNull(id)) {
		if (!cJSON_IsObject(id))
			return pg_error_set(PG_EFORMAT, "identity is not an object");
		if ((rc = read_identity(r, id)))
			return rc;
	}
	return record_check_fields(r);
}

/* The fields whose form is fixed: the id, time, series, kind and verdict. */
int record_check_fields(const struct history_record *r)
{
	if (!record_id_valid(r->record_id))
		return pg_error_set(
		    PG_EFORMAT, "record_id '%s' is not letters, digits, '_' and '-'", r->record_id);
	if (!time_valid(r->time))
		return pg_error_set(PG_EFORMAT, "time '%s' is not of the form 2024-05-01T12:00:00Z",
				    r->time);
	if (!series_valid(r->series))
		return pg_error_set(PG_EFORMAT, "series '%s' is not a valid series name",
				    r->series);
	if (strcmp(r->series, HISTORY_INDEX_NAME) == 0)
		return pg_error_set(PG_EFORMAT,
				    "series '%s' is reserved (the history branch's index file)",
				    r->series);
	if (!history_kind_valid(r->kind))
		return pg_error_set(PG_EFORMAT, "kind '%s' is not pr, main, nightly or manual",
				    r->kind);
	if (!history_verdict_valid(r->verdict))
		return pg_error_set(PG_EFORMAT, "verdict '%.40s' is not one a gate gives",
				    r->verdict);
	return 0;
}

int history_line_check(size_t len)
{
	if (len <= HISTORY_MAX_LINE)
		return 0;
	return pg_error_set(PG_ELIMIT,
			    "the record is %zu bytes, over the limit of %u bytes (%u MiB) that "
			    "every history reader skips",
			    len, HISTORY_MAX_LINE, HISTORY_MAX_LINE >> 20);
}

int history_record_parse(struct history_record *r, const char *line, size_t len)
{
	cJSON *root = NULL;
	const char *schema;
	int rc;

	history_record_init(r);
	if ((rc = history_line_check(len)))
		goto out;
	if ((rc = text_check(line, len)))
		goto out;
	if (record_canonical_parse(r, line, len)) {
		r->line = pg_xstrndup(line, len);
		return 0;
	}
	root = cJSON_ParseWithLength(line, len);
	if (!cJSON_IsObject(root)) {
		rc = pg_error_set(PG_EFORMAT, "not a JSON object");
		goto out;
	}
	schema = str_of(root, "schema");
	if (!schema) {
		rc = pg_error_set(PG_EFORMAT, "no schema");
		goto out;
	}
	if (strcmp(schema, HISTORY_SCHEMA) != 0) {
		rc = strncmp(schema, HISTORY_SCHEMA_PREFIX, strlen(HISTORY_SCHEMA_PREFIX)) == 0
			 ? pg_error_set(
			       PG_EUNSUPP,
			       "record schema '%s' is not one this profgate reads (" HISTORY_SCHEMA
			       "); upgrade profgate",
			       schema)
			 : pg_error_set(PG_EFORMAT, "schema '%s' is not " HISTORY_SCHEMA, schema);
		goto out;
	}
	if ((rc = record_fields(r, root)))
		goto out;
	r->line = pg_xstrndup(line, len);
out:
	cJSON_Delete(root);
	if (rc) {
		/* keep the message, drop what was half read */
		char why[512];
		snprintf(why, sizeof(why), "%s", pg_error_last());
		history_record_release(r);
		pg_error_set(rc, "%s", why);
	}
	return rc;
}

int history_record_load(struct history_record *r, const char *text, size_t len, const char *origin,
			const struct history_env *e, const char *kind)
{
	cJSON *root = cJSON_ParseWithLength(text, len);
	const char *schema = str_of(root, "schema");
	int verdict = schema && strcmp(schema, GATE_VERDICT_SCHEMA) == 0;
	int rc;

	cJSON_Delete(root);
	if (verdict)
		return history_record_from_verdict(r, text, len, origin, e, kind);
	rc = history_record_parse(r, text, len);
	if (rc) {
		char why[512];
		snprintf(why, sizeof(why), "%s", pg_error_last());
		return pg_error_set(rc, "%s: not a history record or a verdict JSON: %s", origin,
				    why);
	}
	free(r->line); /* a file, maybe pretty-printed: written again as one line */
	r->line = NULL;
	if (kind && strcmp(kind, r->kind) != 0) {
		history_record_release(r);
		return pg_error_set(PG_EUSAGE, "%s: --kind %s: the record already says kind %s",
				    origin, kind, r->kind);
	}
	return 0;
}

/* ---- writing ---- */

static void kv_str(struct pg_json *j, const char *k, const char *v)
{
	pg_json_key(j, k);
	pg_json_str(j, v);
}

static void kv_int(struct pg_json *j, const char *k, int64_t v)
{
	pg_json_key(j, k);
	if (v < 0)
		pg_json_null(j);
	else
		pg_json_int(j, v);
}

static void write_identity(struct pg_json *j, const struct history_record *r)
{
	pg_json_key(j, "identity");
	pg_json_obj_begin(j);
	for (uint32_t i = 0; i < r->n_identity; i++) {
		const struct history_field *f = &r->identity[i];
		pg_json_key(j, f->key);
		if (f->type == HISTORY_STRING) {
			pg_json_str(j, f->text);
		} else if (f->type == HISTORY_NUMBER) {
			pg_json_raw(j, f->text); /* made by record_number_text() */
		} else {
			pg_json_null(j);
		}
	}
	pg_json_obj_end(j);
}

void history_record_write(const struct history_record *r, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 0);
	pg_json_obj_begin(&j);
	kv_str(&j, "schema", HISTORY_SCHEMA);
	kv_str(&j, "record_id", r->record_id);
	kv_str(&j, "time", r->time);
	kv_str(&j, "series", r->series);
	kv_str(&j, "label", r->label);
	kv_str(&j, "kind", r->kind);
	kv_str(&j, "verdict", r->verdict);
	kv_int(&j, "exit_code", r->exit_code);
	kv_str(&j, "repo", r->repo);
	kv_str(&j, "sha", r->sha);
	kv_str(&j, "ref", r->ref);
	kv_int(&j, "pr", r->pr);
	kv_str(&j, "run_id", r->run_id);
	kv_int(&j, "run_attempt", r->run_attempt);
	write_identity(&j, r);
	pg_json_key(&j, "metrics");
	pg_json_obj_begin(&j);
	for (uint32_t i = 0; i < r->n_metrics; i++) {
		pg_json_key(&j, r->metrics[i].name);
		pg_json_double(&j, r->metrics[i].value,
			       summary_metric_decimals(r->metrics[i].name));
	}
	pg_json_obj_end(&j);
	pg_json_key(&j, "baseline");
	pg_json_obj_begin(&j);
	kv_str(&j, "kind", r->baseline_kind);
	kv_str(&j, "path", r->baseline_path);
	kv_str(&j, "sha256", r->baseline_sha256);
	kv_str(&j, "summary_sha256", r->baseline_summary_sha256);
	if (r->baseline_window) {
		pg_json_key(&j, "window");
		pg_json_raw(&j, r->baseline_window); /* compact JSON, as read or made */
	}
	pg_json_obj_end(&j);
	if (r->runs) {
		pg_json_key(&j, "runs");
		pg_json_raw(&j, r->runs); /* compact JSON, as read or made */
	}
	kv_str(&j, "summary_sha256", r->summary_sha256);
	kv_str(&j, "thresholds", r->thresholds);
	kv_str(&j, "profgate_version", r->profgate_version);
	pg_json_obj_end(&j);
	pg_buf_addc(out, '\n');
}

void history_record_shard(const struct history_record *r, struct pg_buf *out)
{
	pg_buf_addf(out, "%s/%.7s.jsonl", r->series, r->time);
}

/* ---- shards ---- */

void history_list_move(struct history_list *l, struct history_record *r)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->r = pg_xrealloc(l->r, l->cap * sizeof(*l->r));
	}
	l->r[l->n++] = *r;
	history_record_init(r);
}

void history_list_release(struct history_list *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		history_record_release(&l->r[i]);
	free(l->r);
	memset(l, 0, sizeof(*l));
}

/* The next line of text at *pos, without its "\n" or "\r\n"; 0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl;

	if (*pos >= len)
		return 0;
	*line = text + *pos;
	nl = memchr(*line, '\n', len - *pos);
	*n = nl ? (size_t)(nl - *line) : len - *pos;
	*pos += *n + (nl != NULL);
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	return 1;
}

static int blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return 0;
	return 1;
}

int history_shard_parse(const char *text, size_t len, const char *name, struct history_list *list,
			history_warn_fn warn, void *payload)
{
	size_t pos = 0, n;
	const char *line;
	uint32_t no = 0;

	while (next_line(text, len, &pos, &line, &n)) {
		struct history_record r;
		int rc;

		no++;
		if (blank(line, n))
			continue;
		rc = history_record_parse(&r, line, n);
		if (rc == PG_EUNSUPP) {
			char why[512];
			snprintf(why, sizeof(why), "%s", pg_error_last());
			return pg_error_set(rc, "history: %s:%u: %s", name, no, why);
		}
		if (rc) {
			struct pg_buf msg = PG_BUF_INIT;
			pg_buf_addf(&msg, "history: %s:%u: %s; line skipped", name, no,
				    pg_error_last());
			if (warn)
				warn(payload, msg.ptr);
			pg_buf_release(&msg);
			continue;
		}
		history_list_move(list, &r);
	}
	return 0;
}

int history_shard_has(const char *text, size_t len, const char *record_id)
{
	size_t pos = 0, n;
	const char *line;
	int found = 0;

	while (!found && next_line(text, len, &pos, &line, &n)) {
		cJSON *o;
		if (!memmem(line, n, record_id, strlen(record_id)))
			continue; /* the id is not even in the bytes: no need to parse */
		o = cJSON_ParseWithLength(line, n);
		found = str_of(o, "record_id") && strcmp(str_of(o, "record_id"), record_id) == 0;
		cJSON_Delete(o);
	}
	return found;
}
