/*
 * What every fuzz target shares (fuzz.h): invariant checks, and the stages
 * downstream of a parser -- summarize, the summary JSON round trip, the gate,
 * the verdict JSON as a history record, both markdown reports.
 */
#include "fuzz.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyze/analyze.h"
#include "../../src/history/history.h"
#include "../../src/read/read.h"
#include "../../src/report/report.h"

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: fuzz invariant broken: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

char *fuzz_text(const uint8_t *data, size_t size)
{
	char *s = pg_xmalloc(size + 1);

	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Written apart from pg_utf8_seq on purpose: the oracle must not share the
 * code it checks. */
int fuzz_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;

	while (p < end) {
		unsigned c = *p, need, min;
		uint32_t cp;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		if ((size_t)(end - p) <= need)
			return 0;
		for (unsigned i = 1; i <= need; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += need + 1;
	}
	return 1;
}

void fuzz_check_error_line(void)
{
	const char *m = pg_error_last();

	for (const char *p = m; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f,
			   "control byte 0x%02x in the error message: %s", (unsigned char)*p, m);
}

/* One line of a report: outside code spans (and backslash escapes) no HTML
 * but <sub>, no @mention, no link bracket. Returns the unescaped pipes. */
static int check_md_line(const char *l, size_t n, size_t lineno)
{
	int pipes = 0, code = 0;

	for (size_t i = 0; i < n; i++) {
		char c = l[i];
		if (c == '|' && (i == 0 || l[i - 1] != '\\'))
			pipes++;
		if (c == '`') {
			code = !code;
			continue;
		}
		if (code)
			continue;
		if (c == '\\') {
			i++;
			continue;
		}
		if (c == '<' && i + 1 < n &&
		    (isalpha((unsigned char)l[i + 1]) || l[i + 1] == '/' || l[i + 1] == '!' ||
		     l[i + 1] == '?'))
			FUZZ_CHECK((n - i >= 5 && memcmp(l + i, "<sub>", 5) == 0) ||
				       (n - i >= 6 && memcmp(l + i, "</sub>", 6) == 0),
				   "line %zu: HTML: %.*s", lineno, (int)n, l);
		FUZZ_CHECK(!(c == '@' && i + 1 < n && isalnum((unsigned char)l[i + 1])),
			   "line %zu: a mention: %.*s", lineno, (int)n, l);
		FUZZ_CHECK(c != '[', "line %zu: a link: %.*s", lineno, (int)n, l);
	}
	FUZZ_CHECK(!code, "line %zu: a code span left open: %.*s", lineno, (int)n, l);
	return pipes;
}

void fuzz_check_markdown(const char *md, size_t len)
{
	int header = -1;
	size_t lineno = 0;

	FUZZ_CHECK(fuzz_utf8_valid(md, len), "a report is not UTF-8");
	for (size_t at = 0; at < len;) {
		const char *l = md + at, *nl = memchr(l, '\n', len - at);
		size_t n = nl ? (size_t)(nl - l) : len - at;
		lineno++;
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK((unsigned char)l[i] >= 0x20 && l[i] != 0x7f,
				   "line %zu: control byte 0x%02x", lineno, (unsigned char)l[i]);
		int pipes = check_md_line(l, n, lineno);
		if (n > 0 && l[0] == '|') {
			if (header < 0)
				header = pipes;
			FUZZ_CHECK(pipes == header, "line %zu: %d cells, header %d: %.*s", lineno,
				   pipes, header, (int)n, l);
		} else {
			header = -1;
		}
		at += n + 1;
	}
}

uint32_t fuzz_trace_open(struct trace *t, const char *path)
{
	trace_init(t);
	t->decode_threads = 1;
	return trace_file_add(t, path);
}

void fuzz_summary_downstream(const struct summary *s)
{
	struct pg_buf json = PG_BUF_INIT, again = PG_BUF_INIT, md = PG_BUF_INIT;
	struct summary back;

	summary_write_json(s, &json);
	FUZZ_CHECK(fuzz_utf8_valid(json.ptr, json.len), "summary JSON is not UTF-8");
	int rc = summary_parse_json(json.ptr, json.len, "fuzz.summary.json", &back);
	FUZZ_CHECK(rc == 0, "a written summary does not read back: %s", pg_error_last());
	summary_write_json(&back, &again);
	FUZZ_CHECK(again.len == json.len && memcmp(again.ptr, json.ptr, json.len) == 0,
		   "a summary read back is written differently (%zu vs %zu bytes)", again.len,
		   json.len);
	report_summary_md(s, &md);
	fuzz_check_markdown(md.ptr, md.len);
	summary_release(&back);
	pg_buf_release(&json);
	pg_buf_release(&again);
	pg_buf_release(&md);
}

void fuzz_trace_summary(const struct trace *t, struct summary *s)
{
	struct analyze_options o;

	analyze_options_init(&o);
	o.version = "fuzz";
	summary_init(s);
	analyze_summarize(t, &o, s);
}

void fuzz_trace_downstream(const struct trace *t)
{
	struct summary s;

	fuzz_trace_summary(t, &s);
	fuzz_summary_downstream(&s);
	summary_release(&s);
}

/* The verdict JSON as `history append` takes it: a record that writes one
 * line, which reads back as the same record, in a shard that is a relative
 * path of two safe parts. */
static void verdict_to_record(const struct pg_buf *verdict)
{
	struct history_env e = {0};
	struct history_record r, back;
	struct pg_buf line = PG_BUF_INIT, shard = PG_BUF_INIT, again = PG_BUF_INIT;

	e.time = "2024-05-01T12:00:00Z";
	int rc =
	    history_record_from_verdict(&r, verdict->ptr, verdict->len, "verdict.json", &e, NULL);
	FUZZ_CHECK(rc == 0, "a verdict JSON gate wrote is not a record: %s", pg_error_last());
	history_record_write(&r, &line);
	FUZZ_CHECK(line.len > 0 && line.ptr[line.len - 1] == '\n' &&
		       memchr(line.ptr, '\n', line.len) == line.ptr + line.len - 1,
		   "a record is not one line");
	FUZZ_CHECK(fuzz_utf8_valid(line.ptr, line.len), "a record line is not UTF-8");
	rc = history_record_parse(&back, line.ptr, line.len - 1);
	FUZZ_CHECK(rc == 0, "a record written does not read back: %s", pg_error_last());
	history_record_write(&back, &again);
	FUZZ_CHECK(again.len == line.len && memcmp(again.ptr, line.ptr, line.len) == 0,
		   "a record read back is written differently");
	history_record_shard(&r, &shard);
	FUZZ_CHECK(shard.ptr[0] != '/' && shard.ptr[0] != '.' && !strstr(shard.ptr, "..") &&
		       strchr(shard.ptr, '/') == strrchr(shard.ptr, '/'),
		   "shard '%s' is not <series>/<month>.jsonl", shard.ptr);
	history_record_release(&r);
	history_record_release(&back);
	pg_buf_release(&line);
	pg_buf_release(&shard);
	pg_buf_release(&again);
}

void fuzz_gate_downstream(const struct summary *b, const struct summary *c,
			  const struct gate_thresholds *th)
{
	struct gate_inputs in;
	struct gate_result r;
	struct pg_buf json = PG_BUF_INIT, md = PG_BUF_INIT;

	memset(&in, 0, sizeof(in));
	in.baseline_path = "baseline.json";
	in.candidate_path = "candidate.json";
	in.baseline_sha256 = "1111111111111111111111111111111111111111111111111111111111111111";
	in.candidate_sha256 = "2222222222222222222222222222222222222222222222222222222222222222";
	in.label = "fuzz";
	in.thresholds_origin = "fuzz.thresholds.json";
	in.version = "fuzz";
	gate_compare(b, c, th, &in, &r);
	gate_result_write_json(&r, &json);
	FUZZ_CHECK(fuzz_utf8_valid(json.ptr, json.len), "verdict JSON is not UTF-8");
	report_compare_md(&r, &md);
	fuzz_check_markdown(md.ptr, md.len);
	verdict_to_record(&json);
	gate_result_release(&r);
	pg_buf_release(&json);
	pg_buf_release(&md);
}

/* A Kineto trace: 8 profiler steps on one host thread, each launching a
 * matmul, an all-reduce and an elementwise kernel on one GPU stream. */
static void reference_trace(struct pg_buf *b, double scale)
{
	const char *kernels[] = {"volta_sgemm_128x64_nn", "ncclDevKernel_AllReduce_Sum_f32",
				 "vectorized_elementwise_kernel"};
	const double dur[] = {600, 250, 120};
	long long ts = 1000, corr = 1;

	pg_buf_adds(b, "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA "
		       "H100\"}],\"distributedInfo\":{\"rank\":0,\"world_size\":1},"
		       "\"traceEvents\":[");
	pg_buf_adds(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"args\":{\"name\":"
		       "\"python3\"}},{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{"
		       "\"name\":\"GPU 0\"}}");
	for (int step = 1; step <= 8; step++) {
		long long start = ts;
		for (int k = 0; k < 3; k++) {
			long long d = (long long)(dur[k] * (k == 0 ? scale : 1.0));
			pg_buf_addf(
			    b,
			    ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":"
			    "\"cudaLaunchKernel\",\"pid\":0,\"tid\":1,\"ts\":%lld,\"dur\":5,"
			    "\"args\":{\"correlation\":%lld}}",
			    ts + 1, corr);
			pg_buf_addf(b,
				    ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":1,"
				    "\"tid\":7,\"ts\":%lld,\"dur\":%lld,\"args\":{\"device\":0,"
				    "\"stream\":7,\"correlation\":%lld}}",
				    kernels[k], ts + 10, d, corr);
			ts += d + 20;
			corr++;
		}
		pg_buf_addf(
		    b,
		    ",{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
		    "\"pid\":0,\"tid\":1,\"ts\":%lld,\"dur\":%lld}",
		    step, start, ts - start + 5);
		ts += 30;
	}
	pg_buf_adds(b, "]}");
}

void fuzz_reference_summary(struct summary *s, double steps_scale)
{
	struct pg_buf text = PG_BUF_INIT;
	struct analyze_options o;
	struct trace t;
	struct rd_in in;
	uint32_t f = fuzz_trace_open(&t, "reference.pt.trace.json");

	reference_trace(&text, steps_scale);
	FUZZ_CHECK(rd_in_open_mem(&in, text.ptr, text.len, 0) == 0, "rd_in_open_mem");
	t.files[f].format = TRACE_FMT_CHROME_JSON;
	FUZZ_CHECK(read_chrome_json(&t, f, &in) == 0, "the reference trace: %s", pg_error_last());
	rd_in_close(&in);
	snprintf(t.files[f].sha256, sizeof(t.files[f].sha256), "%064x",
		 (unsigned)(steps_scale * 1000));
	analyze_options_init(&o);
	o.version = "fuzz";
	summary_init(s);
	analyze_summarize(&t, &o, s);
	trace_release(&t);
	pg_buf_release(&text);
}
