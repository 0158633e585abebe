/*
 * XPlane decoding: what the walk in xplane.c found, turned into the trace
 * model. Stat metadata says what each stat id means (kept argument,
 * correlation, TPU device offset and duration, group id); event metadata
 * gives each event id its name and the stats every event of it carries;
 * plane stats name the device; and each decode job turns a run of a line's
 * events into event slots reserved for it.
 *
 * How it works: stats are matched by name through stat_metadata, never by
 * number, and ids below DENSE_IDS index plain tables (the common case), larger
 * ones a hash map. Event metadata are few and go through the protoc-c
 * generated code; events, millions of them, are decoded by hand on several
 * threads at once: a job touches only its own slots and counters, and the
 * strings it interns go through the one lock (intern_locked). Once a job is
 * done, the whole pages of its bytes are given back to the kernel.
 */
#include "xplane.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <zlib.h>

#include "xplane.pb-c.h"

/* ---- stat metadata and values ---- */

static enum xp_mem_stat mem_stat(const char *nm, size_t n)
{
	if (n == 15 && memcmp(nm, "bytes_allocated", 15) == 0)
		return XP_MEM_ALLOCATED;
	if (n == 14 && memcmp(nm, "bytes_reserved", 14) == 0)
		return XP_MEM_RESERVED;
	if ((n == 13 && memcmp(nm, "index_on_host", 13) == 0) ||
	    (n == 14 && memcmp(nm, "device_ordinal", 14) == 0))
		return XP_MEM_INDEX;
	if (n == 14 && memcmp(nm, "allocator_name", 14) == 0)
		return XP_MEM_ALLOCATOR;
	return XP_MEM_NONE;
}

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

int xp_decode_stat_metadata(struct xp *x, struct pb *entry)
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
	s->mem = mem_stat(nm, n);
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

/* An inflated compressed string, interned: its bytes count against the
 * file's RD_MAX_INFLATED_BYTES when it is new (a string repeated costs its
 * memory once); past the cap the file is marked refused (XP_OVER_ALL). */
