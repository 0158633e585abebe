/*
 * The GitHub Actions runtime as files and text: the event JSON (which pull
 * request, which head, a fork or not), $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY,
 * and workflow commands (annotations, masks) built as text for the command
 * layer to print. Formats: ../shared/docs/integrations.md §4.4 and §4.5.
 */
#include "deliver.h"

#include "../report/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EVENT_MAX_BYTES (16u << 20)

/* ---- the event ---- */

static const cJSON *member(const cJSON *o, const char *key)
{
	return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static char *dup_str(const cJSON *o, const char *key)
{
	const cJSON *v = member(o, key);
	return cJSON_IsString(v) ? pg_xstrdup(v->valuestring) : NULL;
}

static int64_t number_of(const cJSON *o, const char *key)
{
	const cJSON *v = member(o, key);
	int64_t n;

	return cJSON_IsNumber(v) && pg_whole(v->valuedouble, &n) && n >= 1 ? n : -1;
}

static void pull_request_fields(struct actions_event *e, const cJSON *pr)
{
	const cJSON *head = member(pr, "head"), *base = member(pr, "base");
	const cJSON *hrepo = member(head, "repo");

	e->head_sha = dup_str(head, "sha");
	e->base_sha = dup_str(base, "sha");
	e->head_repo = dup_str(hrepo, "full_name");
	e->base_repo = dup_str(member(base, "repo"), "full_name");
	/* a deleted fork leaves head.repo null */
	e->fork = !e->head_repo || !e->base_repo || strcmp(e->head_repo, e->base_repo) != 0;
}

static void workflow_run_fields(struct actions_event *e, const cJSON *run)
{
	const cJSON *prs = member(run, "pull_requests");
	const cJSON *first = cJSON_IsArray(prs) ? cJSON_GetArrayItem(prs, 0) : NULL;

	e->workflow_run = 1;
	e->head_sha = dup_str(run, "head_sha");
	e->head_repo = dup_str(member(run, "head_repository"), "full_name");
	e->base_repo = dup_str(member(run, "repository"), "full_name");
	e->pr = number_of(first, "number"); /* empty for forks: GitHub leaves it out */
}

int actions_event_read(const char *path, struct actions_event *e)
{
	struct pg_buf text = PG_BUF_INIT;
	cJSON *root = NULL;
	const cJSON *pr, *issue;
	int rc;

	memset(e, 0, sizeof(*e));
	e->pr = -1;
	if ((rc = pg_read_small(path, EVENT_MAX_BYTES, 0, &text)))
		goto out;
	root = cJSON_ParseWithLength(text.ptr, text.len);
	if (!cJSON_IsObject(root)) {
		rc = pg_error_set(PG_EFORMAT, "event file '%s' is not a JSON object", path);
		goto out;
	}
	pr = member(root, "pull_request");
	issue = member(root, "issue");
	/* @actions/github: (payload.issue || payload.pull_request || payload).number */
	e->pr = number_of(cJSON_IsObject(issue) ? issue : cJSON_IsObject(pr) ? pr : root, "number");
	if (e->pr < 0 && cJSON_IsObject(pr))
		e->pr = number_of(root, "number");
	if (cJSON_IsObject(pr))
		pull_request_fields(e, pr);
	else if (cJSON_IsObject(member(root, "workflow_run")))
		workflow_run_fields(e, member(root, "workflow_run"));
out:
	cJSON_Delete(root);
	pg_buf_release(&text);
	return rc;
}

void actions_event_release(struct actions_event *e)
{
	free(e->head_sha);
	free(e->base_sha);
	free(e->head_repo);
	free(e->base_repo);
	memset(e, 0, sizeof(*e));
	e->pr = -1;
}

/* ---- workflow commands ---- */

/* The runner decodes %25, %0D, %0A (and in properties %3A, %2C) and nothing
 * else, so the other control bytes a name may hold (ESC, which would colour
 * or move the log's text, TAB, ...) are written as \t and \xNN, as
 * pg_sanitize_line writes them on the terminal. */
static void escape(struct pg_buf *b, const char *s, int property)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '%')
			pg_buf_adds(b, "%25");
		else if (c == '\r')
			pg_buf_adds(b, "%0D");
		else if (c == '\n')
			pg_buf_adds(b, "%0A");
		else if (property && c == ':')
			pg_buf_adds(b, "%3A");
		else if (property && c == ',')
			pg_buf_adds(b, "%2C");
		else if (c == '\t')
			pg_buf_adds(b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			pg_buf_addf(b, "\\x%02x", c);
		else
			pg_buf_addc(b, *s);
	}
}

