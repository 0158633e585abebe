/*
 * Fetch and push, over http(s) or to a local path: the one place that knows
 * which kind of remote it talks to (s->local). libgit2's callbacks bound
 * every network step by the time budget and keep what the server said.
 *
 * Rejections come three ways. Over http(s), git_remote_push() returns
 * GIT_ENONFASTFORWARD when the tip moved before anything was sent, and
 * returns 0 with a status in the push_update_reference callback when the
 * server refused the update ("failed to update ref" or "failed to lock" when
 * the ref moved during receive-pack). Only those races are retried: any other
 * refusal is final (a policy: "pre-receive hook declined", "protected branch
 * hook declined"; a branch name that clashes with another branch, 'x' beside
 * 'x/y', which receive-pack reports as "failed to update ref" too, but says
 * "exists; cannot create"), and the error shows all the server said, bounded
 * and on one line. For a remote that is a
 * path or a file:// URL, libgit2 1.5's local transport updates the remote ref
 * with force whenever it exists (transports/local.c,
 * local_push_update_remote_ref), so two jobs pushing at once could lose a
 * commit; profgate therefore pushes to local remotes itself: the new objects
 * as a pack into the remote's object store, then a compare-and-swap of the
 * ref (git_reference_create_matching against the fetched tip), which fails
 * with GIT_EMODIFIED when another job moved it. A new branch is created the
 * same way, against the zero id: git_reference_create(force=0) checks that
 * the ref is absent before it takes the ref's lock, and two jobs creating the
 * branch at once could both pass that check (one record lost, seen in CI); a
 * clashing branch name is looked for in the remote's refs first.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The token as user x-access-token; the callback runs again on every 401, so
 * a second call in one operation means the token was refused. */
static int cred_cb(git_credential **out, const char *url, const char *user_from_url,
		   unsigned int allowed, void *payload)
{
	struct store *s = payload;

	if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
		return GIT_PASSTHROUGH;
	if (!s->o->token) {
		git_error_set_str(GIT_ERROR_HTTP, "the remote asks for credentials: set "
						  "PROFGATE_GIT_TOKEN or GITHUB_TOKEN");
		return GIT_EAUTH;
	}
	if (++s->cred_calls > 1) {
		git_error_set_str(GIT_ERROR_HTTP, "authentication rejected: check "
						  "PROFGATE_GIT_TOKEN or GITHUB_TOKEN");
		return GIT_EAUTH;
	}
	return git_credential_userpass_plaintext_new(out, "x-access-token", s->o->token);
}

/* The raw text the server printed on the progress channel ("remote: ..."),
 * kept up to SAID_MAX_BYTES for the error line; remote_text() makes it one
 * line. Also stops the operation at the deadline (a local remote's counting
 * reports here). */
#define SAID_MAX_BYTES 4096
#define SAID_SHOWN     1024

static int past_deadline(struct store *s, const char *doing)
{
	if (store_now_s() < s->deadline)
		return 0;
	s->out_of_time = 1;
	git_error_set_str(GIT_ERROR_NET, doing);
	return -1;
}

static int sideband_cb(const char *str, int len, void *payload)
{
	struct store *s = payload;

	if (len > 0 && s->said.len < SAID_MAX_BYTES)
		pg_buf_add(&s->said, str,
			   (size_t)len < SAID_MAX_BYTES - s->said.len
			       ? (size_t)len
			       : SAID_MAX_BYTES - s->said.len);
	return past_deadline(s, "timed out: the time budget ran out");
}

/* libgit2 does the work of a fetch or push between socket reads and writes
 * too (indexing and resolving a large pack, building one, a local remote's
 * copy): these stop it at the deadline, so every network step is bounded. */
static int transfer_cb(const git_indexer_progress *stats, void *payload)
{
	return past_deadline(payload, "timed out receiving objects: the time budget ran out");
}

static int pack_cb(int stage, uint32_t current, uint32_t total, void *payload)
{
	return past_deadline(payload, "timed out packing objects: the time budget ran out");
}

static int push_transfer_cb(unsigned int current, unsigned int total, size_t bytes, void *payload)
{
	return past_deadline(payload, "timed out sending objects: the time budget ran out");
}

