/*
 * How a read works. A read costs the series asked for, not the history
 * written: the records of the branch's tip, of the series refs and of the
 * record refs (records whose push lost a race, append.c), each record once
 * (by id: a compaction stopped between its two pushes leaves what it moved
 * in both places until the next one, and a folded record ref stays until
 * the compaction after). A local remote (a path
 * or file://) is read where it is: its refs and the trees and shards they
 * name, straight from the remote's object store; objects never change once
 * written and a ref moves only after the objects it names are in place, so a
 * concurrent append cannot be seen half-done, and nothing is copied. Over
 * http(s) one fetch takes the branch and the series refs the filter can
 * match (--series: its ref alone) into the private repository, pruning
 * series refs the remote no longer has; the branch's tip is kept as
 * refs/profgate/seen/<branch>, which the next fetch offers as a commit it
 * has with the series refs (libgit2 negotiates with every ref), so after the
 * first read a cache that only reads fetches only what is new since. Only
 * the series folders and refs the filter can match are opened: --series
 * names one, --label skips those of profgate's "<slug>-<8 hex>" form whose
 * slug is another label's (hand-named folders are still read), and --since
 * skips the month files before it. A baseline (history_filter.newest) reads
 * its series' months newest first, branch and ref together, until they hold
 * enough records (read_newest).
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>

/* The records of one shard that pass f, into list. */
static int read_shard_records(struct store *s, git_repository *repo, const git_oid *id,
			      const char *name, const char *series, const struct history_filter *f,
			      struct history_list *list)
{
	struct history_list all = {0};
	struct pg_buf text = PG_BUF_INIT;
	git_blob *blob = NULL;
	char *path = pg_xasprintf("%s/%s", series, name);
	int rc;

	if (git_blob_lookup(&blob, repo, id) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: %s: %s", path, store_git_why());
		goto out;
	}
	if (!store_is_gz(path))
		rc = history_shard_parse(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					 path, &all, s->o->log, s->o->payload);
	else if ((rc = store_blob_text(blob, path, &text)) == 0)
		rc = history_shard_parse(text.ptr, text.len, path, &all, s->o->log, s->o->payload);
	for (uint32_t k = 0; rc == 0 && k < all.n; k++)
		if (history_filter_match(f, &all.r[k]))
			history_list_move(list, &all.r[k]);
out:
	history_list_release(&all);
	pg_buf_release(&text);
	git_blob_free(blob);
	free(path);
	return rc;
}

/* The month files of one series folder, skipping months before --since. */
static int read_series(struct store *s, git_repository *repo, const git_tree *dir,
		       const char *series, const struct history_filter *f,
		       struct history_list *list)
{
	int rc = 0;

	for (size_t i = 0; i < git_tree_entrycount(dir) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(dir, i);
		const char *name = git_tree_entry_name(e);

		if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || !store_is_shard_name(name))
			continue;
		if (f->since && strncmp(name, f->since, 7) < 0)
			continue; /* "YYYY-MM" before the month of --since */
		rc = read_shard_records(s, repo, git_tree_entry_id(e), name, series, f, list);
	}
	return rc;
}

/* The records at tip (a commit of repo) that pass f, into list. */
static int read_tree(struct store *s, git_repository *repo, const git_oid *tip,
		     const struct history_filter *f, struct history_list *list)
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	int rc = 0;

	if (git_commit_lookup(&c, repo, tip) < 0 || git_commit_tree(&root, c) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: the tip of %s: %s", s->branch,
				  store_git_why());
		goto out;
	}
	for (size_t i = 0; i < git_tree_entrycount(root) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		    (f->series && strcmp(f->series, git_tree_entry_name(e)) != 0) ||
		    (f->label && !history_series_may_hold(git_tree_entry_name(e), f->label)))
			continue; /* decided by the folder's name: its shards are not read */
		if (git_tree_lookup(&dir, repo, git_tree_entry_id(e)) < 0) {
			rc = pg_error_set(PG_EDELIVERY, "history: %s: %s", git_tree_entry_name(e),
					  store_git_why());
			break;
		}
		rc = read_series(s, repo, dir, git_tree_entry_name(e), f, list);
		git_tree_free(dir);
	}
