/*
 * XPlane reader (.xplane.pb): JAX/XLA and TensorFlow, GPU and TPU.
 *
 * How it works: the file is mapped read-only and walked as protobuf wire
 * format without building the XSpace. A first pass over the XSpace records
 * each plane's byte range and the host names. Per plane, a scan records the
 * ranges of lines, event metadata, plane stats and stat metadata (serializers
 * write lines *before* the metadata they use, so lines must wait). Every line
 * is then walked on several threads, its events counted and skipped by length.
 * Then, plane by plane in file order, stat metadata, plane stats and event
 * metadata are decoded (event metadata with the protoc-c generated code: they
 * are few) and each line gets its track and its event slots. Finally all
 * events are decoded by hand, in runs of up to LINE_CHUNK, on several threads,
 * straight into the trace model. Pages of decoded runs are released, so memory
 * stays near the file size plus the events kept.
 *
 * Conventions (docs: formats.md §1-3, §13): stats are matched by name through
 * stat_metadata, never by number; ref_value is the referenced metadata's
 * name; event stats win over metadata stats; device_offset_ps and
 * device_duration_ps (TPU) replace offset and duration; num_occurrences events
 * are counted but have no time; lines with the same id in a plane are one
 * track; timestamp_ns is taken as given (usually ns since profile start) and
 * the epoch comes from the Task Environment plane.
 */
#include "read.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "xplane.pb-c.h"

#define MAX_EVENT_ARGS 24
#define DENSE_IDS      (1u << 20) /* metadata ids below this use direct tables */

struct pb {
	const uint8_t *p, *end;
};

/* A field's key as one varint value: hot loops switch on it directly. */
#define PB_KEY(field, wt) (((uint64_t)(field) << 3) | (wt))

enum stat_kind {
	STAT_OTHER,
	STAT_KEEP,
	STAT_CORR,
	STAT_DEV_OFFSET,
	STAT_DEV_DURATION,
	STAT_GROUP_ID,
};

struct statinfo {
	trace_str name;
	trace_str key; /* interned kept name, or 0 */
	enum stat_kind kind;
};

struct evmeta {
	trace_str name;		   /* display_name if set, else name */
	trace_str long_name;	   /* name, when display_name was used */
	uint32_t args_off, n_args; /* kept metadata stats in x->margs */
	uint32_t argset;	   /* interned set for events with no kept stats of their own */
	int set, has_argset;
};

struct range {
	const uint8_t *p, *end;
};

struct ranges {
	struct range *v;
	uint32_t n, cap;
};

struct xp {
	struct trace *t;
	uint32_t file;
	const char *path;
	const uint8_t *base;
	size_t size;
	int release_pages; /* the bytes are a file mapping: drop pages once decoded */

	/* per plane */
	int64_t plane_id;
	char *plane_name;
	struct statinfo *stats; /* dense by id */
	uint32_t n_stats;
	struct pg_u64map stat_sparse;
	struct statinfo *stats_sparse;
	uint32_t n_stats_sparse, cap_stats_sparse;
	struct evmeta *evm; /* dense by id */
	uint32_t n_evm;
	struct pg_u64map evm_sparse;
	struct evmeta *evm_sparse_v;
	uint32_t n_evm_sparse, cap_evm_sparse;
	struct trace_arg *margs;
	uint32_t n_margs, cap_margs;
	struct pg_u64map lines; /* line id -> track */
	uint32_t device;
	int no_device; /* metadata and Task Environment planes: lines only counted */
	struct ranges meta_r, stat_r;
	struct ranges smeta_r;	      /* stat metadata, decoded in wire order after the scan */
	uint32_t first_line, n_lines; /* its lines in the file's list */
	char *scan_err;		      /* the scan stopped here (after smeta_r) */
	trace_str k_long_name, k_group_id;
	int marker_meta; /* its metadata names a step-marker stat or event (trace_is_marker_*) */

	/* file */
	char **hostnames;
	uint32_t n_hostnames;
	uint64_t plane_events;
	struct pg_buf scratch;
	pthread_mutex_t *lock; /* interning while lines decode on several threads */
};

/* Events per decode job: longer lines are split, so threads share them. */
#define LINE_CHUNK (1u << 16)

/*
 * One XLine, walked on a worker thread before anything is decoded: its events
 * are counted and skipped by length, and the header fields around them read
 * (display_name follows the events on the wire). Every LINE_CHUNK-th event's
 * start is marked, so the line decodes as several jobs.
 */
struct xline {
	struct xp *x; /* its plane */
	const uint8_t *p, *end;
	uint64_t n_events;
	int64_t id, ts_ns;
	struct pb name;	       /* display_name if set, else name; {NULL, NULL} if neither */
	const uint8_t **marks; /* marks[k - 1]: where event k * LINE_CHUNK starts */
	uint32_t n_marks, cap_marks;
	int rc;
	char *err;
};

struct xlines {
	struct xline *v;
	uint32_t n, cap;
};

/* A run of a line's events to decode: its bytes, track and event slots;
 * results merged after. */
struct job {
	struct xp *x; /* its plane */
	const uint8_t *p, *end;
	uint32_t track;
	int64_t ts_ns;
	int steps_line;
	uint64_t n_events, first; /* slots [first, first + n_events) */
	/* results */
	uint64_t n_aggregate;
	int64_t first_ns, last_ns;
	int rc;
	char *err;
};

struct jobs {
	struct job *v;
	uint32_t n, cap;
};

/* ---- wire format ---- */

static int corrupt(struct xp *x, const uint8_t *at, const char *what)
{
	return pg_error_set(PG_EFORMAT, "cannot read '%s': corrupt XPlane: %s at byte %llu",
			    x->path, what, (unsigned long long)(at - x->base));
}

/* The 7-bit groups of a varint's bytes (little-endian in w, zero past its
 * last byte), packed together: pairs, then quads, then halves. */
static inline uint64_t varint_pack(uint64_t w)
{
	w &= 0x7f7f7f7f7f7f7f7fULL;
	w = (w & 0x007f007f007f007fULL) | ((w & 0x7f007f007f007f00ULL) >> 1);
	w = (w & 0x00003fff00003fffULL) | ((w & 0x3fff00003fff0000ULL) >> 2);
	return (w & 0x000000000fffffffULL) | ((w & 0x0fffffff00000000ULL) >> 4);
}