/*
 * What the server said, as one line into out: its lines joined by " / "
 * (a lone carriage return starts the line over, as on a terminal), control bytes
 * as spaces, at most SAID_SHOWN bytes (then "..."). Empty when it said
 * nothing. Secrets are redacted before anything is cut: the line the
 * SAID_MAX_BYTES cap cut is dropped (a token's first part would no longer be
 * found), and the text is redacted before it is cut to SAID_SHOWN.
 */
static void remote_text(const struct store *s, struct pg_buf *out)
{
	struct pg_buf line = PG_BUF_INIT;
	size_t end = s->said.len;

	if (end >= SAID_MAX_BYTES)
		while (end > 0 && s->said.ptr[end - 1] != '\n' && s->said.ptr[end - 1] != '\r')
			end--;
	for (size_t i = 0; i <= end; i++) {
		unsigned char c = i < end ? (unsigned char)s->said.ptr[i] : '\n';

		if (c == '\r' && i + 1 < end && s->said.ptr[i + 1] == '\n')
			continue; /* a CRLF line end */
		if (c == '\r') {
			line.len = 0;
		} else if (c != '\n') {
			pg_buf_addc(&line, c < 0x20 || c == 0x7f ? ' ' : (char)c);
		} else {
			size_t a = 0, b = line.len;

			while (a < b && line.ptr[a] == ' ')
				a++;
			while (b > a && line.ptr[b - 1] == ' ')
				b--;
			if (b > a) {
				if (out->len)
					pg_buf_adds(out, " / ");
				pg_buf_add(out, line.ptr + a, b - a);
			}
			line.len = 0;
		}
	}
	/* redacted before it is cut: a cut token would no longer be found */
	if (out->len) {
		pg_secret_redact(out->ptr);
		out->len = strlen(out->ptr);
	}
	if (out->len > SAID_SHOWN) {
		size_t n = SAID_SHOWN;

		while (n > 0 && ((unsigned char)out->ptr[n] & 0xC0) == 0x80)
			n--; /* not in the middle of a UTF-8 character */
		out->len = n;
		pg_buf_adds(out, "...");
	}
	pg_buf_release(&line);
}

static int push_ref_cb(const char *refname, const char *status, void *payload)
{
	struct store *s = payload;

	if (status && !s->status)
		s->status = pg_xstrdup(status);
	return 0;
}

void store_callbacks(struct store *s, git_remote_callbacks *cb)
{
	cb->credentials = cred_cb;
	cb->sideband_progress = sideband_cb;
	cb->transfer_progress = transfer_cb;
	cb->pack_progress = pack_cb;
	cb->push_transfer_progress = push_transfer_cb;
	cb->push_update_reference = push_ref_cb;
	cb->payload = s;
	s->cred_calls = 0;
	s->out_of_time = 0;
	pg_buf_release(&s->said);
}

/* A failure of the private repository (its files), not of the remote. */
int store_local_failure(void)
{
	const git_error *e = git_error_last();

	if (!e)
		return 0;
	switch (e->klass) {
	case GIT_ERROR_OS:
	case GIT_ERROR_REPOSITORY:
	case GIT_ERROR_CONFIG:
	case GIT_ERROR_ODB:
	case GIT_ERROR_OBJECT:
	case GIT_ERROR_REFERENCE:
	case GIT_ERROR_ZLIB:
	case GIT_ERROR_FILESYSTEM: return 1;
	default: return 0;
	}
}

/* Authentication, permission and missing repositories do not heal by
 * retrying; over http(s) anything else (a dropped connection, a timeout, a
 * 5xx) may, within the budget. A failure of the private repository itself
 * makes it anew. */
enum attempt store_classify(struct store *s, int rc)
{
	const char *why = store_git_why();

	if (rc == GIT_EAUTH || rc == GIT_ECERTIFICATE || strstr(why, "status code: 401") ||
	    strstr(why, "status code: 403") || strstr(why, "status code: 404") ||
	    strstr(why, "authentication"))
		return ATTEMPT_FAIL;
	if (store_local_failure())
		return ATTEMPT_RENEW;
	return s->local ? ATTEMPT_FAIL : ATTEMPT_RETRY;
}

