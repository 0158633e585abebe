/*
 * The history store: record lines appended to <series>/<YYYY-MM>.jsonl on a
 * branch of a git remote through libgit2, safely under many concurrent jobs.
 *
 * How an append works. profgate keeps a private bare repository per remote
 * under the cache (<cache>/repos/<hash of the URL>.git), never the user's
 * work tree, index or config (the global and system git configs are not
 * read). Each attempt, under an flock on that repository so that jobs on one
 * machine take turns: fetch only the branch, build the commit on its tip (or
 * an orphan commit when it does not exist) unless the shard already holds
 * the record's id, and push it without force. A rejected push (the branch
 * moved: another job got there first) sends the record to a ref of its own
 * instead (RECORD_REFS, push_record), which no other writer pushes to, so no
 * writer waits for another; readers read those refs with the branch and a
 * compaction folds them in. A failure that may heal (the network, a 5xx) is
 * retried after a jittered exponential backoff for as long as the time
 * budget lasts, each fetch and each push on a new connection (libgit2
 * keeps an http connection alive inside a remote, and one the server closed
 * during the backoff, or while a loaded machine built the commit, fails the
 * next request). Nothing is ever force-pushed, so no record is lost; the id
 * checks (the shard, the record's own ref) mean none is doubled, and readers
 * and compactions take each id once. A record line over
 * HISTORY_MAX_LINE, which every reader skips, is refused before anything is
 * sent.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* s cut to 100 bytes, control characters as spaces: a user's string (a label,
 * the CI's sha and run id) cannot add lines or trailers to a commit message. */
static void one_line(struct pg_buf *m, const char *s)
{
	for (size_t i = 0; s[i] && i < 100; i++)
		pg_buf_addc(m, (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i]);
}

/* "history: <series> (<label>): <verdict>" and the record's particulars;
 * series, id, kind, time and verdict are checked when a record is made. */
static void commit_message(const struct history_record *r, struct pg_buf *m)
{
	pg_buf_addf(m, "history: %s (", r->series);
	one_line(m, r->label ? r->label : "no label");
	pg_buf_addf(m, "): %s\n\n", r->verdict);
	pg_buf_addf(m, "record: %s\nkind: %s\ntime: %s\n", r->record_id, r->kind, r->time);
	if (r->sha) {
		pg_buf_adds(m, "sha: ");
		one_line(m, r->sha);
		pg_buf_addc(m, '\n');
	}
	if (r->run_id) {
		pg_buf_adds(m, "run: ");
		one_line(m, r->run_id);
		pg_buf_addc(m, '\n');
	}
}

static int make_commit(struct store *s, const struct history_record *r, git_commit *parent,
		       git_tree *base, const char *shard, const struct pg_buf *content,
		       git_oid *out)
{
	git_tree_update upd = {GIT_TREE_UPDATE_UPSERT, {{0}}, GIT_FILEMODE_BLOB, shard};
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_reference *ref = NULL;
	struct pg_buf msg = PG_BUF_INIT;
	git_oid tree_id;
	const git_commit *parents[1] = {parent};
	int rc = 0;

	commit_message(r, &msg);
	if (git_blob_create_from_buffer(&upd.id, s->repo, content->ptr, content->len) < 0 ||
	    git_tree_create_updated(&tree_id, s->repo, base, 1, &upd) < 0 ||
	    git_tree_lookup(&tree, s->repo, &tree_id) < 0 ||
	    git_signature_now(&sig, BOT_NAME, BOT_EMAIL) < 0 ||
	    git_commit_create(out, s->repo, NULL, sig, sig, NULL, msg.ptr, tree, parent ? 1 : 0,
			      parents) < 0 ||
	    git_reference_create(&ref, s->repo, s->head, out, 1, NULL) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir,
				  store_git_why());
	git_reference_free(ref);
	git_signature_free(sig);
	git_tree_free(tree);
	pg_buf_release(&msg);
	return rc;
}

/*
 * The commit appending line to shard on tip (NULL: an orphan), in *out and as
 * the private refs/heads/<branch>. *already is set when the shard holds the
 * record's id: nothing to commit.
 */