static inline int pb_varint(struct pb *b, uint64_t *out)
{
	const uint8_t *p = b->p;
	uint64_t v;

	/* most keys, lengths, ids and small values are one byte */
	if (p < b->end && *p < 0x80) {
		*out = *p;
		b->p = p + 1;
		return 0;
	}
	/* then one 8-byte load: the first clear top bit ends the varint; the
	 * bytes up to it are kept by a mask and their 7-bit groups packed */
	if (b->end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t stop = ~w & 0x8080808080808080ULL;
		if (stop) {
			b->p = p + ((__builtin_ctzll(stop) + 1) >> 3);
			*out = varint_pack(w & (stop ^ (stop - 1)));
			return 0;
		}
	}
	v = 0;
	for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static inline int pb_key(struct pb *b, uint32_t *field, int *wt)
{
	uint64_t k;

	if (pb_varint(b, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff)
		return -1;
	*field = (uint32_t)(k >> 3);
	*wt = (int)(k & 7);
	return 0;
}

static inline int pb_sub(struct pb *b, struct pb *sub)
{
	uint64_t n;

	if (pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
		return -1;
	sub->p = b->p;
	sub->end = b->p + n;
	b->p += n;
	return 0;
}

static int pb_skip(struct pb *b, int wt)
{
	uint64_t v;
	struct pb sub;

	switch (wt) {
	case 0: return pb_varint(b, &v);
	case 1:
		if (b->end - b->p < 8)
			return -1;
		b->p += 8;
		return 0;
	case 2: return pb_sub(b, &sub);
	case 5:
		if (b->end - b->p < 4)
			return -1;
		b->p += 4;
		return 0;
	default: return -1; /* groups (3, 4) are not in XPlane; 6, 7 are invalid */
	}
}

static void ranges_add(struct ranges *r, const struct pb *sub)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->v = pg_xrealloc(r->v, r->cap * sizeof(*r->v));
	}
	r->v[r->n++] = (struct range){sub->p, sub->end};
}

/* ---- stat metadata and values ---- */

static struct statinfo *stat_slot(struct xp *x, uint64_t id, int create)
{
	if (id < DENSE_IDS) {
		if (id >= x->n_stats) {
			if (!create)
				return NULL;
			uint32_t n = x->n_stats ? x->n_stats : 64;
			while (n <= id)
				n *= 2;
			x->stats = pg_xrealloc(x->stats, n * sizeof(*x->stats));
			memset(x->stats + x->n_stats, 0, (n - x->n_stats) * sizeof(*x->stats));
			x->n_stats = n;
		}
		return &x->stats[id];
	}
	uint32_t i = pg_u64map_get(&x->stat_sparse, id);
	if (i != UINT32_MAX)
		return &x->stats_sparse[i];
	if (!create)
		return NULL;
	if (x->n_stats_sparse == x->cap_stats_sparse) {
		x->cap_stats_sparse = x->cap_stats_sparse ? 2 * x->cap_stats_sparse : 16;
		x->stats_sparse =
		    pg_xrealloc(x->stats_sparse, x->cap_stats_sparse * sizeof(*x->stats_sparse));
	}
	i = x->n_stats_sparse++;
	memset(&x->stats_sparse[i], 0, sizeof(x->stats_sparse[i]));
	pg_u64map_put(&x->stat_sparse, id, i);
	return &x->stats_sparse[i];
}

static int decode_stat_metadata(struct xp *x, struct pb *entry)
{
	uint32_t f;
	int wt;
	uint64_t key = 0, id = 0;
	int has_key = 0;
	struct pb val = {NULL, NULL}, name = {NULL, NULL};

	while (entry->p < entry->end) {
		if (pb_key(entry, &f, &wt))
			return -1;
		if (f == 1 && wt == 0) {
			if (pb_varint(entry, &key))
				return -1;
			has_key = 1;
		} else if (f == 2 && wt == 2) {
			if (pb_sub(entry, &val))
				return -1;
		} else if (pb_skip(entry, wt)) {
			return -1;
		}
	}
	while (val.p && val.p < val.end) {
		if (pb_key(&val, &f, &wt))
			return -1;
		if (f == 1 && wt == 0) {
			if (pb_varint(&val, &id))
				return -1;
		} else if (f == 2 && wt == 2) {
			if (pb_sub(&val, &name))
				return -1;
		} else if (pb_skip(&val, wt)) {
			return -1;
		}
	}
	if (!has_key)
		key = id;
	struct statinfo *s = stat_slot(x, key, 1);
	size_t n = name.p ? (size_t)(name.end - name.p) : 0;
	const char *nm = name.p ? (const char *)name.p : "";
	s->name = trace_intern(x->t, nm, n);
	if (trace_is_marker_stat(nm, n))
		x->marker_meta = 1;
	s->kind = STAT_OTHER;
	s->key = 0;
	if (n == 14 && memcmp(nm, "correlation_id", 14) == 0) {
		s->kind = STAT_CORR;
	} else if (n == 16 && memcmp(nm, "device_offset_ps", 16) == 0) {
		s->kind = STAT_DEV_OFFSET;
	} else if (n == 18 && memcmp(nm, "device_duration_ps", 18) == 0) {
		s->kind = STAT_DEV_DURATION;
	} else if (n == 8 && memcmp(nm, "group_id", 8) == 0) {
		/* per step: kept only on Steps lines, or every op would get its own set */
		s->kind = STAT_GROUP_ID;
		s->key = s->name;
	} else if (n == 6 && memcmp(nm, "run_id", 6) == 0) {
		s->kind = STAT_OTHER; /* per execution: would make every event's set unique */
	} else if (read_kept_arg(nm, n) >= 0) {
		s->kind = STAT_KEEP;
		s->key = s->name;
	}
	return 0;
}

static trace_str intern_locked(struct xp *x, const char *s, size_t n)
{
	pthread_mutex_lock(x->lock);
	trace_str id = trace_intern(x->t, s, n);
	pthread_mutex_unlock(x->lock);
	return id;
}

/* The text of a stat value, interned; 0 when it has none worth keeping. */
static trace_str value_text(struct xp *x, int field, uint64_t u, const uint8_t *p, size_t n,
			    struct pg_buf *scratch)
{
	char buf[64];

	switch (field) {
	case 2: {
		double d;
		memcpy(&d, &u, 8);
		snprintf(buf, sizeof(buf), "%.17g", d);
		return intern_locked(x, buf, strlen(buf));
	}
	case 3:
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)u);
		return intern_locked(x, buf, strlen(buf));
	case 4:
		snprintf(buf, sizeof(buf), "%lld", (long long)(int64_t)u);
		return intern_locked(x, buf, strlen(buf));
	case 5: return intern_locked(x, (const char *)p, n);
	case 7: {
		struct statinfo *r = stat_slot(x, u, 0);
		return r ? r->name : 0;
	}
	case 8: { /* gzip-compressed string, capped */
		z_stream zs;
		unsigned char out[1 << 16];
		trace_str id = 0;
		memset(&zs, 0, sizeof(zs));
		if (inflateInit2(&zs, 15 + 32) != Z_OK)
			return 0;
		zs.next_in = (unsigned char *)(uintptr_t)p;
		zs.avail_in = (uInt)n;
		pg_buf_reset(scratch);
		int rc;
		do {
			zs.next_out = out;
			zs.avail_out = sizeof(out);
			rc = inflate(&zs, Z_NO_FLUSH);
			pg_buf_add(scratch, out, sizeof(out) - zs.avail_out);
		} while (rc == Z_OK && scratch->len < RD_MAX_STRING_BYTES);
		if (rc == Z_STREAM_END)
			id = intern_locked(x, scratch->ptr, scratch->len);
		inflateEnd(&zs);
		return id;
	}
	default: return 0; /* bytes: opaque */
	}
}

/* One XStat from the wire: its metadata id, value field and raw value. */
struct rawstat {
	uint64_t mid;
	int field;
	uint64_t u; /* varint / fixed64 bits */
	const uint8_t *p;
	size_t n;
};