/* The series refs of a local remote (rr) matching spec (one ref, or the
 * prefix and '*') set in the private repository as they are there, and
 * those it no longer has removed. */
static int copy_series_refs(struct store *s, git_repository *rr, const char *spec)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL, *made = NULL;
	git_repository *repos[2] = {s->repo, rr};
	int rc = 0;

	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		if (git_reference_iterator_glob_new(&it, repos[pass], spec) < 0)
			return -1;
		while (rc == 0 && git_reference_next(&ref, it) == 0) {
			const char *name = git_reference_name(ref);
			git_oid id;

			if (pass == 0 && git_reference_name_to_id(&id, rr, name) == GIT_ENOTFOUND)
				rc = git_reference_delete(ref);
			else if (pass == 1 && git_reference_target(ref))
				rc = git_reference_create(&made, s->repo, name,
							  git_reference_target(ref), 1,
							  "profgate: fetch");
			git_reference_free(made);
			made = NULL;
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
		it = NULL;
	}
	return rc;
}

/* The fetch of a local remote, read in place (local_alternate): the tracking
 * ref set to the remote's branch, or removed when it has none, and the
 * series refs matching series and the record refs matching records (NULL:
 * none) as they are there. */
static enum attempt fetch_local(struct store *s, const char *series, const char *records)
{
	git_repository *rr = NULL;
	git_reference *ref = NULL;
	enum attempt a = ATTEMPT_DONE;
	git_oid id;
	int r;

	git_error_clear();
	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, store_git_why());
		return ATTEMPT_FAIL;
	}
	r = git_reference_name_to_id(&id, rr, s->head);
	if (r < 0 && r != GIT_ENOTFOUND) {
		pg_error_set(PG_EDELIVERY, "cannot read %s in '%s': %s", s->branch, s->local,
			     store_git_why());
		a = ATTEMPT_FAIL;
	} else if ((r == 0 && git_reference_create(&ref, s->repo, s->tracking, &id, 1,
						   "profgate: fetch") < 0) ||
		   (series && copy_series_refs(s, rr, series) < 0) ||
		   (records && copy_series_refs(s, rr, records) < 0)) {
		pg_error_set(PG_EDELIVERY, "cannot fetch '%s' from '%s': %s", s->branch, s->local,
			     store_git_why());
		a = store_local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
	} else if (r == GIT_ENOTFOUND && git_reference_lookup(&ref, s->repo, s->tracking) == 0) {
		git_reference_delete(ref);
	}
	git_reference_free(ref);
	git_repository_free(rr);
	return a;
}

/* Fetch the branch, the series refs matching series (one ref, or s->series
 * and '*'; NULL: none) and the record refs matching records (a glob under
 * s->records; NULL: none); those the remote no longer has are pruned.
 * The tracking ref is moved aside first, so that
 * after the fetch it exists exactly when the remote branch does; moved, not
 * deleted: as the seen ref it is a commit the fetch tells the remote it has
 * (libgit2 offers every ref of the repository, the series refs too), so only
 * what is new since is sent, for a cache that only reads as for one that
 * appends. One request fetches the branch and the series refs together. */
enum attempt store_fetch(struct store *s, const char *series, const char *records)
{
	git_fetch_options fo;
	char *spec[3] = {pg_xasprintf("+refs/heads/%s:%s", s->branch, s->tracking), NULL, NULL};
	git_strarray specs = {spec, 1};
	git_reference *old = NULL;
	enum attempt a = ATTEMPT_DONE;
	int rc;