static int build(struct store *s, const struct history_record *r, const char *shard,
		 const struct pg_buf *line, const git_oid *tip, git_oid *out, int *already)
{
	git_commit *parent = NULL;
	git_tree *base = NULL;
	struct pg_buf content = PG_BUF_INIT;
	int rc = 0;

	*already = 0;
	git_error_clear(); /* store_local_failure() reads the class of what fails here */
	if (tip &&
	    (git_commit_lookup(&parent, s->repo, tip) < 0 || git_commit_tree(&base, parent) < 0)) {
		rc = pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, store_git_why());
		goto out;
	}
	if ((rc = store_read_shard(s, base, shard, &content)))
		goto out;
	if (history_shard_has(content.ptr, content.len, r->record_id)) {
		*already = 1;
		goto out;
	}
	if (content.len && content.ptr[content.len - 1] != '\n')
		pg_buf_addc(&content, '\n'); /* a hand-edited last line */
	pg_buf_add(&content, line->ptr, line->len);
	rc = make_commit(s, r, parent, base, shard, &content, out);
out:
	pg_buf_release(&content);
	git_tree_free(base);
	git_commit_free(parent);
	return rc;
}

/* r's record ref, s->records<series>/<record_id>; NULL when the series
 * cannot be a ref's component (its record then only ever goes to the
 * branch). */
static char *record_ref(const struct store *s, const struct history_record *r)
{
	char *ref = pg_xasprintf("%s%s/%s", s->records, r->series, r->record_id);

	if (!*r->series || strchr(r->series, '/') || !git_reference_is_valid_name(ref)) {
		free(ref);
		return NULL;
	}
	return ref;
}

/* The record's time as seconds since the epoch (0 when it cannot be read):
 * the record commit's time, so that one record always makes one commit. */
static int64_t record_epoch_s(const struct history_record *r)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(r->time, "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm);
}

/* r's record commit into *out and the private ref: a root commit whose tree
 * is shard holding line alone, the same bytes for the same record, so a
 * record pushed twice makes one ref value. */
static int make_record_commit(struct store *s, const struct history_record *r, const char *shard,
			      const struct pg_buf *line, const char *ref, git_oid *out)
{
	git_tree_update upd = {GIT_TREE_UPDATE_UPSERT, {{0}}, GIT_FILEMODE_BLOB, shard};
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_reference *made = NULL;
	struct pg_buf msg = PG_BUF_INIT;
	git_oid tree_id;
	int rc = 0;

	commit_message(r, &msg);
	git_error_clear();
	if (git_blob_create_from_buffer(&upd.id, s->repo, line->ptr, line->len) < 0 ||
	    git_tree_create_updated(&tree_id, s->repo, NULL, 1, &upd) < 0 ||
	    git_tree_lookup(&tree, s->repo, &tree_id) < 0 ||
	    git_signature_new(&sig, BOT_NAME, BOT_EMAIL, (git_time_t)record_epoch_s(r), 0) < 0 ||
	    git_commit_create(out, s->repo, NULL, sig, sig, NULL, msg.ptr, tree, 0, NULL) < 0 ||
	    git_reference_create(&made, s->repo, ref, out, 1, NULL) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir,
				  store_git_why());
	git_reference_free(made);
	git_signature_free(sig);
	git_tree_free(tree);
	pg_buf_release(&msg);
	return rc;
}

/* A record ref into a local remote: its objects, then the ref created
 * against the zero id; one there already with this commit is the record
 * delivered. */
static enum attempt push_record_local(struct store *s, const char *ref, const git_oid *commit)
{
	git_repository *rr = NULL;
	git_oid zero, have;
	enum attempt a = ATTEMPT_DONE;
	int rc;

	memset(&zero, 0, sizeof(zero));
	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, store_git_why());
		return ATTEMPT_FAIL;
	}
	if (store_pack_into(s, rr, commit, NULL)) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	rc = store_remote_ref_update(s, rr, ref, commit, &zero,
				     "profgate: history append (own ref)");
	if (rc < 0 && git_reference_name_to_id(&have, rr, ref) == 0 && git_oid_equal(&have, commit))
		rc = 0;
	if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "%s changed during the push (%s)", ref, store_git_why());
	} else if (rc < 0) {
		a = ATTEMPT_FAIL;
		pg_error_set(PG_EDELIVERY, "cannot create %s in '%s': %s", ref, s->local,
			     store_git_why());
	}
out:
	git_repository_free(rr);
	return a;
}

