/*
 * slow_family: inject a known regression (or A/A noise) into a real Kineto Chrome trace for the
 * tests of `profgate gate`: device kernels of one family get P% longer and/or every kernel gets
 * seeded jitter, and every timestamp after them moves so the trace stays consistent.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../src/analyze/analyze.h"

#define PROG "slow_family"
/* First byte of a quoted number: JSON text holds it only as our "\u0001". */
#define MARK	  '\x01'
#define MARK_JSON "\"\\u0001"

enum { EXIT_OUT = 1, EXIT_USAGE = 2, EXIT_INPUT = 3 };

struct opts {
	const char *in, *out;
	const char *family_s, *percent_s, *jitter_s, *seed_s; /* as given, for the mark */
	int family;					      /* enum analyze_family, -1: none */
	double percent, jitter;
	uint64_t seed;
};

struct sbuf {
	char *p;
	size_t n, cap;
};

/*
 * The time warp: the extra of each changed kernel is inserted at its original end, so time t maps
 * to t + S(t), S(t) the sum of the extras of kernels ending at or before t. Starts and ends of
 * every event (all phases) use the same map, so spans holding a slowed kernel stretch. A negative
 * extra (a shrink) deletes the last |extra| of its kernel: times inside that stretch collapse
 * onto the kernel's new end, so the map stays monotone (a plain step down at the end would move
 * host events just after it before those just before it, breaking their nesting).
 */

/* One changed kernel: its extra lands at its original end. */
struct shift {
	int64_t end, extra;
};

struct warp {
	struct shift *v;
	size_t n, cap;
	int64_t *prefix;  /* prefix[i]: sum of the first i extras, by end */
	int64_t max_gone; /* the largest shrink */
};

struct stats {
	size_t slowed, jittered, shifted, clamped;
	int64_t slow_ns, jitter_ns;
	uint32_t present; /* bit f: a device kernel of family f exists */
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(EXIT_OUT);
	}
	return q;
}