out:
	git_tree_free(root);
	git_commit_free(c);
	return rc;
}

/* The series refs f may read: its one series' ref, or all of them (the
 * prefix and '*'). NULL when none can hold its records (a --series that
 * cannot be a ref's name stays on the branch). */
static char *series_spec(const struct store *s, const struct history_filter *f)
{
	return f->series ? store_series_ref(s, f->series) : pg_xasprintf("%s*", s->series);
}

/* The records of repo's series refs (series_spec) that pass f, into list;
 * *found is set when one exists. --label skips a ref by its series' name, as
 * read_tree skips a folder. */
static int read_series_refs(struct store *s, git_repository *repo, const struct history_filter *f,
			    struct history_list *list, int *found)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char *spec = series_spec(s, f);
	size_t pre = strlen(s->series);
	int rc = 0;

	if (!spec)
		return 0;
	if (git_reference_iterator_glob_new(&it, repo, spec) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: the series refs of %s: %s", s->branch,
				  store_git_why());
		goto out;
	}
	while (rc == 0 && git_reference_next(&ref, it) == 0) {
		const char *name = git_reference_name(ref) + pre;

		if (git_reference_target(ref) &&
		    (!f->label || history_series_may_hold(name, f->label))) {
			*found = 1;
			rc = read_tree(s, repo, git_reference_target(ref), f, list);
		}
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	free(spec);
	return rc;
}

/* The record refs f may read, as a glob: its one series' records, or all
 * of them. NULL when none can hold its records. */
static char *records_spec(const struct store *s, const struct history_filter *f)
{
	char *spec, *ref;

	if (!f->series)
		return pg_xasprintf("%s*", s->records);
	spec = pg_xasprintf("%s%s/*", s->records, f->series);
	ref = pg_xasprintf("%s%s/x", s->records, f->series);
	if (strchr(f->series, '/') || !git_reference_is_valid_name(ref)) {
		free(spec);
		spec = NULL;
	}
	free(ref);
	return spec;
}

/* The records of repo's record refs (records_spec) that pass f, into list;
 * *found is set when one exists. Each is a root commit holding one shard
 * with one line, so read_tree's filters apply as to the branch. */
static int read_record_refs(struct store *s, git_repository *repo, const struct history_filter *f,
			    struct history_list *list, int *found)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	char *spec = records_spec(s, f);
	int rc = 0;

	if (!spec)
		return 0;
	if (git_reference_iterator_glob_new(&it, repo, spec) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: the record refs of %s: %s", s->branch,
				  store_git_why());
		goto out;
	}
	while (rc == 0 && git_reference_next(&ref, it) == 0) {
		if (git_reference_target(ref)) {
			*found = 1;
			rc = read_tree(s, repo, git_reference_target(ref), f, list);
		}
		git_reference_free(ref);
	}
out:
	git_reference_iterator_free(it);
	free(spec);
	return rc;
}

struct id_at {
	const char *id;
	uint32_t i;
};

