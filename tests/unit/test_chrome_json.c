/*
 * Chrome trace JSON reader tests: small fixtures written to a temp dir (plain and gzip) and
 * read with read_path(); asserts on the trace model, the warnings, and the errors and rollback
 * of bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/read/read.h"
#include "helpers.h"
#include "../../src/trace/trace.h"

static int setup(void **state)
{
	(void)state;
	return th_dir_make("test-json");
}

static int teardown(void **state)
{
	(void)state;
	return th_dir_remove();
}

/* ---- fixtures ---- */

static char *path_of(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 512, "%s/%s", th_dir, name);
	return p;
}

static const char *write_bytes(const char *name, const void *data, size_t n)
{
	char *p = path_of(name);
	FILE *f = fopen(p, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return p;
}

static const char *fixture(const char *name, const char *text)
{
	return write_bytes(name, text, strlen(text));
}

static const char *fixture_gz(const char *name, const char *text)
{
	char *p = path_of(name);
	gzFile g = gzopen(p, "wb");

	assert_non_null(g);
	assert_int_equal(gzwrite(g, text, (unsigned)strlen(text)), (int)strlen(text));
	assert_int_equal(gzclose(g), Z_OK);
	return p;
}

static off_t file_size(const char *p)
{
	struct stat st;

	assert_int_equal(stat(p, &st), 0);
	return st.st_size;
}

static void read_ok(struct trace *t, const char *path)
{
	int rc = read_path(t, path);

	if (rc)
		fail_msg("read_path(%s) = %d: %s", path, rc, pg_error_last());
}

/* The message of a failed read: names the file and says where. */
static void read_fails(struct trace *t, const char *path, const char *why)
{
	pg_error_clear();
	int rc = read_path(t, path);

	if (rc >= 0)
		fail_msg("read_path(%s) succeeded, expected an error about '%s'", path, why);
	const char *msg = pg_error_last();
	if (!strstr(msg, path) || !strstr(msg, why))
		fail_msg("message '%s' should name '%s' and say '%s'", msg, path, why);
}

static const struct trace_event *event_named(const struct trace *t, const char *name, int nth)
{
	for (uint64_t i = 0; i < t->n_events; i++) {
		const struct trace_event *e = trace_event_at(t, i);
		if (strcmp(trace_str_get(t, e->name), name) == 0 && nth-- == 0)
			return e;
	}
	fail_msg("no event named '%s'", name);
	return NULL;
}

static const struct trace_track *track_named(const struct trace *t, const char *name)
{
	for (uint32_t i = 0; i < t->n_tracks; i++)
		if (strcmp(trace_str_get(t, t->tracks[i].name), name) == 0)
			return &t->tracks[i];
	fail_msg("no track named '%s'", name);
	return NULL;
}

static const struct trace_warning *warning(const struct trace *t, const char *code)
{
	for (uint32_t i = 0; i < t->n_warnings; i++)
		if (strcmp(t->warnings[i].code, code) == 0)
			return &t->warnings[i];
	return NULL;
}

static const char *arg(const struct trace *t, const struct trace_event *e, const char *key)
{
	trace_str k = trace_str_find(t, key);
	trace_str v = k ? trace_arg_get(t, e->args, k) : 0;

	return v ? trace_str_get(t, v) : NULL;
}

static uint64_t phase_total(const struct trace_file *f)
{
	uint64_t n = 0;

	for (int i = 0; i < 128; i++)
		n += f->phase_counts[i];
	return n;
}

/* ---- chunk boundaries ---- */

static int read_mem(struct trace *t, const char *text, size_t window)
{
	uint32_t f = trace_file_add(t, "cut.pt.trace.json");
	struct rd_in in;
	int rc;

	t->files[f].format = TRACE_FMT_CHROME_JSON;
	assert_int_equal(rd_in_open_mem(&in, text, strlen(text), window), 0);
	rc = read_chrome_json(t, f, &in);
	rd_in_close(&in);
	return rc;
}

/* The scanner's fast paths (keys read whole or in place, plain decimals,
 * pids, strings scanned 16 bytes at a time) give way to the general ones wherever a chunk
 * ends: the events are the same for every cut. */
static void same_events_at_every_chunk_cut(void **state)
{
	static const char text[] =
	    "{\"traceEvents\":[\n"
	    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::a rather long operator name\","
	    "\"pid\":2910249,\"tid\":2919752,\"ts\":4458676582922.766,\"dur\":337.265,"
	    "\"args\":{\"External id\":3411,\"Ev Idx\":-1.5e3,\"flops\":123456789012345678}},\n"
	    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\u0041\\\"q\",\"pid\":0,\"tid\":"
	    "\"stream 7\","
	    "\"ts\":123456789012.345678,\"dur\":0.0005,\"args\":{\"correlation\":77,"
	    "\"gr\\u006fup_id\":\"g\"}},\n"
	    "{\"ph\":\"X\",\"name\":\"digits\",\"pid\":-3,\"tid\":1.50,"
	    "\"ts\":1712195495505582.9885,\"dur\":00012.5}, \n"
	    "{\"ph\":\"X\",\"name\":\"max\",\"pid\":1e2,\"tid\":2,\"ts\":9223372036854775.807,"
	    "\"dur\":0.0004999},\n"
	    "{ \"ph\" : \"i\" , \"name\" : \"spaced\" , \"pid\" : 1 , \"tid\" : 2 , "
	    "\"ts\" : -0.000 , \"s\" : \"t\" },\n"
	    /* keys read whole from one word, near misses of them, escaped ones */
	    "{\"p\\u0068\":\"X\",\"nam\\u0065\":\"near\",\"pi\":1,\"pidx\":9,\"pid\":4,"
	    "\"tsx\":5,\"tid\":6,\"ts\":7,\"durr\":1,\"dur\":2,\"catx\":\"c\",\"ar\":{},"
	    "\"names\":\"no\",\"t\":3,\"d\\u0075r\":2}\n"
	    "]}";
	struct trace whole, cut;

	(void)state;
	trace_init(&whole);
	assert_int_equal(read_mem(&whole, text, 0), 0);
	assert_int_equal(whole.n_events, 6);
	for (size_t w = 1; w <= 80; w++) {
		trace_init(&cut);
		if (read_mem(&cut, text, w))
			fail_msg("window %zu: %s", w, pg_error_last());
		assert_int_equal(cut.n_events, whole.n_events);
		for (uint64_t i = 0; i < whole.n_events; i++) {
			const struct trace_event *a = trace_event_at(&whole, i),
						 *b = trace_event_at(&cut, i);
			assert_int_equal(a->ts_ns, b->ts_ns);
			assert_int_equal(a->dur_ns, b->dur_ns);
			assert_int_equal(a->corr, b->corr);
			assert_string_equal(trace_str_get(&whole, a->name),
					    trace_str_get(&cut, b->name));
			assert_string_equal(trace_str_get(&whole, whole.tracks[a->track].pid),
					    trace_str_get(&cut, cut.tracks[b->track].pid));
			assert_string_equal(trace_str_get(&whole, whole.tracks[a->track].tid),
					    trace_str_get(&cut, cut.tracks[b->track].tid));
			const struct trace_arg *aa, *ba;
			uint32_t na = trace_argset_get(&whole, a->args, &aa),
				 nb = trace_argset_get(&cut, b->args, &ba);
			assert_int_equal(na, nb);
			for (uint32_t k = 0; k < na; k++) {
				assert_string_equal(trace_str_get(&whole, aa[k].key),
						    trace_str_get(&cut, ba[k].key));
				assert_string_equal(trace_str_get(&whole, aa[k].value),
						    trace_str_get(&cut, ba[k].value));
			}
		}
		trace_release(&cut);
	}
	const struct trace_event *e = event_named(&whole, "aten::a rather long operator name", 0);
	assert_int_equal(e->ts_ns, 4458676582922766LL);
	assert_int_equal(e->dur_ns, 337265);
	assert_string_equal(arg(&whole, e, "flops"), "123456789012345678");
	e = event_named(&whole, "kA\"q", 0);
	assert_int_equal(e->ts_ns, 123456789012346LL);
	assert_int_equal(e->dur_ns, 1);
	assert_int_equal(e->corr, 77);
	assert_string_equal(arg(&whole, e, "group_id"), "g");
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].tid), "stream 7");
	e = event_named(&whole, "digits", 0);
	assert_int_equal(e->ts_ns, 1712195495505582989LL);
	assert_int_equal(e->dur_ns, 12500);
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].pid), "-3");
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].tid), "1.50");
	e = event_named(&whole, "max", 0);
	assert_int_equal(e->ts_ns, INT64_MAX);
	assert_int_equal(e->dur_ns, 0);
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].pid), "1e2");
	assert_int_equal(event_named(&whole, "spaced", 0)->ts_ns, 0);
	e = event_named(&whole, "near", 0);
	assert_int_equal(e->ph, 'X');
	assert_int_equal(e->ts_ns, 7000);
	assert_int_equal(e->dur_ns, 2000);
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].pid), "4");
	assert_string_equal(trace_str_get(&whole, whole.tracks[e->track].tid), "6");
	trace_release(&whole);
}

