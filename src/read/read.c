/*
 * Format dispatch: sniff the bytes, pick a reader, and undo a failed file so
 * the trace never holds half of it.
 */
#include "read.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

static int has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

struct snapshot {
	uint64_t events, mem;
	uint32_t tracks, devices, files, warnings;
};

static void rollback(struct trace *t, const struct snapshot *s)
{
	trace_events_truncate(t, s->events);
	t->n_mem = s->mem;
	t->n_tracks = s->tracks;
	t->n_devices = s->devices;
	while (t->n_warnings > s->warnings)
		free(t->warnings[--t->n_warnings].message);
	while (t->n_files > s->files) {
		struct trace_file *f = &t->files[--t->n_files];
		free(f->path);
		free(f->backend);
		free(f->framework);
		free(f->framework_version);
		free(f->device_kind);
		free(f->host);
		trace_file_free_planes(f);
	}
}

/* The first non-blank byte of a plain file, or -1. */
static int first_byte(const char *path)
{
	unsigned char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf), 0);
	close(fd);
	if (n >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf)
		return '{'; /* UTF-8 byte order mark: text, so JSON */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t')
			return buf[i];
	return -1;
}

/* A file's SHA-256 on a thread of its own (a trace_digest once reading ends). */
struct hasher {
	struct trace_digest d; /* first: the trace's list holds &h->d */
	struct pg_pool *pool;
	char *path;
	char hex[65];
	int rc;
	char err[512];
};

static void hash_job(void *arg, uint32_t job, void *scratch)
{
	struct hasher *h = arg;

	PG_UNUSED(job);
	PG_UNUSED(scratch);
	h->rc = pg_sha256_file(h->path, h->hex);
	if (h->rc)
		snprintf(h->err, sizeof(h->err), "%s", pg_error_last());
}

static int hasher_wait(struct trace_digest *d, char hex[65])
{
	struct hasher *h = (struct hasher *)d;
	int rc = 0;

	pg_pool_finish(h->pool);
	if (hex && h->rc)
		rc = pg_error_set(PG_EIO, "%s", h->err);
	else if (hex)
		memcpy(hex, h->hex, 65);
	free(h->path);
	free(h);
	return rc;
}

/* A hasher of path on a thread of its own, or NULL when none could start
 * (the caller hashes after the read). */
static struct hasher *hasher_start(const char *path)
{
	struct hasher *h = pg_xcalloc(1, sizeof(*h));

	h->path = pg_xstrdup(path);
	h->d.wait = hasher_wait;
	struct pg_pool_jobs job = {hash_job, h, 1, NULL, 0, NULL};
	if (!(h->pool = pg_pool_start(&job, 1))) {
		free(h->path);
		free(h);
		return NULL;
	}
	return h;
}

static int read_path_inner(struct trace *t, const char *path, struct hasher **hp);

/*
 * With want_sha256, a gzip file is hashed by its reader from the bytes it
 * reads (rd_in_open_hashing), any other file on a second thread while it is
 * read: both read the page cache. With keep_hashing that hash may outlive the
 * read: it joins the trace's digests and the caller's next work (the
 * analysis) overlaps it; otherwise it is waited for here.
 */
static int read_path_hashing(struct trace *t, const char *path, int keep_hashing)
{
	struct hasher *h = NULL;
	uint32_t file = t->n_files;
	struct stat st;
	int rc;

	/* A profile is opened more than once (sniffed, read, hashed): a pipe
	 * would be split between them, and a FIFO with no writer blocks open()
	 * for ever. Missing files and directories get their own error below. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return pg_error_set(PG_EIO,
				    "cannot read '%s': not a regular file (a pipe or device); "
				    "save the profile to a file first",
				    path);
	rc = read_path_inner(t, path, &h);
	if (h && !rc && keep_hashing && file < t->n_files) {
		h->d.file = file;
		h->d.next = t->digests;
		t->digests = &h->d;
	} else if (h && (rc || file >= t->n_files)) {
		(void)hasher_wait(&h->d, NULL); /* the reader's error stands */
	} else if (h) {
		char hex[65];
		if ((rc = hasher_wait(&h->d, hex)) == 0)
			memcpy(t->files[file].sha256, hex, 65);
	} else if (!rc && t->want_sha256 && file < t->n_files && !t->files[file].sha256[0]) {
		rc = pg_sha256_file(path, t->files[file].sha256);
	}
	return rc;
}

