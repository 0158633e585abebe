/*
 * Compaction and its races. history_compact() fetches the tip T, every
 * series ref and every record ref, folds the record refs' lines into T's
 * tree (fold_records; the refs an earlier compaction folded are removed
 * once the branch is C: unfold), builds each moved series' new commit on
 * its fetched ref (merging a month the ref has already by record id) and
 * the root commit C,
 * then pushes twice, each push behind a check that the server still
 * advertises T: first the series refs, fast-forward only, and T to an
 * archive branch (<branch>-archive/<day of T>-<12 hex>, never rewritten;
 * none when T is a root commit); then the branch from T to C, forced on a
 * connection whose advertisement said T, so T goes as the update's old
 * value and receive-pack compares it under the ref's lock (a lease); to a
 * local remote each is a compare-and-swap. A lost lease or a series ref that
 * moved means fetch and compact again, bounded like an append. No record is
 * lost: series refs only move forward and only gain records, and the branch
 * drops months only after their refs hold them and only from T. A reader
 * that sees C sees the series refs C was made with: upload-pack advertises
 * refs in name order, refs/heads/ before refs/profgate/, and a local read
 * reads the branch first (the record refs before it; a record ref is
 * removed only by the compaction after the one that folded it). An appender that
 * built on T is refused and pushes its record to its own ref; one
 * whose record's month is closed in the index (a pending record delivered
 * late) also fetches that series' ref and checks the id there
 * (closed_has), so a landed record moved by a compaction is not doubled.
 * An existing branch is read as it is (no series refs: every month on the
 * branch) and converted by its first compaction. Writers compact by
 * themselves once their record is delivered, when it is due
 * (store_auto_compact), and a writer that could not fetch the branch in its
 * budget converts it in a budget of its own (store_migrate).
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* refs/heads/<branch>-archive/<day of tip>-<12 hex of tip>: never rewritten. */
static char *archive_ref(struct store *s, const git_commit *tip)
{
	time_t t = (time_t)git_commit_time(tip);
	char hex[13], day[16];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	git_oid_tostr(hex, sizeof(hex), git_commit_id(tip));
	return pg_xasprintf("refs/heads/%s-archive/%s-%s", s->branch, day, hex);
}

/* The commits of tip's history (tip included). */
static uint32_t history_commits(struct store *s, const git_oid *tip)
{
	git_revwalk *walk = NULL;
	git_oid id;
	uint32_t n = 0;

	if (git_revwalk_new(&walk, s->repo) == 0 && git_revwalk_push(walk, tip) == 0)
		while (git_revwalk_next(&id, walk) == 0)
			n++;
	git_revwalk_free(walk);
	return n;
}

/* One series whose closed months a compaction moves to its ref. */
struct moved {
	char *name;	/* the series folder */
	char *ref;	/* its ref, s->series<name> */
	git_oid old;	/* the ref's fetched value; zero when it has none */
	git_oid commit; /* its new value: the old one's months and the closed ones */
};

/* What one compaction attempt makes, in the private repository. */
struct compaction {
	git_commit *tip;
	char open[8]; /* the open month: the newest "YYYY-MM" of the tip's shards */
	struct moved *m;
	uint32_t n, shards; /* series and month shards moved */
	git_oid commit;	    /* the new root commit (COMPACT_HEAD) */
	char *archive;	    /* where the tip's history goes; NULL when the tip is a root */
	uint32_t fresh;	    /* record refs folded into the new commit */
	char **folded;	    /* the record refs an earlier compaction folded: to remove */
	git_oid *folded_id; /* and their values, which their removal expects */
	uint32_t nfolded;
};

static void compaction_release(struct compaction *c)
{
	for (uint32_t i = 0; i < c->n; i++) {
		free(c->m[i].name);
		free(c->m[i].ref);
	}
	free(c->m);
	free(c->archive);
	for (uint32_t i = 0; i < c->nfolded; i++)
		free(c->folded[i]);
	free(c->folded);
	free(c->folded_id);
	git_commit_free(c->tip);
	memset(c, 0, sizeof(*c));
}

/* One shard a record ref holds: its path and the record ref's line(s). */
struct fold_shard {
	char *path; /* "<series>/<YYYY-MM>.jsonl" */
	git_oid blob;
};

static int cmp_fold_shard(const void *a, const void *b)
{
	const struct fold_shard *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/* The shards of the record commit id, added to *v (*n, *cap). */
static int fold_collect(struct store *s, const git_oid *id, struct fold_shard **v, size_t *n,
			size_t *cap)
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	int rc = 0;

	if (git_commit_lookup(&c, s->repo, id) < 0 || git_commit_tree(&root, c) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "a record ref: %s", store_git_why());
		goto out;
	}
	for (size_t i = 0; i < git_tree_entrycount(root) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			continue;
		if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0) {
			rc = pg_error_set(PG_EDELIVERY, "a record ref: %s", store_git_why());
			break;
		}
		for (size_t k = 0; k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (!store_is_month_shard(f))
				continue;
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 64;
				*v = pg_xrealloc(*v, *cap * sizeof(**v));
			}
			(*v)[*n].path =
			    pg_xasprintf("%s/%s", git_tree_entry_name(e), git_tree_entry_name(f));
			(*v)[(*n)++].blob = *git_tree_entry_id(f);
		}
		git_tree_free(dir);
	}
