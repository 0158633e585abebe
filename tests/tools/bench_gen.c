/*
 * bench_gen: write a synthetic Kineto or JAX-export Chrome trace of exactly N array entries for
 * `make bench`, by repeating the steady ProfilerStep span of a real Kineto trace with shifted
 * timestamps, step numbers and ids. The output says "profgate_synthetic"; it is not a profile.
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

/* Placeholders in event templates: MARK then a kind letter; JSON text never holds a raw 0x01. */
#define MARK '\x01'
enum { K_TS = 'T', K_DUR = 'D', K_ID = 'I', K_STEP = 'S' };

enum style { STYLE_KINETO, STYLE_JAX };

struct sbuf {
	char *p;
	size_t n, cap;
};

/* One event as a template: text with placeholders, and the base values they take in order. */
struct tev {
	size_t off;
	uint32_t len;
	uint32_t val0;
};

struct tlist {
	struct tev *v;
	size_t n, cap;
};

struct gen {
	enum style style;
	struct sbuf tpl;
	int64_t *vals;
	size_t n_vals, cap_vals;
	struct tlist head, body, tail; /* head: M and early instants; body: one step span */
	int64_t lo, hi, span;	       /* steady span in ns */
	int64_t id_stride, step_stride;
	int64_t base; /* subtracted from ts (JAX: relative to the span start) */
};

struct out {
	gzFile gz;
	FILE *fp;
	char *buf;
	size_t len;
	uint64_t total;
	int err;
};

#define OUT_CAP (1u << 20)

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "bench_gen: out of memory\n");
		exit(1);
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

static void sb_mark(struct gen *g, int kind, int64_t v)
{
	char m[2] = {MARK, (char)kind};

	sb_put(&g->tpl, m, 2);
	if (g->n_vals == g->cap_vals) {
		g->cap_vals = g->cap_vals ? g->cap_vals * 2 : 4096;
		g->vals = xrealloc(g->vals, g->cap_vals * sizeof(*g->vals));
	}
	g->vals[g->n_vals++] = v;
}

static void tl_push(struct tlist *l, struct tev e)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = e;
}

static void sb_json_string(struct sbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	sb_put(b, "\"", 1);
	while (*p) {
		const unsigned char *q = p;
		while (*q >= 0x20 && *q != '"' && *q != '\\')
			q++;
		sb_put(b, p, (size_t)(q - p));
		if (!*q)
			break;
		switch (*q) {
		case '"': sb_put(b, "\\\"", 2); break;
		case '\\': sb_put(b, "\\\\", 2); break;
		case '\n': sb_put(b, "\\n", 2); break;
		case '\t': sb_put(b, "\\t", 2); break;
		case '\r': sb_put(b, "\\r", 2); break;
		default: snprintf(esc, sizeof(esc), "\\u%04x", *q); sb_put(b, esc, 6);
		}
		p = q + 1;
	}
	sb_put(b, "\"", 1);
}

/* Shortest of %.15g..%.17g that reads back exactly; integers in full, never in e-notation. */
static void sb_number(struct sbuf *b, double d)
{
	char t[40];

	if (!isfinite(d)) {
		sb_str(b, "null");
		return;
	}
	if (d == floor(d) && fabs(d) < 1e19) {
		snprintf(t, sizeof(t), "%.0f", d == 0 ? 0.0 : d);
	} else {
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(t, sizeof(t), "%.*g", prec, d);
			if (strtod(t, NULL) == d)
				break;
		}
	}
	sb_str(b, t);
}

