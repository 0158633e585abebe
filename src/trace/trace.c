/*
 * The trace model's storage: interning tables (open addressing, power-of-two
 * sized, load <= 1/2), events in fixed blocks of 64K so growth never copies
 * them, and plain growable arrays for the rest.
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define EVBLOCK_SHIFT TRACE_EVBLOCK_SHIFT
#define EVBLOCK_SIZE  TRACE_EVBLOCK_SIZE

struct trace_strent {
	const char *p;
	uint32_t len;
	uint32_t hash;
};

struct trace_argset {
	uint64_t off;
	uint32_t n;
	uint32_t hash;
};

_Static_assert(sizeof(struct trace_event) == 40, "trace_event must stay 40 bytes");

#define GROW(ptr, n, cap)                                                                          \
	do {                                                                                       \
		if ((n) >= (cap)) {                                                                \
			(cap) = (cap) ? 2 * (cap) : 16;                                            \
			(ptr) = pg_xrealloc((ptr), (size_t)(cap) * sizeof(*(ptr)));                \
		}                                                                                  \
	} while (0)

void trace_init(struct trace *t)
{
	memset(t, 0, sizeof(*t));
	pg_arena_init(&t->strings_arena, 1 << 20);
	trace_intern(t, "", 0); /* id 0 */
	trace_cat_intern(t, "", 0);
	/* argset 0 is the empty set */
	GROW(t->argsets, t->n_argsets, t->cap_argsets);
	t->argsets[t->n_argsets++] = (struct trace_argset){0, 0, 0};
}

/* Ends the first running digest (wait() frees it): its file and result; hex
 * NULL drops the result. */
static int digest_pop(struct trace *t, uint32_t *file, char hex[65])
{
	struct trace_digest *d = t->digests;

	*file = d->file;
	t->digests = d->next;
	return d->wait(d, hex);
}

int trace_digests_wait(struct trace *t)
{
	int rc = 0;

	while (t->digests) {
		char hex[65];
		uint32_t file;
		int r = digest_pop(t, &file, hex);
		if (r == 0 && file < t->n_files)
			memcpy(t->files[file].sha256, hex, sizeof(hex));
		else if (r && !rc)
			rc = r;
	}
	for (uint32_t i = 0; i < t->n_files; i++) {
		uint32_t of = t->files[i].duplicate_of;
		if (of < t->n_files)
			memcpy(t->files[i].sha256, t->files[of].sha256, sizeof(t->files[i].sha256));
	}
	return rc;
}