out:
	git_tree_free(root);
	git_commit_free(c);
	return rc;
}

/* The lines of the blobs v[0..n) (one shard's) that the shard at path in
 * root lacks, by record id, appended to it: the upsert into *u. */
static int fold_shard(struct store *s, git_tree *root, const struct fold_shard *v, size_t n,
		      git_tree_update *u)
{
	struct pg_buf text = PG_BUF_INIT;
	int rc;

	if ((rc = store_read_shard(s, root, v[0].path, &text)))
		goto out;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct history_list got = {0};
		git_blob *blob = NULL;

		if (git_blob_lookup(&blob, s->repo, &v[i].blob) < 0) {
			rc = pg_error_set(PG_EDELIVERY, "%s: %s", v[i].path, store_git_why());
			break;
		}
		rc = history_shard_parse(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					 v[i].path, &got, s->o->log, s->o->payload);
		for (uint32_t k = 0; rc == 0 && k < got.n; k++) {
			if (history_shard_has(text.ptr, text.len, got.r[k].record_id))
				continue;
			if (text.len && text.ptr[text.len - 1] != '\n')
				pg_buf_addc(&text, '\n');
			pg_buf_addf(&text, "%s\n", got.r[k].line);
		}
		history_list_release(&got);
		git_blob_free(blob);
	}
	*u = (git_tree_update){
	    GIT_TREE_UPDATE_UPSERT, {{0}}, GIT_FILEMODE_BLOB, pg_xstrdup(v[0].path)};
	if (rc == 0 && git_blob_create_from_buffer(&u->id, s->repo, text.ptr, text.len) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot write %s: %s", v[0].path, store_git_why());
out:
	pg_buf_release(&text);
	return rc;
}

/* 1 when id is in the shard at path of root, or in that month on its
 * series' ref (gzip'd: a closed month moved by a compaction). */
static int tip_has(struct store *s, git_tree *root, const char *path, const char *id)
{
	struct pg_buf text = PG_BUF_INIT;
	git_commit *c = NULL;
	git_tree *tree = NULL;
	const char *slash = strchr(path, '/');
	char *series = pg_xstrndup(path, slash ? (size_t)(slash - path) : 0);
	char *ref = store_series_ref(s, series), *gz = pg_xasprintf("%s.gz", path);
	git_oid at;
	int has = store_read_shard(s, root, path, &text) == 0 &&
		  history_shard_has(text.ptr, text.len, id);

	if (!has && ref && git_reference_name_to_id(&at, s->repo, ref) == 0 &&
	    git_commit_lookup(&c, s->repo, &at) == 0 && git_commit_tree(&tree, c) == 0) {
		text.len = 0;
		has = store_read_shard(s, tree, gz, &text) == 0 &&
		      history_shard_has(text.ptr, text.len, id);
	}
	git_tree_free(tree);
	git_commit_free(c);
	pg_buf_release(&text);
	free(series);
	free(ref);
	free(gz);
	return has;
}

/* 1 when root (or the series refs) holds every record of the record
 * commit's shards v (n): a compaction folded it already. */
static int folded_already(struct store *s, git_tree *root, const struct fold_shard *v, size_t n)
{
	int held = n > 0;

	for (size_t i = 0; i < n && held; i++) {
		struct history_list got = {0};
		git_blob *blob = NULL;

		held =
		    git_blob_lookup(&blob, s->repo, &v[i].blob) == 0 &&
		    history_shard_parse(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					v[i].path, &got, NULL, NULL) == 0;
		for (uint32_t k = 0; held && k < got.n; k++)
			held = tip_has(s, root, v[i].path, got.r[k].record_id);
		history_list_release(&got);
		git_blob_free(blob);
	}
	return held;
}

/*
 * Fold the fetched record refs into root: *out is root with each record's
 * line added to its shard, or NULL when there is none to fold. A record ref
 * whose records root holds already (folded by an earlier compaction) is not
 * folded again but goes to c->folded, to be removed: removing a ref only
 * once a compaction that came before made the branch hold its records
 * means a reader, whose ref advertisement lists the branch before the
 * record refs, never sees a record in neither place.
 */