static int decode_rawstat(struct pb *b, struct rawstat *s)
{
	uint64_t k;
	struct pb sub;

	s->mid = 0;
	s->field = 0;
	s->u = 0;
	s->p = NULL;
	s->n = 0;
	while (b->p < b->end) {
		if (pb_varint(b, &k))
			return -1;
		switch (k) {
		case PB_KEY(1, 0):
			if (pb_varint(b, &s->mid))
				return -1;
			break;
		case PB_KEY(2, 1):
			if (b->end - b->p < 8)
				return -1;
			memcpy(&s->u, b->p, 8);
			b->p += 8;
			s->field = 2;
			break;
		case PB_KEY(3, 0):
		case PB_KEY(4, 0):
		case PB_KEY(7, 0):
			if (pb_varint(b, &s->u))
				return -1;
			s->field = (int)(k >> 3);
			break;
		case PB_KEY(5, 2):
		case PB_KEY(6, 2):
		case PB_KEY(8, 2):
			if (pb_sub(b, &sub))
				return -1;
			s->p = sub.p;
			s->n = (size_t)(sub.end - sub.p);
			s->field = (int)(k >> 3);
			break;
		default:
			if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff || pb_skip(b, (int)(k & 7)))
				return -1;
			break;
		}
	}
	return 0;
}

static int64_t rawstat_int(const struct rawstat *s)
{
	if (s->field == 2) {
		double d;
		memcpy(&d, &s->u, 8);
		return (int64_t)d;
	}
	return (int64_t)s->u;
}

/* ---- event metadata ---- */

static struct evmeta *evm_slot(struct xp *x, uint64_t id, int create)
{
	if (id < DENSE_IDS) {
		if (id >= x->n_evm) {
			if (!create)
				return NULL;
			uint32_t n = x->n_evm ? x->n_evm : 256;
			while (n <= id)
				n *= 2;
			x->evm = pg_xrealloc(x->evm, n * sizeof(*x->evm));
			memset(x->evm + x->n_evm, 0, (n - x->n_evm) * sizeof(*x->evm));
			x->n_evm = n;
		}
		return &x->evm[id];
	}
	uint32_t i = pg_u64map_get(&x->evm_sparse, id);
	if (i != UINT32_MAX)
		return &x->evm_sparse_v[i];
	if (!create)
		return NULL;
	if (x->n_evm_sparse == x->cap_evm_sparse) {
		x->cap_evm_sparse = x->cap_evm_sparse ? 2 * x->cap_evm_sparse : 16;
		x->evm_sparse_v =
		    pg_xrealloc(x->evm_sparse_v, x->cap_evm_sparse * sizeof(*x->evm_sparse_v));
	}
	i = x->n_evm_sparse++;
	memset(&x->evm_sparse_v[i], 0, sizeof(x->evm_sparse_v[i]));
	pg_u64map_put(&x->evm_sparse, id, i);
	return &x->evm_sparse_v[i];
}

static void margs_add(struct xp *x, trace_str key, trace_str value)
{
	if (x->n_margs == x->cap_margs) {
		x->cap_margs = x->cap_margs ? 2 * x->cap_margs : 256;
		x->margs = pg_xrealloc(x->margs, x->cap_margs * sizeof(*x->margs));
	}
	x->margs[x->n_margs++] = (struct trace_arg){key, value};
}

static int decode_event_metadata(struct xp *x, const struct range *r)
{
	struct pb entry = {r->p, r->end}, val = {NULL, NULL};
	uint32_t f;
	int wt;
	uint64_t key = 0;
	int has_key = 0;

	while (entry.p < entry.end) {
		if (pb_key(&entry, &f, &wt))
			return corrupt(x, entry.p, "bad event metadata entry");
		if (f == 1 && wt == 0) {
			if (pb_varint(&entry, &key))
				return corrupt(x, entry.p, "bad event metadata key");
			has_key = 1;
		} else if (f == 2 && wt == 2) {
			if (pb_sub(&entry, &val))
				return corrupt(x, entry.p, "event metadata length past its end");
		} else if (pb_skip(&entry, wt)) {
			return corrupt(x, entry.p, "bad field in event metadata entry");
		}
	}
	if (!val.p)
		return 0;
	Tensorflow__Profiler__XEventMetadata *m =
	    tensorflow__profiler__xevent_metadata__unpack(NULL, (size_t)(val.end - val.p), val.p);
	if (!m)
		return corrupt(x, val.p, "event metadata does not decode");
	struct evmeta *e = evm_slot(x, has_key ? key : (uint64_t)m->id, 1);
	const char *name = m->name ? m->name : "";
	const char *disp = m->display_name ? m->display_name : "";
	e->set = 1;
	if (trace_is_marker_name(name, strlen(name)) || trace_is_marker_name(disp, strlen(disp)))
		x->marker_meta = 1;
	if (disp[0] && strcmp(disp, name) != 0) {
		e->name = trace_intern_cstr(x->t, disp);
		e->long_name = trace_intern_cstr(x->t, name);
	} else {
		e->name = trace_intern_cstr(x->t, name);
		e->long_name = 0;
	}
	e->args_off = x->n_margs;
	for (size_t i = 0; i < m->n_stats; i++) {
		Tensorflow__Profiler__XStat *s = m->stats[i];
		struct statinfo *si = stat_slot(x, (uint64_t)s->metadata_id, 0);
		trace_str v = 0;
		if (!si || si->kind != STAT_KEEP)
			continue;
		switch (s->value_case) {
		case TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE: {
			uint64_t bits;
			memcpy(&bits, &s->double_value, 8);
			v = value_text(x, 2, bits, NULL, 0, &x->scratch);
			break;
		}
		case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE:
			v = value_text(x, 3, s->uint64_value, NULL, 0, &x->scratch);
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE:
			v = value_text(x, 4, (uint64_t)s->int64_value, NULL, 0, &x->scratch);
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE:
			v = value_text(x, 5, 0, (const uint8_t *)s->str_value, strlen(s->str_value),
				       &x->scratch);
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE:
			v = value_text(x, 7, s->ref_value, NULL, 0, &x->scratch);
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_COMPRESSED_STR_VALUE:
			v = value_text(x, 8, 0, s->compressed_str_value.data,
				       s->compressed_str_value.len, &x->scratch);
			break;
		default: break;
		}
		if (v && x->n_margs - e->args_off < MAX_EVENT_ARGS / 2)
			margs_add(x, si->key, v);
	}
	e->n_args = x->n_margs - e->args_off;
	/* the set for events with no kept stats of their own, interned now so the
	 * parallel decode never has to */
	struct trace_arg args[MAX_EVENT_ARGS];
	uint32_t n_args = 0;
	for (uint32_t i = 0; i < e->n_args && n_args < MAX_EVENT_ARGS; i++)
		args[n_args++] = x->margs[e->args_off + i];
	if (e->long_name && n_args < MAX_EVENT_ARGS)
		args[n_args++] = (struct trace_arg){x->k_long_name, e->long_name};
	e->argset = trace_argset_intern(x->t, args, n_args);
	e->has_argset = 1;
	tensorflow__profiler__xevent_metadata__free_unpacked(m, NULL);
	return 0;
}

/* ---- planes and devices ---- */