static void sb_put(struct sbuf *b, const void *p, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
	b->p[b->n] = 0;
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

/* ---- input ------------------------------------------------------------------------------- */

/* The whole file, gunzipped when it is gzip. NULL with errno set on failure. */
static char *read_all(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t n = 0, cap = 1 << 20;
	char *buf;
	int r, err;

	if (!f)
		return NULL;
	buf = xrealloc(NULL, cap);
	while ((r = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	gzerror(f, &err);
	if (r < 0 || err != Z_OK) {
		gzclose(f);
		free(buf);
		errno = EILSEQ;
		return NULL;
	}
	if (gzclose(f) != Z_OK) {
		free(buf);
		errno = EIO;
		return NULL;
	}
	*len = n;
	return buf;
}

/* Length of the JSON number at p (RFC 8259 grammar), 0 when there is none. */
static size_t json_number_len(const char *p, size_t n)
{
	size_t i = 0;

#define DIGIT(k) ((k) < n && p[k] >= '0' && p[k] <= '9')
	if (i < n && p[i] == '-')
		i++;
	if (!DIGIT(i))
		return 0;
	if (p[i] == '0')
		i++;
	else
		while (DIGIT(i))
			i++;
	if (i < n && p[i] == '.') {
		if (!DIGIT(i + 1))
			return 0;
		i++;
		while (DIGIT(i))
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (!DIGIT(i))
			return 0;
		while (DIGIT(i))
			i++;
	}
#undef DIGIT
	return i;
}

/*
 * Copy of the JSON text with every number turned into a string MARK + the number's text, so
 * cJSON keeps the exact decimal text (a double loses the ns of a 1.7e15 us epoch timestamp): ts
 * and dur are warped from it in integer ns, the rest are written back verbatim. Outside strings
 * a '-' or a digit always starts a number.
 */
static char *quote_numbers(const char *in, size_t n, size_t *out_n)
{
	struct sbuf b = {0};
	size_t i = 0, last = 0, len;

	b.cap = n + n / 4 + 64;
	b.p = xrealloc(NULL, b.cap);
	while (i < n) {
		if (in[i] == '"') {
			for (i++; i < n && in[i] != '"'; i += in[i] == '\\' ? 2 : 1)
				;
			i++;
			continue;
		}
		if (in[i] != '-' && (in[i] < '0' || in[i] > '9')) {
			i++;
			continue;
		}
		len = json_number_len(in + i, n - i);
		if (!len) {
			i++;
			continue; /* not JSON: cJSON will say so */
		}
		sb_put(&b, in + last, i - last);
		sb_str(&b, MARK_JSON);
		sb_put(&b, in + i, len);
		sb_put(&b, "\"", 1);
		last = i = i + len;
	}
	if (last < n)
		sb_put(&b, in + last, n - last);
	*out_n = b.n;
	return b.p;
}

/* ---- times ------------------------------------------------------------------------------- */

/* A JSON number of microseconds to integer ns, exact for plain decimals (half up past 1 ns). */
static int parse_ns(const char *s, int64_t *ns, int *integral)
{
	const char *p = s;
	uint64_t us = 0, frac = 0;
	int neg = 0, fd = 0, up = 0;

	if (*p == '-')
		neg = 1, p++;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (us > (UINT64_MAX - 9) / 10)
			return -1;
		us = us * 10 + (uint64_t)(*p - '0');
	}
	*integral = *p != '.';
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, fd++) {
			if (fd < 3)
				frac = frac * 10 + (uint64_t)(*p - '0');
			else if (fd == 3)
				up = *p >= '5';
		}
	if (*p == 'e' || *p == 'E') {
		/* never written by Kineto: good to the precision of a long double */
		long double v = strtold(s, NULL) * 1000.0L;
		*integral = 0;
		if (!(fabsl(v) < 9.2e18L))
			return -1;
		*ns = llroundl(v);
		return 0;
	}
	for (; fd < 3; fd++)
		frac *= 10;
	if (us > (uint64_t)INT64_MAX / 1000 - 1)
		return -1;
	*ns = (int64_t)(us * 1000 + frac + (uint64_t)up);
	if (neg)
		*ns = -*ns;
	return 0;
}

/* ns as µs text: an integer when the input was one and still is, else 3 decimals (Kineto). */
static void format_us(char *t, size_t size, int64_t ns, int integral)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	if (integral && u % 1000 == 0)
		snprintf(t, size, "%s%" PRIu64, ns < 0 ? "-" : "", u / 1000);
	else
		snprintf(t, size, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", u / 1000,
			 (unsigned)(u % 1000));
}

/* The ts or dur number of e (marked), or NULL. */
static cJSON *time_item(const cJSON *e, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) && v->valuestring[0] == MARK ? v : NULL;
}

/* A marked item back to its original number text. */
static void unmark(cJSON *v)
{
	memmove(v->valuestring, v->valuestring + 1, strlen(v->valuestring));
	v->type = cJSON_Raw;
}

/* A marked item to new number text. */
static void set_number(cJSON *v, const char *text)
{
	char *s = cJSON_malloc(strlen(text) + 1);

	if (!s) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(EXIT_OUT);
	}
	strcpy(s, text);
	cJSON_free(v->valuestring);
	v->valuestring = s;
	v->type = cJSON_Raw;
}

/* Every mark left (numbers other than a changed ts or dur) back to its number text. */
static void unmark_all(cJSON *v)
{
	cJSON *c;

	if (cJSON_IsString(v) && v->valuestring[0] == MARK)
		unmark(v);
	else if (cJSON_IsArray(v) || cJSON_IsObject(v))
		cJSON_ArrayForEach (c, v)
			unmark_all(c);
}

/* ---- kernels ----------------------------------------------------------------------------- */