static int fold_records(struct store *s, struct compaction *c, git_tree *root, git_tree **out)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	struct fold_shard *v = NULL;
	git_tree_update *upd = NULL;
	char *glob = pg_xasprintf("%s*", s->records);
	size_t n = 0, cap = 0, nu = 0;
	git_oid tree_id;
	int rc = 0;

	*out = NULL;
	if (git_reference_iterator_glob_new(&it, s->repo, glob) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "the record refs: %s", store_git_why());
		goto out;
	}
	while (rc == 0 && git_reference_next(&ref, it) == 0) {
		size_t n0 = n;

		if (git_reference_target(ref) &&
		    (rc = fold_collect(s, git_reference_target(ref), &v, &n, &cap)) == 0) {
			if (folded_already(s, root, v + n0, n - n0)) {
				c->folded =
				    pg_xrealloc(c->folded, (c->nfolded + 1) * sizeof(*c->folded));
				c->folded_id = pg_xrealloc(c->folded_id, (c->nfolded + 1) *
									     sizeof(*c->folded_id));
				c->folded[c->nfolded] = pg_xstrdup(git_reference_name(ref));
				c->folded_id[c->nfolded++] = *git_reference_target(ref);
				while (n > n0)
					free(v[--n].path);
			} else {
				c->fresh++;
			}
		}
		git_reference_free(ref);
	}
	if (rc || !n)
		goto out;
	qsort(v, n, sizeof(*v), cmp_fold_shard);
	upd = pg_xcalloc(n, sizeof(*upd));
	for (size_t i = 0, j; i < n && rc == 0; i = j) {
		for (j = i + 1; j < n && strcmp(v[j].path, v[i].path) == 0; j++)
			;
		rc = fold_shard(s, root, v + i, j - i, &upd[nu++]);
	}
	if (rc == 0 && (git_tree_create_updated(&tree_id, s->repo, root, nu, upd) < 0 ||
			git_tree_lookup(out, s->repo, &tree_id) < 0))
		rc = pg_error_set(PG_EDELIVERY, "cannot fold the record refs: %s", store_git_why());
out:
	for (size_t i = 0; i < nu; i++)
		free((char *)upd[i].path);
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(upd);
	free(v);
	free(glob);
	git_reference_iterator_free(it);
	return rc;
}

/*
 * The blob for path (<series>/<YYYY-MM>.jsonl.gz) on the series ref: the
 * branch's shard (blob id), gzip'd, with the lines of the ref's shard at
 * path (in base) before it when there is one: a record appended to a closed
 * month after its month was moved, or moved twice by a compaction that lost
 * its lease, is kept once, by record id.
 */