static void sb_value(struct sbuf *b, const cJSON *v)
{
	const cJSON *c;
	int first = 1;

	if (cJSON_IsString(v)) {
		sb_json_string(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		sb_number(b, v->valuedouble);
	} else if (cJSON_IsTrue(v)) {
		sb_str(b, "true");
	} else if (cJSON_IsFalse(v)) {
		sb_str(b, "false");
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		int obj = cJSON_IsObject(v);
		sb_put(b, obj ? "{" : "[", 1);
		cJSON_ArrayForEach (c, v) {
			if (!first)
				sb_put(b, ",", 1);
			first = 0;
			if (obj) {
				sb_json_string(b, c->string ? c->string : "");
				sb_put(b, ":", 1);
			}
			sb_value(b, c);
		}
		sb_put(b, obj ? "}" : "]", 1);
	} else {
		sb_str(b, "null");
	}
}

/*
 * µs as a JSON number to ns. us * 1000 can round to the wrong ns, so take the neighbour whose
 * 3-decimal text reads back as the same double: exact for the text Kineto writes.
 */
static int64_t us_to_ns(double us)
{
	int64_t n0 = (int64_t)llround(us * 1000.0);
	char t[48];

	for (int d = 0; d < 3; d++) {
		int64_t n = n0 + (d == 0 ? 0 : d == 1 ? -1 : 1);
		uint64_t u = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
		snprintf(t, sizeof(t), "%s%" PRIu64 ".%03u", n < 0 ? "-" : "", u / 1000,
			 (unsigned)(u % 1000));
		if (strtod(t, NULL) == us)
			return n;
	}
	return n0;
}

static int profiler_step(const char *s, int64_t *n)
{
	char *end;

	if (!s || strncmp(s, "ProfilerStep#", 13) != 0 || s[13] < '0' || s[13] > '9')
		return 0;
	errno = 0;
	*n = strtoll(s + 13, &end, 10);
	return *end == 0 && errno == 0;
}

static double num_or(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *str_or(const cJSON *o, const char *k, const char *dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	return cJSON_IsString(v) ? v->valuestring : dflt;
}

static int is_id_arg(const char *k)
{
	return strcmp(k, "correlation") == 0 || strcmp(k, "External id") == 0;
}

/* A Kineto event as a template: every field kept in order, ts/dur/ids/step numbers as slots. */
static struct tev kineto_template(struct gen *g, const cJSON *e)
{
	struct tev t = {g->tpl.n, 0, (uint32_t)g->n_vals};
	const char *ph = str_or(e, "ph", "");
	int flow = strchr("stf", ph[0]) && ph[0] && !ph[1];
	const cJSON *c, *a;
	int first = 1;
	int64_t step;

	sb_put(&g->tpl, "{", 1);
	cJSON_ArrayForEach (c, e) {
		const char *k = c->string ? c->string : "";
		if (!first)
			sb_put(&g->tpl, ",", 1);
		first = 0;
		sb_json_string(&g->tpl, k);
		sb_put(&g->tpl, ":", 1);
		if (strcmp(k, "ts") == 0 && cJSON_IsNumber(c)) {
			sb_mark(g, K_TS, us_to_ns(c->valuedouble) - g->base);
		} else if (strcmp(k, "dur") == 0 && cJSON_IsNumber(c)) {
			sb_mark(g, K_DUR, us_to_ns(c->valuedouble));
		} else if (strcmp(k, "id") == 0 && flow && cJSON_IsNumber(c)) {
			sb_mark(g, K_ID, (int64_t)c->valuedouble);
		} else if (strcmp(k, "name") == 0 && profiler_step(c->valuestring, &step)) {
			sb_str(&g->tpl, "\"ProfilerStep#");
			sb_mark(g, K_STEP, step);
			sb_put(&g->tpl, "\"", 1);
		} else if (strcmp(k, "args") == 0 && cJSON_IsObject(c)) {
			int afirst = 1;
			sb_put(&g->tpl, "{", 1);
			cJSON_ArrayForEach (a, c) {
				const char *ak = a->string ? a->string : "";
				if (!afirst)
					sb_put(&g->tpl, ",", 1);
				afirst = 0;
				sb_json_string(&g->tpl, ak);
				sb_put(&g->tpl, ":", 1);
				if (is_id_arg(ak) && cJSON_IsNumber(a) &&
				    a->valuedouble == floor(a->valuedouble))
					sb_mark(g, K_ID, (int64_t)a->valuedouble);
				else
					sb_value(&g->tpl, a);
			}
			sb_put(&g->tpl, "}", 1);
		} else {
			sb_value(&g->tpl, c);
		}
	}
	sb_put(&g->tpl, "}", 1);
	t.len = (uint32_t)(g->tpl.n - t.off);
	return t;
}

/* ---- JAX export form: pids 1+device and 701, string args, only M and X --------------- */

struct jtrack {
	int64_t pid, tid;
	const char *name; /* Kineto thread name, host threads */
	int device;
};

struct jtracks {
	struct jtrack *v;
	size_t n, cap;
};

static const char *const device_cats[] = {"kernel", "gpu_memcpy", "gpu_memset",
					  "Kernel", "Memcpy",	  "Memset"};

static int is_device_cat(const char *cat)
{
	for (size_t i = 0; i < sizeof(device_cats) / sizeof(device_cats[0]); i++)
		if (strcmp(cat, device_cats[i]) == 0)
			return 1;
	return 0;
}

static void jt_note(struct jtracks *ts, int64_t pid, int64_t tid, int device)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->v[i].pid == pid && ts->v[i].tid == tid)
			return;
	if (ts->n == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 16;
		ts->v = xrealloc(ts->v, ts->cap * sizeof(*ts->v));
	}
	ts->v[ts->n++] = (struct jtrack){pid, tid, NULL, device};
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* A Kineto X event in JAX export form; returns 0 when JAX would not have it. */
static int jax_template(struct gen *g, const cJSON *e, struct jtracks *tracks, struct tev *out)
{
	const char *cat = str_or(e, "cat", ""), *name = str_or(e, "name", "");
	const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
	const cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
	double corr = num_or(args, "correlation", -1);
	struct tev t = {g->tpl.n, 0, (uint32_t)g->n_vals};
	int device = is_device_cat(cat);
	int64_t step, jpid;
	char num[64];

	if (strcmp(str_or(e, "ph", ""), "X") != 0 || !cJSON_IsNumber(pid) || !cJSON_IsNumber(tid) ||
	    strcmp(cat, "gpu_user_annotation") == 0)
		return 0;
	jpid = device ? 1 + (int64_t)pid->valuedouble : 701;
	jt_note(tracks, jpid, (int64_t)tid->valuedouble, device);
	snprintf(num, sizeof(num),
		 "{\"ph\":\"X\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", jpid,
		 (int64_t)tid->valuedouble);
	sb_str(&g->tpl, num);
	sb_mark(g, K_TS, us_to_ns(num_or(e, "ts", 0)) - g->base);
	sb_str(&g->tpl, ",\"dur\":");
	sb_mark(g, K_DUR, us_to_ns(num_or(e, "dur", 0)));
	sb_str(&g->tpl, ",\"name\":");
	if (profiler_step(name, &step)) {
		/* jax.profiler.StepTraceAnnotation("train", step_num=N) */
		sb_str(&g->tpl, "\"train\",\"args\":{\"step_num\":\"");
		sb_mark(g, K_STEP, step);
		sb_str(&g->tpl, "\"}}");
	} else {
		sb_json_string(&g->tpl, name);
		if (device && (strcmp(cat, "kernel") == 0 || strcmp(cat, "Kernel") == 0)) {
			sb_str(&g->tpl, ",\"args\":{\"correlation_id\":\"");
			sb_mark(g, K_ID, corr >= 0 ? (int64_t)corr : 0);
			snprintf(num, sizeof(num),
				 "\",\"hlo_module\":\"jit_train_step\",\"hlo_op\":\"fusion.%u\"}}",
				 (unsigned)(name_hash(name) % 4096));
			sb_str(&g->tpl, num);
		} else if (corr >= 0) {
			sb_str(&g->tpl, ",\"args\":{\"correlation_id\":\"");
			sb_mark(g, K_ID, (int64_t)corr);
			sb_str(&g->tpl, "\"}}");
		} else {
			sb_str(&g->tpl, "}");
		}
	}
	t.len = (uint32_t)(g->tpl.n - t.off);
	*out = t;
	return 1;
}

static int cmp_track(const void *a, const void *b)
{
	const struct jtrack *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Append one finished JSON entry to the head templates. */
static void push_head(struct gen *g, const char *json)
{
	struct tev ev = {g->tpl.n, 0, (uint32_t)g->n_vals};

	sb_str(&g->tpl, json);
	ev.len = (uint32_t)(g->tpl.n - ev.off);
	tl_push(&g->head, ev);
}

/* The M events of a JAX export, for the tracks the body uses. */
static void jax_metadata(struct gen *g, struct jtracks *tracks, const cJSON *events)
{
	char line[512], name[200];
	int64_t last_pid = -1, host_sort = 0;
	const cJSON *e;

	/* Kineto thread names of host threads, e.g. "thread 123 (pt_main_thread)" */
	cJSON_ArrayForEach (e, events) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
		if (strcmp(str_or(e, "ph", ""), "M") != 0 ||
		    strcmp(str_or(e, "name", ""), "thread_name") != 0)
			continue;
		for (size_t i = 0; i < tracks->n; i++)
			if (!tracks->v[i].device &&
			    tracks->v[i].tid == (int64_t)num_or(e, "tid", -1))
				tracks->v[i].name = str_or(args, "name", NULL);
	}
	qsort(tracks->v, tracks->n, sizeof(*tracks->v), cmp_track);
	for (size_t i = 0; i < tracks->n; i++) {
		const struct jtrack *t = &tracks->v[i];
		struct sbuf b = {0};
		if (t->pid != last_pid) {
			if (t->device)
				snprintf(name, sizeof(name), "/device:GPU:%" PRId64, t->pid - 1);
			else
				snprintf(name, sizeof(name), "/host:CPU");
			snprintf(line, sizeof(line),
				 "{\"ph\":\"M\",\"pid\":%" PRId64
				 ",\"name\":\"process_name\",\"args\":{\"name\":\"%s\"}}",
				 t->pid, name);
			push_head(g, line);
			snprintf(
			    line, sizeof(line),
			    "{\"ph\":\"M\",\"pid\":%" PRId64
			    ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%" PRId64
			    "}}",
			    t->pid, t->pid);
			push_head(g, line);
			last_pid = t->pid;
		}
		if (t->device)
			snprintf(name, sizeof(name), "Stream #%" PRId64 "(Kernel)", t->tid);
		else if (t->name)
			snprintf(name, sizeof(name), "%s", t->name);
		else
			snprintf(name, sizeof(name), "thread %" PRId64, t->tid);
		snprintf(line, sizeof(line),
			 "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
			 ",\"name\":\"thread_name\",\"args\":{\"name\":",
			 t->pid, t->tid);
		sb_str(&b, line);
		sb_json_string(&b, name);
		sb_str(&b, "}}");
		push_head(g, b.p);
		free(b.p);
		snprintf(line, sizeof(line),
			 "{\"ph\":\"M\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
			 ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%" PRId64 "}}",
			 t->pid, t->tid, t->device ? t->tid : ++host_sort);
		push_head(g, line);
	}
}