/* A malformed number is the same error wherever a chunk ends. */
static void bad_numbers_at_every_chunk_cut(void **state)
{
	static const char *const bad[] = {
	    "[{\"ph\":\"X\",\"ts\":12.,\"dur\":1}]",
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":1-2}]",
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"x\":3.e5}}]",
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":-}]",
	    "[{\"ph\":\"X\",\"ts\":9223372036854775.808,\"dur\":1}]",
	};

	(void)state;
	for (size_t i = 0; i < PG_ARRAY_LEN(bad); i++) {
		struct trace t;
		char whole[512];
		trace_init(&t);
		assert_true(read_mem(&t, bad[i], 0) < 0);
		snprintf(whole, sizeof(whole), "%s", pg_error_last());
		trace_release(&t);
		for (size_t w = 1; w <= strlen(bad[i]); w++) {
			trace_init(&t);
			assert_true(read_mem(&t, bad[i], w) < 0);
			assert_string_equal(pg_error_last(), whole);
			trace_release(&t);
		}
	}
}

/* ---- forms and counts ---- */

#define THREE_EVENTS                                                                               \
	"{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":2},"                    \
	"{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":2,\"ts\":5,\"dur\":1},"                    \
	"{\"ph\":\"i\",\"name\":\"c\",\"pid\":1,\"tid\":2,\"ts\":7,\"s\":\"t\"}"

static void object_and_bare_array(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(&t, fixture("obj.json", "{\"traceEvents\":[" THREE_EVENTS "]}"));
	read_ok(&t, fixture("arr.json", "[" THREE_EVENTS "]"));
	/* JAX ends its array with an empty object: an entry, but no phase and no event */
	read_ok(&t, fixture("trail.json", "{\"traceEvents\":[" THREE_EVENTS ",{}]}"));
	read_ok(&t, fixture("empty.json", "{\"traceEvents\":[]}"));
	assert_int_equal(t.n_files, 4);
	for (int i = 0; i < 3; i++) {
		const struct trace_file *f = &t.files[i];
		assert_int_equal(f->format, TRACE_FMT_CHROME_JSON);
		assert_int_equal(f->dialect, TRACE_DIALECT_GENERIC);
		assert_int_equal(f->entries, i == 2 ? 4 : 3);
		assert_int_equal(phase_total(f), 3);
		assert_int_equal(f->phase_counts['X'], 2);
		assert_int_equal(f->phase_counts['i'], 1);
		assert_int_equal(f->events_kept, 3);
		assert_int_equal(f->compressed, 0);
		assert_int_equal(f->bytes, (uint64_t)file_size(f->path));
		assert_int_equal(f->content_bytes, f->bytes);
	}
	assert_int_equal(t.files[3].entries, 0);
	assert_int_equal(t.n_events, 9);
	assert_int_equal(t.n_warnings, 0);
	trace_release(&t);
}

static void gzip_bom_and_concatenated_members(void **state)
{
	struct trace t;
	const char *one = "{\"traceEvents\":[" THREE_EVENTS "]}";
	char *p = path_of("two_members.json.gz");
	gzFile g;

	(void)state;
	trace_init(&t);
	read_ok(&t, fixture_gz("one.json.gz", one));
	assert_int_equal(t.files[0].compressed, 1);
	assert_int_equal(t.files[0].content_bytes, strlen(one));
	assert_int_equal(t.files[0].bytes, (uint64_t)file_size(t.files[0].path));
	assert_int_equal(t.files[0].entries, 3);
	/* the same JSON split over two gzip members, as `cat a.gz b.gz` makes */
	g = gzopen(p, "wb");
	gzwrite(g, one, 20);
	gzclose(g);
	g = gzopen(p, "ab");
	gzwrite(g, one + 20, (unsigned)strlen(one) - 20);
	gzclose(g);
	read_ok(&t, p);
	assert_int_equal(t.files[1].entries, 3);
	assert_int_equal(t.files[1].content_bytes, strlen(one));
	/* a UTF-8 byte order mark before the JSON */
	read_ok(&t, fixture("bom.json", "\xef\xbb\xbf[" THREE_EVENTS "]"));
	assert_int_equal(t.files[2].entries, 3);
	assert_int_equal(t.n_warnings, 0); /* complete streams: no ends-early */
	trace_release(&t);
}

static void phase_counts(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture(
		"phases.json",
		"[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}},"
		"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":1,\"args\":{\"v\":1}},"
		"{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":2,\"args\":{\"v\":2}},"
		"{\"ph\":\"X\",\"name\":\"x\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
		"{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":3},"
		"{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4},"
		"{\"ph\":\"I\",\"name\":\"i\",\"pid\":1,\"tid\":1,\"ts\":5},"
		"{\"ph\":\"n\",\"name\":\"n\",\"cat\":\"c\",\"id\":3,\"pid\":1,\"tid\":1,\"ts\":5},"
		"{\"ph\":\"s\",\"name\":\"f\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":1},"
		"{\"ph\":\"t\",\"name\":\"f\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":2},"
		"{\"ph\":\"f\",\"name\":\"f\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":3},"
		"{\"ph\":\"b\",\"name\":\"a\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":1},"
		"{\"ph\":\"e\",\"name\":\"a\",\"cat\":\"c\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":9},"
		"{\"ph\":\"P\",\"name\":\"sample\",\"pid\":1,\"tid\":1,\"ts\":9}]"));
	const struct trace_file *f = &t.files[0];
	assert_int_equal(f->entries, 14);
	assert_int_equal(f->phase_counts['M'], 1);
	assert_int_equal(f->phase_counts['C'], 2);
	assert_int_equal(f->phase_counts['X'], 1);
	assert_int_equal(f->phase_counts['B'], 1);
	assert_int_equal(f->phase_counts['E'], 1);
	assert_int_equal(f->phase_counts['I'], 1);
	assert_int_equal(f->phase_counts['n'], 1);
	assert_int_equal(f->phase_counts['s'], 1);
	assert_int_equal(f->phase_counts['t'], 1);
	assert_int_equal(f->phase_counts['f'], 1);
	assert_int_equal(f->phase_counts['b'], 1);
	assert_int_equal(f->phase_counts['e'], 1);
	assert_int_equal(f->phase_counts['P'], 1);
	assert_int_equal(phase_total(f), 14);
	/* kept: X, the B/E pair as one, I, n, s, t, f, the b/e pair as one = 8, of which the
	 * three flow endpoints are counted, not stored */
	assert_int_equal(f->events_kept, 8);
	assert_int_equal(t.n_events, 5);
	trace_release(&t);
}

/* ---- time ---- */