static const char *str_or(const cJSON *o, const char *k, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* Device activity as summarize.c counts it: the categories of TRACE_CATCLASS_DEVICE/ACCEL. */
static int is_device_kernel(const cJSON *e)
{
	static const char *const cats[] = {"kernel",	 "Kernel", "gpu_memcpy",     "Memcpy",
					   "gpu_memset", "Memset", "mtia_ccp_events"};
	const char *cat = str_or(e, "cat", NULL);

	if (!cat || strcmp(str_or(e, "ph", ""), "X") != 0)
		return 0;
	for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (strcmp(cat, cats[i]) == 0)
			return 1;
	return 0;
}

/* The family analyze_classify gives e, from the facts summarize.c hands it. */
static enum analyze_family family_of(const cJSON *e)
{
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
	struct analyze_event_facts f;
	enum analyze_category cat;
	enum analyze_family fam;

	memset(&f, 0, sizeof(f));
	f.name = str_or(e, "name", "");
	f.name_len = strlen(f.name);
	f.cat = str_or(e, "cat", NULL);
	f.hlo_op = str_or(args, "hlo_op", NULL);
	f.hlo_category = str_or(args, "hlo_category", NULL);
	f.collective_name = str_or(args, "Collective name", NULL);
	analyze_classify(&f, &cat, &fam);
	return fam;
}

/* splitmix64: u uniform in [-1, 1). */
static double next_u(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
}

static void warp_add(struct warp *w, int64_t end, int64_t extra)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1024;
		w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
	}
	w->v[w->n++] = (struct shift){end, extra};
}

static int cmp_shift(const void *a, const void *b)
{
	const struct shift *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->extra > y->extra) - (x->extra < y->extra);
}

static void warp_finish(struct warp *w)
{
	if (w->n)
		qsort(w->v, w->n, sizeof(*w->v), cmp_shift);
	w->prefix = xrealloc(NULL, (w->n + 1) * sizeof(int64_t));
	w->prefix[0] = 0;
	for (size_t i = 0; i < w->n; i++) {
		w->prefix[i + 1] = w->prefix[i] + w->v[i].extra;
		if (-w->v[i].extra > w->max_gone)
			w->max_gone = -w->v[i].extra;
	}
}

/*
 * S(t): the extras of changed kernels whose original end is at or before t, less the part
 * already gone of each shrink whose deleted stretch (end + extra, end) holds t.
 */
static int64_t warp_at(const struct warp *w, int64_t t)
{
	size_t lo = 0, hi = w->n;
	int64_t s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->v[mid].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	s = w->prefix[lo];
	for (size_t i = lo; i < w->n && w->v[i].end - w->max_gone < t; i++)
		if (w->v[i].extra < 0 && w->v[i].end + w->v[i].extra < t)
			s -= t - (w->v[i].end + w->v[i].extra);
	return s;
}

/* Pass 1: the extra of every device kernel, in document order (the jitter draws' order). */
static int collect_shifts(const struct opts *o, cJSON *events, struct warp *w, struct stats *st)
{
	uint64_t rng = o->seed;
	cJSON *e;

	cJSON_ArrayForEach (e, events) {
		cJSON *ts_v = time_item(e, "ts"), *dur_v = time_item(e, "dur");
		int64_t ts, dur, extra = 0;
		int integral;
		enum analyze_family fam;
		if (!cJSON_IsObject(e) || !is_device_kernel(e))
			continue;
		fam = family_of(e);
		st->present |= 1u << fam;
		if (!ts_v || !dur_v)
			continue;
		if (parse_ns(ts_v->valuestring + 1, &ts, &integral) ||
		    parse_ns(dur_v->valuestring + 1, &dur, &integral))
			return -1;
		if (o->percent != 0 && (int)fam == o->family) {
			int64_t x = llround((double)dur * o->percent / 100.0);
			st->slowed++;
			st->slow_ns += x;
			extra += x;
		}
		if (o->jitter > 0) {
			int64_t x = llround((double)dur * o->jitter * next_u(&rng));
			st->jittered++;
			st->jitter_ns += x;
			extra += x;
		}
		if (extra < -dur)
			extra = -dur; /* --percent near -100 with --jitter: the kernel vanishes */
		if (extra)
			warp_add(w, ts + dur, extra);
	}
	warp_finish(w);
	return 0;
}