static int cmp_id_at(const void *a, const void *b)
{
	const struct id_at *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Each record once, the first read kept, the order otherwise unchanged. A
 * compaction whose branch update lost its lease after its series refs moved
 * leaves the records it moved on both until the next compaction; a record
 * delivered again after a compaction moved its landed copy is on both too. */
static void list_unique(struct history_list *l)
{
	struct id_at *v;
	uint8_t *drop;
	uint32_t j = 0;

	if (l->n < 2)
		return;
	v = pg_xcalloc(l->n, sizeof(*v));
	drop = pg_xcalloc(l->n, 1);
	for (uint32_t i = 0; i < l->n; i++)
		v[i] = (struct id_at){l->r[i].record_id, i};
	qsort(v, l->n, sizeof(*v), cmp_id_at);
	for (uint32_t k = 1; k < l->n; k++)
		drop[v[k].i] = strcmp(v[k].id, v[k - 1].id) == 0;
	for (uint32_t i = 0; i < l->n; i++) {
		if (drop[i])
			history_record_release(&l->r[i]);
		else
			l->r[j++] = l->r[i];
	}
	l->n = j;
	free(drop);
	free(v);
}

/* One month file of the series a newest-first read reads. */
struct month_file {
	const char *name; /* "<YYYY-MM>.jsonl[.gz]", owned by the tree */
	git_oid id;
};

static int cmp_month_desc(const void *a, const void *b)
{
	const struct month_file *x = a, *y = b;

	return strcmp(y->name, x->name);
}

/* The month files of f->series's folder in the tree of commit (if any),
 * added to *v (*n of them); the tree is kept in *keep (names point into it). */
static int month_files(struct store *s, git_repository *repo, const git_oid *commit,
		       const struct history_filter *f, git_tree **keep, struct month_file **v,
		       uint32_t *n)
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	git_tree_entry *e = NULL;
	int rc = 0, r;

	if (!commit)
		return 0;
	if (git_commit_lookup(&c, repo, commit) < 0 || git_commit_tree(&root, c) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: the records of %s: %s", s->branch,
				  store_git_why());
		goto out;
	}
	r = git_tree_entry_bypath(&e, root, f->series);
	if (r == GIT_ENOTFOUND || (r == 0 && git_tree_entry_type(e) != GIT_OBJECT_TREE))
		goto out;
	if (r < 0 || git_tree_lookup(keep, repo, git_tree_entry_id(e)) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: %s: %s", f->series, store_git_why());
		goto out;
	}
	*v = pg_xrealloc(*v, (*n + git_tree_entrycount(*keep) + 1) * sizeof(**v));
	for (size_t i = 0; i < git_tree_entrycount(*keep); i++) {
		const git_tree_entry *m = git_tree_entry_byindex(*keep, i);
		const char *name = git_tree_entry_name(m);

		if (git_tree_entry_type(m) == GIT_OBJECT_BLOB && store_is_shard_name(name) &&
		    !(f->since && strncmp(name, f->since, 7) < 0))
			(*v)[(*n)++] = (struct month_file){name, *git_tree_entry_id(m)};
	}
out:
	git_tree_entry_free(e);
	git_tree_free(root);
	git_commit_free(c);
	return rc;
}

/*
 * f->newest with f->series: the series' months, newest first, from the
 * branch and its series ref together, read whole until they hold f->newest
 * records that pass f. Every record left unread is older than every record
 * read (a record's shard is its time's month), so the newest records that
 * pass any further test are among those read, or there are not enough.
 */
static int read_newest(struct store *s, git_repository *repo, const git_oid *tip,
		       const struct history_filter *f, struct history_list *list, int *found)
{
	git_tree *trees[2] = {NULL, NULL};
	struct month_file *v = NULL;
	char *ref = store_series_ref(s, f->series);
	git_oid id;
	uint32_t n = 0;
	int rc, has_ref = ref && git_reference_name_to_id(&id, repo, ref) == 0;

	*found = has_ref;
	rc = month_files(s, repo, tip, f, &trees[0], &v, &n);
	if (rc == 0 && has_ref)
		rc = month_files(s, repo, &id, f, &trees[1], &v, &n);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_month_desc);
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		if (i > 0 && list->n >= f->newest && strncmp(v[i].name, v[i - 1].name, 7) != 0)
			break; /* a whole older month: enough read */
		rc = read_shard_records(s, repo, &v[i].id, v[i].name, f->series, f, list);
	}
	free(v);
	free(ref);
	git_tree_free(trees[0]);
	git_tree_free(trees[1]);
	return rc;
}

/* The records of the branch's tip (tip NULL: no branch) and of its series
 * refs in repo that pass f, and of its record refs when records (a local
 * read takes those first: read_local), each once, into list; *exists when
 * any is there (or was: *exists on entry). */
static int read_all(struct store *s, git_repository *repo, const git_oid *tip,
		    const struct history_filter *f, struct history_list *list, int records,
		    int *exists)
{
	int refs = *exists, rc = 0;

	*exists = refs || tip != NULL;
	if (f->newest && f->series)
		rc = read_newest(s, repo, tip, f, list, &refs);
	else if (tip)
		rc = read_tree(s, repo, tip, f, list);
	if (rc == 0 && !(f->newest && f->series))
		rc = read_series_refs(s, repo, f, list, &refs);
	if (rc == 0 && records)
		rc = read_record_refs(s, repo, f, list, &refs);
	if (refs) {
		*exists = 1;
		list_unique(list);
	}
	return rc;
}