static int merge_shard(struct store *s, git_tree *base, const char *path, const git_oid *id,
		       git_oid *out)
{
	struct pg_buf text = PG_BUF_INIT, gz = PG_BUF_INIT;
	struct history_list got = {0};
	git_blob *blob = NULL;
	size_t old;
	int rc;

	if ((rc = store_read_shard(s, base, path, &text)))
		goto out;
	if (git_blob_lookup(&blob, s->repo, id) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", path, store_git_why());
		goto out;
	}
	if (text.len && text.ptr[text.len - 1] != '\n')
		pg_buf_addc(&text, '\n');
	old = text.len;
	if (!old) {
		pg_buf_add(&text, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	} else {
		rc = history_shard_parse(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					 path, &got, s->o->log, s->o->payload);
		for (uint32_t k = 0; rc == 0 && k < got.n; k++)
			if (!history_shard_has(text.ptr, old, got.r[k].record_id))
				pg_buf_addf(&text, "%s\n", got.r[k].line);
	}
	if (rc == 0 && (rc = store_gz_deflate(text.ptr, text.len, &gz)) == 0 &&
	    git_blob_create_from_buffer(out, s->repo, gz.ptr, gz.len) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot write %s: %s", path, store_git_why());
out:
	history_list_release(&got);
	git_blob_free(blob);
	pg_buf_release(&text);
	pg_buf_release(&gz);
	return rc;
}

/*
 * The commit of series m->name's ref holding its old months and the closed
 * month shards of dir (the series' folder at the tip), on the fetched ref
 * as parent, as COMPACT_SERIES<name>. *shards: how many moved (none: no
 * commit).
 */
static int move_series(struct store *s, struct compaction *c, git_tree *dir, struct moved *m,
		       uint32_t *shards)
{
	git_commit *parent = NULL;
	git_tree *base = NULL, *tree = NULL;
	git_tree_update *upd = pg_xcalloc(git_tree_entrycount(dir) + 1, sizeof(*upd));
	git_signature *sig = NULL;
	git_reference *ref = NULL;
	struct pg_buf msg = PG_BUF_INIT;
	char *local = pg_xasprintf(COMPACT_SERIES "%s", m->name), hex[13];
	git_oid tree_id;
	int rc = 0;

	*shards = 0;
	memset(&m->old, 0, sizeof(m->old));
	if (git_reference_name_to_id(&m->old, s->repo, m->ref) == 0 &&
	    (git_commit_lookup(&parent, s->repo, &m->old) < 0 ||
	     git_commit_tree(&base, parent) < 0)) {
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", m->ref, store_git_why());
		goto out;
	}
	for (size_t i = 0; i < git_tree_entrycount(dir) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(dir, i);
		git_tree_update *u = &upd[*shards];

		if (!store_is_month_shard(e) || strncmp(git_tree_entry_name(e), c->open, 7) >= 0)
			continue;
		u->action = GIT_TREE_UPDATE_UPSERT;
		u->filemode = GIT_FILEMODE_BLOB;
		u->path = pg_xasprintf("%s/%s.gz", m->name, git_tree_entry_name(e));
		(*shards)++;
		rc = merge_shard(s, base, u->path, git_tree_entry_id(e), &u->id);
	}
	if (rc || !*shards)
		goto out;
	git_oid_tostr(hex, sizeof(hex), git_commit_id(c->tip));
	pg_buf_addf(&msg,
		    "history: %s: months before %s\n\nThe month shards of %s before %s, moved "
		    "from %s at %s.\n",
		    m->name, c->open, m->name, c->open, s->branch, hex);
	if (git_tree_create_updated(&tree_id, s->repo, base, *shards, upd) < 0 ||
	    git_tree_lookup(&tree, s->repo, &tree_id) < 0 ||
	    git_signature_now(&sig, BOT_NAME, BOT_EMAIL) < 0 ||
	    git_commit_create(&m->commit, s->repo, NULL, sig, sig, NULL, msg.ptr, tree,
			      parent ? 1 : 0, (const git_commit **)&parent) < 0 ||
	    git_reference_create(&ref, s->repo, local, &m->commit, 1, NULL) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir,
				  store_git_why());
out:
	for (size_t i = 0; i < git_tree_entrycount(dir) + 1; i++)
		free((char *)upd[i].path);
	free(upd);
	free(local);
	pg_buf_release(&msg);
	git_reference_free(ref);
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(base);
	git_commit_free(parent);
	return rc;
}

/* The index blob: the open month and every series ref the new tip is made
 * with (the fetched ones, the moved ones at their new value), by name. */
static int compact_index(struct store *s, const struct compaction *c, git_oid *out)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	struct pg_buf text = PG_BUF_INIT;
	char *glob = pg_xasprintf("%s*", s->series);
	size_t pre = strlen(s->series);
	uint32_t k = 0;
	char hex[GIT_OID_HEXSZ + 1];
	int rc = 0;

	pg_buf_addf(&text,
		    "profgate history index 1\n# %s holds the month %s; the months before it "
		    "are on the refs %s<series>\nopen %s\n",
		    s->branch, c->open, s->series, c->open);
	/* the fetched refs come sorted by name, and so do the moved ones (the
	 * tip's folders): merged, each once, at its newest value */
	if (git_reference_iterator_glob_new(&it, s->repo, glob) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "the series refs: %s", store_git_why());
		goto out;
	}
	for (;;) {
		int more = git_reference_next(&ref, it) == 0;
		const char *name = more ? git_reference_name(ref) + pre : NULL;

		while (k < c->n && (!name || strcmp(c->m[k].name, name) <= 0)) {
			git_oid_tostr(hex, sizeof(hex), &c->m[k].commit);
			pg_buf_addf(&text, "series %s %s\n", c->m[k].name, hex);
			if (name && strcmp(c->m[k].name, name) == 0)
				name = NULL; /* moved: its new value written */
			k++;
		}
		if (name && git_reference_target(ref)) {
			git_oid_tostr(hex, sizeof(hex), git_reference_target(ref));
			pg_buf_addf(&text, "series %s %s\n", name, hex);
		}
		git_reference_free(ref);
		ref = NULL;
		if (!more)
			break;
	}
	if (git_blob_create_from_buffer(out, s->repo, text.ptr, text.len) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot write the index: %s", store_git_why());
out:
	git_reference_iterator_free(it);
	pg_buf_release(&text);
	free(glob);
	return rc;
}

/* Each series folder of root whose closed months move: its ref's new commit
 * (c->m, by name) and, into upd (*n), the removal of those shards. */
static int compact_series(struct store *s, struct compaction *c, git_tree *root,
			  git_tree_update **upd, size_t *n)
{
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; i < git_tree_entrycount(root) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		const char *name = git_tree_entry_name(e);
		struct moved m;

		if (c->n && s->move_until && store_now_s() > s->move_until)
			break; /* the rest keep their months until the next compaction */
		m = (struct moved){pg_xstrdup(name), NULL, {{0}}, {{0}}};
		git_tree *dir = NULL;
		uint32_t shards = 0;

		if (git_tree_entry_type(e) == GIT_OBJECT_TREE &&
		    (m.ref = store_series_ref(s, name))) {
			if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0)
				rc = pg_error_set(PG_EDELIVERY, "%s: %s", name, store_git_why());
			else
				rc = move_series(s, c, dir, &m, &shards);
		}
		for (size_t k = 0; rc == 0 && shards && k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (!store_is_month_shard(f) ||
			    strncmp(git_tree_entry_name(f), c->open, 7) >= 0)
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				*upd = pg_xrealloc(*upd, cap * sizeof(**upd));
			}
			(*upd)[(*n)++] =
			    (git_tree_update){GIT_TREE_UPDATE_REMOVE,
					      {{0}},
					      GIT_FILEMODE_BLOB,
					      pg_xasprintf("%s/%s", name, git_tree_entry_name(f))};
		}
		git_tree_free(dir);
		if (rc == 0 && shards) {
			c->m = pg_xrealloc(c->m, (c->n + 1) * sizeof(*c->m));
			c->m[c->n++] = m;
			c->shards += shards;
		} else {
			free(m.name);
			free(m.ref);
		}
	}
	return rc;
}