int read_path(struct trace *t, const char *path)
{
	return read_path_hashing(t, path, 0);
}

/* Reads path into t; with want_sha256, its digest into the file's sha256 when
 * the reader takes it, else a hasher started in *hp. */
static int read_path_inner(struct trace *t, const char *path, struct hasher **hp)
{
	struct snapshot snap = {t->n_events,  t->n_mem,	  t->n_tracks,
				t->n_devices, t->n_files, t->n_warnings};
	struct rd_in in;
	uint32_t file;
	int rc, fb;

	if (has_suffix(path, ".xplane.riegeli"))
		return pg_error_set(
		    PG_EUNSUPP,
		    "cannot read '%s': .xplane.riegeli (chunked, brotli) is not supported; "
		    "export the profile as .xplane.pb",
		    path);
	rc = rd_in_open_hashing(&in, path, t->decode_threads, t->want_sha256);
	if (rc)
		return rc;
	if (t->want_sha256 && !rd_in_is_gzip(&in))
		*hp = hasher_start(path);
	file = trace_file_add(t, path);
	t->files[file].bytes = in.compressed_bytes;
	t->files[file].compressed = rd_in_is_gzip(&in);
	fb = rd_in_is_gzip(&in) ? '{' : first_byte(path);
	if (fb == '{' || fb == '[' || fb == -1 || !has_suffix(path, ".pb")) {
		t->files[file].format = TRACE_FMT_CHROME_JSON;
		rc = read_chrome_json(t, file, &in);
		if (!rc && t->want_sha256 && rd_in_sha256(&in, path, t->files[file].sha256) < 0)
			rc = PG_EIO;
		if (!rc && has_suffix(path, ".xplane.pb"))
			trace_warn(t, file, "misnamed",
				   "the file is named .xplane.pb but holds Chrome trace JSON; read "
				   "as JSON");
		rd_in_close(&in);
	} else {
		rd_in_close(&in);
		rc = read_xplane(t, file, path);
	}
	if (rc)
		rollback(t, &snap);
	return rc;
}

/* ---- many files on several threads ---- */

struct job {
	const char *path;
	int32_t dup_of;
	struct trace tr;
	int rc;
	char *err;
};

struct files {
	struct trace_progress *progress;
	int want_sha256;
	int host_markers_only;
	int threads;
	struct job *jobs;
	uint32_t n;
};

static void read_job(void *arg, uint32_t i, void *scratch)
{
	struct files *p = arg;
	struct job *j = &p->jobs[i];

	PG_UNUSED(scratch);
	trace_init(&j->tr);
	j->tr.want_sha256 = p->want_sha256;
	j->tr.host_markers_only = p->host_markers_only;
	/* one file: its reader may use every thread (a gzip file is inflated on a
	 * second one, ahead of the parse); many: one each */
	j->tr.decode_threads = p->n == 1 ? p->threads : 1;
	if (j->dup_of < 0) {
		/* one file: its hash may run on into the analysis; many: the
		 * other files' reading overlaps it, and a thread each would pile up */
		j->rc = read_path_hashing(&j->tr, j->path, p->n == 1);
		if (j->rc)
			j->err = pg_xstrdup(pg_error_last());
	}
	if (p->progress) {
		atomic_fetch_add(&p->progress->events, j->tr.n_events);
		atomic_fetch_add(&p->progress->files, 1);
	}
}