static void ts_to_ns_exactly(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(&t,
		fixture("times.json",
			"[{\"ph\":\"X\",\"name\":\"epoch\",\"ts\":1712195495505582.988,"
			"\"dur\":9.9999999999999995e-07},"
			"{\"ph\":\"X\",\"name\":\"exp\",\"ts\":1e3,\"dur\":1.5E+2},"
			"{\"ph\":\"X\",\"name\":\"half\",\"ts\":2.5e-3,\"dur\":0.0005},"
			"{\"ph\":\"X\",\"name\":\"below\",\"ts\":0.0004999,\"dur\":0.001},"
			"{\"ph\":\"X\",\"name\":\"neg\",\"ts\":-1.5,\"dur\":0},"
			"{\"ph\":\"X\",\"name\":\"quoted\",\"ts\":\"12.5\",\"dur\":\"1e3\"},"
			"{\"ph\":\"X\",\"name\":\"max\",\"ts\":9223372036854775.807,\"dur\":0.000},"
			"{\"ph\":\"X\",\"name\":\"long\",\"ts\":123456789012.345678,\"dur\":1},"
			"{\"ph\":\"X\",\"name\":\"digits\",\"ts\":1712195495505582.9885,"
			"\"dur\":0.00049999999999999999999}]"));
	const struct trace_event *e = event_named(&t, "epoch", 0);
	/* the decimal text, not a double: a double would be off by tens of ns here */
	assert_int_equal(e->ts_ns, 1712195495505582988LL);
	/* JAX's 1 ps minimum, %.17g-formatted: 0.001 ns rounds to 0 */
	assert_int_equal(e->dur_ns, 0);
	assert_int_equal(e->ph, 'X');
	e = event_named(&t, "exp", 0);
	assert_int_equal(e->ts_ns, 1000000);
	assert_int_equal(e->dur_ns, 150000);
	e = event_named(&t, "half", 0); /* 2.5 ns and 0.5 ns: half rounds up */
	assert_int_equal(e->ts_ns, 3);
	assert_int_equal(e->dur_ns, 1);
	e = event_named(&t, "below", 0);
	assert_int_equal(e->ts_ns, 0);
	assert_int_equal(e->dur_ns, 1);
	e = event_named(&t, "neg", 0);
	assert_int_equal(e->ts_ns, -1500);
	e = event_named(&t, "quoted", 0);
	assert_int_equal(e->ts_ns, 12500);
	assert_int_equal(e->dur_ns, 1000000);
	e = event_named(&t, "max", 0);
	assert_int_equal(e->ts_ns, INT64_MAX);
	e = event_named(&t, "long", 0);
	assert_int_equal(e->ts_ns, 123456789012346LL); /* 123456789012345.678 ns */
	assert_int_equal(e->dur_ns, 1000);
	/* past 19 significant digits the first dropped digit still rounds */
	e = event_named(&t, "digits", 0);
	assert_int_equal(e->ts_ns, 1712195495505582989LL);
	assert_int_equal(e->dur_ns, 0);
	/* one ns past INT64_MAX is refused, not wrapped */
	read_fails(&t,
		   fixture("range.json", "[{\"ph\":\"X\",\"ts\":9223372036854775.808,\"dur\":1}]"),
		   "out of range");
	trace_release(&t);
}

static void display_time_unit_is_not_a_scale(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(&t, fixture("ns.json", "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["
				       "{\"ph\":\"X\",\"name\":\"k\",\"ts\":10.5,\"dur\":2}]}"));
	read_ok(&t, fixture("ms.json", "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"ts\":10.5,"
				       "\"dur\":2}],\"displayTimeUnit\":\"ms\"}"));
	assert_string_equal(t.files[0].display_time_unit, "ns");
	assert_string_equal(t.files[1].display_time_unit, "ms");
	for (int i = 0; i < 2; i++) {
		const struct trace_event *e = event_named(&t, "k", i);
		assert_int_equal(e->ts_ns, 10500); /* µs either way */
		assert_int_equal(e->dur_ns, 2000);
	}
	trace_release(&t);
}

/* ---- phases ---- */

static void begin_end_pairs(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture("be.json",
		    "[{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":1,"
		    "\"args\":{\"name\":\"first\"}},"
		    "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":2},"
		    "{\"ph\":\"B\",\"name\":\"other\",\"pid\":1,\"tid\":2,\"ts\":3},"
		    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":5,\"args\":{\"name\":\"ignored\"}},"
		    "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":6},"
		    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":9}]"));
	assert_int_equal(t.n_events, 3);
	/* the innermost open begin on the same thread closes first */
	const struct trace_event *in = event_named(&t, "inner", 0);
	assert_int_equal(in->ph, 'X');
	assert_true(in->flags & TRACE_EV_FROM_BE);
	assert_int_equal(in->ts_ns, 2000);
	assert_int_equal(in->dur_ns, 3000);
	const struct trace_event *out = event_named(&t, "outer", 0);
	assert_true(out->flags & TRACE_EV_FROM_BE);
	assert_int_equal(out->ts_ns, 1000);
	assert_int_equal(out->dur_ns, 8000);
	/* the begin's category and args are kept, the end's ignored */
	assert_string_equal(trace_str_get(&t, t.cats[out->cat].name), "c");
	assert_string_equal(arg(&t, out, "name"), "first");
	/* another thread pairs on its own */
	const struct trace_event *o = event_named(&t, "other", 0);
	assert_int_equal(o->dur_ns, 3000);
	assert_int_not_equal(o->track, out->track);
	assert_int_equal(out->track, in->track);
	assert_int_equal(t.n_warnings, 0);
	trace_release(&t);
}

static void unmatched_end_and_unclosed_begin(void **state)
{
	struct trace t;
	const struct trace_warning *w;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture("unmatched.json",
		    "[{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":1},"
		    "{\"ph\":\"B\",\"name\":\"ok\",\"pid\":1,\"tid\":1,\"ts\":2},"
		    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":3},"
		    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":4},"
		    "{\"ph\":\"B\",\"name\":\"open\",\"pid\":1,\"tid\":1,\"ts\":5},"
		    "{\"ph\":\"e\",\"cat\":\"c\",\"id\":9,\"name\":\"a\",\"pid\":1,\"ts\":6}]"));
	assert_int_equal(t.n_events, 1); /* only the closed pair */
	w = warning(&t, "unmatched-end");
	assert_non_null(w);
	assert_int_equal(w->file, 0);
	assert_non_null(strstr(w->message, "3 end events")); /* two E, one e */
	w = warning(&t, "unclosed-begin");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "1 begin events"));
	trace_release(&t);
}

static void async_pairs(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture(
		"async.json",
		"[{\"ph\":\"b\",\"cat\":\"req\",\"id\":\"0x1\",\"name\":\"r\",\"pid\":1,\"tid\":"
		"5,\"ts\":10,\"args\":{\"name\":\"one\"}},"
		"{\"ph\":\"b\",\"cat\":\"req\",\"id\":\"0x2\",\"name\":\"r\",\"pid\":1,\"tid\":6,"
		"\"ts\":12,\"args\":{\"name\":\"two\"}},"
		"{\"ph\":\"e\",\"cat\":\"req\",\"id\":\"0x1\",\"name\":\"r\",\"pid\":1,\"tid\":7,"
		"\"ts\":20},"
		"{\"ph\":\"e\",\"cat\":\"req\",\"id\":\"0x2\",\"name\":\"r\",\"pid\":1,\"tid\":5,"
		"\"ts\":30}]"));
	assert_int_equal(t.n_events, 2);
	/* paired by (cat, id, name) whatever the thread, in order of their ends */
	const struct trace_event *a = event_named(&t, "r", 0), *b = event_named(&t, "r", 1);
	assert_string_equal(arg(&t, a, "name"), "one");
	assert_int_equal(a->ts_ns, 10000);
	assert_int_equal(a->dur_ns, 10000);
	assert_string_equal(arg(&t, b, "name"), "two");
	assert_int_equal(b->ts_ns, 12000);
	assert_int_equal(b->dur_ns, 18000);
	assert_int_equal(a->ph, 'X');
	assert_true(a->flags & TRACE_EV_ASYNC);
	assert_true(b->flags & TRACE_EV_ASYNC);
	/* both on the async:<cat> track of the process, an annotations track */
	assert_int_equal(a->track, b->track);
	const struct trace_track *tr = &t.tracks[a->track];
	assert_string_equal(trace_str_get(&t, tr->tid), "async:req");
	assert_int_equal(tr->kind, TRACE_TRACK_ANNOTATIONS);
	assert_int_equal(t.n_warnings, 0);
	trace_release(&t);
}