/*
 * What the compaction of c->tip pushes, as refs of the private repository:
 * each moved series' new commit (COMPACT_SERIES<name>), the root commit
 * holding the tip's tree without the moved shards and with the index
 * (COMPACT_HEAD), and the tip (COMPACT_ARCHIVE) when it has a history to
 * keep. *nothing when the tip is a root commit with no month to move.
 */
static int compact_build(struct store *s, struct compaction *c, int *nothing)
{
	git_tree *root = NULL, *tree = NULL;
	git_tree_update *upd = NULL;
	git_signature *sig = NULL;
	git_reference *a = NULL, *h = NULL;
	struct pg_buf msg = PG_BUF_INIT;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid tree_id;
	size_t n = 0;
	int rc;

	*nothing = 0;
	if (git_commit_tree(&tree, c->tip) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, store_git_why());
		goto out;
	}
	if ((rc = fold_records(s, c, tree, &root)))
		goto out;
	if (!root) {
		root = tree;
		tree = NULL;
	}
	git_tree_free(tree);
	tree = NULL;
	if ((rc = store_open_month(s, root, c->open)) ||
	    (rc = compact_series(s, c, root, &upd, &n)))
		goto out;
	if (!c->n && !c->fresh && git_commit_parentcount(c->tip) == 0) {
		*nothing = 1;
		goto out;
	}
	upd = pg_xrealloc(upd, (n + 1) * sizeof(*upd));
	upd[n] = (git_tree_update){
	    GIT_TREE_UPDATE_UPSERT, {{0}}, GIT_FILEMODE_BLOB, pg_xstrdup(INDEX_NAME)};
	if ((rc = compact_index(s, c, &upd[n++].id)))
		goto out;
	if (git_commit_parentcount(c->tip))
		c->archive = archive_ref(s, c->tip);
	git_oid_tostr(hex, sizeof(hex), git_commit_id(c->tip));
	pg_buf_addf(&msg,
		    "history: compaction of %s\n\nThe records of %s at %s: the month %s here, "
		    "the months before it on the refs %s<series>.%s%s%s\n",
		    s->branch, s->branch, hex, c->open, s->series,
		    c->archive ? " The commits before it are kept as " : "",
		    c->archive ? c->archive : "", c->archive ? "." : "");
	if (git_tree_create_updated(&tree_id, s->repo, root, n, upd) < 0 ||
	    git_tree_lookup(&tree, s->repo, &tree_id) < 0 ||
	    git_signature_now(&sig, BOT_NAME, BOT_EMAIL) < 0 ||
	    git_commit_create(&c->commit, s->repo, NULL, sig, sig, NULL, msg.ptr, tree, 0, NULL) <
		0 ||
	    git_reference_create(&h, s->repo, COMPACT_HEAD, &c->commit, 1, NULL) < 0 ||
	    (c->archive && git_reference_create(&a, s->repo, COMPACT_ARCHIVE, git_commit_id(c->tip),
						1, NULL) < 0))
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir,
				  store_git_why());
out:
	for (size_t i = 0; i < n; i++)
		free((char *)upd[i].path);
	free(upd);
	git_reference_free(a);
	git_reference_free(h);
	git_signature_free(sig);
	git_tree_free(tree);
	git_tree_free(root);
	pg_buf_release(&msg);
	return rc;
}

/* A compare-and-swap of name in the local remote rr from old (zero: absent)
 * to id; RETRY when it moved. */
static enum attempt cas_local(struct store *s, git_repository *rr, const char *name,
			      const git_oid *id, const git_oid *old, const char *why)
{
	int rc = store_remote_ref_update(s, rr, name, id, old, why);

	if (rc == GIT_ELOCKED)
		return ATTEMPT_RETRY;
	if (rc == GIT_EMODIFIED || rc == GIT_ENOTFOUND || rc == GIT_EEXISTS) {
		pg_error_set(PG_EDELIVERY, "a record landed during the compaction (%s)",
			     store_git_why());
		return ATTEMPT_RETRY;
	}
	if (rc < 0) {
		pg_error_set(PG_EDELIVERY, "cannot update %s in '%s': %s", name, s->local,
			     store_git_why());
		return ATTEMPT_FAIL;
	}
	return ATTEMPT_DONE;
}