void trace_release(struct trace *t)
{
	uint32_t file;

	/* unwanted now: a failed one must not overwrite the error being reported */
	while (t->digests)
		(void)digest_pop(t, &file, NULL);
	for (uint32_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	pg_arena_release(&t->strings_arena);
	free(t->strs);
	free(t->str_index);
	free(t->cats);
	free(t->argsets);
	free(t->args);
	free(t->argset_index);
	free(t->devices);
	free(t->tracks);
	for (uint32_t i = 0; i < t->n_files; i++) {
		free(t->files[i].path);
		free(t->files[i].backend);
		free(t->files[i].framework);
		free(t->files[i].framework_version);
		free(t->files[i].device_kind);
		free(t->files[i].host);
		trace_file_free_planes(&t->files[i]);
	}
	free(t->files);
	for (uint32_t i = 0; i < t->n_warnings; i++)
		free(t->warnings[i].message);
	free(t->warnings);
	free(t->mem);
	memset(t, 0, sizeof(*t));
}

/* ---- strings ---- */

static void str_rehash(struct trace *t)
{
	uint32_t cap = t->str_index_cap ? t->str_index_cap * 2 : 1024;
	uint32_t *idx = pg_xmalloc((size_t)cap * sizeof(uint32_t));

	memset(idx, 0xff, (size_t)cap * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->n_strs; i++) {
		uint32_t h = t->strs[i].hash & (cap - 1);
		while (idx[h] != UINT32_MAX)
			h = (h + 1) & (cap - 1);
		idx[h] = i;
	}
	free(t->str_index);
	t->str_index = idx;
	t->str_index_cap = cap;
}

trace_str trace_intern(struct trace *t, const char *s, size_t n)
{
	uint32_t hash = (uint32_t)pg_hash(s, n);

	if ((uint64_t)(t->n_strs + 1) * 2 > t->str_index_cap)
		str_rehash(t);
	uint32_t mask = t->str_index_cap - 1, h = hash & mask;
	for (;;) {
		uint32_t id = t->str_index[h];
		if (id == UINT32_MAX)
			break;
		const struct trace_strent *e = &t->strs[id];
		if (e->hash == hash && e->len == n && memcmp(e->p, s, n) == 0)
			return id;
		h = (h + 1) & mask;
	}
	GROW(t->strs, t->n_strs, t->cap_strs);
	uint32_t id = t->n_strs++;
	t->strs[id].p = pg_arena_strndup(&t->strings_arena, s, n);
	t->strs[id].len = (uint32_t)n;
	t->strs[id].hash = hash;
	t->str_index[h] = id;
	return id;
}

trace_str trace_intern_cstr(struct trace *t, const char *s)
{
	return trace_intern(t, s, strlen(s));
}

trace_str trace_str_find(const struct trace *t, const char *s)
{
	size_t n = strlen(s);
	uint32_t hash = (uint32_t)pg_hash(s, n);

	if (!t->str_index_cap)
		return 0;
	uint32_t mask = t->str_index_cap - 1, h = hash & mask;
	for (;;) {
		uint32_t id = t->str_index[h];
		if (id == UINT32_MAX)
			return 0;
		const struct trace_strent *e = &t->strs[id];
		if (e->hash == hash && e->len == n && memcmp(e->p, s, n) == 0)
			return id;
		h = (h + 1) & mask;
	}
}

const char *trace_str_get(const struct trace *t, trace_str id)
{
	return id < t->n_strs ? t->strs[id].p : "";
}

size_t trace_str_len(const struct trace *t, trace_str id)
{
	return id < t->n_strs ? t->strs[id].len : 0;
}

/* ---- categories ---- */

static uint32_t cat_class(const char *s, size_t n)
{
	static const struct {
		const char *name;
		uint32_t cls;
	} table[] = {
	    {"kernel", TRACE_CATCLASS_DEVICE},
	    {"Kernel", TRACE_CATCLASS_DEVICE},
	    {"gpu_memcpy", TRACE_CATCLASS_DEVICE},
	    {"Memcpy", TRACE_CATCLASS_DEVICE},
	    {"gpu_memset", TRACE_CATCLASS_DEVICE},
	    {"Memset", TRACE_CATCLASS_DEVICE},
	    {"gpu_user_annotation", TRACE_CATCLASS_DEVICE_ANN},
	    {"mtia_ccp_events", TRACE_CATCLASS_ACCEL},
	    {"cpu_op", TRACE_CATCLASS_HOST},
	    {"Operator", TRACE_CATCLASS_HOST},
	    {"user_annotation", TRACE_CATCLASS_HOST | TRACE_CATCLASS_STEP},
	    {"cuda_runtime", TRACE_CATCLASS_HOST},
	    {"Runtime", TRACE_CATCLASS_HOST},
	    {"cuda_driver", TRACE_CATCLASS_HOST},
	    {"python_function", TRACE_CATCLASS_HOST | TRACE_CATCLASS_PYTHON},
	    {"cpu_instant_event", TRACE_CATCLASS_HOST},
	    {"cuda_sync", TRACE_CATCLASS_HOST},
	    {"mtia_runtime", TRACE_CATCLASS_HOST},
	    {"xpu_runtime", TRACE_CATCLASS_HOST},
	    {"privateuse1_runtime", TRACE_CATCLASS_HOST},
	    {"ac2g", TRACE_CATCLASS_FLOW},
	    {"async_cpu_to_gpu", TRACE_CATCLASS_FLOW},
	    {"fwdbwd", TRACE_CATCLASS_FLOW},
	};
	for (size_t i = 0; i < PG_ARRAY_LEN(table); i++)
		if (strlen(table[i].name) == n && memcmp(table[i].name, s, n) == 0)
			return table[i].cls;
	return 0;
}

uint16_t trace_cat_intern(struct trace *t, const char *s, size_t n)
{
	trace_str id = trace_intern(t, s, n);

	/* Few categories exist; a linear scan from the end is cheap and the
	 * reader caches the last one anyway. */
	for (uint32_t i = t->n_cats; i-- > 0;)
		if (t->cats[i].name == id)
			return (uint16_t)i;
	if (t->n_cats >= UINT16_MAX)
		return UINT16_MAX;
	GROW(t->cats, t->n_cats, t->cap_cats);
	t->cats[t->n_cats].name = id;
	t->cats[t->n_cats].class_mask = cat_class(s, n);
	return (uint16_t)t->n_cats++;
}

/* ---- argument sets ---- */

static uint32_t argset_hash(const struct trace_arg *a, uint32_t n)
{
	return (uint32_t)pg_hash(a, (size_t)n * sizeof(*a)) | 1;
}

static void argset_rehash(struct trace *t)
{
	uint32_t cap = t->argset_index_cap ? t->argset_index_cap * 2 : 1024;
	uint32_t *idx = pg_xmalloc((size_t)cap * sizeof(uint32_t));

	memset(idx, 0xff, (size_t)cap * sizeof(uint32_t));
	for (uint32_t i = 1; i < t->n_argsets; i++) {
		uint32_t h = t->argsets[i].hash & (cap - 1);
		while (idx[h] != UINT32_MAX)
			h = (h + 1) & (cap - 1);
		idx[h] = i;
	}
	free(t->argset_index);
	t->argset_index = idx;
	t->argset_index_cap = cap;
}

uint32_t trace_argset_intern(struct trace *t, const struct trace_arg *a, uint32_t n)
{
	if (n == 0)
		return 0;
	uint32_t hash = argset_hash(a, n);
	if ((uint64_t)(t->n_argsets + 1) * 2 > t->argset_index_cap)
		argset_rehash(t);
	uint32_t mask = t->argset_index_cap - 1, h = hash & mask;
	for (;;) {
		uint32_t id = t->argset_index[h];
		if (id == UINT32_MAX)
			break;
		const struct trace_argset *s = &t->argsets[id];
		if (s->hash == hash && s->n == n &&
		    memcmp(&t->args[s->off], a, (size_t)n * sizeof(*a)) == 0)
			return id;
		h = (h + 1) & mask;
	}
	while (t->n_args + n > t->cap_args) {
		t->cap_args = t->cap_args ? 2 * t->cap_args : 1024;
		t->args = pg_xrealloc(t->args, (size_t)t->cap_args * sizeof(*t->args));
	}
	memcpy(&t->args[t->n_args], a, (size_t)n * sizeof(*a));
	GROW(t->argsets, t->n_argsets, t->cap_argsets);
	uint32_t id = t->n_argsets++;
	t->argsets[id] = (struct trace_argset){t->n_args, n, hash};
	t->n_args += n;
	t->argset_index[h] = id;
	return id;
}

uint32_t trace_argset_get(const struct trace *t, uint32_t set, const struct trace_arg **out)
{
	if (set == 0 || set >= t->n_argsets) {
		*out = NULL;
		return 0;
	}
	*out = &t->args[t->argsets[set].off];
	return t->argsets[set].n;
}

trace_str trace_arg_get(const struct trace *t, uint32_t set, trace_str key)
{
	const struct trace_arg *a;
	uint32_t n = trace_argset_get(t, set, &a);

	for (uint32_t i = 0; i < n; i++)
		if (a[i].key == key)
			return a[i].value;
	return 0;
}

/* ---- devices, tracks, files, warnings ---- */

uint32_t trace_device_add(struct trace *t, const struct trace_device *d)
{
	GROW(t->devices, t->n_devices, t->cap_devices);
	t->devices[t->n_devices] = *d;
	return t->n_devices++;
}

uint32_t trace_track_add(struct trace *t, const struct trace_track *tr)
{
	GROW(t->tracks, t->n_tracks, t->cap_tracks);
	t->tracks[t->n_tracks] = *tr;
	t->tracks[t->n_tracks].first_ns = INT64_MAX;
	t->tracks[t->n_tracks].last_ns = INT64_MIN;
	t->tracks[t->n_tracks].n_events = 0;
	return t->n_tracks++;
}

uint32_t trace_file_add(struct trace *t, const char *path)
{
	GROW(t->files, t->n_files, t->cap_files);
	struct trace_file *f = &t->files[t->n_files];
	memset(f, 0, sizeof(*f));
	f->path = pg_xstrdup(path);
	f->schema_version = -1;
	f->rank = f->world_size = -1;
	f->duplicate_of = UINT32_MAX;
	return t->n_files++;
}

void trace_file_free_planes(struct trace_file *f)
{
	for (uint32_t i = 0; i < f->n_planes; i++)
		free(f->planes[i].name);
	free(f->planes);
	f->planes = NULL;
	f->n_planes = 0;
}

void trace_warn(struct trace *t, uint32_t file, const char *code, const char *fmt, ...)
{
	struct pg_buf b = PG_BUF_INIT;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	pg_buf_grow(&b, (size_t)(n > 0 ? n : 0));
	va_start(ap, fmt);
	vsnprintf(b.ptr, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b.len = (size_t)n;

	GROW(t->warnings, t->n_warnings, t->cap_warnings);
	struct trace_warning *w = &t->warnings[t->n_warnings++];
	w->file = file;
	snprintf(w->code, sizeof(w->code), "%s", code);
	w->message = pg_buf_detach(&b, NULL);
}

/* ---- events ---- */

struct trace_event *trace_event_add(struct trace *t)
{
	uint64_t i = t->n_events;
	uint32_t blk = (uint32_t)(i >> EVBLOCK_SHIFT);

	if (blk >= t->n_blocks) {
		GROW(t->blocks, t->n_blocks, t->cap_blocks);
		t->blocks[t->n_blocks++] = pg_xmalloc(sizeof(struct trace_evblock));
	}
	struct trace_event *e = &t->blocks[blk]->ev[i & (EVBLOCK_SIZE - 1)];
	memset(e, 0, sizeof(*e));
	t->n_events++;
	return e;
}

void trace_event_commit(struct trace *t, const struct trace_event *e)
{
	struct trace_track *tr = &t->tracks[e->track];

	tr->n_events++;
	if (e->flags & TRACE_EV_AGGREGATE)
		return;
	if (e->ts_ns < tr->first_ns)
		tr->first_ns = e->ts_ns;
	if (e->ts_ns + e->dur_ns > tr->last_ns)
		tr->last_ns = e->ts_ns + e->dur_ns;
}

/*
 * A block for a bulk reservation, which readers fill at once: aligned to
 * 2 MiB and marked for transparent huge pages, its first 2 MiB (of 2.5)
 * fault in as one page instead of 512. The rest stays in small pages, so
 * no memory is touched beyond the block.
 */
#define HUGE_PAGE (2u << 20)
_Static_assert(sizeof(struct trace_evblock) >= HUGE_PAGE, "a block holds a huge page");

static struct trace_evblock *evblock_bulk(void)
{
	void *p;

	if (posix_memalign(&p, HUGE_PAGE, sizeof(struct trace_evblock)) != 0)
		return pg_xmalloc(sizeof(struct trace_evblock));
#ifdef MADV_HUGEPAGE
	madvise(p, HUGE_PAGE, MADV_HUGEPAGE);
#endif
	return p;
}

const struct trace_event *trace_event_run(const struct trace *t, uint64_t i, uint64_t *n)
{
	uint64_t off = i & (EVBLOCK_SIZE - 1), in_block = EVBLOCK_SIZE - off,
		 left = t->n_events - i;

	*n = in_block < left ? in_block : left;
	return &t->blocks[i >> EVBLOCK_SHIFT]->ev[off];
}

uint64_t trace_events_reserve(struct trace *t, uint64_t n)
{
	uint64_t first = t->n_events;
	uint64_t blocks = (first + n + EVBLOCK_SIZE - 1) >> EVBLOCK_SHIFT;

	while (t->n_blocks < blocks) {
		GROW(t->blocks, t->n_blocks, t->cap_blocks);
		/* a block only partly reserved may stay mostly untouched: small pages */
		uint64_t end = (uint64_t)(t->n_blocks + 1) << EVBLOCK_SHIFT;
		t->blocks[t->n_blocks++] =
		    first + n >= end ? evblock_bulk() : pg_xmalloc(sizeof(struct trace_evblock));
	}
	t->n_events += n;
	return first;
}

void trace_mem_add(struct trace *t, const struct trace_mem *m)
{
	GROW(t->mem, t->n_mem, t->cap_mem);
	t->mem[t->n_mem++] = *m;
}

void trace_events_truncate(struct trace *t, uint64_t n)
{
	if (n >= t->n_events)
		return;
	uint32_t keep = (uint32_t)((n + EVBLOCK_SIZE - 1) >> EVBLOCK_SHIFT);
	for (uint32_t i = keep; i < t->n_blocks; i++)
		free(t->blocks[i]);
	t->n_blocks = keep;
	t->n_events = n;
}

size_t trace_memory_bytes(const struct trace *t)
{
	return (size_t)t->n_blocks * sizeof(struct trace_evblock) + t->strings_arena.total_bytes +
	       (size_t)t->cap_strs * sizeof(struct trace_strent) + (size_t)t->str_index_cap * 4 +
	       (size_t)t->cap_args * sizeof(struct trace_arg) +
	       (size_t)t->cap_argsets * sizeof(struct trace_argset) +
	       (size_t)t->argset_index_cap * 4 +
	       (size_t)t->cap_tracks * sizeof(struct trace_track) +
	       (size_t)t->cap_devices * sizeof(struct trace_device) +
	       (size_t)t->cap_mem * sizeof(struct trace_mem);
}

/* ---- names ---- */

const char *trace_dev_kind_name(enum trace_dev_kind k)
{
	static const char *names[] = {"cpu", "gpu", "tpu", "other"};
	return (unsigned)k < PG_ARRAY_LEN(names) ? names[k] : "other";
}

const char *trace_track_kind_name(enum trace_track_kind k)
{
	static const char *names[] = {"device-stream", "device-ops",  "steps", "modules",
				      "host-thread",   "annotations", "other"};
	return (unsigned)k < PG_ARRAY_LEN(names) ? names[k] : "other";
}

const char *trace_dialect_name(enum trace_dialect d)
{
	static const char *names[] = {"generic", "jax", "kineto", "xplane", "pytorch-legacy"};
	return (unsigned)d < PG_ARRAY_LEN(names) ? names[d] : "generic";
}

const char *trace_format_name(enum trace_format f)
{
	return f == TRACE_FMT_XPLANE ? "xplane" : "chrome-json";
}

/* ---- merge ---- */

/*
 * Move everything of src into dst, remapping string, category, argument-set,
 * device, track and file ids. src is left empty (released). Merging in a fixed
 * order keeps ids, and so every output, independent of thread timing.
 */
static int trace_is_empty(const struct trace *t)
{
	return t->n_files == 0 && t->n_events == 0 && t->n_devices == 0 && t->n_tracks == 0 &&
	       t->n_warnings == 0 && t->n_mem == 0;
}

void trace_merge(struct trace *dst, struct trace *src)
{
	if (trace_is_empty(dst)) {
		/* nothing to remap: take src whole, so one file costs one copy */
		int want = dst->want_sha256, threads = dst->decode_threads;
		int markers_only = dst->host_markers_only;
		trace_release(dst);
		*dst = *src;
		dst->want_sha256 = want;
		dst->decode_threads = threads;
		dst->host_markers_only = markers_only;
		memset(src, 0, sizeof(*src));
		return;
	}

	trace_str *smap = pg_xmalloc((size_t)src->n_strs * sizeof(trace_str));
	uint16_t *cmap = pg_xmalloc((size_t)(src->n_cats ? src->n_cats : 1) * sizeof(uint16_t));
	uint32_t *amap = pg_xmalloc((size_t)src->n_argsets * sizeof(uint32_t));
	uint32_t dev0 = dst->n_devices, track0 = dst->n_tracks, file0 = dst->n_files;
	struct trace_arg tmp[64];

	for (uint32_t i = 0; i < src->n_strs; i++)
		smap[i] = trace_intern(dst, src->strs[i].p, src->strs[i].len);
	for (uint32_t i = 0; i < src->n_cats; i++) {
		const char *n = trace_str_get(src, src->cats[i].name);
		cmap[i] = trace_cat_intern(dst, n, trace_str_len(src, src->cats[i].name));
	}
	amap[0] = 0;
	for (uint32_t i = 1; i < src->n_argsets; i++) {
		const struct trace_arg *a;
		uint32_t n = trace_argset_get(src, i, &a);
		if (n > PG_ARRAY_LEN(tmp))
			n = PG_ARRAY_LEN(tmp);
		for (uint32_t k = 0; k < n; k++)
			tmp[k] = (struct trace_arg){smap[a[k].key], smap[a[k].value]};
		amap[i] = trace_argset_intern(dst, tmp, n);
	}
	for (uint32_t i = 0; i < src->n_files; i++) {
		GROW(dst->files, dst->n_files, dst->cap_files);
		dst->files[dst->n_files] = src->files[i];
		if (src->files[i].duplicate_of != UINT32_MAX)
			dst->files[dst->n_files].duplicate_of += file0;
		dst->n_files++;
	}
	for (uint32_t i = 0; i < src->n_devices; i++) {
		struct trace_device d = src->devices[i];
		d.label = smap[d.label];
		d.name = smap[d.name];
		d.host = smap[d.host];
		d.file += file0;
		trace_device_add(dst, &d);
	}
	for (uint32_t i = 0; i < src->n_tracks; i++) {
		struct trace_track tr = src->tracks[i];
		GROW(dst->tracks, dst->n_tracks, dst->cap_tracks);
		if (tr.device != UINT32_MAX)
			tr.device += dev0;
		tr.name = smap[tr.name];
		tr.pid = smap[tr.pid];
		tr.tid = smap[tr.tid];
		dst->tracks[dst->n_tracks++] = tr;
	}
	for (uint64_t i = 0; i < src->n_events; i++) {
		const struct trace_event *e = trace_event_at(src, i);
		struct trace_event *d = trace_event_add(dst);
		*d = *e;
		d->name = smap[e->name];
		d->track = e->track + track0;
		d->args = amap[e->args];
		d->cat = cmap[e->cat];
	}
	for (uint32_t i = 0; i < src->n_warnings; i++) {
		GROW(dst->warnings, dst->n_warnings, dst->cap_warnings);
		dst->warnings[dst->n_warnings] = src->warnings[i];
		dst->warnings[dst->n_warnings++].file += file0;
	}
	for (uint64_t i = 0; i < src->n_mem; i++) {
		struct trace_mem m = src->mem[i];
		m.file += file0;
		trace_mem_add(dst, &m);
	}
	while (src->digests) {
		struct trace_digest *d = src->digests;
		src->digests = d->next;
		d->file += file0;
		d->next = dst->digests;
		dst->digests = d;
	}
	/* ownership of file and warning strings moved to dst */
	src->n_files = 0;
	src->n_warnings = 0;
	free(smap);
	free(cmap);
	free(amap);
	trace_release(src);
}