static void flows_and_instants(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture(
		"flows.json",
		"[{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"s1\",\"id\":77,\"pid\":1,\"tid\":1,"
		"\"ts\":1},"
		"{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"f1\",\"id\":77,\"bp\":\"e\",\"pid\":0,"
		"\"tid\":7,\"ts\":2},"
		"{\"ph\":\"s\",\"name\":\"s2\",\"id\":\"18446744073709551615\",\"pid\":1,"
		"\"tid\":1,\"ts\":3},"
		"{\"ph\":\"s\",\"name\":\"s3\",\"id\":\"0xab\",\"pid\":1,\"tid\":1,\"ts\":3},"
		"{\"ph\":\"i\",\"name\":\"mark\",\"s\":\"g\",\"pid\":1,\"tid\":1,\"ts\":4,"
		"\"dur\":0},"
		"{\"ph\":\"X\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":2,\"dur\":1,"
		"\"args\":{\"correlation\":77}},"
		"{\"id\":88,\"cat\":\"ac2g\",\"name\":\"s4\",\"ph\":\"s\",\"pid\":1,"
		"\"tid\":1,\"ts\":\"3\",\"args\":{\"name\":\"x\"}}]"));
	/* flow endpoints are counted on their thread (its count and span), not stored: the
	 * kernel meets its launch through args.correlation */
	assert_int_equal(t.n_events, 2);
	assert_int_equal(t.files[0].events_kept, 7);
	assert_int_equal(event_named(&t, "k", 0)->corr, 77);
	assert_true(event_named(&t, "k", 0)->flags & TRACE_EV_HAS_CORR);
	for (uint64_t k = 0; k < t.n_events; k++)
		assert_true(strchr("stf", trace_event_at(&t, k)->ph) == NULL);
	const struct trace_track *host = NULL, *stream = NULL;
	for (uint32_t k = 0; k < t.n_tracks; k++) {
		const char *pid = trace_str_get(&t, t.tracks[k].pid);
		if (strcmp(pid, "1") == 0)
			host = &t.tracks[k];
		else if (strcmp(pid, "0") == 0)
			stream = &t.tracks[k];
	}
	assert_non_null(host);
	assert_non_null(stream);
	assert_int_equal(host->n_events, 5); /* s1, s2, s3, mark, s4 */
	assert_int_equal(host->first_ns, 1000);
	assert_int_equal(host->last_ns, 4000);
	assert_int_equal(stream->n_events, 2); /* f1 and k */
	assert_int_equal(stream->first_ns, 2000);
	assert_int_equal(stream->last_ns, 3000);
	assert_true(stream->cat_mask & TRACE_CATCLASS_FLOW); /* f1's ac2g */
	const struct trace_event *i = event_named(&t, "mark", 0);
	assert_int_equal(i->ph, 'i');
	assert_true(i->flags & TRACE_EV_INSTANT);
	assert_int_equal(i->dur_ns, 0);
	assert_int_equal(i->ts_ns, 4000);
	trace_release(&t);
}

static void strings_and_odd_fields(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture(
		"odd.json",
		"{\"otherData\":{\"a\":[1,{\"b\":null}],\"c\":\"x\\\"y\"},\"traceEvents\":["
		"{\"name\":\"q\\\"\\\\\\/\\u00e9\\ud83d\\ude00\\n\",\"ph\":\"X\",\"pid\":\"Spans\","
		"\"tid\":null,\"ts\":1,\"dur\":1,\"unknown\":[true,false,null,-1.5e-3,{}],"
		"\"args\":{\"deep\":{\"x\":[[[]]]},\"name\":\"v\",\"flops\":12345}},"
		"{\"ph\":\"X\",\"name\":\"n\",\"pid\":-3,\"tid\":1.5,\"ts\":2}"
		"],\"traceName\":\"x\"}"));
	assert_int_equal(t.n_events, 2);
	/* escapes decoded, a surrogate pair to one 4-byte UTF-8 character */
	const struct trace_event *e = event_named(&t, "q\"\\/\xc3\xa9\xf0\x9f\x98\x80\n", 0);
	assert_string_equal(trace_str_get(&t, t.tracks[e->track].pid), "Spans");
	assert_string_equal(trace_str_get(&t, t.tracks[e->track].tid), "");
	assert_string_equal(arg(&t, e, "name"), "v");
	assert_string_equal(arg(&t, e, "flops"), "12345");
	assert_null(arg(&t, e, "deep"));
	e = event_named(&t, "n", 0);
	assert_string_equal(trace_str_get(&t, t.tracks[e->track].pid), "-3");
	assert_string_equal(trace_str_get(&t, t.tracks[e->track].tid), "1.5");
	assert_int_equal(e->dur_ns, 0); /* no dur: zero */
	trace_release(&t);
}

/* Lone surrogates are valid JSON escapes: each becomes U+FFFD and what follows
 * it is kept (another escape, a character, another surrogate). */
static void lone_surrogates(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	read_ok(&t,
		fixture("lone.json",
			"[{\"ph\":\"X\",\"name\":\"a\\ud800\\nb\",\"pid\":1,\"tid\":1,\"ts\":1},"
			"{\"ph\":\"X\",\"name\":\"c\\ud800\\u0041\",\"pid\":1,\"tid\":1,\"ts\":2},"
			"{\"ph\":\"X\",\"name\":\"d\\udc00\\ud800\\ud800x\",\"pid\":1,\"tid\":1,"
			"\"ts\":3}]"));
	assert_int_equal(t.n_events, 3);
	assert_non_null(event_named(&t, "a\xef\xbf\xbd\nb", 0));
	assert_non_null(event_named(&t,
				    "c\xef\xbf\xbd"
				    "A",
				    0));
	assert_non_null(event_named(&t,
				    "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
				    "x",
				    0));
	trace_release(&t);
}

/* ---- dialects ---- */

static void kineto_dialect(void **state)
{
	struct trace t;
	const struct trace_device *gpu0 = NULL, *gpu1 = NULL, *cpu = NULL;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture(
		"k.pt.trace.json",
		"{\"schemaVersion\":1,\"deviceProperties\":["
		"{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"totalGlobalMem\":85000000000},"
		"{\"id\":1,\"name\":\"NVIDIA A100-SXM4-40GB\"}],"
		"\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":8,"
		"\"nccl_version\":\"2.18.1\"},"
		"\"traceEvents\":["
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":77,\"args\":{\"name\":"
		"\"python3\"}},"
		"{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"args\":{\"labels\":\"GPU "
		"0\"}},"
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":77,\"tid\":78,"
		"\"ts\":1,\"dur\":5},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":3,"
		"\"dur\":2,\"args\":{\"correlation\":5}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,\"ts\":3,"
		"\"dur\":2},"
		"{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"ann\",\"pid\":1,"
		"\"tid\":9,\"ts\":3,\"dur\":2}],"
		"\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":1700000000000000000}"));
	const struct trace_file *f = &t.files[0];
	assert_int_equal(f->dialect, TRACE_DIALECT_KINETO);
	assert_string_equal(f->framework, "pytorch");
	assert_string_equal(f->framework_version, "nccl 2.18.1");
	assert_int_equal(f->schema_version, 1);
	assert_int_equal(f->base_time_ns, 1700000000000000000LL);
	assert_string_equal(f->display_time_unit, "ms");
	assert_int_equal(f->rank, 3);
	assert_int_equal(f->world_size, 8);
	assert_string_equal(f->backend, "nccl");
	assert_int_equal(f->declared_devices, 2);
	assert_string_equal(f->device_kind, "NVIDIA H100 80GB HBM3");
	for (uint32_t i = 0; i < t.n_devices; i++) {
		const struct trace_device *d = &t.devices[i];
		if (d->kind == TRACE_DEV_GPU && d->index == 0)
			gpu0 = d;
		else if (d->kind == TRACE_DEV_GPU && d->index == 1)
			gpu1 = d;
		else if (d->kind == TRACE_DEV_CPU)
			cpu = d;
		/* every device of the file carries its rank */
		assert_int_equal(d->rank, 3);
	}
	assert_non_null(gpu0);
	assert_non_null(gpu1);
	assert_non_null(cpu);
	/* deviceProperties names the GPU whose index is its id */
	assert_string_equal(trace_str_get(&t, gpu0->name), "NVIDIA H100 80GB HBM3");
	assert_string_equal(trace_str_get(&t, gpu1->name), "NVIDIA A100-SXM4-40GB");
	assert_string_equal(trace_str_get(&t, gpu0->label), "GPU 0");
	assert_string_equal(trace_str_get(&t, cpu->label), "python3");
	assert_int_equal(gpu0->n_events, 1);
	assert_int_equal(gpu1->n_events, 2);
	assert_int_equal(cpu->n_events, 1);
	const struct trace_event *k = event_named(&t, "gemm", 0);
	assert_int_equal(t.tracks[k->track].kind, TRACE_TRACK_STREAM);
	assert_true(t.tracks[k->track].cat_mask & TRACE_CATCLASS_DEVICE);
	assert_int_equal(t.tracks[event_named(&t, "ann", 0)->track].kind, TRACE_TRACK_ANNOTATIONS);
	assert_int_equal(t.tracks[event_named(&t, "aten::mm", 0)->track].kind,
			 TRACE_TRACK_HOST_THREAD);
	trace_release(&t);
}