/* A local remote: the new objects, each series ref moved from its fetched
 * value, the archive ref (absent, or already the tip), then the branch moved
 * from the tip to the new commit: each a compare-and-swap. */
static enum attempt compact_local(struct store *s, const struct compaction *c)
{
	git_repository *rr = NULL;
	git_reference *ref = NULL;
	git_oid zero, have, *commits = pg_xcalloc(c->n + 1, sizeof(git_oid)),
			    *hide = pg_xcalloc(c->n + 1, sizeof(git_oid));
	const git_oid *tip = git_commit_id(c->tip);
	enum attempt a = ATTEMPT_DONE;
	size_t m = 0;
	int rc;

	memset(&zero, 0, sizeof(zero));
	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, store_git_why());
		a = ATTEMPT_FAIL;
		goto out;
	}
	commits[0] = c->commit;
	hide[m++] = *tip;
	for (uint32_t i = 0; i < c->n; i++) {
		commits[i + 1] = c->m[i].commit;
		if (!git_oid_is_zero(&c->m[i].old))
			hide[m++] = c->m[i].old;
	}
	if (store_pack_commits(s, rr, commits, c->n + 1, hide, m)) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	for (uint32_t i = 0; i < c->n && a == ATTEMPT_DONE; i++)
		a = cas_local(s, rr, c->m[i].ref, &c->m[i].commit, &c->m[i].old,
			      "profgate: history compact (closed months)");
	if (a != ATTEMPT_DONE)
		goto out;
	if (c->archive) {
		rc = store_remote_ref_update(s, rr, c->archive, tip, &zero,
					     "profgate: history compact (archive)");
		if (rc == GIT_ELOCKED) {
			a = ATTEMPT_RETRY;
			goto out;
		}
		if (rc < 0 && !(git_reference_name_to_id(&have, rr, c->archive) == 0 &&
				git_oid_equal(&have, tip))) {
			pg_error_set(PG_EDELIVERY, "cannot create %s in '%s': %s", c->archive,
				     s->local, store_git_why());
			a = ATTEMPT_FAIL;
			goto out;
		}
	}
	a = cas_local(s, rr, s->head, &c->commit, tip, "profgate: history compact");
out:
	free(commits);
	free(hide);
	git_reference_free(ref);
	git_repository_free(rr);
	return a;
}

/* Over http(s): connect for the push, check that the server still
 * advertises tip, then push specs (n) on that connection. libgit2 sends the
 * advertised values as the updates' old values and receive-pack compares
 * them under each ref's lock: a lease, so a record that lands after the
 * check makes a forced update of the branch fail rather than vanish. */
static enum attempt compact_smart(struct store *s, const git_oid *tip, char **specs, size_t n)
{
	git_remote_callbacks cb;
	git_proxy_options px;
	git_push_options po;
	const git_remote_head **heads;
	size_t nh;
	git_strarray arr = {specs, n};
	enum attempt a = ATTEMPT_DONE;
	int rc, same = 0;

	if (store_remote(s)) /* on a new connection, as an append's push */
		return ATTEMPT_FAIL;
	git_remote_init_callbacks(&cb, GIT_REMOTE_CALLBACKS_VERSION);
	store_callbacks(s, &cb);
	git_proxy_options_init(&px, GIT_PROXY_OPTIONS_VERSION);
	px.type = GIT_PROXY_AUTO;
	git_error_clear();
	rc = git_remote_connect(s->remote, GIT_DIRECTION_PUSH, &cb, &px, NULL);
	if (rc < 0) {
		a = store_classify(s, rc);
		pg_error_set(PG_EDELIVERY, "cannot connect to '%s': %s", s->url, store_git_why());
		goto out;
	}
	if (git_remote_ls(&heads, &nh, s->remote) == 0)
		for (size_t i = 0; i < nh; i++)
			if (strcmp(heads[i]->name, s->head) == 0)
				same = git_oid_equal(&heads[i]->oid, tip);
	if (!same) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "a record landed during the compaction (the tip moved)");
		goto out;
	}
	store_push_options(s, &po);
	rc = git_remote_upload(s->remote, &arr, &po);
	a = store_push_outcome(s, rc, "a record landed during the compaction", "compaction");
out:
	git_remote_disconnect(s->remote);
	return a;
}

/* Over http(s), in two pushes, each behind the lease's check: first the
 * series refs (fast-forward only: never forced) and the archive, then the
 * branch. The branch drops the moved months only once their refs hold them:
 * a compaction stopped between the two leaves those records in both places,
 * which readers take once and the next compaction merges. */