static uint32_t dup_record(struct trace *t, const char *path, uint32_t of)
{
	uint32_t f = trace_file_add(t, path);
	struct stat st;

	t->files[f].duplicate_of = of;
	memcpy(t->files[f].sha256, t->files[of].sha256, sizeof(t->files[f].sha256));
	if (stat(path, &st) == 0)
		t->files[f].bytes = (uint64_t)st.st_size;
	t->files[f].format = t->files[of].format;
	t->files[f].dialect = t->files[of].dialect;
	if (t->files[of].format == TRACE_FMT_XPLANE) {
		const char *b = strrchr(path, '/');
		b = b ? b + 1 : path;
		const char *suf = strstr(b, ".xplane.pb");
		t->files[f].host = pg_xstrndup(b, suf ? (size_t)(suf - b) : strlen(b));
	}
	return f;
}

int rd_max_events(const char *path, uint64_t *out)
{
	const char *v = getenv("PROFGATE_MAX_EVENTS");
	int64_t n;

	*out = RD_MAX_FILE_EVENTS;
	if (!v || !*v)
		return 0;
	if (pg_parse_int(v, 1, INT64_C(1) << 32, &n))
		return pg_error_set(PG_EUSAGE,
				    "cannot read '%s': PROFGATE_MAX_EVENTS='%.40s': give a whole "
				    "number from 1 to 4294967296",
				    path, v);
	*out = (uint64_t)n;
	return 0;
}

int rd_too_many_events(const char *path, uint64_t cap)
{
	return pg_error_set(PG_ELIMIT,
			    "cannot read '%s': more than %llu events, the cap of one file "
			    "(PROFGATE_MAX_EVENTS sets another; docs/robustness.md)",
			    path, (unsigned long long)cap);
}

int read_paths(struct trace *t, const char *const *paths, const int32_t *dup_of, uint32_t n,
	       int threads, char ***errors_out)
{
	struct files p;
	struct pg_pool_jobs jobs = {read_job, &p, n, NULL, 0, NULL};
	struct pg_pool *pool;
	int failed = 0;
	uint32_t *file_of = pg_xcalloc(n ? n : 1, sizeof(uint32_t));
	char **errors = pg_xcalloc(n ? n : 1, sizeof(char *));

	memset(&p, 0, sizeof(p));
	p.jobs = pg_xcalloc(n ? n : 1, sizeof(*p.jobs));
	p.progress = t->progress;
	p.want_sha256 = t->want_sha256;
	p.host_markers_only = t->host_markers_only;
	p.threads = threads;
	p.n = n;
	for (uint32_t i = 0; i < n; i++) {
		p.jobs[i].path = paths[i];
		p.jobs[i].dup_of = dup_of ? dup_of[i] : -1;
	}
	pool = pg_pool_start(&jobs, threads < 1 ? 1 : threads > 16 ? 16 : threads);
	if (!pool) /* no thread could start: read here */
		pg_pool_run(&jobs, 1);
	/* merge in input order, so ids and output never depend on timing */
	for (uint32_t i = 0; i < n; i++) {
		struct job *j = &p.jobs[i];
		if (pool)
			pg_pool_wait(pool, i);
		if (j->dup_of >= 0 && (uint32_t)j->dup_of < i && file_of[j->dup_of] != UINT32_MAX) {
			file_of[i] = dup_record(t, j->path, file_of[j->dup_of]);
			trace_release(&j->tr);
			continue;
		}
		if (j->rc) {
			errors[i] = j->err;
			j->err = NULL;
			file_of[i] = UINT32_MAX;
			failed++;
			trace_release(&j->tr);
			continue;
		}
		file_of[i] = t->n_files;
		trace_merge(t, &j->tr);
	}
	if (pool)
		pg_pool_finish(pool);
	free(p.jobs);
	free(file_of);
	if (errors_out)
		*errors_out = errors;
	else {
		for (uint32_t i = 0; i < n; i++)
			free(errors[i]);
		free(errors);
	}
	return failed;
}