/* The name deviceProperties (props, a JSON array) and a process label give a
 * Kineto GPU whose events are on pid 2, or NULL. */
static const char *gpu2_name(const char *file, const char *props, const char *label)
{
	static char name[128];
	struct pg_buf b = PG_BUF_INIT;
	struct trace t;

	trace_init(&t);
	pg_buf_addf(&b,
		    "{\"schemaVersion\":1,\"deviceProperties\":%s,\"traceEvents\":["
		    "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":2,\"args\":{\"labels\":"
		    "\"%s\"}},"
		    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":2,\"tid\":7,"
		    "\"ts\":3,\"dur\":2}]}",
		    props, label);
	read_ok(&t, write_bytes(file, b.ptr, b.len));
	pg_buf_release(&b);
	name[0] = 0;
	for (uint32_t i = 0; i < t.n_devices; i++)
		if (t.devices[i].kind == TRACE_DEV_GPU && t.devices[i].index == 2 &&
		    t.devices[i].name)
			snprintf(name, sizeof(name), "%s", trace_str_get(&t, t.devices[i].name));
	trace_release(&t);
	return name[0] ? name : NULL;
}

/* Device ids remapped by HIP/CUDA_VISIBLE_DEVICES or ROCm: the events' device
 * is not among deviceProperties' ids (the corpus's mi300_* and xdit_* traces). */
static void remapped_device_names(void **state)
{
	(void)state;
	/* one entry: its model */
	assert_string_equal(
	    gpu2_name("r1.json", "[{\"id\":0,\"name\":\"AMD Instinct MI300X\"}]", "GPU 2"),
	    "AMD Instinct MI300X");
	/* several entries, all one model */
	assert_string_equal(gpu2_name("r2.json",
				      "[{\"id\":0,\"name\":\"NVIDIA H100\"},"
				      "{\"id\":1,\"name\":\"NVIDIA H100\"}]",
				      "GPU 2"),
			    "NVIDIA H100");
	/* several models and no entry with the device's id: unknown, not a guess */
	assert_null(gpu2_name("r3.json",
			      "[{\"id\":0,\"name\":\"NVIDIA H100\"},"
			      "{\"id\":1,\"name\":\"NVIDIA A100\"}]",
			      "GPU 2"));
	/* an entry with the device's id names it, whatever the others say */
	assert_string_equal(gpu2_name("r4.json",
				      "[{\"id\":0,\"name\":\"NVIDIA H100\"},"
				      "{\"id\":2,\"name\":\"NVIDIA A100\"}]",
				      "GPU 2"),
			    "NVIDIA A100");
	/* empty names are no names (vLLM's graph-capture trace) */
	assert_null(
	    gpu2_name("r5.json", "[{\"id\":0,\"name\":\"\"},{\"id\":1,\"name\":\"\"}]", "GPU 2"));
	/* no deviceProperties entry: the model the label gives, but not "(pid N)" */
	assert_string_equal(gpu2_name("r6.json", "[]", "GPU 2 (AMD Instinct MI250X)"),
			    "AMD Instinct MI250X");
	assert_null(gpu2_name("r7.json", "[]", "GPU 2 (pid 2)"));
}

static void jax_dialect(void **state)
{
	struct trace t;
	const struct trace_device *gpu = NULL, *tpu = NULL, *cpu = NULL;

	(void)state;
	trace_init(&t);
	read_ok(
	    &t,
	    fixture_gz(
		"host.trace.json.gz",
		"{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\"traceEvents\":"
		"["
		"{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/"
		"device:GPU:"
		"0\"}},"
		"{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":"
		"1}},"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":"
		"\"Stream #7(Kernel)\"}},"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":100,\"name\":\"thread_name\",\"args\":{\"name\":"
		"\"XLA Ops\"}},"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":101,\"name\":\"thread_name\",\"args\":{\"name\":"
		"\"Steps\"}},"
		"{\"ph\":\"M\",\"pid\":1,\"tid\":102,\"name\":\"thread_name\",\"args\":{\"name\":"
		"\"XLA Modules\"}},"
		"{\"ph\":\"M\",\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":\"/"
		"device:TPU:"
		"1\"}},"
		"{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/host:"
		"CPU\"}},"
		"{\"ph\":\"M\",\"pid\":701,\"tid\":55,\"name\":\"thread_name\",\"args\":{\"name\":"
		"\"python3\"}},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":10.5,\"dur\":2.25,\"name\":\"fusion.1\","
		"\"args\":{\"correlation_id\":\"123\",\"hlo_op\":\"fusion.1\",\"hlo_module\":"
		"\"jit_step\",\"flops\":\"1000\"}},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":100,\"ts\":10.5,\"dur\":2.25,\"name\":\"fusion."
		"1\"},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":101,\"ts\":10,\"dur\":5,\"name\":\"0\"},"
		"{\"ph\":\"X\",\"pid\":1,\"tid\":102,\"ts\":10,\"dur\":4,\"name\":\"jit_step(1)\"},"
		"{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":11,\"dur\":1,\"name\":\"tpu_op\"},"
		"{\"ph\":\"X\",\"pid\":701,\"tid\":55,\"ts\":1,\"dur\":30,\"name\":"
		"\"PjitFunction\","
		"\"args\":{\"correlation_id\":\"not a number\"}},"
		"{}]}"));
	const struct trace_file *f = &t.files[0];
	assert_int_equal(f->dialect, TRACE_DIALECT_JAX);
	assert_string_equal(f->framework, "jax");
	assert_int_equal(f->compressed, 1);
	assert_int_equal(f->entries, 16);
	assert_int_equal(f->phase_counts['M'], 9);
	assert_int_equal(f->phase_counts['X'], 6);
	assert_string_equal(f->display_time_unit, "ns");
	for (uint32_t i = 0; i < t.n_devices; i++) {
		const struct trace_device *d = &t.devices[i];
		if (d->kind == TRACE_DEV_GPU)
			gpu = d;
		else if (d->kind == TRACE_DEV_TPU)
			tpu = d;
		else if (d->kind == TRACE_DEV_CPU)
			cpu = d;
	}
	assert_non_null(gpu);
	assert_non_null(tpu);
	assert_non_null(cpu);
	assert_int_equal(gpu->index, 0);
	assert_int_equal(tpu->index, 1);
	assert_string_equal(trace_str_get(&t, gpu->label), "/device:GPU:0");
	assert_string_equal(trace_str_get(&t, tpu->label), "/device:TPU:1");
	assert_string_equal(trace_str_get(&t, cpu->label), "/host:CPU");
	assert_int_equal(gpu->n_events, 4);
	assert_int_equal(tpu->n_events, 1);
	assert_int_equal(cpu->n_events, 1);
	assert_int_equal(track_named(&t, "Stream #7(Kernel)")->kind, TRACE_TRACK_STREAM);
	assert_int_equal(track_named(&t, "XLA Ops")->kind, TRACE_TRACK_DEVICE_OPS);
	assert_int_equal(track_named(&t, "Steps")->kind, TRACE_TRACK_STEPS);
	assert_int_equal(track_named(&t, "XLA Modules")->kind, TRACE_TRACK_MODULES);
	assert_int_equal(track_named(&t, "python3")->kind, TRACE_TRACK_HOST_THREAD);
	assert_ptr_equal(&t.devices[track_named(&t, "XLA Ops")->device], gpu);
	/* JAX writes every arg as a string; a numeric correlation_id still becomes corr */
	const struct trace_event *k = event_named(&t, "fusion.1", 0);
	assert_int_equal(k->corr, 123);
	assert_true(k->flags & TRACE_EV_HAS_CORR);
	assert_string_equal(arg(&t, k, "hlo_op"), "fusion.1");
	assert_string_equal(arg(&t, k, "hlo_module"), "jit_step");
	assert_string_equal(arg(&t, k, "flops"), "1000");
	/* displayTimeUnit "ns" does not scale: still µs */
	assert_int_equal(k->ts_ns, 10500);
	assert_int_equal(k->dur_ns, 2250);
	const struct trace_event *h = event_named(&t, "PjitFunction", 0);
	assert_false(h->flags & TRACE_EV_HAS_CORR);
	assert_int_equal(t.n_warnings, 0);
	trace_release(&t);
}

