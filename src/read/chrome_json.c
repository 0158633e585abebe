/*
 * Chrome trace JSON reader: JAX/XLA exports (<host>.trace.json.gz,
 * perfetto_trace.json.gz), PyTorch Kineto (*.pt.trace.json[.gz]), PyTorch's
 * legacy autograd-profiler export (a bare array on pid "CPU functions") and
 * generic Chrome traces, as an object with "traceEvents" or a bare array.
 *
 * How it works: a purpose-built pull scanner walks the bytes once, chunk by
 * chunk, and decodes one event at a time into a few fixed fields (ph, name,
 * cat, pid, tid, ts, dur, id) and a whitelist of args; everything else is
 * skipped without copying. cJSON alone cannot reach the speed goal (it builds a
 * tree of malloc'd nodes per event: ~3x slower than inflate on Kineto files),
 * so it is used only for the small top-level blocks (deviceProperties,
 * distributedInfo), captured as text and capped in size.
 *
 * Times: ts and dur are microseconds in every dialect; they are converted to
 * integer ns exactly from the decimal text (no double rounding). Kineto's
 * baseTimeNanoseconds only moves the epoch and is recorded, not applied.
 * displayTimeUnit is a display hint (the Chrome trace spec; Kineto files
 * with "ns" still write µs) and is recorded, never used to scale.
 *
 * This file is the scanner and the events; chrome_syntax.c holds its slow
 * paths (errors, escapes), chrome_num.c the general path of numbers, and
 * chrome_meta.c the devices, track kinds, dialect and file facts decided from
 * metadata once the stream ends (chrome_json.h).
 */
#include "chrome_json.h"

#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* ---- byte access ---- */

int cj_slow_peek(struct cj *c)
{
	int r = rd_in_refill(c->in);

	if (r > 0)
		return *c->in->p;
	return r == 0 ? CH_EOF : CH_ERR;
}

static int expect(struct cj *c, int want, const char *what)
{
	int ch = skip_ws(c);

	if (ch != want)
		return cj_bad_char(c, ch, what);
	c->in->p++;
	return 0;
}

/* After a member or an element: 1 past a ',' (another follows), 0 past
 * `close` (that was the last), else PG_EFORMAT saying `what` was expected. */
static inline int next_item(struct cj *c, int close, const char *what)
{
	int ch = skip_ws(c);

	if (ch == ',' || ch == close) {
		c->in->p++;
		return ch == ',';
	}
	return cj_bad_char(c, ch, what);
}

/* ---- strings ---- */

/* The first '"' or '\\' in [p, end), or end: 16 bytes a step where SSE2 is
 * there (every x86-64), since strings are most of a trace's bytes. */