/*
 * The branch moved under an append: r goes to its own ref instead, which no
 * other writer's push touches (the name is r's id), so it cannot lose a race
 * to them; the next compaction folds it into the branch. Readers read the
 * record refs with the branch, each record once by id.
 */
static enum attempt push_record(struct store *s, const struct history_record *r, const char *shard,
				const struct pg_buf *line, const char *ref, git_oid *commit)
{
	if (make_record_commit(s, r, shard, line, ref, commit))
		return store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
	if (s->local)
		return push_record_local(s, ref, commit);
	if (store_remote(s))
		return ATTEMPT_FAIL;
	return store_push_smart(s, ref, "the record's ref holds another commit");
}

/*
 * *already when r's month is closed (before the open month of the tip's
 * index, so a compaction may have moved its shard) and the series' ref
 * holds r's id: a record delivered again after its first push landed and a
 * compaction moved it. Only then is the series' ref fetched (with the
 * branch again, on a new connection); the usual append fetches the branch
 * alone.
 */
static enum attempt closed_has(struct store *s, const struct history_record *r, const char *shard,
			       const git_oid *tip, int *already)
{
	const char *month = strrchr(shard, '/');
	git_commit *c = NULL;
	git_tree *root = NULL;
	struct pg_buf text = PG_BUF_INIT;
	char open[8], *ref, *gz;
	enum attempt a = ATTEMPT_DONE;
	git_oid id;

	*already = 0;
	store_index_open(s, tip, open);
	if (!month || !*open || strncmp(month + 1, open, 7) >= 0 ||
	    !(ref = store_series_ref(s, r->series)))
		return ATTEMPT_DONE;
	if (!s->local && store_remote(s)) {
		free(ref);
		return ATTEMPT_FAIL;
	}
	if ((a = store_fetch(s, ref, NULL)) == ATTEMPT_DONE &&
	    git_reference_name_to_id(&id, s->repo, ref) == 0) {
		git_error_clear();
		gz = pg_xasprintf("%s.gz", shard);
		if (git_commit_lookup(&c, s->repo, &id) < 0 || git_commit_tree(&root, c) < 0 ||
		    store_read_shard(s, root, gz, &text)) {
			pg_error_set(PG_EDELIVERY, "%s: %s", ref, store_git_why());
			a = store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
		} else {
			*already = history_shard_has(text.ptr, text.len, r->record_id);
		}
		free(gz);
	}
	pg_buf_release(&text);
	git_tree_free(root);
	git_commit_free(c);
	free(ref);
	return a;
}

/* The branch half of an append's attempt (attempt_once): *raced when its
 * push was refused or failed, or its fetch over http failed, the commit in
 * *commit. */
static enum attempt attempt_branch(struct store *s, const struct history_record *r,
				   const char *shard, const struct pg_buf *line, const char *all,
				   const char *own, git_oid *commit, int *already, int *raced)
{
	double deadline = s->deadline;
	git_oid tip;
	enum attempt a;
	int has_tip;

	*already = *raced = 0;
	s->fetch_cut = 0;
	if (store_repo(s) || (s->connected && store_remote(s)))
		return ATTEMPT_FAIL;
	s->connected = 1; /* every later attempt on a new connection */
	/* the fetch, its sockets included, leaves a part of the budget for the
	 * record's own ref: a branch too long to fetch in time (a first fetch
	 * of years of records in the old layout) cannot keep the record from
	 * being delivered */
	if (store_set_deadline(s, deadline - OWN_REF_RESERVE_SHARE * s->budget_s))
		return ATTEMPT_FAIL;
	a = store_fetch(s, NULL, all);
	if (a != ATTEMPT_DONE && !s->local && (s->out_of_time || store_now_s() >= s->deadline))
		s->fetch_cut = 1; /* the record's own ref, then store_migrate */
	if (store_set_deadline(s, deadline))
		return ATTEMPT_FAIL;
	if (a != ATTEMPT_DONE) {
		*raced = a == ATTEMPT_RETRY && !s->local;
		return a;
	}
	if (own && git_reference_name_to_id(&tip, s->repo, own) == 0) {
		*already = 1;
		return ATTEMPT_DONE;
	}
	has_tip = git_reference_name_to_id(&tip, s->repo, s->tracking) == 0;
	if (has_tip && (a = closed_has(s, r, shard, &tip, already)) != ATTEMPT_DONE)
		return a;
	has_tip = git_reference_name_to_id(&tip, s->repo, s->tracking) == 0;
	if (!*already && build(s, r, shard, line, has_tip ? &tip : NULL, commit, already))
		return store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
	if (*already)
		return ATTEMPT_DONE;
	store_push_delay();
	/* the push on a new connection too: under load the fetch's, kept alive,
	 * can sit idle past the server's keep-alive timeout while the commit is
	 * built (seen with 64 writers on 2 cores) */
	if (!s->local && store_remote(s))
		return ATTEMPT_FAIL;
	a = s->local ? store_push_local(s, commit, has_tip ? &tip : NULL)
		     : store_push_smart(s, s->head, "the branch moved since the fetch");
	*raced = a == ATTEMPT_RETRY;
	return a;
}