static const char *file_host(struct xp *x)
{
	return x->t->files[x->file].host ? x->t->files[x->file].host : "";
}

static uint32_t plane_device(struct xp *x, const char *name)
{
	struct trace_device d;

	memset(&d, 0, sizeof(d));
	d.file = x->file;
	d.rank = -1;
	d.label = trace_intern_cstr(x->t, name);
	d.host = trace_intern_cstr(x->t, file_host(x));
	if (read_parse_index(name, "/device:GPU:", 0, &d.index))
		d.kind = TRACE_DEV_GPU;
	else if (read_parse_index(name, "/device:TPU:", 0, &d.index))
		d.kind = TRACE_DEV_TPU;
	else if (strncmp(name, "/host:", 6) == 0)
		d.kind = TRACE_DEV_CPU;
	else {
		d.kind = TRACE_DEV_OTHER;
		d.index = -1;
	}
	return trace_device_add(x->t, &d);
}

/* Plane stats: device hardware names and the Task Environment epoch. */
static int decode_plane_stats(struct xp *x, int is_task_env)
{
	struct trace_file *f = &x->t->files[x->file];
	char vendor[64] = "", name[256] = "", cores[32] = "";

	for (uint32_t i = 0; i < x->stat_r.n; i++) {
		struct pb b = {x->stat_r.v[i].p, x->stat_r.v[i].end};
		struct rawstat s;
		if (decode_rawstat(&b, &s))
			return corrupt(x, b.p, "bad plane stat");
		struct statinfo *si = stat_slot(x, s.mid, 0);
		if (!si)
			continue;
		const char *sn = trace_str_get(x->t, si->name);
		if (is_task_env) {
			if (strcmp(sn, "profile_start_time") == 0)
				f->profile_start_ns = rawstat_int(&s);
			else if (strcmp(sn, "profile_stop_time") == 0)
				f->profile_stop_ns = rawstat_int(&s);
			continue;
		}
		if (x->device == UINT32_MAX)
			continue;
		if ((strcmp(sn, "gpu_device_name") == 0 || strcmp(sn, "device_type_string") == 0) &&
		    s.field == 5)
			snprintf(name, sizeof(name), "%.*s", (int)s.n, (const char *)s.p);
		else if (strcmp(sn, "device_vendor") == 0 && s.field == 5)
			snprintf(vendor, sizeof(vendor), "%.*s", (int)s.n, (const char *)s.p);
		else if (strcmp(sn, "core_count") == 0)
			snprintf(cores, sizeof(cores), "%lld", (long long)rawstat_int(&s));
	}
	if (x->device == UINT32_MAX)
		return 0;
	if (!name[0] && vendor[0])
		snprintf(name, sizeof(name), "%s GPU%s%s%s", vendor, cores[0] ? " (" : "", cores,
			 cores[0] ? " cores)" : "");
	if (name[0]) {
		x->t->devices[x->device].name = trace_intern_cstr(x->t, name);
		if (!f->device_kind && x->t->devices[x->device].kind != TRACE_DEV_CPU)
			f->device_kind = pg_xstrdup(name);
	}
	return 0;
}

/* ---- lines and events ---- */

static uint32_t line_track(struct xp *x, int64_t line_id, const char *name, size_t name_n)
{
	uint32_t tr = pg_u64map_get(&x->lines, (uint64_t)line_id);
	char idtext[32];

	if (tr != UINT32_MAX)
		return tr;
	struct trace_track t0;
	memset(&t0, 0, sizeof(t0));
	t0.device = x->device;
	t0.name = trace_intern(x->t, name, name_n);
	t0.pid = trace_intern_cstr(x->t, x->plane_name);
	snprintf(idtext, sizeof(idtext), "%lld", (long long)line_id);
	t0.tid = trace_intern_cstr(x->t, idtext);
	t0.kind = read_track_kind_for_name(trace_str_get(x->t, t0.name),
					   x->t->devices[x->device].kind != TRACE_DEV_CPU);
	tr = trace_track_add(x->t, &t0);
	pg_u64map_put(&x->lines, (uint64_t)line_id, tr);
	return tr;
}

static int ps_to_ns(int64_t base_ns, int64_t ps, int64_t *out)
{
	/* round half up in ps, computed in ns so epoch-based lines cannot overflow */
	int64_t q = ps >= 0 ? (ps + 500) / 1000 : -((-ps + 499) / 1000);
	return __builtin_add_overflow(base_ns, q, out) ? -1 : 0;
}

/* An XEvent's fields as read from the wire. */
struct evfields {
	uint64_t mid, corr;
	int64_t off, dur, dev_off, dev_dur;
	int has_off, has_nocc, has_dev_off, has_dev_dur, has_corr;
	uint32_t n_args;
	struct trace_arg args[MAX_EVENT_ARGS];
};

/* A stat that is metadata_id then one integer and nothing else (the times
 * and ids every TPU op carries), read without the general loop. */
static int stat_int_only(struct pb peek, uint64_t smid, struct rawstat *s)
{
	if (peek.p >= peek.end || (peek.p[0] != PB_KEY(3, 0) && peek.p[0] != PB_KEY(4, 0)))
		return 0;
	s->field = peek.p[0] >> 3;
	peek.p++;
	if (pb_varint(&peek, &s->u) || peek.p != peek.end)
		return 0;
	s->mid = smid;
	s->p = NULL;
	s->n = 0;
	return 1;
}

/* One XStat of an event: the times and ids it carries, or a kept argument. */
static int event_stat(struct xp *x, struct pb *sb, int steps_line, struct evfields *ev,
		      struct pg_buf *scratch)
{
	struct rawstat s;
	struct statinfo *si = NULL;

	/* metadata_id comes first on the wire: skip unused stats undecoded */
	if (sb->p < sb->end && sb->p[0] == 0x08) {
		struct pb peek = {sb->p + 1, sb->end};
		uint64_t smid;
		if (pb_varint(&peek, &smid) == 0) {
			struct statinfo *pre = stat_slot(x, smid, 0);
			if (!pre || pre->kind == STAT_OTHER ||
			    (pre->kind == STAT_GROUP_ID && !steps_line))
				return 0;
			if (pre->kind != STAT_KEEP && stat_int_only(peek, smid, &s))
				si = pre;
		}
	}
	if (!si) {
		if (decode_rawstat(sb, &s))
			return -1;
		si = stat_slot(x, s.mid, 0);
		if (!si)
			return 0;
	}
	switch (si->kind) {
	case STAT_CORR:
		ev->corr = (uint64_t)rawstat_int(&s);
		ev->has_corr = 1;
		break;
	case STAT_DEV_OFFSET:
		ev->dev_off = rawstat_int(&s);
		ev->has_dev_off = 1;
		break;
	case STAT_DEV_DURATION:
		ev->dev_dur = rawstat_int(&s);
		ev->has_dev_dur = 1;
		break;
	case STAT_GROUP_ID:
		if (!steps_line)
			break;
		/* fall through */
	case STAT_KEEP: {
		trace_str val = value_text(x, s.field, s.u, s.p, s.n, scratch);
		if (val && ev->n_args < MAX_EVENT_ARGS)
			ev->args[ev->n_args++] = (struct trace_arg){si->key, val};
		break;
	}
	default: break;
	}
	return 0;
}