void actions_escape_data(struct pg_buf *b, const char *s)
{
	escape(b, s, 0);
}

void actions_escape_property(struct pg_buf *b, const char *s)
{
	escape(b, s, 1);
}

void actions_add_mask(struct pg_buf *b, const char *secret)
{
	if (!secret || !*secret)
		return;
	pg_buf_adds(b, "::add-mask::");
	actions_escape_data(b, secret);
	pg_buf_addc(b, '\n');
}

void actions_random_hex(char *out, size_t n_bytes)
{
	unsigned char r[32];
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, r, n_bytes) : -1;
	uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ull ^ (uint64_t)getpid();

	if (fd >= 0)
		close(fd);
	for (size_t i = 0; i < n_bytes; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		if (got != (ssize_t)n_bytes)
			r[i] =
			    (unsigned char)(x >> 56); /* no urandom: still unpredictable enough */
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	}
}

void actions_stop_commands(struct pg_buf *b, char *token)
{
	actions_random_hex(token, 16);
	pg_buf_addf(b, "::stop-commands::%s\n", token);
}

/* ---- annotations ---- */

/* A metric's value in its unit, for people (report/change.c). */
static void value_text(struct pg_buf *b, const char *name, int has, double v)
{
	if (!has) {
		pg_buf_adds(b, "none");
		return;
	}
	report_value(b, report_metric_unit(name), v);
}

static void metric_line(struct pg_buf *out, const char *level, const struct gate_metric_result *m)
{
	static const struct gate_rule info = {.direction = GATE_INFO};
	const struct gate_rule *rule = m->rule ? m->rule : &info;
	const struct gate_limit *l = level[0] == 'e' ? &rule->fail : &rule->warn;
	const char *tier = level[0] == 'e' ? "fail" : "warn";
	double d = m->has_baseline && m->has_candidate ? m->delta : NAN;
	struct pg_buf msg = PG_BUF_INIT, title = PG_BUF_INIT;

	pg_buf_addf(&title, "profgate %s: %s", tier, m->name);
	pg_buf_addf(&msg, "%s: ", m->name);
	value_text(&msg, m->name, m->has_baseline, m->baseline);
	pg_buf_adds(&msg, " -> ");
	value_text(&msg, m->name, m->has_candidate, m->candidate);
	if (isfinite(d)) {
		/* as the report and the terminal print it: pp for shares, % for the rest */
		pg_buf_adds(&msg, " (");
		report_change(&msg, m->name, d, m->delta_share, rule, 0);
		pg_buf_adds(&msg, ")");
	}
	if (l->has_relative || l->has_absolute) {
		pg_buf_addf(&msg, "; %s limit ", tier);
		report_limit(&msg, l, rule->direction, report_metric_unit(m->name));
	}
	if (m->note)
		pg_buf_addf(&msg, "; %s", m->note);
	pg_buf_addf(out, "::%s title=", level);
	actions_escape_property(out, title.ptr);
	pg_buf_adds(out, "::");
	actions_escape_data(out, msg.ptr);
	pg_buf_addc(out, '\n');
	pg_buf_release(&msg);
	pg_buf_release(&title);
}

/* The provenance fields that differ, each value as the verdict JSON holds it
 * (a JSON string). */
static void incomparable_line(struct pg_buf *out, const struct gate_result *r)
{
	struct pg_buf msg = PG_BUF_INIT;

	pg_buf_adds(&msg, "the baseline and the candidate are not comparable");
	if (r->provenance && strcmp(r->provenance, "identical-inputs") == 0)
		pg_buf_adds(&msg, ": they are the same bytes");
	for (uint32_t i = 0; i < r->n_diff; i++) {
		const struct gate_field_diff *d = &r->diff[i];
		pg_buf_addf(&msg, "%s %s: baseline ", i ? ";" : ":", d->field ? d->field : "?");
		pg_json_escape(&msg, d->baseline ? d->baseline : "null",
			       strlen(d->baseline ? d->baseline : "null"));
		pg_buf_adds(&msg, ", candidate ");
		pg_json_escape(&msg, d->candidate ? d->candidate : "null",
			       strlen(d->candidate ? d->candidate : "null"));
	}
	pg_buf_adds(out, "::error title=profgate incomparable::");
	actions_escape_data(out, msg.ptr);
	pg_buf_addc(out, '\n');
	pg_buf_release(&msg);
}