/* One read: fetch the branch and the series refs f may read, then their
 * records into list. RENEW when the private repository failed (list then
 * holds nothing of this try). */
static enum attempt read_once(struct store *s, const struct history_filter *f,
			      struct history_list *list, int *exists, int *rc)
{
	struct history_list got = {0};
	enum attempt a;
	char *spec = series_spec(s, f), *records = records_spec(s, f);
	git_oid tip;
	int has_tip;

	*rc = 0;
	*exists = 0;
	if ((*rc = store_repo(s))) {
		free(spec);
		free(records);
		return ATTEMPT_FAIL;
	}
	a = store_fetch(s, spec, records);
	free(spec);
	free(records);
	if (a != ATTEMPT_DONE) {
		*rc = PG_EDELIVERY;
		return a == ATTEMPT_RENEW ? a : ATTEMPT_FAIL;
	}
	has_tip = git_reference_name_to_id(&tip, s->repo, s->tracking) == 0;
	git_error_clear();
	*rc = read_all(s, s->repo, has_tip ? &tip : NULL, f, &got, 1, exists);
	a = *rc == 0					 ? ATTEMPT_DONE
	    : *rc != PG_EUNSUPP && store_local_failure() ? ATTEMPT_RENEW
							 : ATTEMPT_FAIL;
	for (uint32_t k = 0; a == ATTEMPT_DONE && k < got.n; k++)
		history_list_move(list, &got.r[k]);
	history_list_release(&got);
	return a;
}

/*
 * A local remote is read where it is: its objects are on this machine
 * already, and git's objects never change once written, so the branch's tip,
 * the series refs, and the trees and shards they name are read straight from
 * the remote's object store, as a concurrent append leaves it (the ref moves
 * atomically, after the objects it names are written). Nothing is copied: a
 * read costs the shards of the series asked for, however long the history.
 */
static int read_local(struct store *s, const struct history_filter *f, struct history_list *list,
		      int *exists)
{
	git_repository *rr = NULL;
	git_oid tip;
	int rc = 0, r;

	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		return pg_error_set(PG_EDELIVERY, "history: cannot open '%s': %s", s->local,
				    store_git_why());
	/* the record refs before the branch: a compaction moves the branch to
	 * the commit holding their records before it removes them, so each is
	 * read in one place or the other */
	*exists = 0;
	if ((rc = read_record_refs(s, rr, f, list, exists))) {
		git_repository_free(rr);
		return rc;
	}
	r = git_reference_name_to_id(&tip, rr, s->head);
	if (r == 0 || r == GIT_ENOTFOUND)
		rc = read_all(s, rr, r == 0 ? &tip : NULL, f, list, 0, exists);
	else
		rc = pg_error_set(PG_EDELIVERY, "history: %s in '%s': %s", s->head, s->local,
				  store_git_why());
	git_repository_free(rr);
	return rc;
}

int history_read(const struct history_store_opts *o, const struct history_filter *f,
		 struct history_list *list, int *exists)
{
	struct store s;
	enum attempt a;
	int rc;

	*exists = 0;
	git_libgit2_init();
	store_isolate_config();
	if ((rc = store_open(&s, o)))
		goto out;
	if (s.local) {
		struct history_list got = {0};

		rc = read_local(&s, f, &got, exists);
		for (uint32_t k = 0; rc == 0 && k < got.n; k++)
			history_list_move(list, &got.r[k]);
		history_list_release(&got);
		goto out;
	}
	if ((rc = store_lock(&s)))
		goto out;
	a = read_once(&s, f, list, exists, &rc);
	if (a == ATTEMPT_RENEW && !s.renewed) {
		char why[1024];

		snprintf(why, sizeof(why), "%s", pg_error_last());
		if ((rc = store_discard(&s, why)) == 0)
			a = read_once(&s, f, list, exists, &rc);
	}
	if (rc && rc != PG_EUNSUPP && strncmp(pg_error_last(), "history: ", 9) != 0) {
		char why[1024];

		snprintf(why, sizeof(why), "%s", pg_error_last());
		rc = pg_error_set(rc, "history: %s", why);
	}
out:
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
}