static inline const unsigned char *scan_string(const unsigned char *p, const unsigned char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');

	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
		int m = _mm_movemask_epi8(
		    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

static int read_string(struct cj *c, struct pg_buf *out)
{
	if (out) {
		out->len = 0;
		if (out->cap)
			out->ptr[0] = '\0';
	}
	c->in->p++; /* opening quote */
	for (;;) {
		const unsigned char *end = c->in->end, *s = c->in->p;
		const unsigned char *p = scan_string(s, end);
		if (out && p > s) {
			if (out->len + (size_t)(p - s) > RD_MAX_STRING_BYTES) {
				c->in->p = p;
				return cj_fail(c, "string longer than %u MiB",
					       RD_MAX_STRING_BYTES >> 20);
			}
			size_t k = (size_t)(p - s);
			if (out->len + k + 1 > out->cap)
				pg_buf_grow(out, k);
			memcpy(out->ptr + out->len, s, k);
			out->len += k;
			out->ptr[out->len] = '\0';
		}
		c->in->p = p;
		if (p < end) {
			c->in->p++;
			if (*p == '"')
				return 0;
			if (cj_read_escape(c, out))
				return PG_EFORMAT;
			continue;
		}
		int ch = cj_slow_peek(c);
		if (ch < 0)
			return ch == CH_ERR ? cj_fail_src(c) : cj_fail_eof(c);
	}
}

/* An object key, whose opening quote is next but for white space, into c->key,
 * and the ':' after it; what names the key in the message when no string is
 * there. */
static int read_member_key(struct cj *c, const char *what)
{
	int ch = skip_ws(c);

	if (ch != '"')
		return cj_bad_char(c, ch, what);
	if (read_string(c, &c->key) || expect(c, ':', "':'"))
		return PG_EFORMAT;
	return 0;
}

/*
 * An event's or args' key, whose opening quote is next but for white space,
 * and the ':' after it: *k and *n are the key's bytes. When the key (without
 * escapes) and its ':' lie in this chunk, *k points into the chunk and nothing
 * is copied; else the key is copied into c->key. Reading the value may move
 * to the next chunk (and free this one) or overwrite c->key, so the caller
 * is done with the key before it reads the value.
 */
static inline int read_event_key(struct cj *c, const char **k, size_t *n, const char *what)
{
	int ch = skip_ws(c);

	if (ch == '"') {
		const unsigned char *s = c->in->p + 1, *end = c->in->end;
		const unsigned char *q = scan_string(s, end), *r = q + 1;
		if (q < end && *q == '"') {
			while (r < end && is_ws(*r))
				r++;
			if (r < end && *r == ':') {
				*k = (const char *)s;
				*n = (size_t)(q - s);
				c->in->p = r + 1;
				return 0;
			}
		}
	}
	if (read_member_key(c, what))
		return PG_EFORMAT;
	*k = c->key.ptr;
	*n = c->key.len;
	return 0;
}

/* ---- numbers (the general path: chrome_num.c) ---- */

/*
 * The fast paths for the numbers of every event: a plain decimal that ends
 * within this chunk, [-]digits[.digits] with at most 18 digits in all (so the
 * mantissa is exact in a uint64_t and nothing is dropped). Anything else (an
 * exponent, more digits, a number cut by the chunk's end, bad syntax) returns
 * 0 and the caller takes cj_read_number(), which gives the same value or the
 * error. On 1, c->in->p is past the number.
 */
static inline int fast_decimal(struct cj *c, int *neg, uint64_t *mant, int *frac_digits)
{
	const unsigned char *p = c->in->p, *end = c->in->end, *d0;
	uint64_t v = 0;
	int fd = 0;

	*neg = p < end && *p == '-';
	p += *neg;
	d0 = p;
	for (unsigned d; p < end && (d = (unsigned)*p - '0') < 10; p++)
		v = v * 10 + d;
	if (p == d0)
		return 0;
	if (p < end && *p == '.') {
		const unsigned char *f0 = ++p;
		for (unsigned d; p < end && (d = (unsigned)*p - '0') < 10; p++)
			v = v * 10 + d;
		fd = (int)(p - f0);
		if (fd == 0)
			return 0;
	}
	if (p >= end || cj_numchar[*p] || (p - d0) - (fd > 0) > 18)
		return 0;
	*mant = v;
	*frac_digits = fd;
	c->in->p = p;
	return 1;
}

/* Microseconds to ns as cj_num_us_to_ns() makes them, for fast_decimal()'s
 * numbers: 1, or 0 to take the general path. */
static inline int fast_us_to_ns(struct cj *c, int64_t *out)
{
	const unsigned char *start = c->in->p;
	uint64_t v;
	int neg, fd;

	if (!fast_decimal(c, &neg, &v, &fd))
		return 0;
	if (fd <= 3) {
		uint64_t m = cj_pow10u[3 - fd];
		if (v > (uint64_t)INT64_MAX / m) {
			c->in->p = start;
			return 0;
		}
		v *= m;
	} else {
		uint64_t d = cj_pow10u[fd - 3];
		v = v / d + (v % d >= (d + 1) / 2 ? 1 : 0);
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 1;
}

/* ---- skipping values ---- */

static int expect_word(struct cj *c, const char *w)
{
	for (const char *s = w; *s; s++) {
		int ch = peekc(c);
		if (ch != *s)
			return cj_bad_char(c, ch, "a JSON value");
		c->in->p++;
	}
	return 0;
}

/* Step past the byte ch, copying it onto cap when cap is set. */
static void take(struct cj *c, struct pg_buf *cap, int ch)
{
	c->in->p++;
	if (cap)
		pg_buf_addc(cap, (char)ch);
}

/* A string whose opening quote is next: skipped, or re-escaped onto cap when
 * cap is set. */
static int skip_string(struct cj *c, struct pg_buf *cap)
{
	struct pg_buf tmp = PG_BUF_INIT;
	int rc;

	if (!cap)
		return read_string(c, NULL);
	rc = read_string(c, &tmp);
	if (!rc)
		pg_json_escape(cap, tmp.ptr, tmp.len);
	pg_buf_release(&tmp);
	return rc;
}

/*
 * Skip one JSON value, iteratively, with a hard depth cap. When cap is
 * non-NULL the value's text is captured into it (bounded by
 * RD_MAX_HEADER_BYTES); used for small top-level blocks.
 */
static int skip_value(struct cj *c, struct pg_buf *cap)
{
	unsigned char stack[RD_MAX_DEPTH];
	int depth = 0, need_value = 1;
	const unsigned char *mark;

	for (;;) {
		int ch = skip_ws(c);
		mark = c->in->p;
		if (ch < 0)
			return ch == CH_ERR ? cj_fail_src(c) : cj_fail_eof(c);
		if (need_value) {
			need_value = 0;
			if (ch == '{' || ch == '[') {
				if (depth >= RD_MAX_DEPTH)
					return cj_fail(c, "JSON nested deeper than %d levels",
						       RD_MAX_DEPTH);
				stack[depth++] = (unsigned char)ch;
				take(c, cap, ch);
				ch = skip_ws(c);
				if (ch == (stack[depth - 1] == '{' ? '}' : ']')) {
					take(c, cap, ch);
					depth--;
					goto after_value;
				}
				if (stack[depth - 1] == '{') {
					if (ch != '"')
						return cj_bad_char(c, ch, "an object key");
					goto key;
				}
				need_value = 1;
				continue;
			} else if (ch == '"') {
				if (skip_string(c, cap))
					return PG_EFORMAT;
			} else if (ch == 't' || ch == 'f' || ch == 'n') {
				const char *w = ch == 't' ? "true" : ch == 'f' ? "false" : "null";
				if (expect_word(c, w))
					return PG_EFORMAT;
				if (cap)
					pg_buf_adds(cap, w);
			} else if (ch == '-' || (ch >= '0' && ch <= '9')) {
				struct num n;
				int neg, fd;
				uint64_t v;
				if (!cap && fast_decimal(c, &neg, &v, &fd))
					goto after_value;
				if (cj_read_number(c, &n))
					return PG_EFORMAT;
				if (cap)
					pg_buf_add(cap, n.text, (size_t)n.len);
			} else {
				return cj_bad_char(c, ch, "a JSON value");
			}
		}
	after_value:
		if (cap && cap->len > RD_MAX_HEADER_BYTES)
			return cj_fail(c, "top-level block larger than %u MiB",
				       RD_MAX_HEADER_BYTES >> 20);
		if (depth == 0)
			return 0;
		ch = skip_ws(c);
		if (ch == ',') {
			take(c, cap, ',');
			if (stack[depth - 1] == '[') {
				need_value = 1;
				continue;
			}
			ch = skip_ws(c);
			if (ch != '"')
				return cj_bad_char(c, ch, "an object key");
		key:
			if (skip_string(c, cap))
				return PG_EFORMAT;
			if (cap)
				pg_buf_addc(cap, ':');
			if (expect(c, ':', "':'"))
				return PG_EFORMAT;
			need_value = 1;
			continue;
		}
		if (ch == (stack[depth - 1] == '{' ? '}' : ']')) {
			take(c, cap, ch);
			depth--;
			goto after_value;
		}
		PG_UNUSED(mark);
		return cj_bad_char(c, ch, stack[depth - 1] == '{' ? "',' or '}'" : "',' or ']'");
	}
}

/* ---- values into text ---- */

/* Read a scalar (string, number, bool) as text into out; 1 if read, 0 if the
 * value was null/object/array (skipped). */
static int read_scalar_text(struct cj *c, struct pg_buf *out, struct num *num, int *is_num)
{
	int ch = skip_ws(c);

	*is_num = 0;
	if (ch == '"')
		return read_string(c, out) ? -1 : 1;
	if (ch == '-' || (ch >= '0' && ch <= '9')) {
		if (cj_read_number(c, num))
			return -1;
		pg_buf_reset(out);
		pg_buf_add(out, num->text, (size_t)num->len);
		*is_num = 1;
		return 1;
	}
	if (ch == 't' || ch == 'f') {
		const char *w = ch == 't' ? "true" : "false";
		if (expect_word(c, w))
			return -1;
		pg_buf_reset(out);
		pg_buf_adds(out, w);
		return 1;
	}
	return skip_value(c, NULL) ? -1 : 0;
}

/* ---- tracks and pids ---- */

uint32_t cj_pid_index(struct cj *c, trace_str pid)
{
	uint32_t i = pg_u64map_get(&c->pidmap, pid);

	if (i != UINT32_MAX)
		return i;
	if (c->n_pids == c->cap_pids) {
		c->cap_pids = c->cap_pids ? 2 * c->cap_pids : 16;
		c->pids = pg_xrealloc(c->pids, c->cap_pids * sizeof(*c->pids));
	}
	i = c->n_pids++;
	memset(&c->pids[i], 0, sizeof(c->pids[i]));
	c->pids[i].pid = pid;
	pg_u64map_put(&c->pidmap, pid, i);
	return i;
}

uint32_t cj_track_for(struct cj *c, trace_str pid, trace_str tid)
{
	if (pid == c->last_pid && tid == c->last_tid && c->last_track != UINT32_MAX)
		return c->last_track;
	uint64_t key = ((uint64_t)pid << 32) | tid;
	uint32_t tr = pg_u64map_get(&c->tracks, key);
	if (tr == UINT32_MAX) {
		struct trace_track t0;
		memset(&t0, 0, sizeof(t0));
		t0.device = UINT32_MAX;
		t0.kind = TRACE_TRACK_OTHER;
		t0.pid = pid;
		t0.tid = tid;
		tr = trace_track_add(c->t, &t0);
		pg_u64map_put(&c->tracks, key, tr);
		cj_pid_index(c, pid);
	}
	c->last_pid = pid;
	c->last_tid = tid;
	c->last_track = tr;
	return tr;
}

static trace_str intern_cached(struct cj *c, const struct pg_buf *b, struct cj_strcache *k)
{
	if (k->set && b->len == k->text.len && memcmp(b->ptr, k->text.ptr, b->len) == 0)
		return k->id;
	k->id = intern_buf(c, b);
	k->set = 1;
	pg_buf_reset(&k->text);
	pg_buf_add(&k->text, b->ptr, b->len);
	return k->id;
}

static uint16_t cat_id(struct cj *c)
{
	uint32_t n = c->n_cats_seen < CJ_CATS_SEEN ? c->n_cats_seen : CJ_CATS_SEEN;

	for (uint32_t i = 0; i < n; i++) {
		struct cj_strcache *k = &c->cats_seen[i];
		if (k->text.len == c->cat.len && memcmp(k->text.ptr, c->cat.ptr, c->cat.len) == 0)
			return (uint16_t)k->id;
	}
	struct cj_strcache *k = &c->cats_seen[c->n_cats_seen++ % CJ_CATS_SEEN];
	k->id = trace_cat_intern(c->t, c->cat.ptr, c->cat.len);
	pg_buf_reset(&k->text);
	pg_buf_add(&k->text, c->cat.ptr, c->cat.len);
	return (uint16_t)k->id;
}

/* Skip a value: the plain decimals and strings of args and unknown keys
 * without skip_value()'s bookkeeping. */
static inline int skip_any(struct cj *c)
{
	int ch = skip_ws(c), neg, fd;
	uint64_t v;

	if (ch == '"')
		return read_string(c, NULL);
	if ((ch == '-' || (ch >= '0' && ch <= '9')) && fast_decimal(c, &neg, &v, &fd))
		return 0;
	return skip_value(c, NULL);
}

/* ---- args ---- */

static int parse_args(struct cj *c)
{
	struct pg_buf *val = &c->scratch;
	struct num num;
	int is_num;

	if (expect(c, '{', "'{' for args"))
		return PG_EFORMAT;
	int ch = skip_ws(c);
	if (ch == '}') {
		c->in->p++;
		return 0;
	}
	for (;;) {
		const char *k;
		size_t kn;
		int rc = read_event_key(c, &k, &kn, "an args key");
		if (rc)
			return rc;
		if (kn >= 11 && k[0] == 'c' &&
		    ((kn == 11 && memcmp(k, "correlation", 11) == 0) ||
		     (kn == 14 && memcmp(k, "correlation_id", 14) == 0))) {
			int vch = skip_ws(c), neg, fd;
			uint64_t cv;
			if ((vch == '-' || (vch >= '0' && vch <= '9')) &&
			    fast_decimal(c, &neg, &cv, &fd)) {
				if (!neg && fd == 0) { /* only an exact unsigned integer links */
					c->corr = cv;
					c->has_corr = 1;
				}
				goto next;
			}
			int r = read_scalar_text(c, val, &num, &is_num);
			if (r < 0)
				return PG_EFORMAT;
			if (r > 0) {
				struct num n2;
				const char *s = val->ptr;
				uint64_t v = 0;
				int ok = 1;
				if (is_num) {
					n2 = num;
					ok = cj_num_to_u64(&n2, &v) == 0;
				} else {
					for (; *s; s++) {
						if (*s < '0' || *s > '9' ||
						    v > (UINT64_MAX - 9) / 10) {
							ok = 0;
							break;
						}
						v = v * 10 + (uint64_t)(*s - '0');
					}
					ok = ok && val->len > 0;
				}
				if (ok) {
					c->corr = v;
					c->has_corr = 1;
				}
			}
		} else {
			int ki = read_kept_arg(k, kn);
			if (ki < 0 || c->n_args >= MAX_ARGS) {
				if (skip_any(c))
					return PG_EFORMAT;
			} else {
				int r = read_scalar_text(c, val, &num, &is_num);
				if (r < 0)
					return PG_EFORMAT;
				if (r > 0) {
					struct argval *a = &c->args[c->n_args++];
					a->key = ki;
					a->off = (uint32_t)c->vals.len;
					a->len = (uint32_t)val->len;
					pg_buf_add(&c->vals, val->ptr, val->len);
				}
			}
		}
	next:;
		int more = next_item(c, '}', "',' or '}' in args");
		if (more <= 0)
			return more;
	}
}

const char *cj_arg_text(struct cj *c, int key, size_t *len)
{
	for (int i = 0; i < c->n_args; i++)
		if (c->args[i].key == key) {
			*len = c->args[i].len;
			return c->vals.ptr + c->args[i].off;
		}
	*len = 0;
	return NULL;
}

/* An integer argument's value, or dflt when absent or not an integer. */
static int64_t arg_int(struct cj *c, int key, int64_t dflt)
{
	size_t n;
	const char *v = cj_arg_text(c, key, &n);
	char buf[32], *end;

	if (!v || n == 0 || n >= sizeof(buf))
		return dflt;
	memcpy(buf, v, n);
	buf[n] = '\0';
	long long x = strtoll(buf, &end, 10);
	return *end ? dflt : (int64_t)x;
}

/*
 * A Kineto "[memory]" instant event: its allocator totals become a sample of
 * the trace's memory (trace_mem_add), and its numbers leave the argument list,
 * so the event itself stays as cheap as it was (no argument set of its own).
 */
static void memory_sample(struct cj *c)
{
	struct trace_mem m = {.ts_ns = c->ts, .file = c->file};
	int keep = 0;

	m.allocated_bytes = arg_int(c, c->a_mem[0], -1);
	m.reserved_bytes = arg_int(c, c->a_mem[1], -1);
	m.device_id = (int32_t)arg_int(c, c->a_mem[2], -1);
	m.device_type = (int32_t)arg_int(c, c->a_mem[3], -1);
	if (m.allocated_bytes >= 0 || m.reserved_bytes >= 0)
		trace_mem_add(c->t, &m);
	for (int i = 0; i < c->n_args; i++) {
		int k = c->args[i].key;
		if (k != c->a_mem[0] && k != c->a_mem[1] && k != c->a_mem[2] && k != c->a_mem[3])
			c->args[keep++] = c->args[i];
	}
	c->n_args = keep;
}

static uint32_t intern_args(struct cj *c)
{
	struct trace_arg a[MAX_ARGS];
	uint32_t n = 0;

	for (int i = 0; i < c->n_args; i++) {
		int k = c->args[i].key;
		if (k == c->a_labels || k == c->a_sort)
			continue;
		if (!c->kept_ids[k])
			c->kept_ids[k] = trace_intern_cstr(c->t, read_kept_arg_name(k));
		a[n].key = c->kept_ids[k];
		a[n].value = trace_intern(c->t, c->vals.ptr + c->args[i].off, c->args[i].len);
		n++;
	}
	return trace_argset_intern(c->t, a, n);
}

/* ---- events ---- */

static void emit(struct cj *c, uint32_t track, int64_t ts, int64_t dur, trace_str name,
		 uint16_t cat, uint32_t args, uint64_t corr, int has_corr, int ph, uint8_t flags)
{
	struct trace_event *e = trace_event_add(c->t);

	e->ts_ns = ts;
	e->dur_ns = dur;
	e->name = name;
	e->track = track;
	e->cat = cat;
	e->args = args;
	e->corr = corr;
	e->ph = (uint8_t)ph;
	e->flags = (uint8_t)(flags | (has_corr ? TRACE_EV_HAS_CORR : 0));
	trace_event_commit(c->t, e);
	c->t->tracks[track].cat_mask |= c->t->cats[cat].class_mask;
	c->n_counted++;
}

/*
 * A flow endpoint (ph s, t, f): counted on its track, so the track's count
 * and span are what they would be with the event kept, but not kept: nothing
 * downstream reads flows (kernels meet their launches through
 * args.correlation), and they are a third of a Kineto trace's events. Only
 * the name's one use, the legacy export's test, is noted.
 */
static int count_flow(struct cj *c, uint32_t track, uint16_t cat)
{
	struct trace_event e = {.ts_ns = c->ts, .track = track, .cat = cat};

	trace_event_commit(c->t, &e);
	c->t->tracks[track].cat_mask |= c->t->cats[cat].class_mask;
	c->n_counted++;
	c->torch_name |= cj_is_torch_name(c->name.ptr, c->name.len);
	return 0;
}

static void push_pending(struct cj *c, const struct pending *p)
{
	if (c->n_pend == c->cap_pend) {
		c->cap_pend = c->cap_pend ? 2 * c->cap_pend : 64;
		c->pend = pg_xrealloc(c->pend, c->cap_pend * sizeof(*c->pend));
	}
	c->pend[c->n_pend++] = *p;
}

/* Pop the newest live pending entry matching track (and key when async). */
static int pop_pending(struct cj *c, uint32_t track, uint64_t key, int async, struct pending *out)
{
	for (uint32_t i = c->n_pend; i-- > 0;) {
		struct pending *p = &c->pend[i];
		if (!p->alive || p->track != track || (async && p->key != key))
			continue;
		*out = *p;
		p->alive = 0;
		while (c->n_pend > 0 && !c->pend[c->n_pend - 1].alive)
			c->n_pend--;
		return 1;
	}
	return 0;
}

int cj_finish_event(struct cj *c)
{
	int ph = c->ph;
	struct pending p;

	if (ph == 0)
		return 0; /* JAX's trailing {} and other phase-less entries */
	if (ph < 128)
		c->t->files[c->file].phase_counts[ph]++;
	if (ph == 'M') {
		cj_handle_metadata(c);
		return 0;
	}
	if (ph == 'C' || ph == 'P' || ph == 'O' || ph == 'N' || ph == 'D' || ph == 'R' ||
	    ph == 'c' || ph == 'S' || ph == 'T' || ph == 'F' || ph == 'p' || ph == '?')
		return 0; /* counted, not kept: nothing downstream reads them */
	if (c->n_counted >= c->max_events)
		return rd_too_many_events(c->path, c->max_events);
	if (!c->has_ts)
		return cj_fail(c, "'%c' event without a ts", ph);
	if (c->has_dur && c->dur < 0)
		return cj_fail(c, "negative duration");

	trace_str pid = intern_cached(c, &c->pid, &c->pid_text),
		  tid = intern_cached(c, &c->tid, &c->tid_text);
	uint32_t track = cj_track_for(c, pid, tid);
	uint16_t cat = cat_id(c);
	if (c->cat.len && c->t->cats[cat].class_mask)
		c->kineto_evidence++;
	if (ph == 's' || ph == 't' || ph == 'f')
		return count_flow(c, track, cat);
	trace_str name = intern_buf(c, &c->name);
	if ((ph == 'i' || ph == 'I') && c->name.len == 8 && memcmp(c->name.ptr, "[memory]", 8) == 0)
		memory_sample(c);
	uint32_t args = intern_args(c);

	switch (ph) {
	case 'X':
		emit(c, track, c->ts, c->has_dur ? c->dur : 0, name, cat, args, c->corr,
		     c->has_corr, 'X', 0);
		return 0;
	case 'B':
		p = (struct pending){track, 1, c->ts, name, cat, args, c->corr, 0, 0};
		p.flags = c->has_corr ? TRACE_EV_HAS_CORR : 0;
		push_pending(c, &p);
		return 0;
	case 'E':
		if (!pop_pending(c, track, 0, 0, &p)) {
			c->unmatched_end++;
			return 0;
		}
		if (c->ts < p.ts)
			return cj_fail(c, "'E' event before its 'B' (negative duration)");
		emit(c, track, p.ts, c->ts - p.ts, p.name, p.cat, p.args, p.corr,
		     p.flags & TRACE_EV_HAS_CORR, 'X', TRACE_EV_FROM_BE);
		return 0;
	case 'i':
	case 'I':
	case 'n':
		emit(c, track, c->ts, 0, name, cat, args, c->corr, c->has_corr, ph,
		     TRACE_EV_INSTANT);
		return 0;
	case 'b':
	case 'e': {
		/* async spans live on their own track per (pid, cat) */
		struct pg_buf at = PG_BUF_INIT;
		pg_buf_adds(&at, "async:");
		pg_buf_add(&at, c->cat.ptr, c->cat.len);
		uint32_t atrack = cj_track_for(c, pid, intern_buf(c, &at));
		pg_buf_release(&at);
		uint64_t key = pg_hash(c->idtext.ptr, c->idtext.len) ^ ((uint64_t)name << 20) ^ cat;
		if (ph == 'b') {
			p = (struct pending){atrack, 1, c->ts, name, cat, args, 0, key, 0};
			push_pending(c, &p);
			return 0;
		}
		if (!pop_pending(c, atrack, key, 1, &p)) {
			c->unmatched_end++;
			return 0;
		}
		if (c->ts < p.ts)
			return cj_fail(c, "async 'e' event before its 'b' (negative duration)");
		emit(c, atrack, p.ts, c->ts - p.ts, p.name, p.cat, p.args, 0, 0, 'X',
		     TRACE_EV_ASYNC);
		return 0;
	}
	default: return 0;
	}
}

static int read_key_text(struct cj *c, struct pg_buf *out)
{
	int ch = skip_ws(c);

	if (ch == '"')
		return read_string(c, out);
	if (ch == '-' || (ch >= '0' && ch <= '9')) {
		const unsigned char *start = c->in->p;
		struct num n;
		int neg, fd;
		uint64_t v;
		pg_buf_reset(out);
		if (fast_decimal(c, &neg, &v, &fd)) {
			size_t len = (size_t)(c->in->p - start);
			if (len + 1 > out->cap)
				pg_buf_grow(out, len);
			memcpy(out->ptr, start, len);
			out->ptr[len] = '\0';
			out->len = len;
			return 0;
		}
		if (cj_read_number(c, &n))
			return PG_EFORMAT;
		pg_buf_add(out, n.text, (size_t)n.len);
		return 0;
	}
	if (ch == 'n') { /* null pid/tid: treat as empty */
		pg_buf_reset(out);
		return expect_word(c, "null");
	}
	return cj_bad_char(c, ch, "a string or number");
}

static int read_time(struct cj *c, int64_t *out, const char *what)
{
	struct num n;
	int ch = skip_ws(c);

	if (ch == '"') { /* some exporters quote numbers */
		if (read_string(c, &c->scratch))
			return PG_EFORMAT;
		char *end = NULL;
		double d = strtod(c->scratch.ptr, &end);
		if (!end || *end || c->scratch.len == 0 || d != d || d > 9e15 || d < -9e15)
			return cj_fail(c, "%s is not a number", what);
		*out = (int64_t)(d * 1000.0 + (d >= 0 ? 0.5 : -0.5));
		return 0;
	}
	if (!(ch == '-' || (ch >= '0' && ch <= '9')))
		return cj_bad_char(c, ch, "a number");
	if (fast_us_to_ns(c, out))
		return 0;
	if (cj_read_number(c, &n))
		return PG_EFORMAT;
	if (cj_num_us_to_ns(&n, out))
		return cj_fail(c, "%s %s is out of range", what, n.text);
	return 0;
}

/* The event keys the reader takes a value from; the rest are skipped. */
enum ev_key { EK_OTHER, EK_PH, EK_TS, EK_ID, EK_PID, EK_TID, EK_CAT, EK_DUR, EK_NAME, EK_ARGS };

/* A key's bytes (read_event_key) as an ev_key; "cols" and "rows" mark the
 * object as a tool table on the way. */
static enum ev_key event_key_of(struct cj *c, const char *k, size_t n)
{
	switch (n) {
	case 2:
		return k[0] == 'p' && k[1] == 'h'   ? EK_PH
		       : k[0] == 't' && k[1] == 's' ? EK_TS
		       : k[0] == 'i' && k[1] == 'd' ? EK_ID
						    : EK_OTHER;
	case 3:
		return memcmp(k, "pid", 3) == 0	  ? EK_PID
		       : memcmp(k, "tid", 3) == 0 ? EK_TID
		       : memcmp(k, "cat", 3) == 0 ? EK_CAT
		       : memcmp(k, "dur", 3) == 0 ? EK_DUR
						  : EK_OTHER;
	case 4:
		if (memcmp(k, "name", 4) == 0)
			return EK_NAME;
		if (memcmp(k, "args", 4) == 0)
			return EK_ARGS;
		c->table_keys |= memcmp(k, "cols", 4) == 0 ? 1 : memcmp(k, "rows", 4) == 0 ? 2 : 0;
		return EK_OTHER;
	default: return EK_OTHER;
	}
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CJ_KEY_WORDS 1
/* The bytes of a short key written as exporters write it, quotes and ':'
 * included ("ph": is 5 bytes), as a little-endian word (the fast path is
 * for little-endian machines), and how many. */
#define EK_WORD(a, b, c, d, e, f, g)                                                               \
	((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | (uint64_t)(d) << 24 |          \
	 (uint64_t)(e) << 32 | (uint64_t)(f) << 40 | (uint64_t)(g) << 48)

static const struct {
	uint64_t word;
	uint8_t len, key;
} ev_keys[] = {
    {EK_WORD('"', 'p', 'h', '"', ':', 0, 0), 5, EK_PH},
    {EK_WORD('"', 't', 's', '"', ':', 0, 0), 5, EK_TS},
    {EK_WORD('"', 'i', 'd', '"', ':', 0, 0), 5, EK_ID},
    {EK_WORD('"', 'p', 'i', 'd', '"', ':', 0), 6, EK_PID},
    {EK_WORD('"', 't', 'i', 'd', '"', ':', 0), 6, EK_TID},
    {EK_WORD('"', 'c', 'a', 't', '"', ':', 0), 6, EK_CAT},
    {EK_WORD('"', 'd', 'u', 'r', '"', ':', 0), 6, EK_DUR},
    {EK_WORD('"', 'n', 'a', 'm', 'e', '"', ':'), 7, EK_NAME},
    {EK_WORD('"', 'a', 'r', 'g', 's', '"', ':'), 7, EK_ARGS},
};

/* The entries of ev_keys a key starting with ch may be: two at most (ph and
 * pid, ts and tid); -1 for none. */
static inline void ev_keys_for(int ch, int *x, int *y)
{
	*y = -1;
	switch (ch) {
	case 'p': *x = 0, *y = 3; break;
	case 't': *x = 1, *y = 4; break;
	case 'i': *x = 2; break;
	case 'c': *x = 5; break;
	case 'd': *x = 6; break;
	case 'n': *x = 7; break;
	case 'a': *x = 8; break;
	default: *x = -1;
	}
}

/* Whether the word w of a key's first 8 bytes is ev_keys[i]'s. */
static inline int ev_key_is(uint64_t w, int i)
{
	return i >= 0 && (w & (~0ull >> (64 - 8 * ev_keys[i].len))) == ev_keys[i].word;
}
#endif

/*
 * The next event key, its opening quote next but for white space, and the ':'
 * after it. The keys exporters write are read whole from one 8-byte load
 * compared with their bytes (no scan for the closing quote); any other key,
 * or one with spaces or escapes, or near the chunk's end, is read by
 * read_event_key(). -1 when that fails.
 */
static inline int next_event_key(struct cj *c)
{
#ifdef CJ_KEY_WORDS
	const unsigned char *p = c->in->p;

	if (c->in->end - p >= 8 && *p == '"') {
		uint64_t w;
		int x, y;
		memcpy(&w, p, 8);
		ev_keys_for(p[1], &x, &y);
		int i = ev_key_is(w, x) ? x : ev_key_is(w, y) ? y : -1;
		if (i >= 0) {
			c->in->p = p + ev_keys[i].len;
			return ev_keys[i].key;
		}
	}
#endif
	const char *k;
	size_t kn;
	if (read_event_key(c, &k, &kn, "an event key"))
		return -1;
	return (int)event_key_of(c, k, kn);
}

int cj_parse_event(struct cj *c)
{
	int ch;

	c->ph = 0;
	c->has_ts = c->has_dur = c->has_id = c->has_corr = 0;
	c->ts = c->dur = 0;
	c->corr = 0;
	c->n_args = 0;
	/* emptied, not cleared: these fields are read by length only */
	c->vals.len = c->name.len = c->cat.len = c->pid.len = c->tid.len = c->idtext.len = 0;

	ch = skip_ws(c);
	if (ch != '{')
		return cj_bad_char(c, ch, "an event object");
	c->in->p++;
	ch = skip_ws(c);
	if (ch == '}') {
		c->in->p++;
		return c->rec ? cj_record(c) : cj_finish_event(c);
	}
	for (;;) {
		int key = next_event_key(c), r = 0;
		if (key < 0)
			return PG_EFORMAT;
		switch (key) {
		case EK_PH: {
			if (skip_ws(c) != '"')
				return cj_bad_char(c, skip_ws(c), "a string for ph");
			const unsigned char *q = c->in->p;
			if (c->in->end - q >= 3 && q[2] == '"' && q[1] != '"' && q[1] != '\\') {
				c->ph = q[1]; /* one plain character, as nearly always */
				c->in->p = q + 3;
				break;
			}
			r = read_string(c, &c->scratch);
			c->ph = c->scratch.len == 1 ? (unsigned char)c->scratch.ptr[0] : '?';
			break;
		}
		case EK_TS:
			r = read_time(c, &c->ts, "ts");
			c->has_ts = 1;
			break;
		case EK_ID:
			r = read_key_text(c, &c->idtext);
			c->has_id = 1;
			break;
		case EK_PID: r = read_key_text(c, &c->pid); break;
		case EK_TID: r = read_key_text(c, &c->tid); break;
		case EK_CAT: r = skip_ws(c) == '"' ? read_string(c, &c->cat) : skip_any(c); break;
		case EK_DUR:
			r = read_time(c, &c->dur, "dur");
			c->has_dur = 1;
			break;
		case EK_NAME: r = skip_ws(c) == '"' ? read_string(c, &c->name) : skip_any(c); break;
		case EK_ARGS: r = skip_ws(c) == '{' ? parse_args(c) : skip_any(c); break;
		default: r = skip_any(c);
		}
		if (r)
			return PG_EFORMAT;
		int more = next_item(c, '}', "',' or '}' after an event field");
		if (more <= 0)
			return more ? more : c->rec ? cj_record(c) : cj_finish_event(c);
	}
}

/* A table xprof's tools made of an .xplane.pb (a DataTable of "cols" and
 * "rows", or a file named as one): aggregates, no events to summarize. */
static int fail_tool_table(struct cj *c)
{
	const char *tool = read_xprof_tool(c->path);

	return pg_error_set(
	    PG_EUNSUPP,
	    "cannot read '%s': an xprof tool table (%s): aggregates xprof "
	    "computes from an .xplane.pb, not a trace; summarize the .xplane.pb it came from",
	    c->path, tool ? tool : "a DataTable of cols and rows");
}

static int parse_event_array(struct cj *c)
{
	struct trace_file *f;
	int ch;

	c->in->p++; /* '[' */
	ch = skip_ws(c);
	if (ch == ']') {
		c->in->p++;
		return 0;
	}
	for (;;) {
		/* events a look-ahead worker read from here on are taken as read */
		int taken = c->ahead_on ? cj_ahead_take(c) : 0;
		if (taken < 0)
			return PG_EFORMAT;
		if (!taken) {
			if (cj_parse_event(c))
				return PG_EFORMAT;
			if (c->index == 0 && c->top_is_array && c->table_keys == 3)
				return fail_tool_table(c);
			c->index++;
		}
		int more = next_item(c, ']', "',' or ']' after an event");
		if (more < 0)
			return more;
		if (!more)
			break;
	}
	f = &c->t->files[c->file];
	f->entries = c->index;
	return 0;
}

static int parse_top_object(struct cj *c)
{
	struct trace_file *f = &c->t->files[c->file];
	struct pg_buf tmp = PG_BUF_INIT;
	struct pg_buf keys = PG_BUF_INIT;
	int ch, rc = PG_EFORMAT, nkeys = 0;

	c->in->p++; /* '{' */
	ch = skip_ws(c);
	if (ch == '}') {
		c->in->p++;
		goto done;
	}
	for (;;) {
		if (read_member_key(c, "a top-level key"))
			goto out;
		if (nkeys < 6) {
			pg_buf_addf(&keys, "%s\"%.40s\"", nkeys ? ", " : "", c->key.ptr);
		}
		nkeys++;
		const char *k = c->key.ptr;
		int r;
		if (strcmp(k, "cols") == 0)
			c->table_keys |= 1;
		else if (strcmp(k, "rows") == 0)
			c->table_keys |= 2;
		if (strcmp(k, "traceEvents") == 0) {
			ch = skip_ws(c);
			if (ch != '[') {
				cj_bad_char(c, ch, "an array for traceEvents");
				goto out;
			}
			c->saw_trace_events = 1;
			r = parse_event_array(c);
		} else if (strcmp(k, "deviceProperties") == 0) {
			c->kineto_evidence += 100;
			pg_buf_reset(&c->dev_props);
			r = skip_value(c, &c->dev_props);
		} else if (strcmp(k, "distributedInfo") == 0) {
			c->kineto_evidence += 100;
			pg_buf_reset(&c->dist_info);
			r = skip_value(c, &c->dist_info);
		} else if (strcmp(k, "schemaVersion") == 0 ||
			   strcmp(k, "baseTimeNanoseconds") == 0) {
			struct num n;
			c->kineto_evidence += 100;
			ch = skip_ws(c);
			if (ch == '-' || (ch >= '0' && ch <= '9')) {
				uint64_t v = 0;
				r = cj_read_number(c, &n);
				if (!r && cj_num_to_u64(&n, &v) == 0 && v <= (uint64_t)INT64_MAX) {
					if (k[0] == 's')
						f->schema_version = v > 1000000 ? -1 : (int)v;
					else
						f->base_time_ns = (int64_t)v;
				}
			} else {
				r = skip_value(c, NULL);
			}
		} else if (strcmp(k, "displayTimeUnit") == 0) {
			ch = skip_ws(c);
			if (ch == '"') {
				r = read_string(c, &tmp);
				if (!r)
					snprintf(f->display_time_unit, sizeof(f->display_time_unit),
						 "%.7s", tmp.ptr);
			} else {
				r = skip_value(c, NULL);
			}
		} else if (strcmp(k, "metadata") == 0) {
			pg_buf_reset(&tmp);
			r = skip_value(c, &tmp);
			if (!r && tmp.len <= 4096 && strstr(tmp.ptr, "\"highres-ticks\""))
				c->highres_ticks = 1;
		} else if (strcmp(k, "codeLink") == 0 || strcmp(k, "useNewBackend") == 0) {
			c->xprof_ui = 1;
			r = skip_value(c, NULL);
		} else {
			r = skip_value(c, NULL);
		}
		if (r)
			goto out;
		int more = next_item(c, '}', "',' or '}' at top level");
		if (more < 0)
			goto out;
		if (!more)
			break;
	}
done:
	if (!c->saw_trace_events && (c->table_keys == 3 || read_xprof_tool(c->path))) {
		fail_tool_table(c);
		goto out;
	}
	if (!c->saw_trace_events) {
		cj_fail(
		    c,
		    "not a trace: the JSON object has no traceEvents array (top-level keys: %s%s)",
		    nkeys ? keys.ptr : "none", nkeys > 6 ? ", ..." : "");
		goto out;
	}
	rc = 0;
out:
	pg_buf_release(&tmp);
	pg_buf_release(&keys);
	return rc;
}

void cj_event_bufs_init(struct cj *c)
{
	struct pg_buf *b[] = {&c->key, &c->name,   &c->cat,	&c->pid,
			      &c->tid, &c->idtext, &c->scratch, &c->vals};

	for (size_t i = 0; i < PG_ARRAY_LEN(b); i++)
		pg_buf_init(b[i]);
}

void cj_event_bufs_release(struct cj *c)
{
	struct pg_buf *b[] = {&c->key, &c->name,   &c->cat,	&c->pid,
			      &c->tid, &c->idtext, &c->scratch, &c->vals};

	for (size_t i = 0; i < PG_ARRAY_LEN(b); i++)
		pg_buf_release(b[i]);
}

void cj_free(struct cj *c)
{
	cj_event_bufs_release(c);
	for (uint32_t i = 0; i < CJ_CATS_SEEN; i++)
		pg_buf_release(&c->cats_seen[i].text);
	pg_buf_release(&c->pid_text.text);
	pg_buf_release(&c->tid_text.text);
	pg_buf_release(&c->dev_props);
	pg_buf_release(&c->dist_info);
	pg_u64map_release(&c->tracks);
	pg_u64map_release(&c->pidmap);
	free(c->pids);
	free(c->pend);
}

int read_chrome_json(struct trace *t, uint32_t file, struct rd_in *in)
{
	struct cj c;
	int ch, rc = PG_EFORMAT;

	memset(&c, 0, sizeof(c));
	c.t = t;
	c.file = file;
	c.in = in;
	c.path = t->files[file].path;
	c.last_track = UINT32_MAX;
	c.a_name = read_kept_arg("name", 4);
	c.a_labels = read_kept_arg("labels", 6);
	c.a_sort = read_kept_arg("sort_index", 10);
	c.a_mem[0] = read_kept_arg("Total Allocated", 15);
	c.a_mem[1] = read_kept_arg("Total Reserved", 14);
	c.a_mem[2] = read_kept_arg("Device Id", 9);
	c.a_mem[3] = read_kept_arg("Device Type", 11);
	c.first_track = t->n_tracks;
	c.first_event = t->n_events;
	cj_event_bufs_init(&c);
	for (uint32_t i = 0; i < CJ_CATS_SEEN; i++)
		pg_buf_init(&c.cats_seen[i].text);
	pg_buf_init(&c.pid_text.text);
	pg_buf_init(&c.tid_text.text);
	pg_buf_init(&c.dev_props);
	pg_buf_init(&c.dist_info);
	if (rd_max_events(c.path, &c.max_events))
		goto out;
	cj_ahead_start(&c);

	ch = skip_ws(&c);
	if (ch == 0xef) { /* UTF-8 byte order mark */
		in->p++;
		if (peekc(&c) == 0xbb)
			in->p++;
		if (peekc(&c) == 0xbf)
			in->p++;
		ch = skip_ws(&c);
	}
	if (ch == CH_EOF) {
		cj_fail(&c, "the file is empty (no JSON value)");
		goto out;
	}
	if (ch == '[') {
		c.top_is_array = 1;
		if (parse_event_array(&c))
			goto out;
	} else if (ch == '{') {
		if (parse_top_object(&c))
			goto out;
	} else if (ch == CH_ERR) {
		cj_fail_src(&c);
		goto out;
	} else if (ch == '"') {
		cj_fail(&c, "not a trace: the JSON is a string, not an object with traceEvents");
		goto out;
	} else {
		cj_fail(&c, "not a profile: neither JSON nor XPlane (first byte 0x%02x)", ch);
		goto out;
	}
	ch = skip_ws(&c);
	if (ch == CH_ERR) {
		cj_fail_src(&c);
		goto out;
	}
	if (ch != CH_EOF) {
		cj_fail(&c, "unexpected data after the JSON document");
		goto out;
	}
	for (uint32_t i = 0; i < c.n_pend; i++)
		if (c.pend[i].alive)
			c.unclosed_begin++;
	t->files[file].content_bytes = rd_in_offset(in);
	cj_decide_dialect(&c);
	cj_resolve_tracks(&c);
	cj_apply_header_json(&c);
	cj_file_warnings(&c);
	t->files[file].events_kept = c.n_counted;
	t->files[file].declared_devices =
	    t->files[file].declared_devices ? t->files[file].declared_devices : 0;
	rc = 0;
out:
	cj_ahead_stop(&c);
	cj_free(&c);
	return rc;
}