/*
 * One attempt of an append: fetch the branch and the record refs; r is
 * there already when its record ref is, or its shard (or, for a closed
 * month, its series' ref) holds its id. Else commit on the tip and push;
 * when the branch moved meanwhile (another writer's push won), push r to its
 * own ref instead (push_record), so that no writer waits for another.
 */
static enum attempt attempt_once(struct store *s, const struct history_record *r, const char *shard,
				 const struct pg_buf *line, struct history_append_result *res)
{
	git_oid commit;
	enum attempt a;
	char *all = pg_xasprintf("%s*", s->records), *own = record_ref(s, r);
	int already, raced;

	a = attempt_branch(s, r, shard, line, all, own, &commit, &already, &raced);
	if (raced && own) {
		char why[1024];
		enum attempt b;

		snprintf(why, sizeof(why), "%s", pg_error_last());
		b = push_record(s, r, shard, line, own, &commit);
		res->own_ref = b == ATTEMPT_DONE;
		if (b == ATTEMPT_DONE || a != ATTEMPT_RETRY || !strstr(why, "cannot fetch"))
			a = b;
		else /* the remote is failing: the fetch says why */
			pg_error_set(PG_EDELIVERY, "%s", why);
	}
	if (a == ATTEMPT_DONE) {
		res->appended = !already;
		if (!already)
			git_oid_tostr(res->commit, sizeof(res->commit), &commit);
	}
	free(all);
	free(own);
	return a;
}

/* Full jitter around an exponential step: base·2^(n-1) times 0.5..1.5,
 * capped, so that jobs that collided spread out instead of colliding again. */
static uint32_t backoff_ms(struct store *s, uint32_t attempt)
{
	uint32_t step = BACKOFF_BASE_MS << (attempt - 1 < 10 ? attempt - 1 : 10);
	double u;

	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	u = (double)(s->rng >> 11) / 9007199254740992.0;
	if (step > BACKOFF_CAP_MS)
		step = BACKOFF_CAP_MS;
	return (uint32_t)(step * (0.5 + u));
}

/*
 * Attempts of once(s, ctx) until it is done, bounded by the time budget
 * alone: a lost race is retried after backoff_ms() (never past the deadline),
 * each attempt on a new connection; a permanent refusal or failure stops at
 * once. what names the work in the messages ("" for an append, "compaction ").
 * The attempts made are left in *attempts.
 */