/* Pass 2: one event's ts and dur through the warp. */
static int warp_event(const struct warp *w, cJSON *e, struct stats *st)
{
	cJSON *ts_v = time_item(e, "ts"), *dur_v = time_item(e, "dur");
	int64_t ts, dur, ts2, end2;
	int ts_int, dur_int;
	char t[48];

	if (!ts_v)
		return 0;
	if (parse_ns(ts_v->valuestring + 1, &ts, &ts_int))
		return -1;
	ts2 = ts + warp_at(w, ts);
	if (ts2 != ts) {
		format_us(t, sizeof(t), ts2, ts_int);
		set_number(ts_v, t);
		st->shifted++;
	}
	if (!dur_v)
		return 0;
	if (parse_ns(dur_v->valuestring + 1, &dur, &dur_int))
		return -1;
	end2 = ts + dur + warp_at(w, ts + dur);
	if (end2 < ts2) {
		end2 = ts2; /* overlapping shrinks on concurrent streams */
		st->clamped++;
	}
	if (end2 - ts2 != dur) {
		format_us(t, sizeof(t), end2 - ts2, dur_int);
		set_number(dur_v, t);
	}
	return 0;
}

/* ---- output ------------------------------------------------------------------------------ */

struct out {
	gzFile gz;
	FILE *fp;
	int err;
};

static void out_put(struct out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->err || !n)
		return;
	if (o->gz ? gzwrite(o->gz, s, (unsigned)n) != (int)n : fwrite(s, 1, n, o->fp) != n)
		o->err = 1;
}

static void out_value(struct out *o, const cJSON *v)
{
	char *s = cJSON_PrintUnformatted(v);

	if (!s) {
		o->err = 1;
		return;
	}
	out_put(o, s);
	cJSON_free(s);
}

static void out_string(struct out *o, const char *s)
{
	cJSON *v = cJSON_CreateString(s);

	if (!v) {
		o->err = 1;
		return;
	}
	out_value(o, v);
	cJSON_Delete(v);
}

/* One event a line, so that zcat | grep and diff work on the output. */
static void out_events(struct out *o, const cJSON *events)
{
	const cJSON *e;
	int first = 1;

	out_put(o, "[");
	cJSON_ArrayForEach (e, events) {
		out_put(o, first ? "\n" : ",\n");
		first = 0;
		out_value(o, e);
	}
	out_put(o, "\n]");
}

/* The trace as an object, "profgate_synthetic" first; an array input becomes traceEvents. */
static void out_trace(struct out *o, const cJSON *root, const cJSON *events, const char *mark)
{
	const cJSON *c;

	out_put(o, "{\n\"profgate_synthetic\": ");
	out_string(o, mark);
	if (cJSON_IsArray(root)) {
		out_put(o, ",\n\"traceEvents\": ");
		out_events(o, events);
	}
	if (cJSON_IsObject(root))
		cJSON_ArrayForEach (c, root) {
			if (strcmp(c->string, "profgate_synthetic") == 0)
				continue;
			out_put(o, ",\n");
			out_string(o, c->string);
			out_put(o, ": ");
			if (c == events)
				out_events(o, events);
			else
				out_value(o, c);
		}
	out_put(o, "\n}\n");
}

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

/* Write to OUT.tmp, then rename: gzip (level 6, no timestamp) when OUT ends in .gz. */
static int write_output(const char *path, const cJSON *root, const cJSON *events, const char *mark)
{
	struct out o = {0};
	size_t n = strlen(path);
	char *tmp = xrealloc(NULL, n + 5);
	int rc = -1;

	memcpy(tmp, path, n);
	memcpy(tmp + n, ".tmp", 5);
	if (has_suffix(path, ".gz")) {
		o.gz = gzopen(tmp, "wb6");
		if (o.gz)
			gzbuffer(o.gz, 1 << 20);
	} else {
		o.fp = fopen(tmp, "wb");
	}
	if (!o.gz && !o.fp) {
		fprintf(stderr, PROG ": %s: cannot write: %s\n", tmp, strerror(errno));
		goto out;
	}
	out_trace(&o, root, events, mark);
	if (o.gz ? gzclose(o.gz) != Z_OK : fclose(o.fp) != 0)
		o.err = 1;
	if (o.err || rename(tmp, path) != 0) {
		fprintf(stderr, PROG ": %s: cannot write: %s\n", path,
			errno ? strerror(errno) : "write failed");
		remove(tmp);
		goto out;
	}
	rc = 0;
out:
	free(tmp);
	return rc;
}

