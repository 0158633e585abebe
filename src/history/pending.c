/*
 * Pending records. A record whose push failed is kept by the caller as the
 * exact line (history_pending_save: the action's output folder, else the
 * cache's folder for this remote and branch) and delivered by
 * history_flush(), or by the next history_append() once its own record is on
 * the branch, through the same append loop: a push that landed unreported
 * (the server died before it answered) is found by its id and not doubled.
 */
#include "store.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A record whose push failed is kept as the exact line history_append()
 * would have pushed, in <folder>/<record_id>.json: the action's output folder
 * (o->pending_dir), else <cache>/pending/<key>, else
 * ${TMPDIR:-/tmp}/profgate-pending-<uid>/<key>, where <key> is 16 hex digits
 * of the sha256 of the remote (as resolved) and the branch, so that a record
 * is only ever delivered where it was meant to go. Delivering one is an
 * append like any other: the rebuild finds its id in the shard when an
 * earlier push landed without being reported, so it is never doubled.
 */

/* 16 hex digits naming the remote and branch of o. */
static void pending_key(const struct history_store_opts *o, char key[17])
{
	struct store t;
	struct pg_sha256 sha;
	const char *branch = o->branch ? o->branch : HISTORY_DEFAULT_BRANCH;
	char hex[65], why[1024];

	memset(&t, 0, sizeof(t));
	snprintf(why, sizeof(why), "%s", pg_error_last()); /* the caller's message stays */
	pg_sha256_init(&sha);
	if (store_resolve_remote(&t, o->remote) == 0)
		pg_sha256_update(&sha, t.url, strlen(t.url));
	else
		pg_sha256_update(&sha, o->remote, strlen(o->remote));
	pg_sha256_update(&sha, "\n", 1);
	pg_sha256_update(&sha, branch, strlen(branch));
	pg_sha256_hex(&sha, hex);
	memcpy(key, hex, 16);
	key[16] = 0;
	free(t.url);
	free(t.local);
	pg_error_set(PG_EDELIVERY, "%s", why);
}

/* ${TMPDIR:-/tmp}/profgate-pending-<uid>: made 0700 when create, and used
 * only when it is a folder of ours that no one else may write (not a symlink
 * someone left). NULL (message set) when it is not. */
static char *pending_tmp_dir(int create)
{
	const char *t = getenv("TMPDIR");
	char *dir =
	    pg_xasprintf("%s/profgate-pending-%ld", t && *t == '/' ? t : "/tmp", (long)getuid());
	struct stat st;

	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		pg_error_set(PG_EIO, "cannot create '%s': %s", dir, strerror(errno));
	} else if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
		   (st.st_mode & 077)) {
		pg_error_set(PG_EIO, "'%s' is not a private folder of this user", dir);
	} else {
		return dir;
	}
	free(dir);
	return NULL;
}

/* The folders pending records of o are kept in, in the order they are
 * tried: o->pending_dir, the cache's, the temporary one (when it is ours;
 * made when create). Returns how many were set in dirs (each to free()). */
int store_pending_dirs(const struct history_store_opts *o, char *dirs[3], int create)
{
	char key[17], *cache, *tmp;
	int n = 0;

	pending_key(o, key);
	if (o->pending_dir)
		dirs[n++] = pg_xstrdup(o->pending_dir);
	cache = o->cache_dir ? pg_xstrdup(o->cache_dir) : history_cache_dir();
	dirs[n++] = pg_xasprintf("%s/pending/%s", cache, key);
	free(cache);
	if ((tmp = pending_tmp_dir(create))) {
		dirs[n++] = pg_xasprintf("%s/%s", tmp, key);
		free(tmp);
	}
	return n;
}

/* r's line as <dir>/<record_id>.json (dir made 0700 when missing); the path,
 * or NULL with the message set. */
static char *pending_write(const char *dir, const struct pg_buf *line, const char *record_id)
{
	char *path;

	if (pg_mkdir_p(dir, 0700)) {
		pg_error_set(PG_EIO, "%s", pg_error_last());
		return NULL;
	}
	path = pg_xasprintf("%s/%s.json", dir, record_id);
	if (pg_write_file_atomic(path, line->ptr, line->len)) {
		free(path);
		return NULL;
	}
	return path;
}

char *history_pending_save(const struct history_store_opts *o, const struct history_record *r)
{
	struct pg_buf line = PG_BUF_INIT, why = PG_BUF_INIT;
	char *dirs[3], *path = NULL;
	int n = store_pending_dirs(o, dirs, 1);

	history_record_write(r, &line);
	for (int i = 0; i < n && !path; i++) {
		if (!(path = pending_write(dirs[i], &line, r->record_id)))
			pg_buf_addf(&why, "%s%s", why.len ? "; " : "", pg_error_last());
	}
	if (!path)
		pg_error_set(PG_EIO, "%s", why.len ? why.ptr : "no folder to keep it in");
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	pg_buf_release(&line);
	pg_buf_release(&why);
	return path;
}