	if (series)
		spec[specs.count++] = pg_xasprintf("+%s:%s", series, series);
	if (records)
		spec[specs.count++] = pg_xasprintf("+%s:%s", records, records);
	if (s->local) {
		a = fetch_local(s, series, records);
		goto out;
	}
	if (git_reference_lookup(&old, s->repo, s->tracking) == 0) {
		git_reference *seen = NULL;

		if (git_reference_rename(&seen, old, s->seen, 1, NULL) < 0)
			git_reference_delete(old);
		git_reference_free(seen);
		git_reference_free(old);
	}
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	store_callbacks(s, &fo.callbacks);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.update_fetchhead = 0;
	fo.prune = series || records ? GIT_FETCH_PRUNE : GIT_FETCH_NO_PRUNE;
	fo.proxy_opts.type = GIT_PROXY_AUTO;
	git_error_clear();
	rc = git_remote_fetch(s->remote, &specs, &fo, NULL);
	if (rc < 0) {
		a = store_classify(s, rc);
		pg_error_set(PG_EDELIVERY, "cannot fetch '%s' from '%s': %s", s->branch, s->url,
			     store_git_why());
	}
out:
	for (size_t i = 0; i < specs.count; i++)
		free(spec[i]);
	return a;
}

/* A refused ref update that another attempt may get through: the branch
 * moved, or its lock was held, while receive-pack ran. Anything else (a
 * policy hook, a protected branch, a permission, a ref name that clashes
 * with another branch) is the server's final word. */
static int status_race(const char *status)
{
	static const char *const race[] = {
	    "failed to update ref", "failed to lock", "cannot lock ref", "non-fast-forward",
	    "fetch first",	    "stale info",     "unpacker error",	 "index-pack"};

	for (size_t i = 0; i < PG_ARRAY_LEN(race); i++)
		if (strstr(status, race[i]))
			return 1;
	return 0;
}

/* A branch named like a folder of another ("x" when "x/y" exists, or the
 * reverse): git cannot hold both, whatever the retries. git's receive-pack
 * says "cannot lock ref 'refs/heads/x': 'refs/heads/x/y' exists; cannot
 * create 'refs/heads/x'". */
static int said_clash(const char *said)
{
	return strstr(said, "exists; cannot create") || strstr(said, "there are refs beneath") ||
	       strstr(said, "is a directory") || strstr(said, "Not a directory");
}

#define CLASH_HELP                                                                                 \
	"the branch's name clashes with another branch of the remote (a branch cannot be named "   \
	"like a folder of branches, 'x' beside 'x/y'): choose another --branch"

/*
 * What a push (or a compaction's upload) that returned rc came to: done, a
 * race to retry, or the server's final word, with the error set. moved says
 * what a non-fast-forward means for this work, what names it in a refusal
 * ("update", "compaction").
 */
enum attempt store_push_outcome(struct store *s, int rc, const char *moved, const char *what)
{
	struct pg_buf said = PG_BUF_INIT;
	enum attempt a = ATTEMPT_DONE;

	remote_text(s, &said);
	if (rc == GIT_ENONFASTFORWARD) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "%s (non-fast-forward)", moved);
	} else if (rc < 0) {
		a = store_classify(s, rc);
		pg_error_set(PG_EDELIVERY, "push to '%s' failed: %s%s%s%s", s->url, store_git_why(),
			     said.len ? " (remote: " : "", said.len ? said.ptr : "",
			     said.len ? ")" : "");
	} else if (s->status) {
		int clash = said_clash(said.len ? said.ptr : "");

		a = status_race(s->status) && !clash ? ATTEMPT_RETRY : ATTEMPT_FAIL;
		pg_error_set(PG_EDELIVERY, "'%s' refused the %s of %s: %s%s%s%s%s", s->url, what,
			     s->branch, s->status, said.len ? " (remote: " : "",
			     said.len ? said.ptr : "", said.len ? ")" : "",
			     clash ? "; " CLASH_HELP : "");
	}
	pg_buf_release(&said);
	return a;
}

/* The options of a push or a compaction's upload, and no status or libgit2
 * error left from an earlier attempt for store_push_outcome() to read. */
void store_push_options(struct store *s, git_push_options *po)
{
	git_push_options_init(po, GIT_PUSH_OPTIONS_VERSION);
	store_callbacks(s, &po->callbacks);
	po->proxy_opts.type = GIT_PROXY_AUTO;
	free(s->status);
	s->status = NULL;
	git_error_clear();
}

/* Push the private ref to the same name there, never forced: the branch
 * (moved: someone appended since the fetch) or a record's ref. */