/* The fields of one XEvent; unknown ones are skipped. */
static int event_fields(struct xp *x, struct pb *b, int steps_line, struct evfields *ev,
			struct pg_buf *scratch)
{
	uint64_t k, v;
	struct pb sb;

	while (b->p < b->end) {
		if (pb_varint(b, &k))
			return corrupt(x, b->p, "bad event field");
		switch (k) {
		case PB_KEY(1, 0):
			if (pb_varint(b, &ev->mid))
				return corrupt(x, b->p, "bad event varint");
			break;
		case PB_KEY(2, 0):
			if (pb_varint(b, &v))
				return corrupt(x, b->p, "bad event varint");
			ev->off = (int64_t)v;
			ev->has_off = 1;
			break;
		case PB_KEY(3, 0):
			if (pb_varint(b, &v))
				return corrupt(x, b->p, "bad event varint");
			ev->dur = (int64_t)v;
			break;
		case PB_KEY(5, 0):
			if (pb_varint(b, &v))
				return corrupt(x, b->p, "bad event varint");
			ev->has_nocc = 1;
			break;
		case PB_KEY(4, 2):
			if (pb_sub(b, &sb) || event_stat(x, &sb, steps_line, ev, scratch))
				return corrupt(x, b->p, "bad event stat");
			break;
		default:
			if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff || pb_skip(b, (int)(k & 7)))
				return corrupt(x, b->p, "bad event field");
			break;
		}
	}
	return 0;
}

/* Decode one XEvent into slot `slot`; counters go to the job. Runs on worker
 * threads: touches only the slot, the job and (locked) interning. */
static int decode_event(struct xp *x, struct pb *b, struct job *j, uint64_t slot,
			struct pg_buf *scratch)
{
	uint32_t track = j->track;
	int64_t line_ts_ns = j->ts_ns;
	struct evfields ev;
	const uint8_t *start = b->p;

	ev.mid = ev.corr = 0;
	ev.off = ev.dur = ev.dev_off = ev.dev_dur = 0;
	ev.has_off = ev.has_nocc = ev.has_dev_off = ev.has_dev_dur = ev.has_corr = 0;
	ev.n_args = 0;
	if (event_fields(x, b, j->steps_line, &ev, scratch))
		return PG_EFORMAT;
	uint64_t mid = ev.mid, corr = ev.corr;
	int64_t off = ev.off, dur = ev.dur;
	struct trace_arg *args = ev.args;
	uint32_t n_args = ev.n_args;
	struct trace_event *e = trace_event_at(x->t, slot);
	memset(e, 0, sizeof(*e));
	e->track = track;
	if (ev.has_nocc || !ev.has_off) {
		/* an aggregate (no timestamp): counted, not placed */
		e->flags = TRACE_EV_AGGREGATE;
		j->n_aggregate++;
		return 0;
	}
	struct evmeta *em = evm_slot(x, mid, 0);
	trace_str name = em && em->set ? em->name : 0;
	uint32_t argset = UINT32_MAX;
	if (em && em->set && n_args == 0 && em->has_argset) {
		argset = em->argset; /* the common case: metadata stats only */
	} else if (em && em->set) {
		uint32_t own = n_args;
		/* metadata stats under event stats: add keys the event lacks */
		for (uint32_t i = 0; i < em->n_args && n_args < MAX_EVENT_ARGS; i++) {
			const struct trace_arg *ma = &x->margs[em->args_off + i];
			int dup = 0;
			for (uint32_t k = 0; k < n_args; k++)
				if (args[k].key == ma->key)
					dup = 1;
			if (!dup)
				args[n_args++] = *ma;
		}
		if (em->long_name && n_args < MAX_EVENT_ARGS)
			args[n_args++] = (struct trace_arg){x->k_long_name, em->long_name};
		PG_UNUSED(own);
	}
	if (ev.has_dev_off)
		off = ev.dev_off;
	if (ev.has_dev_dur)
		dur = ev.dev_dur;
	if (dur < 0)
		return corrupt(x, start, "negative event duration");
	int64_t ts_ns, end_ns;
	int64_t end_ps;
	if (__builtin_add_overflow(off, dur, &end_ps) || ps_to_ns(line_ts_ns, off, &ts_ns) ||
	    ps_to_ns(line_ts_ns, end_ps, &end_ns))
		return corrupt(x, start, "event time out of range");
	e->ts_ns = ts_ns;
	e->dur_ns = end_ns - ts_ns;
	e->name = name;
	e->ph = 'X';
	e->corr = corr;
	e->flags = ev.has_corr ? TRACE_EV_HAS_CORR : 0;
	if (argset != UINT32_MAX) {
		e->args = argset;
	} else if (n_args == 0) {
		e->args = 0; /* the empty set: nothing to intern, no lock */
	} else {
		pthread_mutex_lock(x->lock);
		e->args = trace_argset_intern(x->t, args, n_args);
		pthread_mutex_unlock(x->lock);
	}
	if (ts_ns < j->first_ns)
		j->first_ns = ts_ns;
	if (end_ns > j->last_ns)
		j->last_ns = end_ns;
	return 0;
}

static void jobs_add(struct jobs *js, const struct job *j)
{
	if (js->n == js->cap) {
		js->cap = js->cap ? 2 * js->cap : 64;
		js->v = pg_xrealloc(js->v, js->cap * sizeof(*js->v));
	}
	js->v[js->n++] = *j;
}

/* ---- lines: counted on several threads, then tracks and jobs in order ---- */

static void xlines_add(struct xlines *xl, struct xp *x, const struct pb *sub)
{
	if (xl->n == xl->cap) {
		xl->cap = xl->cap ? 2 * xl->cap : 64;
		xl->v = pg_xrealloc(xl->v, xl->cap * sizeof(*xl->v));
	}
	struct xline *l = &xl->v[xl->n++];
	memset(l, 0, sizeof(*l));
	l->x = x;
	l->p = sub->p;
	l->end = sub->end;
}

static void xlines_free(struct xlines *xl)
{
	for (uint32_t i = 0; i < xl->n; i++) {
		free(xl->v[i].marks);
		free(xl->v[i].err);
	}
	free(xl->v);
}

/* Event n of a line starts at `at`: every LINE_CHUNK-th starts a job. */
static void mark_event(struct xline *l, uint64_t n, const uint8_t *at)
{
	if (n == 0 || n % LINE_CHUNK != 0)
		return;
	if (l->n_marks == l->cap_marks) {
		l->cap_marks = l->cap_marks ? 2 * l->cap_marks : 16;
		l->marks = pg_xrealloc(l->marks, l->cap_marks * sizeof(*l->marks));
	}
	l->marks[l->n_marks++] = at;
}

/* A line's header fields; its events are only counted. Lines of planes
 * with no device keep nothing but the count. */