/* One pending file: its path and the record it holds. */
struct pending {
	char *path;
	struct history_record r;
};

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	int c = strcmp(x->r.time, y->r.time);

	return c ? c : strcmp(x->r.record_id, y->r.record_id);
}

/* The records of dir's *.json files, oldest first, into *out (*n of them).
 * A file that is not a record is reported through o->log, counted in
 * res->bad and left in place. A missing folder holds none. */
static int pending_load(struct store *s, const char *dir, struct pending **out, uint32_t *n,
			struct history_flush_result *res)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint32_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return errno == ENOENT ? 0
				       : pg_error_set(PG_EIO, "history: cannot read '%s': %s", dir,
						      strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct pg_buf text = PG_BUF_INIT;
		char *path;
		int rc;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
			continue;
		path = pg_xasprintf("%s/%s", dir, e->d_name);
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*out = pg_xrealloc(*out, cap * sizeof(**out));
		}
		rc = pg_read_small(path, (size_t)HISTORY_MAX_LINE + 2, 0, &text);
		while (rc == 0 && text.len &&
		       (text.ptr[text.len - 1] == '\n' || text.ptr[text.len - 1] == '\r'))
			text.len--;
		if (rc == 0)
			rc = history_record_parse(&(*out)[*n].r, text.ptr, text.len);
		else if (rc == PG_ELIMIT)
			pg_error_set(rc, "larger than a record can be");
		if (rc) {
			store_logf(s, "history: pending record '%s': %s; left in place", path,
				   pg_error_last());
			res->bad++;
			free(path);
		} else {
			(*out)[(*n)++].path = path;
		}
		pg_buf_release(&text);
	}
	closedir(d);
	if (*n > 1)
		qsort(*out, *n, sizeof(**out), pending_cmp);
	return 0;
}

/*
 * Deliver dir's pending records through the open store s, within its budget,
 * skipping (and removing) the copy of skip_id (the record just appended).
 * Each landed or already-held record's file is removed. Stops at the first
 * record that cannot be delivered: it and the rest stay (res->left), and
 * PG_EDELIVERY is returned with the message set.
 */
static int pending_deliver(struct store *s, const char *dir, const char *skip_id,
			   struct history_flush_result *res)
{
	struct pending *p;
	uint32_t n;
	int rc = pending_load(s, dir, &p, &n, res);

	for (uint32_t i = 0; rc == 0 && i < n; i++) {
		struct history_append_result one;
		struct pg_buf shard = PG_BUF_INIT, line = PG_BUF_INIT;

		if (skip_id && strcmp(p[i].r.record_id, skip_id) == 0) {
			unlink(p[i].path);
			continue;
		}
		memset(&one, 0, sizeof(one));
		history_record_shard(&p[i].r, &shard);
		history_record_write(&p[i].r, &line);
		rc = store_append_loop(s, &p[i].r, shard.ptr, &line, &one);
		if (rc == 0) {
			unlink(p[i].path);
			if (one.appended)
				res->delivered++;
			else
				res->already++;
		} else {
			res->left += n - i;
		}
		pg_buf_release(&shard);
		pg_buf_release(&line);
	}
	for (uint32_t i = 0; i < n; i++) {
		history_record_release(&p[i].r);
		free(p[i].path);
	}
	free(p);
	return rc;
}

/* Adds to *n the *.json files of dir. */
static void pending_count(const char *dir, uint32_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		*n += len > 5 && e->d_name[0] != '.' && strcmp(e->d_name + len - 5, ".json") == 0;
	}
	if (d)
		closedir(d);
}

/* Deliver the pending records of the folders given (dirs, n) through s. */
int store_pending_deliver_all(struct store *s, char **dirs, int n, const char *skip_id,
			      struct history_flush_result *res)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		struct history_flush_result got = {0};

		if (rc == 0)
			rc = pending_deliver(s, dirs[i], skip_id, &got);
		else /* the remote failed: count what stays */
			pending_count(dirs[i], &got.left);
		res->delivered += got.delivered;
		res->already += got.already;
		res->left += got.left;
		res->bad += got.bad;
	}
	return rc;
}

int history_flush(const struct history_store_opts *o, const char *dir,
		  struct history_flush_result *res)
{
	struct store s;
	char *dirs[3] = {NULL, NULL, NULL};
	int n = 0, rc;

	memset(res, 0, sizeof(*res));
	git_libgit2_init();
	store_isolate_config();
	if ((rc = store_open(&s, o)))
		goto out;
	if (dir)
		dirs[n++] = pg_xstrdup(dir);
	else
		n = store_pending_dirs(o, dirs, 0);
	rc = store_pending_deliver_all(&s, dirs, n, NULL, res);
	if (rc == 0 && s.fetch_cut)
		store_migrate(&s); /* as history_append: a branch too long to fetch */
	else if (rc == 0)
		store_auto_compact(&s);
out:
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
}