static enum attempt compact_push(struct store *s, const struct compaction *c)
{
	char **specs = pg_xcalloc(c->n + 1, sizeof(char *)), *head;
	size_t n = 0;
	enum attempt a = ATTEMPT_DONE;

	for (uint32_t i = 0; i < c->n; i++)
		specs[n++] = pg_xasprintf(COMPACT_SERIES "%s:%s", c->m[i].name, c->m[i].ref);
	if (c->archive)
		specs[n++] = pg_xasprintf("%s:%s", COMPACT_ARCHIVE, c->archive);
	if (n)
		a = compact_smart(s, git_commit_id(c->tip), specs, n);
	if (a == ATTEMPT_DONE) {
		head = pg_xasprintf("+%s:%s", COMPACT_HEAD, s->head);
		a = compact_smart(s, git_commit_id(c->tip), &head, 1);
		free(head);
	}
	for (size_t i = 0; i < n; i++)
		free(specs[i]);
	free(specs);
	return a;
}

/* The record refs an earlier compaction folded removed (the fetched tip
 * holds their records: fold_records), each only while it still has that
 * value (over http, the value the server advertised: a record ref is only
 * ever created with its record's one commit). A record ref left behind
 * costs nothing but a read: readers take each record once, and the next
 * compaction tries again. */
static void unfold(struct store *s, const struct compaction *c)
{
	git_repository *rr = NULL;
	char **specs;
	uint32_t gone = 0;

	if (!c->nfolded)
		return;
	if (s->local) {
		if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
			return;
		for (uint32_t i = 0; i < c->nfolded; i++) {
			git_reference *ref = NULL;

			if (git_reference_lookup(&ref, rr, c->folded[i]) == 0 &&
			    git_reference_target(ref) &&
			    git_oid_equal(git_reference_target(ref), &c->folded_id[i]))
				gone += git_reference_delete(ref) == 0;
			git_reference_free(ref);
		}
		git_repository_free(rr);
	} else if (store_remote(s) == 0) {
		git_push_options po;
		git_strarray arr;

		specs = pg_xcalloc(c->nfolded, sizeof(*specs));
		for (uint32_t i = 0; i < c->nfolded; i++)
			specs[i] = pg_xasprintf(":%s", c->folded[i]);
		arr = (git_strarray){specs, c->nfolded};
		store_push_options(s, &po);
		if (git_remote_push(s->remote, &arr, &po) == 0 && !s->status)
			gone = c->nfolded;
		for (uint32_t i = 0; i < c->nfolded; i++)
			free(specs[i]);
		free(specs);
	}
	if (gone < c->nfolded)
		store_logf(s, "history: %u of %u folded record refs stay until the next compaction",
			   c->nfolded - gone, c->nfolded);
}

static enum attempt compact_once(struct store *s, struct history_compact_result *res)
{
	struct compaction c;
	git_oid tip;
	enum attempt a = ATTEMPT_DONE;
	char *all = pg_xasprintf("%s*", s->series), *records = pg_xasprintf("%s*", s->records);
	int nothing;

	memset(&c, 0, sizeof(c));
	if (store_repo(s) || (s->connected && store_remote(s))) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	s->connected = 1; /* every later attempt on a new connection, as an append's */
	if ((a = store_fetch(s, all, records)) != ATTEMPT_DONE ||
	    git_reference_name_to_id(&tip, s->repo, s->tracking) != 0)
		goto out; /* no branch: nothing to compact */
	git_error_clear();
	if (git_commit_lookup(&c.tip, s->repo, &tip) < 0) {
		pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, store_git_why());
		a = store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
		goto out;
	}
	res->exists = 1;
	res->commits = history_commits(s, &tip);
	if (compact_build(s, &c, &nothing)) {
		a = store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
		goto out;
	}
	if (nothing) {
		unfold(s, &c); /* one commit, its closed months moved already */
		goto out;
	}
	store_push_delay();
	a = s->local ? compact_local(s, &c) : compact_push(s, &c);
	if (a == ATTEMPT_DONE) {
		res->compacted = 1;
		res->series = c.n;
		res->shards = c.shards;
		git_oid_tostr(res->commit, sizeof(res->commit), &c.commit);
		snprintf(res->open, sizeof(res->open), "%s", c.open);
		free(res->archive);
		res->archive = c.archive ? pg_xstrdup(c.archive + strlen("refs/heads/")) : NULL;
		res->folded = c.fresh;
		unfold(s, &c);
	}
out:
	compaction_release(&c);
	free(all);
	free(records);
	return a;
}

static enum attempt compact_attempt(struct store *s, void *ctx)
{
	return compact_once(s, ctx);
}

/* The distinct closed months (before the open one) of the fetched tip's
 * series folders. */
