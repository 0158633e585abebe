/*
 * Files and folders: the per-user cache root every cache of profgate lives
 * under (the history's private repositories, W&B downloads), making folder
 * paths, and reading the small files (events, thresholds, records, reports,
 * summaries) whole under a size cap.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *pg_cache_dir(void)
{
	const char *v;
	char tmp[4096];

	if ((v = getenv("PROFGATE_CACHE_DIR")) && *v)
		return pg_xstrdup(v);
	if ((v = getenv("XDG_CACHE_HOME")) && *v == '/')
		snprintf(tmp, sizeof(tmp), "%s/profgate", v);
	else if ((v = getenv("HOME")) && *v == '/')
		snprintf(tmp, sizeof(tmp), "%s/.cache/profgate", v);
	else
		snprintf(tmp, sizeof(tmp), "/tmp/profgate-%ld", (long)getuid());
	return pg_xstrdup(tmp);
}

int pg_mkdir_p(const char *path, unsigned mode)
{
	char *p = pg_xstrdup(path);
	int rc = 0;

	for (char *q = p + 1; *q && rc == 0; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			rc = -1;
		*q = '/';
	}
	if (rc == 0 && mkdir(p, mode) != 0 && errno != EEXIST)
		rc = -1;
	if (rc)
		rc = pg_error_set(PG_EIO, "cannot create '%s': %s", p, strerror(errno));
	free(p);
	return rc;
}

/* The error of a failed read of path, errno kept for the caller. */
static int read_error(const char *path)
{
	int e = errno;

	if (e == EISDIR)
		pg_error_set(PG_EIO, "cannot read '%s': is a directory", path);
	else
		pg_error_set(PG_EIO, "cannot read '%s': %s", path, strerror(e));
	errno = e;
	return PG_EIO;
}

static int too_large(const char *path, size_t cap)
{
	pg_error_set(PG_ELIMIT, "'%s' is larger than %zu bytes", path, cap);
	errno = 0;
	return PG_ELIMIT;
}

/* Up to cap + 1 bytes of fd onto out: one more than fits tells "too large". */
static int read_capped(int fd, const char *path, size_t cap, struct pg_buf *out)
{
	size_t got = 0;

	for (;;) {
		size_t want = cap - got + 1;
		ssize_t r;

		pg_buf_grow(out, want < 65536 ? want : 65536);
		want = want < out->cap - out->len - 1 ? want : out->cap - out->len - 1;
		r = read(fd, out->ptr + out->len, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return read_error(path);
		if (r == 0)
			return 0;
		out->len += (size_t)r;
		out->ptr[out->len] = '\0';
		got += (size_t)r;
		if (got > cap)
			return too_large(path, cap);
	}
}

int pg_read_small(const char *path, size_t cap, unsigned flags, struct pg_buf *out)
{
	int from_stdin = (flags & PG_READ_STDIN) && strcmp(path, "-") == 0;
	int fd = from_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	size_t start = out->len;
	struct stat st;
	int rc, e;

	if (fd < 0)
		return read_error(path);
	if (fstat(fd, &st) != 0) {
		rc = read_error(path);
	} else if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		rc = read_error(path);
	} else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > cap) {
		rc = too_large(path, cap);
	} else {
		if (S_ISREG(st.st_mode))
			pg_buf_grow(out, (size_t)st.st_size);
		rc = read_capped(fd, path, cap, out);
	}
	e = errno;
	if (!from_stdin)
		close(fd);
	if (rc && out->len != start) {
		out->len = start;
		out->ptr[start] = '\0';
	}
	errno = e;
	return rc;
}