static int count_line(struct xline *l)
{
	struct xp *x = l->x;
	struct pb b = {l->p, l->end}, sub, name = {NULL, NULL}, dname = {NULL, NULL};
	uint64_t k, v, n = 0;

	while (b.p < b.end) {
		const uint8_t *at = b.p;
		if (pb_varint(&b, &k))
			return corrupt(x, b.p, "bad line field");
		if (k == PB_KEY(4, 2)) {
			/* an event: skipped by its length */
			if (pb_sub(&b, &sub))
				return corrupt(x, b.p,
					       x->no_device ? "bad line field"
							    : "event past the end of its line");
			if (!x->no_device)
				mark_event(l, n, at);
			n++;
			continue;
		}
		uint32_t f = (uint32_t)(k >> 3);
		int wt = (int)(k & 7);
		if (f == 0 || f > 0x1fffffff)
			return corrupt(x, b.p, "bad line field");
		if (x->no_device) {
			if (pb_skip(&b, wt))
				return corrupt(x, b.p, "bad line field");
		} else if (wt == 0 && (f == 1 || f == 10 || f == 3 || f == 9)) {
			if (pb_varint(&b, &v))
				return corrupt(x, b.p, "bad line varint");
			if (f == 1)
				l->id = (int64_t)v;
			else if (f == 3)
				l->ts_ns = (int64_t)v;
		} else if (wt == 2 && (f == 2 || f == 11)) {
			if (pb_sub(&b, f == 2 ? &name : &dname))
				return corrupt(x, b.p, "line name past its end");
		} else if (pb_skip(&b, wt)) {
			return corrupt(
			    x, b.p, f == 4 ? "event past the end of its line" : "bad line field");
		}
	}
	l->n_events = n;
	l->name = dname.p && dname.end > dname.p ? dname : name;
	return 0;
}

/* A pool thread's scratch: a buffer for decoding, made on first use. */
struct xscratch {
	struct pg_buf buf;
	size_t page; /* 0 until first use */
};

static struct xscratch *xscratch_get(void *scratch)
{
	struct xscratch *sc = scratch;

	if (!sc->page) {
		sc->buf = (struct pg_buf)PG_BUF_INIT;
		sc->page = (size_t)sysconf(_SC_PAGESIZE);
	}
	return sc;
}

static void xscratch_release(void *scratch)
{
	struct xscratch *sc = scratch;

	if (sc->page)
		pg_buf_release(&sc->buf);
}

struct sized {
	uint64_t size;
	uint32_t i;
};

static int cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : 1;
}

/* Run items [0, n) on up to `threads` threads (this one included), largest
 * first by sizes[], or in order if sizes is NULL. */
static void pool_run(void *items, uint32_t n, const uint64_t *sizes, int threads,
		     void (*run)(void *, uint32_t, void *))
{
	struct pg_pool_jobs jobs = {run, items, n, NULL, sizeof(struct xscratch), xscratch_release};
	uint32_t *order = NULL;

	if (n && sizes) {
		struct sized *by = pg_xmalloc((n + 1) * sizeof(*by));
		order = pg_xmalloc((n + 1) * sizeof(uint32_t));
		for (uint32_t i = 0; i < n; i++)
			by[i] = (struct sized){sizes[i], i};
		qsort(by, n, sizeof(*by), cmp_sized);
		for (uint32_t i = 0; i < n; i++)
			order[i] = by[i].i;
		free(by);
	}
	jobs.order = order;
	pg_pool_run(&jobs, threads > 16 ? 16 : threads);
	free(order);
}

static void count_one(void *items, uint32_t i, void *scratch)
{
	struct xline *l = &((struct xline *)items)[i];

	PG_UNUSED(scratch);
	if (count_line(l)) {
		l->rc = PG_EFORMAT;
		l->err = pg_xstrdup(pg_error_last());
	}
}

/* Count every line's events on `threads` threads (one for small files). */
static void count_lines(struct xlines *xl, int threads)
{
	uint64_t *sizes = pg_xmalloc((xl->n + 1) * sizeof(uint64_t)), total = 0;

	for (uint32_t i = 0; i < xl->n; i++) {
		sizes[i] = (uint64_t)(xl->v[i].end - xl->v[i].p);
		total += sizes[i];
	}
	pool_run(xl->v, xl->n, sizes, total >= (4u << 20) ? threads : 1, count_one);
	free(sizes);
}

/* A counted line's track and decode jobs, one per LINE_CHUNK events. */
static void line_jobs(struct xp *x, const struct xline *l, struct jobs *js)
{
	const char *nm = l->name.p ? (const char *)l->name.p : "";
	size_t nn = l->name.p ? (size_t)(l->name.end - l->name.p) : 0;
	struct job j;

	memset(&j, 0, sizeof(j));
	j.x = x;
	j.track = line_track(x, l->id, nm, nn);
	j.ts_ns = l->ts_ns;
	j.steps_line = x->t->tracks[j.track].kind == TRACE_TRACK_STEPS;
	j.first_ns = INT64_MAX;
	j.last_ns = INT64_MIN;
	for (uint32_t k = 0; k <= l->n_marks; k++) {
		j.p = k ? l->marks[k - 1] : l->p;
		j.end = k < l->n_marks ? l->marks[k] : l->end;
		j.n_events = k < l->n_marks ? LINE_CHUNK : l->n_events - (uint64_t)k * LINE_CHUNK;
		jobs_add(js, &j);
	}
}