/* ---- main -------------------------------------------------------------------------------- */

static int usage(const char *why)
{
	if (why)
		fprintf(stderr, PROG ": %s\n", why);
	else
		fprintf(stderr,
			"usage: " PROG " --family NAME --percent P [--jitter F --seed N] "
			"-o OUT.json.gz IN.json[.gz]\n"
			"Lengthens every device kernel of family NAME (profgate's rules) by P%%, "
			"and/or every\ndevice kernel by dur*F*u, u uniform in [-1,1] seeded by N; "
			"later timestamps move\nto match. OUT says \"profgate_synthetic\".\n");
	return EXIT_USAGE;
}

static int parse_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return end == s || *end || errno || !isfinite(*v) ? -1 : 0;
}

static int family_by_name(const char *name)
{
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++)
		if (strcmp(name, analyze_family_name((enum analyze_family)f)) == 0)
			return f;
	return -1;
}

/* "a, b, c" for the families in mask, in the rules' order. */
static void family_list(struct sbuf *b, uint32_t mask)
{
	for (int f = 0; f < ANALYZE_FAM_COUNT; f++)
		if (mask & (1u << f)) {
			if (b->n)
				sb_str(b, ", ");
			sb_str(b, analyze_family_name((enum analyze_family)f));
		}
	if (!b->n)
		sb_str(b, "none");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	char *end;

	memset(o, 0, sizeof(*o));
	o->family = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
			return usage(NULL);
		if (a[0] == '-' && a[1] && !v)
			return usage(NULL);
		if (strcmp(a, "--family") == 0)
			o->family_s = v, i++;
		else if (strcmp(a, "--percent") == 0)
			o->percent_s = v, i++;
		else if (strcmp(a, "--jitter") == 0)
			o->jitter_s = v, i++;
		else if (strcmp(a, "--seed") == 0)
			o->seed_s = v, i++;
		else if (strcmp(a, "-o") == 0)
			o->out = v, i++;
		else if (a[0] == '-' && a[1])
			return usage(NULL);
		else if (o->in)
			return usage("one input file only");
		else
			o->in = a;
	}
	if (!o->in || !o->out)
		return usage(NULL);
	if (o->percent_s &&
	    (parse_double(o->percent_s, &o->percent) || o->percent <= -100 || o->percent > 1000))
		return usage("--percent wants a number in (-100, 1000]");
	if (o->jitter_s &&
	    (parse_double(o->jitter_s, &o->jitter) || o->jitter < 0 || o->jitter >= 1))
		return usage("--jitter wants a fraction in [0, 1)");
	if (o->seed_s) {
		errno = 0;
		o->seed = strtoull(o->seed_s, &end, 10);
		if (end == o->seed_s || *end || errno || o->seed_s[0] == '-')
			return usage("--seed wants a non-negative integer");
	}
	if (o->percent == 0 && o->jitter == 0)
		return usage("nothing to do: give a nonzero --percent or --jitter");
	if (o->percent != 0 && !o->family_s)
		return usage("--percent needs --family NAME");
	if (o->family_s && (o->family = family_by_name(o->family_s)) < 0) {
		struct sbuf b = {0};
		family_list(&b, (1u << ANALYZE_FAM_COUNT) - 1);
		fprintf(stderr, PROG ": unknown family '%s' (families: %s)\n", o->family_s, b.p);
		free(b.p);
		return EXIT_USAGE;
	}
	return 0;
}