static void generic_when_jax_names_meet_other_phases(void **state)
{
	struct trace t;

	(void)state;
	trace_init(&t);
	/* /device: names but a B/E pair: JAX exports only write M and X */
	read_ok(&t, fixture("mixed.json",
			    "[{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":"
			    "\"/device:GPU:0\"}},"
			    "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"a\"},"
			    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":2}]"));
	assert_int_equal(t.files[0].dialect, TRACE_DIALECT_GENERIC);
	assert_null(t.files[0].framework);
	read_ok(&t,
		fixture("xprof.json", "{\"codeLink\":\"x\",\"useNewBackend\":true,\"traceEvents\":"
				      "[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}"));
	assert_non_null(warning(&t, "xprof-ui-json"));
	assert_int_equal(warning(&t, "xprof-ui-json")->file, 1);
	trace_release(&t);
}

/* ---- quality warnings ---- */

static void event_cap_warning(void **state)
{
	static const char ev[] = "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n";
	char *p = path_of("capped.json.gz");
	struct trace t;
	gzFile g;

	(void)state;
	g = gzopen(p, "wb1");
	assert_non_null(g);
	gzbuffer(g, 1 << 20);
	gzputs(g, "{\"traceEvents\":[\n");
	for (int i = 0; i < 1000000 - 1; i++)
		assert_int_equal(gzwrite(g, ev, sizeof(ev) - 1), (int)sizeof(ev) - 1);
	gzputs(g, "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1}]}");
	assert_int_equal(gzclose(g), Z_OK);
	trace_init(&t);
	read_ok(&t, p);
	assert_int_equal(t.files[0].phase_counts['X'], 1000000);
	assert_int_equal(t.n_events, 1000000);
	const struct trace_warning *w = warning(&t, "event-cap");
	assert_non_null(w);
	assert_non_null(strstr(w->message, "1000000"));
	assert_int_equal(t.n_warnings, 1);
	trace_release(&t);
	unlink(p);
}

static void ends_early_warning(void **state)
{
	const char *json = "{\"traceEvents\":[" THREE_EVENTS "]}";
	struct trace t;
	FILE *f;
	char *buf = pg_xmalloc(4096);
	size_t n;

	(void)state;
	/* a gzip file cut inside its 8-byte trailer: the JSON is whole, the stream is not */
	const char *full = fixture_gz("full.json.gz", json);
	f = fopen(full, "rb");
	n = fread(buf, 1, 4096, f);
	fclose(f);
	const char *cut = write_bytes("cut_trailer.json.gz", buf, n - 8);
	const char *half = write_bytes("half_trailer.json.gz", buf, n - 3);
	trace_init(&t);
	read_ok(&t, cut);
	read_ok(&t, half);
	read_ok(&t, full);
	assert_int_equal(t.files[0].entries, 3);
	assert_int_equal(t.n_warnings, 2);
	assert_string_equal(t.warnings[0].code, "ends-early");
	assert_int_equal(t.warnings[0].file, 0);
	assert_string_equal(t.warnings[1].code, "ends-early");
	assert_int_equal(t.warnings[1].file, 1);
	trace_release(&t);
	free(buf);
}

/* ---- bad input ---- */

static void bad_inputs_fail_with_file_and_offset(void **state)
{
	struct trace t;
	char *big;
	size_t n;

	(void)state;
	trace_init(&t);
	/* truncated gzip: a real stream cut in the middle */
	struct pg_buf json = PG_BUF_INIT;
	pg_buf_adds(&json, "{\"traceEvents\":[");
	for (int i = 0; i < 5000; i++)
		pg_buf_addf(
		    &json,
		    "{\"ph\":\"X\",\"name\":\"k%d\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1},", i,
		    i % 7, i);
	pg_buf_adds(&json, "{}]}");
	const char *gz = fixture_gz("whole.json.gz", json.ptr);
	FILE *f = fopen(gz, "rb");
	big = pg_xmalloc(1 << 20);
	n = fread(big, 1, 1 << 20, f);
	fclose(f);
	read_fails(&t, write_bytes("cut.json.gz", big, n / 2), "truncated");
	read_fails(&t, write_bytes("cut.json", json.ptr, json.len / 2), "truncated");
	pg_buf_release(&json);
	free(big);

	read_fails(&t, fixture("rocprof.json", "{\"rocprofiler-sdk-tool\":[{\"metadata\":{}}]}"),
		   "not a trace");
	read_fails(&t, fixture("rocprof.json", "{\"rocprofiler-sdk-tool\":[{\"metadata\":{}}]}"),
		   "byte");
	read_fails(&t,
		   write_bytes("garbage.bin",
			       "\x7f"
			       "ELF\x02\x01\x01\x00\xff\xfe",
			       10),
		   "byte");
	read_fails(&t, fixture("empty.json", ""), "byte");
	read_fails(&t, fixture("blank.json", " \n\t"), "empty");
	read_fails(&t, fixture("string.json", "\"just a string\""), "byte");
	read_fails(&t, fixture("numbers.json", "[1,2]"), "byte");
	read_fails(&t, fixture("nan.json", "[{\"ph\":\"X\",\"ts\":NaN,\"dur\":1}]"), "byte");
	read_fails(&t, fixture("nan2.json", "[{\"ph\":\"X\",\"ts\":1,\"dur\":NaN}]"), "NaN");
	read_fails(&t, fixture("inf.json", "[{\"ph\":\"X\",\"ts\":1,\"dur\":-Infinity}]"), "byte");
	read_fails(&t, fixture("neg.json", "[{\"ph\":\"X\",\"ts\":1,\"dur\":-2}]"), "negative");
	read_fails(&t, fixture("neg.json", "[{\"ph\":\"X\",\"ts\":1,\"dur\":-2}]"), "byte");
	read_fails(&t,
		   fixture("negbe.json",
			   "[{\"ph\":\"B\",\"tid\":1,\"ts\":5},{\"ph\":\"E\",\"tid\":1,\"ts\":4}]"),
		   "negative");
	read_fails(&t, fixture("nots.json", "[{\"ph\":\"X\",\"name\":\"a\",\"dur\":1}]"), "ts");
	read_fails(&t, fixture("after.json", "[] []"), "byte");
	read_fails(&t, fixture("badesc.json", "[{\"ph\":\"X\",\"name\":\"\\q\",\"ts\":1}]"),
		   "byte");
	read_fails(&t,
		   fixture("longnum.json", "[{\"ph\":\"X\",\"ts\":1111111111111111111111111111111"
					   "1111111111111111111111111111111111111}]"),
		   "byte");

	/* nesting 100,000 deep, at the top and inside args */
	n = 100000;
	big = pg_xmalloc(2 * n + 200);
	memset(big, '[', n);
	memset(big + n, ']', n);
	read_fails(&t, write_bytes("deep.json", big, 2 * n), "byte");
	int k = snprintf(big, 200, "[{\"ph\":\"X\",\"ts\":1,\"args\":{\"a\":");
	memset(big + k, '[', n);
	memset(big + k + n, ']', n);
	memcpy(big + k + 2 * n, "}}]", 3);
	read_fails(&t, write_bytes("deep_args.json", big, (size_t)k + 2 * n + 3), "nested");
	read_fails(&t, write_bytes("deep_args.json", big, (size_t)k + 2 * n + 3), "byte");
	free(big);

	/* a kept string over the 16 MiB cap */
	n = RD_MAX_STRING_BYTES + 100;
	big = pg_xmalloc(n + 100);
	k = snprintf(big, 100, "[{\"ph\":\"X\",\"ts\":1,\"name\":\"");
	memset(big + k, 'a', n);
	memcpy(big + k + n, "\"}]", 3);
	read_fails(&t, write_bytes("long_name.json", big, (size_t)k + n + 3), "string longer");
	free(big);

	/* no file, a directory: the reason instead of an offset */
	read_fails(&t, path_of("does-not-exist.json"), "No such file");
	read_fails(&t, th_dir, "directory");
	assert_int_equal(t.n_files, 0);
	assert_int_equal(t.n_events, 0);
	trace_release(&t);
}