enum attempt store_push_smart(struct store *s, const char *ref, const char *moved)
{
	git_push_options po;
	char *spec = pg_xasprintf("%s:%s", ref, ref); /* no '+': never forced */
	git_strarray specs = {&spec, 1};
	int rc;

	store_push_options(s, &po);
	rc = git_remote_push(s->remote, &specs, &po);
	enum attempt a = store_push_outcome(s, rc, moved, "update");
	free(spec);
	return a;
}

/* The objects of commits (n of them) that the hidden commits (m) lack, as
 * one pack into the remote's store. */
int store_pack_commits(struct store *s, git_repository *rr, const git_oid *commits, size_t n,
		       const git_oid *hide, size_t m)
{
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	char *dir = pg_xasprintf("%sobjects/pack", git_repository_path(rr));
	int rc = git_revwalk_new(&walk, s->repo);

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = git_revwalk_push(walk, &commits[i]);
	for (size_t i = 0; i < m && rc == 0; i++)
		rc = git_revwalk_hide(walk, &hide[i]);
	if (rc < 0 || git_packbuilder_new(&pb, s->repo) < 0 ||
	    git_packbuilder_insert_walk(pb, walk) < 0 ||
	    git_packbuilder_write(pb, dir, 0, NULL, NULL) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot write objects into '%s': %s", s->local,
				  store_git_why());
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	free(dir);
	return rc;
}

/* The new objects (what tip lacks) as one pack into the remote's store. */
int store_pack_into(struct store *s, git_repository *rr, const git_oid *commit, const git_oid *tip)
{
	return store_pack_commits(s, rr, commit, 1, tip, tip ? 1 : 0);
}

struct clash {
	const char *head; /* refs/heads/<branch> */
	char *other;	  /* the first ref it clashes with */
};

static int clash_cb(const char *name, void *payload)
{
	struct clash *c = payload;
	size_t a = strlen(c->head), b = strlen(name);

	if ((b > a && strncmp(name, c->head, a) == 0 && name[a] == '/') ||
	    (a > b && strncmp(c->head, name, b) == 0 && c->head[b] == '/')) {
		c->other = pg_xstrdup(name);
		return 1; /* stop */
	}
	return 0;
}

/* 1 (message set) when the local remote holds a ref whose name clashes with
 * the branch's ('x' beside 'x/y'): git can never create it. */
static int local_clash(struct store *s, git_repository *rr)
{
	struct clash c = {s->head, NULL};

	git_reference_foreach_name(rr, clash_cb, &c);
	if (!c.other)
		return 0;
	pg_error_set(PG_EDELIVERY, "cannot create %s in '%s': %s exists there; " CLASH_HELP,
		     s->branch, s->local, c.other);
	free(c.other);
	return 1;
}

/*
 * A ref update in a local remote, and the lock a killed one leaves. libgit2
 * moves a ref by writing <ref>.lock (O_EXCL) and renaming it over the ref; a
 * process killed between the two leaves the .lock, and every later update of
 * that ref fails (GIT_ELOCKED) for good: git never removes one, since the
 * file does not say who made it. So profgate says it itself: every
 * profgate update of a local remote's ref holds an flock on REF_NOTE in the
 * remote's git folder and writes the ref's name there until the update is
 * over. The next profgate that takes the flock and finds a name in it knows
 * that the writer died mid-update (a live one would still hold the flock;
 * the kernel drops it with the process), so that ref's .lock is stale and is
 * removed. A .lock with no such note (a git process at work, or one that
 * died) is not profgate's to remove: it is retried within the budget and
 * named in the error.
 */
#define REF_NOTE "profgate-refs.lock"

/* Take the note's flock within the budget and clear what a dead writer left;
 * returns the descriptor, or -1 (updates then go without: the remote's
 * folder may be read-only to this user, and libgit2's lock still guards). */