/* The whole pages inside a job's bytes are not needed again. */
static void release_job_pages(const struct job *j, size_t page)
{
	uintptr_t lo = ((uintptr_t)j->p + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t hi = ((uintptr_t)j->end) & ~(uintptr_t)(page - 1);

	if (j->x->release_pages && hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Decode a job's events into its slots; then let the kernel drop its pages. */
static void decode_job(struct job *shared, struct pg_buf *scratch, size_t page)
{
	/* counters on the stack: jobs side by side in the array share cache
	 * lines, and the other thread is writing its own */
	struct job local = *shared, *j = &local;
	struct xp *x = j->x;
	struct pb b = {j->p, j->end}, sub;
	uint64_t key, k = 0;

	while (b.p < b.end) {
		if (pb_varint(&b, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
			j->rc = corrupt(x, b.p, "bad line field");
			break;
		}
		if (key == PB_KEY(4, 2)) {
			if (pb_sub(&b, &sub) || k >= j->n_events) {
				j->rc = corrupt(x, b.p, "event past the end of its line");
				break;
			}
			if (decode_event(x, &sub, j, j->first + k, scratch)) {
				j->rc = PG_EFORMAT;
				break;
			}
			k++;
		} else if (pb_skip(&b, (int)(key & 7))) {
			j->rc = corrupt(x, b.p, "bad line field");
			break;
		}
	}
	if (j->rc)
		j->err = pg_xstrdup(pg_error_last());
	*shared = local;
	release_job_pages(j, page);
}

static void decode_one(void *items, uint32_t i, void *scratch)
{
	struct xscratch *sc = xscratch_get(scratch);

	decode_job(&((struct job *)items)[i], &sc->buf, sc->page);
}

/* ---- planes ---- */

static void plane_reset(struct xp *x)
{
	free(x->stats);
	free(x->stats_sparse);
	pg_u64map_release(&x->stat_sparse);
	free(x->evm);
	free(x->evm_sparse_v);
	pg_u64map_release(&x->evm_sparse);
	free(x->margs);
	pg_u64map_release(&x->lines);
	free(x->plane_name);
	free(x->scan_err);
	x->stats = NULL;
	x->stats_sparse = NULL;
	x->evm = NULL;
	x->evm_sparse_v = NULL;
	x->margs = NULL;
	x->plane_name = NULL;
	x->scan_err = NULL;
	x->n_stats = x->n_stats_sparse = x->cap_stats_sparse = 0;
	x->n_evm = x->n_evm_sparse = x->cap_evm_sparse = 0;
	x->n_margs = x->cap_margs = 0;
	x->meta_r.n = x->stat_r.n = x->smeta_r.n = 0;
	x->n_lines = 0;
	x->plane_events = 0;
	x->device = UINT32_MAX;
}

static void add_plane_record(struct xp *x, uint32_t lines)
{
	struct trace_file *f = &x->t->files[x->file];

	f->planes = pg_xrealloc(f->planes, (f->n_planes + 1) * sizeof(*f->planes));
	f->planes[f->n_planes++] =
	    (struct trace_plane){pg_xstrdup(x->plane_name), x->plane_id, x->plane_events, lines};
}

/*
 * A plane's fields, without touching the trace model: the byte ranges of its
 * lines (added to the file's list), event metadata, stats and stat metadata.
 * On error the message is kept for plane_finish, which reports it in the order
 * a single pass would have met it; the scan of the file stops there.
 */
static int scan_plane(struct xp *x, const struct range *r, struct xlines *xl)
{
	struct pb b = {r->p, r->end}, sub;
	uint64_t k, v;

	x->first_line = xl->n;
	while (b.p < b.end) {
		if (pb_varint(&b, &k) || (k >> 3) == 0 || (k >> 3) > 0x1fffffff) {
			corrupt(x, b.p, "bad plane field");
			goto fail;
		}
		uint32_t f = (uint32_t)(k >> 3);
		int wt = (int)(k & 7);
		if (f == 1 && wt == 0) {
			if (pb_varint(&b, &v)) {
				corrupt(x, b.p, "bad plane id");
				goto fail;
			}
			x->plane_id = (int64_t)v;
		} else if (wt == 2 && f >= 2 && f <= 6) {
			if (pb_sub(&b, &sub)) {
				corrupt(x, b.p, "length past the end of the plane");
				goto fail;
			}
			if (f == 2) {
				free(x->plane_name);
				x->plane_name =
				    pg_xstrndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			} else if (f == 3) {
				xlines_add(xl, x, &sub);
			} else if (f == 4) {
				ranges_add(&x->meta_r, &sub);
			} else if (f == 5) {
				ranges_add(&x->smeta_r, &sub);
			} else {
				ranges_add(&x->stat_r, &sub);
			}
		} else if (pb_skip(&b, wt)) {
			corrupt(x, b.p, "bad plane field");
			goto fail;
		}
	}
	if (!x->plane_name)
		x->plane_name = pg_xstrdup("");
	x->n_lines = xl->n - x->first_line;
	x->no_device = strcmp(x->plane_name, "/host:metadata") == 0 ||
		       strcmp(x->plane_name, "Task Environment") == 0;
	return 0;
fail:
	x->scan_err = pg_xstrdup(pg_error_last());
	x->n_lines = xl->n - x->first_line;
	return PG_EFORMAT;
}

/* The rest of a plane, in file order: stat metadata, device, plane stats,
 * event metadata, then its counted lines' tracks and decode jobs. */
static int plane_finish(struct xp *x, const struct xlines *xl, struct jobs *js)
{
	for (uint32_t i = 0; i < x->smeta_r.n; i++) {
		struct pb entry = {x->smeta_r.v[i].p, x->smeta_r.v[i].end};
		if (decode_stat_metadata(x, &entry))
			return corrupt(x, entry.p, "bad stat metadata");
	}
	if (x->scan_err)
		return pg_error_set(PG_EFORMAT, "%s", x->scan_err);
	const char *pn = x->plane_name;
	int is_meta = strcmp(pn, "/host:metadata") == 0;
	int is_task = strcmp(pn, "Task Environment") == 0;
	if (strncmp(pn, "/device:", 8) == 0)
		x->t->files[x->file].declared_devices++;
	if (!is_meta && !is_task)
		x->device = plane_device(x, pn);
	if (decode_plane_stats(x, is_task))
		return PG_EFORMAT;
	if (!is_meta) {
		for (uint32_t i = 0; i < x->meta_r.n; i++)
			if (decode_event_metadata(x, &x->meta_r.v[i]))
				return PG_EFORMAT;
	}
	for (uint32_t i = 0; i < x->n_lines; i++) {
		const struct xline *l = &xl->v[x->first_line + i];
		if (l->rc)
			return pg_error_set(PG_EFORMAT, "%s", l->err);
		/* metadata planes carry no events; any are counted for the record */
		x->plane_events += l->n_events;
		x->t->files[x->file].entries += l->n_events;
		if (x->device != UINT32_MAX)
			line_jobs(x, l, js);
	}
	if (x->device != UINT32_MAX)
		x->t->devices[x->device].n_events += x->plane_events;
	add_plane_record(x, x->n_lines);
	return 0;
}

/* ---- the file ---- */

static void host_from_path(struct xp *x)
{
	struct trace_file *f = &x->t->files[x->file];
	const char *base = strrchr(x->path, '/');
	base = base ? base + 1 : x->path;
	const char *suf = strstr(base, ".xplane.pb");

	if (x->n_hostnames > 0) {
		f->host = pg_xstrdup(x->hostnames[0]);
		return;
	}
	f->host = pg_xstrndup(base, suf ? (size_t)(suf - base) : strlen(base));
}

/*
 * Decode every job's events into slots reserved in advance, on `threads`
 * threads; then fold the per-job counts into tracks and the file in line
 * order, so nothing depends on which thread ran what. Jobs are at most
 * LINE_CHUNK events, so taking them in file order leaves little imbalance at
 * the end, and the event memory fills (and the file's pages are released)
 * front to back instead of everywhere at once.
 */
static int run_jobs(struct xp *x, struct jobs *js, int threads)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < js->n; i++)
		total += js->v[i].n_events;
	uint64_t first = trace_events_reserve(x->t, total);
	for (uint32_t i = 0; i < js->n; i++) {
		js->v[i].first = first;
		first += js->v[i].n_events;
	}
	pool_run(js->v, js->n, NULL, total >= 100000 ? threads : 1, decode_one);
	for (uint32_t i = 0; i < js->n; i++) {
		struct job *j = &js->v[i];
		if (j->rc) {
			pg_error_set(PG_EFORMAT, "%s", j->err);
			return PG_EFORMAT;
		}
		struct trace_track *tr = &x->t->tracks[j->track];
		tr->n_events += j->n_events;
		if (j->first_ns < tr->first_ns)
			tr->first_ns = j->first_ns;
		if (j->last_ns > tr->last_ns)
			tr->last_ns = j->last_ns;
		x->t->files[x->file].aggregate_events += j->n_aggregate;
	}
	return 0;
}

/*
 * With host_markers_only, a file whose planes name no step-marker stat or
 * event has nothing on its host threads that the caller reads: their events
 * stay counted (and their framing checked by count_line) but undecoded. On a
 * TPU capture they are most of the file.
 */
static void drop_host_jobs(struct xp *x, struct xp **pcs, uint32_t n_pcs, struct jobs *js)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t kept = 0;

	for (uint32_t i = 0; i < n_pcs; i++)
		if (pcs[i]->marker_meta)
			return;
	for (uint32_t i = 0; i < js->n; i++) {
		struct job *j = &js->v[i];
		if (x->t->tracks[j->track].kind != TRACE_TRACK_HOST_THREAD) {
			js->v[kept++] = *j;
			continue;
		}
		x->t->files[x->file].undecoded_events += j->n_events;
		release_job_pages(j, page);
	}
	js->n = kept;
}

static void plane_ctx_free(struct xp *pc)
{
	plane_reset(pc);
	free(pc->meta_r.v);
	free(pc->stat_r.v);
	free(pc->smeta_r.v);
	pg_buf_release(&pc->scratch);
	free(pc);
}

/*
 * Planes are scanned for their parts, then every line is counted (on several
 * threads), then each plane is finished in file order -- the trace model sees
 * the same calls in the same order as one pass over the file would make --
 * and last all events are decoded at once.
 */
static int decode_space(struct xp *x, int threads)
{
	struct pb b = {x->base, x->base + x->size}, sub;
	struct ranges planes = {NULL, 0, 0};
	struct xlines xl = {NULL, 0, 0};
	struct jobs js = {NULL, 0, 0};
	struct xp **pcs = NULL;
	uint32_t n_pcs = 0;
	uint32_t f;
	int wt, rc = PG_EFORMAT;

	while (b.p < b.end) {
		if (pb_key(&b, &f, &wt)) {
			corrupt(x, b.p, "bad field key");
			goto out;
		}
		if (wt == 2 && f >= 1 && f <= 4) {
			if (pb_sub(&b, &sub)) {
				corrupt(x, b.p, "length past the end of the file");
				goto out;
			}
			if (f == 1) {
				ranges_add(&planes, &sub);
			} else if (f == 4) {
				x->hostnames = pg_xrealloc(x->hostnames,
							   (x->n_hostnames + 1) * sizeof(char *));
				x->hostnames[x->n_hostnames++] =
				    pg_xstrndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			} else {
				/* profiler errors and warnings recorded in the file */
				trace_warn(x->t, x->file,
					   f == 2 ? "profiler-error" : "profiler-warning", "%.*s",
					   (int)(sub.end - sub.p > 300 ? 300 : sub.end - sub.p),
					   (const char *)sub.p);
			}
		} else if (pb_skip(&b, wt)) {
			corrupt(x, b.p, "bad field");
			goto out;
		}
	}
	if (planes.n == 0) {
		pg_error_set(PG_EFORMAT, "cannot read '%s': not an XPlane: no planes in the file",
			     x->path);
		goto out;
	}
	host_from_path(x);
	/* every plane's metadata is kept alive until all lines are decoded */
	pcs = pg_xcalloc(planes.n, sizeof(*pcs));
	for (uint32_t i = 0; i < planes.n; i++) {
		struct xp *pc = pg_xcalloc(1, sizeof(*pc));
		pc->t = x->t;
		pc->file = x->file;
		pc->path = x->path;
		pc->base = x->base;
		pc->size = x->size;
		pc->release_pages = x->release_pages;
		pc->k_long_name = x->k_long_name;
		pc->lock = x->lock;
		pc->device = UINT32_MAX;
		pg_buf_init(&pc->scratch);
		pcs[n_pcs++] = pc;
		if (scan_plane(pc, &planes.v[i], &xl))
			break; /* reported by plane_finish, after the planes before it */
	}
	count_lines(&xl, threads);
	for (uint32_t i = 0; i < n_pcs; i++)
		if (plane_finish(pcs[i], &xl, &js))
			goto out;
	if (x->t->host_markers_only)
		drop_host_jobs(x, pcs, n_pcs, &js);
	rc = run_jobs(x, &js, threads);
out:
	for (uint32_t i = 0; i < js.n; i++)
		free(js.v[i].err);
	free(js.v);
	xlines_free(&xl);
	for (uint32_t i = 0; i < n_pcs; i++)
		plane_ctx_free(pcs[i]);
	free(pcs);
	free(planes.v);
	return rc;
}

static const char *guess_framework(const struct trace *t, uint32_t file)
{
	for (uint32_t i = 0; i < t->n_tracks; i++) {
		const struct trace_track *tr = &t->tracks[i];
		if (tr->device == UINT32_MAX || t->devices[tr->device].file != file)
			continue;
		const char *n = trace_str_get(t, tr->name);
		/* JAX hosts have tf_pjrt_* threads too: look for TensorFlow's own */
		if (strncmp(n, "TensorFlow ", 11) == 0 || strncmp(n, "tf_Compute", 10) == 0 ||
		    strncmp(n, "tf_data", 7) == 0)
			return "tensorflow";
	}
	return "jax";
}

/* Decode the XSpace in [base, base + size); path names the file in messages
 * and gives the host when the XSpace names none. */
static int read_xplane_bytes(struct trace *t, uint32_t file, const char *path, const uint8_t *base,
			     size_t size, int release_pages)
{
	struct xp x;
	int rc;

	memset(&x, 0, sizeof(x));
	x.t = t;
	x.file = file;
	x.path = path;
	x.device = UINT32_MAX;
	x.base = base;
	x.size = size;
	x.release_pages = release_pages;
	pg_buf_init(&x.scratch);
	x.k_long_name = trace_intern_cstr(t, "long_name");
	pthread_mutex_t lock;
	pthread_mutex_init(&lock, NULL);
	x.lock = &lock;
	t->files[file].format = TRACE_FMT_XPLANE;
	t->files[file].dialect = TRACE_DIALECT_XPLANE;
	t->files[file].content_bytes = x.size;
	rc = decode_space(&x, t->decode_threads > 0 ? t->decode_threads : 1);
	if (!rc) {
		t->files[file].framework = pg_xstrdup(guess_framework(t, file));
		t->files[file].events_kept = 0;
		for (uint32_t i = 0; i < t->n_devices; i++)
			if (t->devices[i].file == file)
				t->files[file].events_kept += t->devices[i].n_events;
		t->files[file].events_kept -= t->files[file].aggregate_events;
	}
	pthread_mutex_destroy(&lock);
	for (uint32_t i = 0; i < x.n_hostnames; i++)
		free(x.hostnames[i]);
	free(x.hostnames);
	pg_buf_release(&x.scratch);
	return rc;
}

int read_xplane_mem(struct trace *t, uint32_t file, const void *data, size_t len)
{
	if (len == 0)
		return pg_error_set(PG_EFORMAT, "cannot read '%s': the file is empty",
				    t->files[file].path);
	return read_xplane_bytes(t, file, t->files[file].path, data, len, 0);
}

int read_xplane(struct trace *t, uint32_t file, const char *path)
{
	struct stat st;
	int fd, rc;
	void *map;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return pg_error_set(PG_EIO, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || st.st_size == 0) {
		close(fd);
		return pg_error_set(PG_EFORMAT, "cannot read '%s': the file is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return pg_error_set(PG_EIO, "cannot map '%s': %s", path, strerror(errno));
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = read_xplane_bytes(t, file, path, map, (size_t)st.st_size, 1);
	munmap(map, (size_t)st.st_size);
	return rc;
}