/* The events kept of one file are capped: the file past the cap is refused
 * with it named (PROFGATE_MAX_EVENTS lowers it here: the default, 32M
 * events, would need a file too large for a unit test). Each file has its
 * own count. */
static void events_capped(void **state)
{
	struct trace t;
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	pg_buf_adds(&b, "{\"traceEvents\":[");
	for (int i = 0; i < 100; i++)
		pg_buf_addf(
		    &b, "%s{\"ph\":\"X\",\"name\":\"n\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}",
		    i ? "," : "", i);
	pg_buf_adds(&b, "]}");
	const char *path = write_bytes("hundred.json", b.ptr, b.len);
	trace_init(&t);
	setenv("PROFGATE_MAX_EVENTS", "99", 1);
	read_fails(&t, path, "more than 99 events, the cap of one file");
	assert_int_equal(t.n_events, 0);
	setenv("PROFGATE_MAX_EVENTS", "100", 1);
	read_ok(&t, path);
	read_ok(&t, path);
	assert_int_equal(t.n_events, 200);
	unsetenv("PROFGATE_MAX_EVENTS");
	trace_release(&t);
	pg_buf_release(&b);
}

static void failed_read_rolls_back(void **state)
{
	struct trace t;
	struct pg_buf b = PG_BUF_INIT;

	(void)state;
	trace_init(&t);
	read_ok(&t,
		fixture("good1.json", "{\"distributedInfo\":{\"rank\":0},\"traceEvents\":["
				      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
				      "\"tid\":7,\"ts\":1,\"dur\":1},"
				      "{\"ph\":\"E\",\"pid\":0,\"tid\":8,\"ts\":1}]}"));
	uint64_t events = t.n_events;
	uint32_t tracks = t.n_tracks, devices = t.n_devices, warnings = t.n_warnings;
	assert_int_equal(warnings, 1); /* the unmatched E */

	/* a file that fails after many events, on new tracks, with an unmatched E too */
	pg_buf_adds(&b, "{\"traceEvents\":[{\"ph\":\"E\",\"pid\":9,\"tid\":9,\"ts\":1},");
	for (int i = 0; i < 70000; i++)
		pg_buf_addf(
		    &b,
		    "{\"ph\":\"X\",\"name\":\"n%d\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"dur\":1},",
		    i % 50, 100 + i % 3, i % 11, i);
	pg_buf_adds(&b, "{\"ph\":\"X\",\"ts\":");
	read_fails(&t, write_bytes("bad.json", b.ptr, b.len), "event 70001");
	pg_buf_release(&b);
	/* and one that fails after its event array is complete */
	read_fails(&t,
		   fixture("late.json", "{\"traceEvents\":[{\"ph\":\"X\",\"pid\":5,\"tid\":5,"
					"\"ts\":1,\"dur\":1}],\"deviceProperties\":[{\"id\":"
					"NaN}]}"),
		   "byte");
	assert_int_equal(t.n_files, 1);
	assert_int_equal(t.n_events, events);
	assert_int_equal(t.n_tracks, tracks);
	assert_int_equal(t.n_devices, devices);
	assert_int_equal(t.n_warnings, warnings);
	assert_string_equal(t.files[0].path, path_of("good1.json"));

	/* a good file afterwards lands cleanly after the first one */
	read_ok(&t, fixture("good2.json", "[{\"ph\":\"X\",\"name\":\"z\",\"pid\":3,\"tid\":3,"
					  "\"ts\":5,\"dur\":2}]"));
	assert_int_equal(t.n_files, 2);
	assert_int_equal(t.n_events, events + 1);
	const struct trace_event *z = event_named(&t, "z", 0);
	assert_true(z->track >= tracks && z->track < t.n_tracks);
	assert_int_equal(t.devices[t.tracks[z->track].device].file, 1);
	assert_int_equal(t.tracks[z->track].n_events, 1);
	assert_int_equal(t.devices[t.tracks[z->track].device].n_events, 1);
	for (uint32_t i = 0; i < t.n_tracks; i++)
		assert_true(t.tracks[i].device < t.n_devices);
	trace_release(&t);
}

/* ---- look-ahead: chunks read on other threads (chrome_ahead.c) ---- */

static int read_mem_ahead(struct trace *t, const char *text, size_t len, size_t window, int threads)
{
	uint32_t f = trace_file_add(t, "ahead.pt.trace.json");
	struct rd_in in;
	int rc;

	t->files[f].format = TRACE_FMT_CHROME_JSON;
	assert_int_equal(rd_in_open_mem_threads(&in, text, len, window, threads), 0);
	rc = read_chrome_json(t, f, &in);
	rd_in_close(&in);
	return rc;
}

static void assert_same_str(const struct trace *a, trace_str x, const struct trace *b, trace_str y)
{
	assert_string_equal(trace_str_get(a, x), trace_str_get(b, y));
}

/* Everything a reader leaves in a trace, compared field by field. */
static void assert_same_trace(const struct trace *a, const struct trace *b)
{
	assert_int_equal(a->n_events, b->n_events);
	assert_int_equal(a->n_tracks, b->n_tracks);
	assert_int_equal(a->n_devices, b->n_devices);
	assert_int_equal(a->n_mem, b->n_mem);
	assert_int_equal(a->n_warnings, b->n_warnings);
	for (uint64_t i = 0; i < a->n_events; i++) {
		const struct trace_event *x = trace_event_at(a, i), *y = trace_event_at(b, i);
		assert_int_equal(x->ts_ns, y->ts_ns);
		assert_int_equal(x->dur_ns, y->dur_ns);
		assert_int_equal(x->corr, y->corr);
		assert_int_equal(x->track, y->track);
		assert_int_equal(x->ph, y->ph);
		assert_int_equal(x->flags, y->flags);
		assert_same_str(a, x->name, b, y->name);
		assert_same_str(a, a->cats[x->cat].name, b, b->cats[y->cat].name);
		const struct trace_arg *xa, *ya;
		uint32_t nx = trace_argset_get(a, x->args, &xa),
			 ny = trace_argset_get(b, y->args, &ya);
		assert_int_equal(nx, ny);
		for (uint32_t k = 0; k < nx; k++) {
			assert_same_str(a, xa[k].key, b, ya[k].key);
			assert_same_str(a, xa[k].value, b, ya[k].value);
		}
	}
	for (uint32_t i = 0; i < a->n_tracks; i++) {
		const struct trace_track *x = &a->tracks[i], *y = &b->tracks[i];
		assert_int_equal(x->device, y->device);
		assert_int_equal(x->kind, y->kind);
		assert_int_equal(x->n_events, y->n_events);
		assert_int_equal(x->first_ns, y->first_ns);
		assert_int_equal(x->last_ns, y->last_ns);
		assert_int_equal(x->cat_mask, y->cat_mask);
		assert_same_str(a, x->name, b, y->name);
		assert_same_str(a, x->pid, b, y->pid);
		assert_same_str(a, x->tid, b, y->tid);
	}
	for (uint32_t i = 0; i < a->n_devices; i++) {
		assert_int_equal(a->devices[i].kind, b->devices[i].kind);
		assert_int_equal(a->devices[i].index, b->devices[i].index);
		assert_int_equal(a->devices[i].n_events, b->devices[i].n_events);
		assert_same_str(a, a->devices[i].label, b, b->devices[i].label);
	}
	for (uint64_t i = 0; i < a->n_mem; i++) {
		assert_int_equal(a->mem[i].ts_ns, b->mem[i].ts_ns);
		assert_int_equal(a->mem[i].allocated_bytes, b->mem[i].allocated_bytes);
	}
	for (uint32_t i = 0; i < a->n_warnings; i++)
		assert_string_equal(a->warnings[i].message, b->warnings[i].message);
	const struct trace_file *f = &a->files[0], *g = &b->files[0];
	assert_memory_equal(f->phase_counts, g->phase_counts, sizeof(f->phase_counts));
	assert_int_equal(f->entries, g->entries);
	assert_int_equal(f->events_kept, g->events_kept);
	assert_int_equal(f->dialect, g->dialect);
	assert_int_equal(f->content_bytes, g->content_bytes);
}

/*
 * A Kineto-like trace of n events of every phase the reader pairs or keeps
 * apart, with the places a worker entering a chunk blind could take for an
 * event's start: ",{\"" inside a name and inside an args array. bad_at puts
 * a fault at that event (1: an 'E' before its 'B', 2: a malformed number).
 */