int store_retry_loop(struct store *s, enum attempt (*once)(struct store *, void *), void *ctx,
		     const char *what, uint32_t *attempts)
{
	double start = store_now_s();
	char prev[1024] = "";

	for (uint32_t n = 1;; n++) {
		enum attempt a;
		double left;
		uint32_t wait;
		char cause[1024];
		int cut;

		*attempts = n;
		if (store_lock(s))
			return PG_EDELIVERY;
		a = once(s, ctx);
		snprintf(cause, sizeof(cause), "%s", pg_error_last());
		if (a == ATTEMPT_RENEW && !s->renewed) {
			a = store_discard(s, cause) ? ATTEMPT_FAIL : ATTEMPT_RENEW;
			snprintf(cause, sizeof(cause), "%s", pg_error_last());
		} else if (a == ATTEMPT_RENEW) {
			a = ATTEMPT_FAIL; /* made anew once already: the cache folder is at fault */
		}
		store_unlock(s);
		if (a == ATTEMPT_DONE)
			return 0;
		if (a == ATTEMPT_RENEW)
			continue; /* at once: nothing to wait for */
		if (a == ATTEMPT_FAIL)
			return pg_error_set(PG_EDELIVERY, "history: %s%s", what, cause);
		/* an attempt the time budget cut short says only that: the attempt
		 * before it says why the remote keeps failing. An append's fetch cut
		 * at its share of the budget ends the attempts too (the next fetch
		 * would start past that share), with the cause before it. */
		left = s->deadline - store_now_s();
		cut = s->fetch_cut && left > 0;
		if (n > 1 && *prev && left <= 0)
			return pg_error_set(
			    PG_EDELIVERY,
			    "history: %sgave up after %u attempts in %.1f s: %s (the last "
			    "attempt ran out of the time budget)",
			    what, n, store_now_s() - start, prev);
		if (cut && n > 1 && *prev)
			snprintf(cause, sizeof(cause), "%s", prev);
		if (cut || left < MIN_ATTEMPT_S)
			return pg_error_set(
			    PG_EDELIVERY,
			    "history: %sgave up after %u attempt%s in %.1f s (the time "
			    "budget): %s",
			    what, n, n == 1 ? "" : "s", store_now_s() - start, cause);
		wait = backoff_ms(s, n);
		if (wait / 1e3 > left - MIN_ATTEMPT_S) /* one last try before the deadline */
			wait = (uint32_t)((left - MIN_ATTEMPT_S) * 1e3);
		snprintf(prev, sizeof(prev), "%s", cause);
		store_logf(
		    s, "history: %sattempt %u (%.1f s of the budget left): %s; retrying in %.2f s",
		    what, n, left, cause, wait / 1e3);
		store_sleep_ms(wait);
	}
}

/* An append's attempt, for store_retry_loop. */
struct append_job {
	const struct history_record *r;
	const char *shard;
	const struct pg_buf *line;
	struct history_append_result *res;
};

static enum attempt append_once(struct store *s, void *ctx)
{
	struct append_job *j = ctx;

	return attempt_once(s, j->r, j->shard, j->line, j->res);
}

/* Attempts until r is on the branch (store_retry_loop). */
int store_append_loop(struct store *s, const struct history_record *r, const char *shard,
		      const struct pg_buf *line, struct history_append_result *res)
{
	struct append_job j = {r, shard, line, res};

	return store_retry_loop(s, append_once, &j, "", &res->attempts);
}

int history_append(const struct history_store_opts *o, const struct history_record *r,
		   struct history_append_result *res)
{
	struct store s;
	struct pg_buf shard = PG_BUF_INIT, line = PG_BUF_INIT;
	char *dirs[3] = {NULL, NULL, NULL};
	int n = 0, rc;

	memset(res, 0, sizeof(*res));
	git_libgit2_init();
	store_isolate_config();
	history_record_shard(r, &shard);
	history_record_write(r, &line);
	if ((rc = history_line_check(line.len - 1))) {
		char why[512];

		snprintf(why, sizeof(why), "%s", pg_error_last());
		rc = pg_error_set(rc, "history: record %s: %s: not appended", r->record_id, why);
		memset(&s, 0, sizeof(s));
		s.lock_fd = -1;
		goto out;
	}
	if ((rc = store_open(&s, o)))
		goto out;
	rc = store_append_loop(&s, r, shard.ptr, &line, res);
	if (rc == 0) {
		/* the remote works: deliver what earlier runs kept, in what is left
		 * of the budget (a failure there leaves them pending, as they were) */
		n = store_pending_dirs(o, dirs, 0);
		if (store_pending_deliver_all(&s, dirs, n, r->record_id, &res->pending))
			snprintf(res->pending_why, sizeof(res->pending_why), "%s", pg_error_last());
		/* the writer whose record went to the branch: in a burst of
		 * writers, the one or few that won, not all of them at once; a
		 * branch too long to fetch in the budget (the old layout's years
		 * of commits) is converted, in a budget of its own, by the writer
		 * that found it so, once its record is safe on its own ref */
		if (!res->own_ref)
			store_auto_compact(&s);
		else if (s.fetch_cut)
			store_migrate(&s);
	}
out:
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	res->shard = pg_buf_detach(&shard, NULL);
	pg_buf_release(&line);
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
}