/* ---- output ------------------------------------------------------------------------------ */

static void out_flush(struct out *o)
{
	if (!o->len || o->err)
		return;
	if (o->gz ? gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len
		  : fwrite(o->buf, 1, o->len, o->fp) != o->len)
		o->err = 1;
	o->total += o->len;
	o->len = 0;
}

static void out_put(struct out *o, const void *p, size_t n)
{
	if (o->len + n > OUT_CAP)
		out_flush(o);
	if (n > OUT_CAP) {
		if (o->gz ? gzwrite(o->gz, p, (unsigned)n) != (int)n : fwrite(p, 1, n, o->fp) != n)
			o->err = 1;
		o->total += n;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

static void out_str(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

static void out_i64(struct out *o, int64_t v)
{
	char t[24], *p = t + sizeof(t);
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	out_put(o, p, (size_t)(t + sizeof(t) - p));
}

/* ns as µs text: integral µs as an integer, else up to 3 decimals without trailing zeros. */
static void out_us(struct out *o, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	unsigned frac = (unsigned)(u % 1000);
	char t[5];
	int n = 0;

	if (ns < 0)
		out_put(o, "-", 1);
	out_i64(o, (int64_t)(u / 1000));
	if (!frac)
		return;
	t[n++] = '.';
	t[n++] = (char)('0' + frac / 100);
	t[n++] = (char)('0' + frac / 10 % 10);
	t[n++] = (char)('0' + frac % 10);
	while (t[n - 1] == '0')
		n--;
	out_put(o, t, (size_t)n);
}

static void emit(struct out *o, const struct gen *g, const struct tev *e, int64_t rep)
{
	const char *p = g->tpl.p + e->off, *end = p + e->len;
	const int64_t *v = g->vals + e->val0;

	while (p < end) {
		const char *m = memchr(p, MARK, (size_t)(end - p));
		if (!m) {
			out_put(o, p, (size_t)(end - p));
			break;
		}
		out_put(o, p, (size_t)(m - p));
		switch (m[1]) {
		case K_TS: out_us(o, *v++ + rep * g->span); break;
		case K_DUR: out_us(o, *v++); break;
		case K_ID: out_i64(o, *v++ + rep * g->id_stride); break;
		case K_STEP: out_i64(o, *v++ + rep * g->step_stride); break;
		}
		p = m + 2;
	}
}

/* One array entry, with the separator before it. */
static void entry(struct out *o, const struct gen *g, const struct tev *e, int64_t rep, int *first)
{
	out_str(o, *first ? "\n" : ",\n");
	*first = 0;
	emit(o, g, e, rep);
}

/* ---- main -------------------------------------------------------------------------------- */

static char *read_all(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t n = 0, cap = 1 << 20;
	char *buf;
	int r;

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
	if (r < 0 || gzclose(f) != Z_OK) {
		if (r < 0)
			gzclose(f);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: bench_gen --source KINETO.json[.gz] --events N[k|M] "
		"--style kineto|jax -o OUT.json[.gz]\n"
		"Writes exactly N trace-event array entries (gzip level 6 when OUT ends in "
		".gz),\nrepeating the source's ProfilerStep span with shifted timestamps.\n");
	return 2;
}

static int parse_count(const char *s, int64_t *n)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	if (*end || v < 1 || v > 1e10 || v != floor(v))
		return -1;
	*n = (int64_t)v;
	return 0;
}

int main(int argc, char **argv)
{
	const char *source = NULL, *style_s = "kineto", *outpath = NULL;
	struct gen g;
	struct out o;
	struct jtracks tracks = {0};
	int64_t n_events = 0, body_n, reps, written = 0, min_step = INT64_MAX, max_step = INT64_MIN;
	int64_t max_id = 0;
	cJSON *root = NULL, *events, *e;
	char *text, *tmp = NULL, *mark = NULL;
	size_t text_len = 0, olen;
	int rc = 1, first = 1;

	memset(&g, 0, sizeof(g));
	memset(&o, 0, sizeof(o));
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--source") == 0 && v)
			source = v, i++;
		else if (strcmp(a, "--events") == 0 && v) {
			if (parse_count(v, &n_events))
				return usage();
			i++;
		} else if (strcmp(a, "--style") == 0 && v)
			style_s = v, i++;
		else if (strcmp(a, "-o") == 0 && v)
			outpath = v, i++;
		else
			return usage();
	}
	if (!source || !outpath || !n_events)
		return usage();
	if (strcmp(style_s, "kineto") == 0)
		g.style = STYLE_KINETO;
	else if (strcmp(style_s, "jax") == 0)
		g.style = STYLE_JAX;
	else
		return usage();

	text = read_all(source, &text_len);
	if (!text) {
		fprintf(stderr, "bench_gen: cannot read '%s'\n", source);
		return 1;
	}
	root = cJSON_ParseWithLength(text, text_len);
	free(text);
	events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	if (!cJSON_IsObject(root) || !cJSON_IsArray(events)) {
		fprintf(stderr, "bench_gen: '%s' is not a Kineto trace object with traceEvents\n",
			source);
		goto done;
	}

	/* The steady span: first ProfilerStep start to last ProfilerStep end. */
	g.lo = INT64_MAX;
	g.hi = INT64_MIN;
	cJSON_ArrayForEach (e, events) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args"), *id;
		int64_t step, ts;
		if (profiler_step(str_or(e, "name", NULL), &step) &&
		    strcmp(str_or(e, "ph", ""), "X") == 0 &&
		    strcmp(str_or(e, "cat", ""), "gpu_user_annotation") != 0) {
			ts = us_to_ns(num_or(e, "ts", 0));
			g.lo = ts < g.lo ? ts : g.lo;
			ts += us_to_ns(num_or(e, "dur", 0));
			g.hi = ts > g.hi ? ts : g.hi;
			min_step = step < min_step ? step : min_step;
			max_step = step > max_step ? step : max_step;
		}
		id = cJSON_GetObjectItemCaseSensitive(e, "id");
		if (cJSON_IsNumber(id) && id->valuedouble > (double)max_id)
			max_id = (int64_t)id->valuedouble;
		for (const char *k = "correlation"; k; k = k[0] == 'c' ? "External id" : NULL) {
			id = cJSON_GetObjectItemCaseSensitive(args, k);
			if (cJSON_IsNumber(id) && id->valuedouble > (double)max_id)
				max_id = (int64_t)id->valuedouble;
		}
	}
	if (g.lo >= g.hi) {
		fprintf(stderr, "bench_gen: '%s' has no ProfilerStep# events\n", source);
		goto done;
	}
	g.span = g.hi - g.lo;
	g.id_stride = max_id + 1;
	g.step_stride = max_step - min_step + 1;
	g.base = g.style == STYLE_JAX ? g.lo : 0;

	/* Templates: the body (events inside the span), then head and tail around it. */
	cJSON_ArrayForEach (e, events) {
		const char *ph = str_or(e, "ph", "");
		int64_t ts = us_to_ns(num_or(e, "ts", 0)), end = ts + us_to_ns(num_or(e, "dur", 0));
		struct tev t;
		int inside = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "ts")) &&
			     ts >= g.lo && ts < g.hi && end <= g.hi && strcmp(ph, "M") != 0;
		if (g.style == STYLE_JAX) {
			if (inside && jax_template(&g, e, &tracks, &t))
				tl_push(&g.body, t);
			continue;
		}
		if (inside)
			tl_push(&g.body, kineto_template(&g, e));
		else if (strcmp(ph, "M") == 0 || (strcmp(ph, "i") == 0 && ts < g.lo))
			tl_push(&g.head, kineto_template(&g, e));
		else if (strcmp(ph, "i") == 0)
			tl_push(&g.tail, kineto_template(&g, e));
	}
	if (g.style == STYLE_JAX)
		jax_metadata(&g, &tracks, events);
	body_n = n_events - (int64_t)g.head.n - (int64_t)g.tail.n - (g.style == STYLE_JAX);
	if (!g.body.n || body_n < 1) {
		fprintf(stderr, "bench_gen: %" PRId64 " events are too few for this source\n",
			n_events);
		goto done;
	}
	reps = (body_n + (int64_t)g.body.n - 1) / (int64_t)g.body.n;

	olen = strlen(outpath);
	tmp = xrealloc(NULL, olen + 8);
	snprintf(tmp, olen + 8, "%s.tmp", outpath);
	o.buf = xrealloc(NULL, OUT_CAP);
	if (olen > 3 && strcmp(outpath + olen - 3, ".gz") == 0) {
		o.gz = gzopen(tmp, "wb6");
		if (o.gz)
			gzbuffer(o.gz, 1 << 20);
	} else {
		o.fp = fopen(tmp, "wb");
	}
	if (!o.gz && !o.fp) {
		fprintf(stderr, "bench_gen: cannot write '%s': %s\n", tmp, strerror(errno));
		goto done;
	}

	{
		struct sbuf m = {0};
		sb_str(&m, "generated by tests/tools/bench_gen from ");
		sb_str(&m, source);
		sb_str(&m, "; not a real profile");
		mark = m.p;
	}
	out_str(&o, "{\"profgate_synthetic\":");
	{
		struct sbuf m = {0};
		sb_json_string(&m, mark);
		out_put(&o, m.p, m.n);
		free(m.p);
	}
	if (g.style == STYLE_JAX)
		out_str(&o, ",\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},"
			    "\"traceEvents\":[");
	cJSON_ArrayForEach (e, root) {
		struct sbuf v = {0};
		if (g.style == STYLE_JAX)
			break;
		out_str(&o, ",");
		sb_json_string(&v, e->string ? e->string : "");
		sb_put(&v, ":", 1);
		if (e != events)
			sb_value(&v, e);
		out_put(&o, v.p, v.n);
		free(v.p);
		if (e != events)
			continue;
		/* the event array */
		out_str(&o, "[");
		for (size_t i = 0; i < g.head.n; i++)
			entry(&o, &g, &g.head.v[i], 0, &first);
		for (int64_t r = 0; r < reps; r++)
			for (size_t i = 0; i < g.body.n && written < body_n; i++, written++)
				entry(&o, &g, &g.body.v[i], r, &first);
		for (size_t i = 0; i < g.tail.n; i++)
			entry(&o, &g, &g.tail.v[i], reps - 1, &first);
		out_str(&o, "\n]");
	}
	if (g.style == STYLE_JAX) {
		for (size_t i = 0; i < g.head.n; i++)
			entry(&o, &g, &g.head.v[i], 0, &first);
		for (int64_t r = 0; r < reps; r++)
			for (size_t i = 0; i < g.body.n && written < body_n; i++, written++)
				entry(&o, &g, &g.body.v[i], r, &first);
		out_str(&o, first ? "{}]" : ",\n{}]");
	}
	out_str(&o, "}\n");
	out_flush(&o);
	if (o.gz ? gzclose(o.gz) != Z_OK : fclose(o.fp) != 0)
		o.err = 1;
	o.gz = NULL;
	o.fp = NULL;
	if (o.err || rename(tmp, outpath) != 0) {
		fprintf(stderr, "bench_gen: cannot write '%s'\n", outpath);
		remove(tmp);
		goto done;
	}
	fprintf(stderr,
		"bench_gen: %s: %" PRId64 " entries (%zu head, %" PRId64 " x %zu-event step span "
		"of %.3f ms, %zu tail), %" PRIu64 " bytes of JSON\n",
		outpath, n_events, g.head.n + (g.style == STYLE_JAX), reps, g.body.n,
		(double)g.span / 1e6, g.tail.n, o.total);
	rc = 0;
done:
	if (o.gz)
		gzclose(o.gz);
	if (o.fp)
		fclose(o.fp);
	free(o.buf);
	free(tmp);
	free(mark);
	free(tracks.v);
	free(g.tpl.p);
	free(g.vals);
	free(g.head.v);
	free(g.body.v);
	free(g.tail.v);
	cJSON_Delete(root);
	return rc;
}
