/*
 * The layout: the branch and one ref per series. Appends write
 * <series>/<YYYY-MM>.jsonl on the branch. `history compact`
 * (history_compact(), compact.c) moves every month before the newest one (the
 * open month) to its series' ref, SERIES_REFS<branch>@/<series>, gzip'd
 * (<series>/<YYYY-MM>.jsonl.gz), and makes the branch one new root commit
 * holding the open month and an index (INDEX_NAME: the open month and each
 * series ref). A fresh fetch over http, which libgit2 1.5 cannot make
 * shallow or partial, then costs what the refs it asks for reach: the
 * branch's open month and the commits since the compaction for an append,
 * plus the series asked for for a read. The closed months are gzip'd
 * because git's pack-objects runs a delta search over every blob whose
 * stored delta it cannot reuse, and a month's last version is stored as a
 * delta of versions only the archived history holds: compressed, a series
 * costs the server almost nothing to send.
 *
 * Here the names and files of that layout: the series refs, the month
 * shards (gzip'd on a series ref), the open month and the index.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The name of series' ref (s->series<series>), or NULL when series cannot be
 * a ref's last component: such a folder's months stay on the branch. */
char *store_series_ref(const struct store *s, const char *series)
{
	char *ref = pg_xasprintf("%s%s", s->series, series);

	if (!*series || strchr(series, '/') || !git_reference_is_valid_name(ref)) {
		free(ref);
		return NULL;
	}
	return ref;
}

/*
 * The closed months on a series ref are gzip files (<YYYY-MM>.jsonl.gz).
 * git's pack-objects runs a delta search over every blob of every fetch
 * whose stored delta it cannot reuse, and a series' months, stored as deltas
 * of the versions the appends made, are such blobs: 11 MB of text for 2,000
 * records. Compressed they are a twentieth of that and not worth a delta,
 * so the server sends them nearly as stored. Written with no name and no
 * time, so the same text makes the same blob.
 */
#define GZ_MAX_BYTES (256u << 20) /* a month of one series, inflated */

int store_is_gz(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".gz") == 0;
}

int store_gz_deflate(const char *text, size_t len, struct pg_buf *out)
{
	if (pg_buf_add_gzip(out, text, len, 6))
		return pg_error_set(PG_EIO, "history: cannot compress a shard (zlib)");
	return 0;
}

/* The text of a gzip file, appended to out; name is for the message. */
static int gz_inflate(const char *gz, size_t len, const char *name, struct pg_buf *out)
{
	z_stream z;
	char chunk[65536];
	int zr = Z_OK;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return pg_error_set(PG_EIO, "history: %s: cannot inflate (zlib)", name);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)len;
	while (zr == Z_OK && out->len < GZ_MAX_BYTES) {
		z.next_out = (Bytef *)chunk;
		z.avail_out = sizeof(chunk);
		zr = inflate(&z, Z_NO_FLUSH);
		pg_buf_add(out, chunk, sizeof(chunk) - z.avail_out);
	}
	inflateEnd(&z);
	if (zr != Z_STREAM_END)
		return pg_error_set(PG_EDELIVERY, "history: %s: %s", name,
				    out->len >= GZ_MAX_BYTES ? "larger than a month's shard can be"
							     : "not a whole gzip file");
	return 0;
}

/* The text of blob (inflated when name ends in .gz), appended to out. */
int store_blob_text(const git_blob *blob, const char *name, struct pg_buf *out)
{
	const char *p = git_blob_rawcontent(blob);
	size_t n = (size_t)git_blob_rawsize(blob);

	if (store_is_gz(name))
		return gz_inflate(p, n, name, out);
	pg_buf_add(out, p, n);
	return 0;
}

/* The shard's bytes at the tip (empty when absent), into content. */
int store_read_shard(struct store *s, git_tree *base, const char *shard, struct pg_buf *content)
{
	git_tree_entry *entry = NULL;
	git_blob *blob = NULL;
	int rc;

	if (!base)
		return 0;
	rc = git_tree_entry_bypath(&entry, base, shard);
	if (rc == GIT_ENOTFOUND)
		return 0;
	if (rc < 0)
		return pg_error_set(PG_EDELIVERY, "%s: %s", shard, store_git_why());
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		rc = pg_error_set(PG_EDELIVERY, "%s on branch %s is not a file", shard, s->branch);
	else if (git_blob_lookup(&blob, s->repo, git_tree_entry_id(entry)) < 0)
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", shard, store_git_why());
	else
		rc = store_blob_text(blob, shard, content);
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return rc;
}

/* The open month the index at tip names, into open ("": no index, an
 * uncompacted branch whose months are all on it). */
void store_index_open(struct store *s, const git_oid *tip, char open[8])
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	struct pg_buf text = PG_BUF_INIT;
	const char *p;

	open[0] = 0;
	if (git_commit_lookup(&c, s->repo, tip) == 0 && git_commit_tree(&root, c) == 0 &&
	    store_read_shard(s, root, INDEX_NAME, &text) == 0 && text.len) {
		pg_buf_addc(&text, 0);
		if ((p = strstr(text.ptr, "\nopen ")) && strlen(p + 6) >= 7)
			snprintf(open, 8, "%.7s", p + 6);
	}
	pg_buf_release(&text);
	git_tree_free(root);
	git_commit_free(c);
}

/* A month file of a series: "<YYYY-MM>.jsonl", or ".jsonl.gz" on a series ref. */
int store_is_shard_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 6 && strcmp(name + n - 6, ".jsonl") == 0) ||
	       (n > 9 && strcmp(name + n - 9, ".jsonl.gz") == 0);
}

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* "YYYY-MM....jsonl": a month shard, the month in its first 7 bytes. */
int store_is_month_shard(const git_tree_entry *e)
{
	const char *n = git_tree_entry_name(e);
	size_t len = strlen(n);

	return git_tree_entry_type(e) == GIT_OBJECT_BLOB && len >= 13 &&
	       strcmp(n + len - 6, ".jsonl") == 0 && all_digits(n, 4) && n[4] == '-' &&
	       all_digits(n + 5, 2);
}

/* The newest month of root's shards into open ("" when it has none). */
int store_open_month(struct store *s, git_tree *root, char open[8])
{
	open[0] = 0;
	for (size_t i = 0; i < git_tree_entrycount(root); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			continue;
		if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0)
			return pg_error_set(PG_EDELIVERY, "%s: %s", git_tree_entry_name(e),
					    store_git_why());
		for (size_t k = 0; k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (store_is_month_shard(f) && strncmp(git_tree_entry_name(f), open, 7) > 0)
				snprintf(open, 8, "%.7s", git_tree_entry_name(f));
		}
		git_tree_free(dir);
	}
	return 0;
}