static uint32_t closed_months(struct store *s, const git_oid *tip)
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	char open[8], (*seen)[8] = NULL;
	uint32_t n = 0, cap = 0;

	if (git_commit_lookup(&c, s->repo, tip) < 0 || git_commit_tree(&root, c) < 0 ||
	    store_open_month(s, root, open))
		goto out;
	for (size_t i = 0; i < git_tree_entrycount(root); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		    git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0)
			continue;
		for (size_t k = 0; k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);
			const char *name = git_tree_entry_name(f);
			uint32_t j = 0;

			if (!store_is_month_shard(f) || strncmp(name, open, 7) >= 0)
				continue;
			while (j < n && strncmp(seen[j], name, 7) != 0)
				j++;
			if (j < n)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				seen = pg_xrealloc(seen, cap * sizeof(*seen));
			}
			snprintf(seen[n++], 8, "%.7s", name);
		}
		git_tree_free(dir);
	}
out:
	free(seen);
	git_tree_free(root);
	git_commit_free(c);
	return n;
}

/* Why a writer should compact now, into why (0: it should not): its fetch
 * found FOLD_AT_RECORDS record refs or COMPACT_AT_MONTHS closed months. */
static int compact_due(struct store *s, char *why, size_t len)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char *glob = pg_xasprintf("%s*", s->records);
	uint32_t records = 0, months = 0;
	git_oid tip;

	if (s->repo && git_reference_iterator_glob_new(&it, s->repo, glob) == 0) {
		while (git_reference_next(&ref, it) == 0) {
			records++;
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
	}
	free(glob);
	if (s->repo && git_reference_name_to_id(&tip, s->repo, s->tracking) == 0)
		months = closed_months(s, &tip);
	if (records < FOLD_AT_RECORDS && months < COMPACT_AT_MONTHS)
		return 0;
	if (records >= FOLD_AT_RECORDS)
		snprintf(why, len, "%u records on their own refs", records);
	else
		snprintf(why, len, "%u closed months on the branch", months);
	return 1;
}

/*
 * One compaction attempt by a writer whose record is delivered, in a budget
 * of its own (the record is safe already, so a compaction that runs out of
 * time or loses its lease to another writer loses nothing: the next writer
 * tries again). Series stop moving at half the budget, so a first migration
 * of a long branch moves what fits and leaves the rest on the branch for the
 * next run. why says what started it; the outcome is a note on the log.
 */
static void compact_in_budget(struct store *s, const char *why, uint32_t budget_s)
{
	struct history_compact_result res;
	char err[1024];
	enum attempt a;

	memset(&res, 0, sizeof(res));
	if (store_set_deadline(s, store_now_s() + budget_s) || store_lock(s)) {
		store_logf(s, "history: compaction (%s) left for the next run: %s", why,
			   pg_error_last());
		return;
	}
	s->move_until = store_now_s() + budget_s / 2.0;
	a = compact_once(s, &res);
	snprintf(err, sizeof(err), "%s", pg_error_last());
	store_unlock(s);
	if (a == ATTEMPT_DONE && res.compacted)
		store_logf(
		    s,
		    "history: compacted %s (%s): %u month shard%s of %u series moved to their "
		    "refs, %u record%s folded in",
		    s->branch, why, res.shards, res.shards == 1 ? "" : "s", res.series, res.folded,
		    res.folded == 1 ? "" : "s");
	else if (a != ATTEMPT_DONE)
		store_logf(s, "history: compaction (%s) left for the next run: %s", why, err);
	free(res.archive);
}

/* After a writer's record is delivered to the branch (not to its own ref:
 * a writer that lost a race leaves the compaction to the one that won):
 * compact when it is due (compact_due), in the writer's budget. */
void store_auto_compact(struct store *s)
{
	char why[128];

	if (compact_due(s, why, sizeof(why)))
		compact_in_budget(s, why, s->budget_s);
}

/*
 * After a writer's record went to its own ref because its fetch of the
 * branch ran out of its share of the budget (a long branch of the old
 * layout, one commit per record, over http): convert the branch in a budget
 * of its own (PROFGATE_HISTORY_MIGRATE_S), since no writer could ever fetch
 * it in the usual one and so none would compact it. The conversion makes
 * the branch one small root commit (its history on the archive branch), so
 * the next writers fetch it in their budget and move what this one left.
 */
void store_migrate(struct store *s)
{
	store_logf(s,
		   "history: %s did not fetch in %.0f s (the record is on its own ref); "
		   "converting it in up to %u s (PROFGATE_HISTORY_MIGRATE_S)",
		   s->branch, (1 - OWN_REF_RESERVE_SHARE) * s->budget_s, s->migrate_s);
	compact_in_budget(s, "a first conversion", s->migrate_s);
}

int history_compact(const struct history_store_opts *o, struct history_compact_result *res)
{
	struct store s;
	int rc;

	memset(res, 0, sizeof(*res));
	git_libgit2_init();
	store_isolate_config();
	if ((rc = store_open(&s, o)) == 0)
		rc = store_retry_loop(&s, compact_attempt, res, "compaction ", &res->attempts);
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
}