static trace_str intern_inflated(struct xp *x, const char *s, size_t n)
{
	pthread_mutex_lock(x->lock);
	uint32_t before = x->t->n_strs;
	trace_str id = trace_intern(x->t, s, n);
	if (x->t->n_strs != before && (*x->inflated_bytes += n) > RD_MAX_INFLATED_BYTES) {
		__atomic_store_n(x->inflate_over, XP_OVER_ALL, __ATOMIC_RELAXED);
		id = 0;
	}
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
	case 8: { /* gzip-compressed string, capped (inflated_cap) */
		z_stream zs;
		unsigned char out[1 << 16];
		trace_str id = 0;
		if (__atomic_load_n(x->inflate_over, __ATOMIC_RELAXED))
			return 0; /* the file is refused: no more inflating */
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
		} while (rc == Z_OK && scratch->len <= RD_MAX_STRING_BYTES);
		if (scratch->len > RD_MAX_STRING_BYTES)
			__atomic_store_n(x->inflate_over, XP_OVER_ONE, __ATOMIC_RELAXED);
		else if (rc == Z_STREAM_END)
			id = intern_inflated(x, scratch->ptr, scratch->len);
		inflateEnd(&zs); /* a stream that is not zlib: no value, as before */
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

int xp_decode_event_metadata(struct xp *x, const struct range *r)
{
	struct pb entry = {r->p, r->end}, val = {NULL, NULL};
	uint32_t f;
	int wt;
	uint64_t key = 0;
	int has_key = 0;

	while (entry.p < entry.end) {
		if (pb_key(&entry, &f, &wt))
			return xp_corrupt(x, entry.p, "bad event metadata entry");
		if (f == 1 && wt == 0) {
			if (pb_varint(&entry, &key))
				return xp_corrupt(x, entry.p, "bad event metadata key");
			has_key = 1;
		} else if (f == 2 && wt == 2) {
			if (pb_sub(&entry, &val))
				return xp_corrupt(x, entry.p, "event metadata length past its end");
		} else if (pb_skip(&entry, wt)) {
			return xp_corrupt(x, entry.p, "bad field in event metadata entry");
		}
	}
	if (!val.p)
		return 0;
	Tensorflow__Profiler__XEventMetadata *m =
	    tensorflow__profiler__xevent_metadata__unpack(NULL, (size_t)(val.end - val.p), val.p);
	if (!m)
		return xp_corrupt(x, val.p, "event metadata does not decode");
	struct evmeta *e = evm_slot(x, has_key ? key : (uint64_t)m->id, 1);
	const char *name = m->name ? m->name : "";
	const char *disp = m->display_name ? m->display_name : "";
	e->set = 1;
	e->memory =
	    strcmp(name, "MemoryAllocation") == 0 || strcmp(name, "MemoryDeallocation") == 0;
	x->memory_meta |= e->memory;
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

uint32_t xp_plane_device(struct xp *x, const char *name)
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
int xp_decode_plane_stats(struct xp *x, int is_task_env)
{
	struct trace_file *f = &x->t->files[x->file];
	char vendor[64] = "", name[256] = "", cores[32] = "";
	int64_t cc_major = -1, cc_minor = -1;

	for (uint32_t i = 0; i < x->stat_r.n; i++) {
		struct pb b = {x->stat_r.v[i].p, x->stat_r.v[i].end};
		struct rawstat s;
		if (decode_rawstat(&b, &s))
			return xp_corrupt(x, b.p, "bad plane stat");
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
		else if (strcmp(sn, "compute_cap_major") == 0)
			cc_major = rawstat_int(&s);
		else if (strcmp(sn, "compute_cap_minor") == 0)
			cc_minor = rawstat_int(&s);
	}
	if (x->device == UINT32_MAX)
		return 0;
	if (!name[0] && vendor[0])
		snprintf(name, sizeof(name), "%s GPU%s%s%s", vendor, cores[0] ? " (" : "", cores,
			 cores[0] ? " cores)" : "");
	/* TensorFlow's GPU planes name neither model nor vendor, but their
	 * compute capability and core count tell one chip from another */
	if (!name[0] && cc_major >= 0 && cc_minor >= 0 && cores[0])
		snprintf(name, sizeof(name), "GPU (compute capability %lld.%lld, %s cores)",
			 (long long)cc_major, (long long)cc_minor, cores);
	if (name[0]) {
		x->t->devices[x->device].name = trace_intern_cstr(x->t, name);
		if (!f->device_kind && x->t->devices[x->device].kind != TRACE_DEV_CPU)
			f->device_kind = pg_xstrdup(name);
	}
	return 0;
}

/* ---- lines and events ---- */

uint32_t xp_line_track(struct xp *x, int64_t line_id, const char *name, size_t name_n)
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
			return xp_corrupt(x, b->p, "bad event field");
		switch (k) {
		case PB_KEY(1, 0):
			if (pb_varint(b, &ev->mid))
				return xp_corrupt(x, b->p, "bad event varint");
			break;
		case PB_KEY(2, 0):
			if (pb_varint(b, &v))
				return xp_corrupt(x, b->p, "bad event varint");
			ev->off = (int64_t)v;
			ev->has_off = 1;
			break;
		case PB_KEY(3, 0):
			if (pb_varint(b, &v))
				return xp_corrupt(x, b->p, "bad event varint");
			ev->dur = (int64_t)v;
			break;
		case PB_KEY(5, 0):
			if (pb_varint(b, &v))
				return xp_corrupt(x, b->p, "bad event varint");
			ev->has_nocc = 1;
			break;
		case PB_KEY(4, 2):
			if (pb_sub(b, &sb) || event_stat(x, &sb, steps_line, ev, scratch))
				return xp_corrupt(x, b->p, "bad event stat");
			break;
		default:
			if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff || pb_skip(b, (int)(k & 7)))
				return xp_corrupt(x, b->p, "bad event field");
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
	}
	if (ev.has_dev_off)
		off = ev.dev_off;
	if (ev.has_dev_dur)
		dur = ev.dev_dur;
	if (dur < 0)
		return xp_corrupt(x, start, "negative event duration");
	int64_t ts_ns, end_ns;
	int64_t end_ps;
	if (__builtin_add_overflow(off, dur, &end_ps) || ps_to_ns(line_ts_ns, off, &ts_ns) ||
	    ps_to_ns(line_ts_ns, end_ps, &end_ns))
		return xp_corrupt(x, start, "event time out of range");
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

/* The whole pages inside a job's bytes are not needed again. */
void xp_release_job_pages(const struct job *j, size_t page)
{
	uintptr_t lo = ((uintptr_t)j->p + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t hi = ((uintptr_t)j->end) & ~(uintptr_t)(page - 1);

	if (j->x->release_pages && hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Decode a job's events into its slots; then let the kernel drop its pages. */
void xp_decode_job(struct job *shared, struct pg_buf *scratch, size_t page)
{
	/* counters on the stack: jobs side by side in the array share cache
	 * lines, and the other thread is writing its own */
	struct job local = *shared, *j = &local;
	struct xp *x = j->x;
	struct pb b = {j->p, j->end}, sub;
	uint64_t key, k = 0;

	while (b.p < b.end) {
		if (pb_varint(&b, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
			j->rc = xp_corrupt(x, b.p, "bad line field");
			break;
		}
		if (key == PB_KEY(4, 2)) {
			if (pb_sub(&b, &sub) || k >= j->n_events) {
				j->rc = xp_corrupt(x, b.p, "event past the end of its line");
				break;
			}
			if (decode_event(x, &sub, j, j->first + k, scratch)) {
				j->rc = PG_EFORMAT;
				break;
			}
			k++;
		} else if (pb_skip(&b, (int)(key & 7))) {
			j->rc = xp_corrupt(x, b.p, "bad line field");
			break;
		}
	}
	if (j->rc)
		j->err = pg_xstrdup(pg_error_last());
	*shared = local;
	xp_release_job_pages(j, page);
}

/* ---- allocator samples ---- */

/* The device of an allocator as xprof's memory profile names it: "GPU_<n>_bfc"
 * is accelerator n, an index_on_host / device_ordinal stat (TPU) too; any
 * other named allocator (gpu_host_bfc, cpu) is the host's. */
static void memory_device(struct trace_mem *m, const char *alloc, size_t n, int64_t index)
{
	uint64_t id = 0;
	size_t k = 4;

	if (n > 8 && memcmp(alloc, "GPU_", 4) == 0 && memcmp(alloc + n - 4, "_bfc", 4) == 0) {
		while (k < n - 4 && alloc[k] >= '0' && alloc[k] <= '9' && id < INT32_MAX)
			id = id * 10 + (uint64_t)(alloc[k++] - '0');
		if (k == n - 4 && k > 4 && id < INT32_MAX) {
			m->device_type = TRACE_MEM_XLA;
			m->device_id = (int32_t)id;
			return;
		}
	}
	if (n == 0 && index >= 0 && index < INT32_MAX) {
		m->device_type = TRACE_MEM_XLA;
		m->device_id = (int32_t)index;
		return;
	}
	m->device_type = TRACE_MEM_CPU;
	m->device_id = -1;
}

/* One allocator event's stats and time: a sample, when it says a total. */
static int memory_event(struct xp *x, const struct job *j, struct pb *b, struct xp_mems *out)
{
	struct trace_mem m = {.allocated_bytes = -1, .reserved_bytes = -1, .file = x->file};
	const char *alloc = "";
	size_t alloc_n = 0;
	int64_t index = -1, off = 0;
	int placed = 0; /* an offset and no num_occurrences, as decode_event places events */
	uint64_t k, v;
	struct pb sb;
	struct rawstat s;

	while (b->p < b->end) {
		if (pb_varint(b, &k))
			return -1;
		if (k == PB_KEY(2, 0)) {
			if (pb_varint(b, &v))
				return -1;
			off = (int64_t)v;
			placed |= 1;
			continue;
		}
		if (k == PB_KEY(5, 0))
			placed |= 2;
		if (k != PB_KEY(4, 2)) {
			if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff || pb_skip(b, (int)(k & 7)))
				return -1;
			continue;
		}
		if (pb_sub(b, &sb) || decode_rawstat(&sb, &s))
			return -1;
		struct statinfo *si = stat_slot(x, s.mid, 0);
		switch (si ? si->mem : XP_MEM_NONE) {
		case XP_MEM_ALLOCATED: m.allocated_bytes = rawstat_int(&s); break;
		case XP_MEM_RESERVED: m.reserved_bytes = rawstat_int(&s); break;
		case XP_MEM_INDEX: index = rawstat_int(&s); break;
		case XP_MEM_ALLOCATOR:
			if (s.field == 5) {
				alloc = (const char *)s.p;
				alloc_n = s.n;
			} else if (s.field == 7) {
				struct statinfo *r = stat_slot(x, s.u, 0);
				alloc = r ? trace_str_get(x->t, r->name) : "";
				alloc_n = strlen(alloc);
			}
			break;
		default: break;
		}
	}
	memory_device(&m, alloc, alloc_n, index);
	if (placed != 1 || (m.allocated_bytes < 0 && m.reserved_bytes < 0))
		return 0;
	if (ps_to_ns(j->ts_ns, off, &m.ts_ns))
		return -1;
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 64;
		out->v = pg_xrealloc(out->v, out->cap * sizeof(*out->v));
	}
	out->v[out->n++] = m;
	return 0;
}

/*
 * The allocator events of a host line, whether or not its other events are
 * decoded: each event's metadata id is read (serializers write it first) and
 * only the allocator events' stats are decoded. Runs on worker threads:
 * reads the plane's tables, writes only *out.
 */
int xp_memory_job(const struct job *j, struct xp_mems *out)
{
	struct xp *x = j->x;
	struct pb b = {j->p, j->end}, ev;
	uint64_t key, k, mid;

	while (b.p < b.end) {
		if (pb_varint(&b, &key))
			return xp_corrupt(x, b.p, "bad line field");
		if (key != PB_KEY(4, 2)) {
			if ((key >> 3) == 0 || pb_skip(&b, (int)(key & 7)))
				return xp_corrupt(x, b.p, "bad line field");
			continue;
		}
		if (pb_sub(&b, &ev))
			return xp_corrupt(x, b.p, "event past the end of its line");
		struct pb e = ev;
		if (pb_varint(&e, &k) || k != PB_KEY(1, 0) || pb_varint(&e, &mid)) {
			/* metadata id not first (or absent): look for it */
			e = ev;
			mid = 0;
			while (e.p < e.end && !pb_varint(&e, &k)) {
				if (k == PB_KEY(1, 0)) {
					pb_varint(&e, &mid);
					break;
				}
				if ((k >> 3) == 0 || pb_skip(&e, (int)(k & 7)))
					break;
			}
		}
		struct evmeta *em = evm_slot(x, mid, 0);
		if (!em || !em->memory)
			continue;
		e = ev;
		if (memory_event(x, j, &e, out))
			return xp_corrupt(x, ev.p, "bad allocator event");
	}
	return 0;
}
