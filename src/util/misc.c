/*
 * Hashing, time formatting, atomic file writes, the qsort comparators and the
 * checked integer parser.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A multiply-mix hash over 8-byte words: stable across runs, fast on the
 * long kernel names interning sees on every event. */
static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

uint64_t pg_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xff51afd7ed558ccdULL);
	uint64_t tail = 0;

	while (n >= 8) {
		h ^= rd64(s) * 0xbf58476d1ce4e5b9ULL;
		h = ((h << 31) | (h >> 33)) * 0x94d049bb133111ebULL;
		s += 8;
		n -= 8;
	}
	memcpy(&tail, s, n);
	h ^= tail * 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 32;
	return h;
}

void pg_fmt_us(char *out, size_t cap, int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	uint64_t a = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;

	snprintf(out, cap, "%s%llu.%03llu", sign, (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
}

/* Every byte of data to fd; 0, or -1 with errno set. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * An output that exists and is not a regular file (a device such as
 * /dev/null or /dev/stdout, a FIFO, a symlink) is written through, in place:
 * renaming a temporary file over it would replace the device or the link
 * itself, and as root `-o /dev/null` would leave the machine without one.
 */
static int write_in_place(const char *path, const char *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write_all(fd, data, n) != 0) {
		pg_error_set(PG_EIO, "cannot write '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return PG_EIO;
	}
	if (close(fd) != 0)
		return pg_error_set(PG_EIO, "cannot write '%s': %s", path, strerror(errno));
	return 0;
}

int pg_write_file_atomic(const char *path, const void *data, size_t n)
{
	size_t plen = strlen(path);
	struct stat st;
	char *tmp;
	int fd, rc = PG_EIO, slot;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode))
			return pg_error_set(PG_EIO, "cannot write '%s': is a directory", path);
		return write_in_place(path, data, n);
	}
	tmp = pg_xmalloc(plen + 32);
	snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
	slot = pg_cleanup_add(tmp, 0);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		pg_error_set(PG_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (write_all(fd, data, n) != 0) {
		pg_error_set(PG_EIO, "cannot write '%s': %s", path, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		pg_error_set(PG_EIO, "cannot write '%s': %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	pg_cleanup_drop(slot);
	free(tmp);
	return rc;
}

size_t pg_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0], need;
	uint32_t cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n <= need)
		return 0;
	for (unsigned i = 1; i <= need; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need + 1;
}

int pg_whole(double x, int64_t *out)
{
	if (!(x >= -9007199254740992.0 && x <= 9007199254740992.0) || x != floor(x))
		return 0;
	*out = (int64_t)x;
	return 1;
}

int pg_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int pg_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int pg_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

int pg_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int pg_parse_int(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int neg = s[0] == '-';
	const char *p = s + neg;
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	int64_t x;

	if (*p == '\0')
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || v > (limit - (uint64_t)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	x = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	if (x < min || x > max)
		return -1;
	*out = x;
	return 0;
}