static int ref_note_take(struct store *s, const char *gitdir)
{
	char *path = pg_xasprintf("%s%s", gitdir, REF_NOTE), *lock = NULL;
	char name[1024];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	ssize_t n;

	while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if ((errno != EWOULDBLOCK && errno != EINTR) || store_now_s() > s->deadline) {
			close(fd);
			fd = -1;
		} else {
			store_sleep_ms(5);
		}
	}
	if (fd >= 0 && (n = pread(fd, name, sizeof(name) - 1, 0)) > 0) {
		name[n] = 0;
		name[strcspn(name, "\n")] = 0;
		if (strncmp(name, "refs/", 5) == 0 && !strstr(name, "..")) {
			lock = pg_xasprintf("%s%s.lock", gitdir, name);
			if (unlink(lock) == 0)
				store_logf(
				    s,
				    "history: removed '%s', left by a profgate that died updating "
				    "%s",
				    lock, name);
		}
		if (ftruncate(fd, 0) != 0) {
			close(fd);
			fd = -1;
		}
	}
	free(lock);
	free(path);
	return fd;
}

/* git_reference_create_matching of name in the local remote rr, under the
 * note; on GIT_ELOCKED the error (PG_EDELIVERY) names the lock file. */
int store_remote_ref_update(struct store *s, git_repository *rr, const char *name,
			    const git_oid *id, const git_oid *old, const char *msg)
{
	const char *gitdir = git_repository_path(rr);
	git_reference *ref = NULL;
	int fd = ref_note_take(s, gitdir), rc;

	if (fd >= 0 &&
	    (pwrite(fd, name, strlen(name), 0) != (ssize_t)strlen(name) || fdatasync(fd) != 0)) {
		close(fd);
		fd = -1;
	}
	rc = git_reference_create_matching(&ref, rr, name, id, 1, old, msg);
	git_reference_free(ref);
	if (rc == GIT_ELOCKED)
		pg_error_set(PG_EDELIVERY,
			     "'%s%s.lock' is held: a git process is updating %s, or one died "
			     "doing so (remove the file when no git works on '%s')",
			     gitdir, name, name, s->local);
	if (fd >= 0) {
		if (ftruncate(fd, 0) != 0)
			store_logf(s, "history: cannot clear '%s%s': %s", gitdir, REF_NOTE,
				   strerror(errno));
		close(fd);
	}
	return rc;
}

/* Push to a local remote: objects first, then the ref moved only if it still
 * points at the tip this commit was built on (or, for an orphan, only if it
 * still does not exist). */
enum attempt store_push_local(struct store *s, const git_oid *commit, const git_oid *tip)
{
	git_repository *rr = NULL;
	git_reference *ref = NULL;
	git_oid zero;
	enum attempt a = ATTEMPT_DONE;
	int rc;

	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, store_git_why());
		return ATTEMPT_FAIL;
	}
	if ((!tip && local_clash(s, rr)) || store_pack_into(s, rr, commit, tip)) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	/* An orphan is created against the zero id, not with force=0: libgit2
	 * checks "does not exist yet" before taking the ref's lock, so two jobs
	 * creating the branch at once could both pass and the later one would
	 * overwrite the earlier one's commit. The old-value check against the zero
	 * id is made under the lock (GIT_EMODIFIED when the ref appeared). */
	if (!tip) {
		memset(&zero, 0, sizeof(zero));
		tip = &zero;
	}
	rc = store_remote_ref_update(s, rr, s->head, commit, tip, "profgate: history append");
	if (rc == GIT_ELOCKED) {
		a = ATTEMPT_RETRY;
	} else if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ENOTFOUND) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "the branch moved during the push (%s)",
			     store_git_why());
	} else if (rc < 0) {
		a = ATTEMPT_FAIL;
		pg_error_set(PG_EDELIVERY, "cannot update %s in '%s': %s", s->branch, s->local,
			     store_git_why());
	}
out:
	git_reference_free(ref);
	git_repository_free(rr);
	return a;
}

/* PROFGATE_TEST_PUSH_DELAY_MS widens the window between the fetch and the
 * push, so that tests can make jobs race on purpose (every job sees the same
 * tip, all but one must be refused and rebuild); unset in real use. */
void store_push_delay(void)
{
	const char *v = getenv("PROFGATE_TEST_PUSH_DELAY_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;

	if (ms > 0 && ms <= 10000)
		store_sleep_ms((uint32_t)ms);
}