/* "slow_family --family NAME --percent P [--jitter F --seed N] of BASENAME". */
static char *describe(const struct opts *o)
{
	const char *base = strrchr(o->in, '/');
	struct sbuf b = {0};

	sb_str(&b, PROG);
	if (o->family_s)
		sb_str(&b, " --family "), sb_str(&b, o->family_s);
	if (o->percent_s)
		sb_str(&b, " --percent "), sb_str(&b, o->percent_s);
	if (o->jitter_s)
		sb_str(&b, " --jitter "), sb_str(&b, o->jitter_s);
	if (o->seed_s)
		sb_str(&b, " --seed "), sb_str(&b, o->seed_s);
	sb_str(&b, " of ");
	sb_str(&b, base ? base + 1 : o->in);
	return b.p;
}

/* The trace's events: a top-level array or an object's traceEvents; NULL otherwise. */
static cJSON *events_of(cJSON *root)
{
	cJSON *ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");

	if (cJSON_IsArray(root))
		return root;
	return cJSON_IsObject(root) && cJSON_IsArray(ev) ? ev : NULL;
}

static void report(const struct opts *o, const struct stats *st)
{
	const char *sep = "";

	if (o->percent != 0) {
		printf("%zu kernels of %s slowed by %s%% (%+.3f us total)", st->slowed, o->family_s,
		       o->percent_s, (double)st->slow_ns / 1000.0);
		sep = "; ";
	}
	if (o->jitter > 0) {
		printf("%s%zu device kernels jittered by up to %s x dur, seed %" PRIu64
		       " (%+.3f us net)",
		       sep, st->jittered, o->jitter_s, o->seed, (double)st->jitter_ns / 1000.0);
	}
	printf("; %zu events shifted", st->shifted);
	if (st->clamped)
		printf("; %zu durations clamped to 0", st->clamped);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct warp w = {0};
	struct stats st = {0};
	struct sbuf fams = {0};
	cJSON *root = NULL, *events, *e;
	char *text = NULL, *quoted = NULL, *mark = NULL;
	size_t len = 0, qlen = 0;
	int rc;

	if ((rc = parse_args(argc, argv, &o)) != 0)
		return rc;
	rc = EXIT_INPUT;
	text = read_all(o.in, &len);
	if (!text) {
		fprintf(stderr, PROG ": %s: cannot read: %s\n", o.in,
			errno == EILSEQ ? "corrupt gzip data" : strerror(errno));
		goto out;
	}
	quoted = quote_numbers(text, len, &qlen);
	free(text);
	text = NULL;
	root = cJSON_ParseWithLength(quoted, qlen);
	free(quoted);
	quoted = NULL;
	events = events_of(root);
	if (!events) {
		fprintf(stderr, PROG ": %s: cannot read: %s\n", o.in,
			root ? "not a Chrome trace (no traceEvents array)" : "not JSON");
		goto out;
	}
	if (collect_shifts(&o, events, &w, &st)) {
		fprintf(stderr, PROG ": %s: cannot read: a kernel ts or dur is out of range\n",
			o.in);
		goto out;
	}
	rc = EXIT_USAGE;
	if (o.percent != 0 && !st.slowed) {
		family_list(&fams, st.present);
		fprintf(stderr, PROG ": no kernels of family %s in %s (families present: %s)\n",
			o.family_s, o.in, fams.p);
		goto out;
	}
	if (o.jitter > 0 && !st.jittered) {
		fprintf(stderr, PROG ": no device kernels to jitter in %s\n", o.in);
		goto out;
	}
	rc = EXIT_INPUT;
	cJSON_ArrayForEach (e, events)
		if (cJSON_IsObject(e) && warp_event(&w, e, &st)) {
			fprintf(stderr, PROG ": %s: cannot read: a ts or dur is out of range\n",
				o.in);
			goto out;
		}
	unmark_all(root);
	mark = describe(&o);
	rc = EXIT_OUT;
	if (write_output(o.out, root, events, mark))
		goto out;
	report(&o, &st);
	rc = 0;
out:
	free(text);
	free(quoted);
	free(mark);
	free(fams.p);
	free(w.v);
	free(w.prefix);
	cJSON_Delete(root);
	return rc;
}