static void more_line(struct pg_buf *out, const char *level, uint32_t more)
{
	pg_buf_addf(out, "::%s title=profgate::%u more %s metrics (see the job summary)\n", level,
		    more, level[0] == 'e' ? "failing" : "warning");
}

/* The metrics of verdict want: how many, and their lines up to room (none
 * when out is NULL), the step metrics first (the headline), then catalogue
 * order. */
static uint32_t metric_lines(const struct gate_result *r, enum gate_verdict want, uint32_t room,
			     struct pg_buf *out)
{
	uint32_t n = 0;

	for (int steps = 1; steps >= 0; steps--)
		for (uint32_t i = 0; i < r->n_metrics; i++) {
			const struct gate_metric_result *m = &r->metrics[i];
			if (m->verdict != want || !m->name ||
			    (strncmp(m->name, "step.", 5) == 0) != steps)
				continue;
			if (n++ < room && out)
				metric_line(out, want == GATE_FAIL ? "error" : "warning", m);
		}
	return n;
}

/* One level's lines: all of them when they fit in max, else max - 1 and a
 * line saying how many more. */
static void level_lines(const struct gate_result *r, enum gate_verdict want, uint32_t max,
			struct pg_buf *out)
{
	int incomparable = want == GATE_FAIL && r->verdict == GATE_INCOMPARABLE;
	uint32_t total = metric_lines(r, want, 0, NULL) + (uint32_t)incomparable;
	uint32_t room = total <= max ? total : max - 1, shown = 0;

	if (incomparable && room > 0) {
		incomparable_line(out, r);
		shown = 1;
	}
	metric_lines(r, want, room - shown, out);
	if (total > room)
		more_line(out, want == GATE_FAIL ? "error" : "warning", total - room);
}

void actions_annotations(const struct gate_result *r, uint32_t max, struct pg_buf *out)
{
	if (max > 0) {
		level_lines(r, GATE_FAIL, max, out);
		level_lines(r, GATE_WARN, max, out);
	}
}

/* ---- $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY ---- */

/* A delimiter no line of value equals: ghadelimiter_<random hex>. */
static void delimiter(const char *value, char out[64])
{
	do {
		memcpy(out, "ghadelimiter_", 13);
		actions_random_hex(out + 13, 12);
	} while (strstr(value, out));
}

static int append_file(const char *path, const char *what, const void *p, size_t n)
{
	FILE *f = fopen(path, "ab");
	int bad;

	if (!f)
		return pg_error_set(PG_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
	bad = fwrite(p, 1, n, f) != n;
	bad |= fclose(f) != 0;
	if (bad)
		return pg_error_set(PG_EIO, "cannot write %s '%s': %s", what, path,
				    strerror(errno));
	return 0;
}

int actions_output(const char *path, const char *name, const char *value)
{
	struct pg_buf b = PG_BUF_INIT;
	char delim[64];
	int rc;

	if (!value)
		value = "";
	if (strchr(value, '\n') || strchr(value, '\r')) {
		delimiter(value, delim);
		pg_buf_addf(&b, "%s<<%s\n%s\n%s\n", name, delim, value, delim);
	} else {
		pg_buf_addf(&b, "%s=%s\n", name, value);
	}
	rc = append_file(path, "$GITHUB_OUTPUT", b.ptr, b.len);
	pg_buf_release(&b);
	return rc;
}

int actions_step_summary(const char *path, const char *md, size_t len)
{
	struct stat st;
	struct pg_buf b = PG_BUF_INIT;
	size_t used = stat(path, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
	size_t room =
	    used + 2 < ACTIONS_SUMMARY_MAX_BYTES ? ACTIONS_SUMMARY_MAX_BYTES - used - 2 : 0;
	int rc;

	if (used > 0)
		pg_buf_adds(&b, "\n");
	github_md_fit(md, len, room, "the report file (the report_path output)", &b);
	if (b.len > room + 1) {
		/* not even the note fits: leave the summary as it is */
		pg_buf_release(&b);
		return 0;
	}
	rc = append_file(path, "$GITHUB_STEP_SUMMARY", b.ptr, b.len);
	pg_buf_release(&b);
	return rc;
}