static void ahead_text(struct pg_buf *b, int n, int bad_at, int bad)
{
	pg_buf_adds(b, "{\"schemaVersion\":1,\"traceEvents\":[\n");
	pg_buf_adds(b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":0,"
		       "\"args\":{\"name\":\"python3\"}}");
	for (int i = 1; i < n; i++) {
		int ts = 1000 + 10 * i, tid = 100 + i % 3;
		pg_buf_adds(b, ",\n");
		if (i == bad_at && bad == 1) {
			pg_buf_addf(
			    b,
			    "{\"ph\":\"B\",\"name\":\"late\",\"pid\":7,\"tid\":9,\"ts\":%d},"
			    "{\"ph\":\"E\",\"pid\":7,\"tid\":9,\"ts\":%d}",
			    ts, ts - 5);
			continue;
		}
		if (i == bad_at && bad == 2) {
			pg_buf_addf(b,
				    "{\"ph\":\"X\",\"name\":\"x\",\"pid\":7,\"tid\":1,\"ts\":%d,"
				    "\"dur\":1-2}",
				    ts);
			continue;
		}
		switch (i % 9) {
		case 0:
			pg_buf_addf(
			    b,
			    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm, {\","
			    "\"pid\":7,\"tid\":%d,\"ts\":%d.%03d,\"dur\":%d.5,"
			    "\"args\":{\"Input Dims\":[[%d,2],{\"x\":1}],\"External id\":%d}}",
			    tid, ts, i % 1000, i % 13, i, i);
			break;
		case 1:
			pg_buf_addf(
			    b,
			    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\\u0041\",\"pid\":0,"
			    "\"tid\":\"stream %d\",\"ts\":%d,\"dur\":3,"
			    "\"args\":{\"correlation\":%d,\"device\":0}}",
			    i % 17, 7 + i % 2, ts, i);
			break;
		case 2:
			pg_buf_addf(
			    b, "{\"ph\":\"B\",\"name\":\"span\",\"pid\":7,\"tid\":3,\"ts\":%d}",
			    ts);
			break;
		case 3:
			pg_buf_addf(
			    b, "{ \"ph\" : \"E\" ,\n \"pid\" : 7 , \"tid\" : 3 , \"ts\" : %d }",
			    ts);
			break;
		case 4:
			pg_buf_addf(b,
				    "{\"ph\":\"b\",\"cat\":\"a\",\"id\":\"0x%x\",\"name\":\"io\","
				    "\"pid\":7,\"tid\":4,\"ts\":%d},"
				    "{\"ph\":\"e\",\"cat\":\"a\",\"id\":\"0x%x\",\"name\":\"io\","
				    "\"pid\":7,\"tid\":4,\"ts\":%d}",
				    i, ts, i, ts + 4);
			break;
		case 5:
			pg_buf_addf(
			    b,
			    "{\"ph\":\"s\",\"id\":%d,\"pid\":7,\"tid\":%d,\"ts\":%d,"
			    "\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
			    "{\"ph\":\"f\",\"id\":%d,\"pid\":0,\"tid\":\"stream 7\",\"ts\":%d,"
			    "\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}",
			    i, tid, ts, i, ts + 1);
			break;
		case 6:
			pg_buf_addf(
			    b,
			    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\","
			    "\"pid\":7,\"tid\":%d,\"ts\":%d,\"s\":\"t\",\"args\":{"
			    "\"Total Allocated\":%d,\"Total Reserved\":%d,\"Device Id\":0,"
			    "\"Device Type\":1,\"Bytes\":64}}",
			    tid, ts, 1000 * i, 2000 * i);
			break;
		case 7:
			pg_buf_addf(b,
				    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":%d,"
				    "\"args\":{\"name\":\"thread %d\"}}",
				    tid, i);
			break;
		default:
			pg_buf_addf(b,
				    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
				    "\"ProfilerStep#%d\",\"pid\":7,\"tid\":%d,\"ts\":%d,\"dur\":9}",
				    i / 9, tid, ts);
		}
	}
	pg_buf_adds(b, "\n],\"traceName\":\"t\"}");
}

/* The trace read with workers ahead of the parser is the one read serially,
 * wherever chunks end and however many workers there are. */
static void look_ahead_reads_the_same_trace(void **state)
{
	static const size_t windows[] = {64, 97, 256, 1000, 4096, 65536};
	struct pg_buf b = PG_BUF_INIT;
	struct trace whole;
	uint64_t ahead2 = 0;

	(void)state;
	ahead_text(&b, 6000, 0, 0);
	trace_init(&whole);
	assert_int_equal(read_mem_ahead(&whole, b.ptr, b.len, 0, 1), 0);
	assert_true(whole.n_events > 3000);
	assert_true(whole.n_mem > 500);
	assert_int_equal(whole.files[0].entries_ahead, 0);
	for (size_t w = 0; w < PG_ARRAY_LEN(windows); w++)
		for (int threads = 2; threads <= 3; threads++) {
			struct trace cut;
			trace_init(&cut);
			if (read_mem_ahead(&cut, b.ptr, b.len, windows[w], threads))
				fail_msg("window %zu, %d threads: %s", windows[w], threads,
					 pg_error_last());
			assert_same_trace(&whole, &cut);
			/* every chunk is scanned, so once chunks hold a few events,
			 * most came from the workers */
			if (windows[w] >= 1000)
				assert_true(cut.files[0].entries_ahead > cut.files[0].entries / 2);
			if (threads == 2)
				ahead2 = cut.files[0].entries_ahead;
			else /* the same runs, whichever worker scanned a chunk */
				assert_int_equal(cut.files[0].entries_ahead, ahead2);
			trace_release(&cut);
		}
	trace_release(&whole);
	pg_buf_release(&b);
}

/* A fault deep in the trace is the same message (byte, event) with workers:
 * one found when an event is finished, and one in an event's syntax. */
static void look_ahead_fails_the_same(void **state)
{
	static const size_t windows[] = {64, 256, 4096};
	(void)state;
	for (int bad = 1; bad <= 2; bad++) {
		struct pg_buf b = PG_BUF_INIT;
		struct trace t;
		char serial[1024];
		ahead_text(&b, 5000, 4321, bad);
		trace_init(&t);
		assert_true(read_mem_ahead(&t, b.ptr, b.len, 0, 1) < 0);
		snprintf(serial, sizeof(serial), "%s", pg_error_last());
		assert_non_null(strstr(serial, bad == 1 ? "before its 'B'" : "at byte"));
		trace_release(&t);
		for (size_t w = 0; w < PG_ARRAY_LEN(windows); w++) {
			trace_init(&t);
			assert_true(read_mem_ahead(&t, b.ptr, b.len, windows[w], 2) < 0);
			assert_string_equal(pg_error_last(), serial);
			trace_release(&t);
		}
		pg_buf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(object_and_bare_array),
	    cmocka_unit_test(gzip_bom_and_concatenated_members),
	    cmocka_unit_test(phase_counts),
	    cmocka_unit_test(ts_to_ns_exactly),
	    cmocka_unit_test(display_time_unit_is_not_a_scale),
	    cmocka_unit_test(begin_end_pairs),
	    cmocka_unit_test(unmatched_end_and_unclosed_begin),
	    cmocka_unit_test(async_pairs),
	    cmocka_unit_test(flows_and_instants),
	    cmocka_unit_test(strings_and_odd_fields),
	    cmocka_unit_test(lone_surrogates),
	    cmocka_unit_test(kineto_dialect),
	    cmocka_unit_test(remapped_device_names),
	    cmocka_unit_test(jax_dialect),
	    cmocka_unit_test(generic_when_jax_names_meet_other_phases),
	    cmocka_unit_test(event_cap_warning),
	    cmocka_unit_test(ends_early_warning),
	    cmocka_unit_test(bad_inputs_fail_with_file_and_offset),
	    cmocka_unit_test(events_capped),
	    cmocka_unit_test(failed_read_rolls_back),
	    cmocka_unit_test(same_events_at_every_chunk_cut),
	    cmocka_unit_test(bad_numbers_at_every_chunk_cut),
	    cmocka_unit_test(look_ahead_reads_the_same_trace),
	    cmocka_unit_test(look_ahead_fails_the_same),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
