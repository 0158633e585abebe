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
 *
 * Faults. Everything is bounded by the time budget (60 s, or
 * PROFGATE_HISTORY_TIMEOUT_S): the waits between attempts, the lock, and,
 * through net/'s sockets for libgit2 (which has no timeout of its own in
 * 1.5), every read and write of a fetch or push, so a server that hangs or
 * drips cannot hold profgate; libgit2's progress callbacks stop the work it
 * does between reads and writes (indexing or building a large pack) at the
 * same deadline. The private repository is only a
 * cache: one that cannot be opened or read (truncated objects, a garbled
 * ref, HEAD or config) is removed and made anew, once per append, compaction
 * or read, and fetched again. An append or compaction to a local remote
 * takes the remote's object store as an alternate of the private repository
 * and its branch as the fetched tip (fetch_local), so nothing is copied.
 *
 * Pending records. A record whose push failed is kept by the caller as the
 * exact line (history_pending_save: the action's output folder, else the
 * cache's folder for this remote and branch) and delivered by
 * history_flush(), or by the next history_append() once its own record is on
 * the branch, through the same append loop: a push that landed unreported
 * (the server died before it answered) is found by its id and not doubled.
 *
 * The layout: the branch and one ref per series. Appends write
 * <series>/<YYYY-MM>.jsonl on the branch. `history compact`
 * (history_compact() below) moves every month before the newest one (the
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
 * How a read works. A read costs the series asked for, not the history
 * written: the records of the branch's tip and of the series refs, each
 * record once (by id: a compaction stopped between its two pushes leaves
 * what it moved in both places until the next one). A local remote (a path
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
 *
 * Compaction and its races. history_compact() fetches the tip T and every
 * series ref, builds each moved series' new commit on its fetched ref
 * (merging a month the ref has already by record id) and the root commit C,
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
 * reads the branch first (the record refs before it: a compaction folds
 * them into C and removes them after C is the branch). An appender that
 * built on T is refused and pushes its record to its own ref; one
 * whose record's month is closed in the index (a pending record delivered
 * late) also fetches that series' ref and checks the id there
 * (closed_has), so a landed record moved by a compaction is not doubled.
 * An existing branch is read as it is (no series refs: every month on the
 * branch) and converted by its first compaction. Writers compact by
 * themselves once their record is delivered, when it is due (auto_compact).
 */
#include "history.h"

#include "../net/http.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <git2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define DEFAULT_SECONDS 60
#define MAX_SECONDS	3600
#define BACKOFF_BASE_MS 200
#define BACKOFF_CAP_MS	4000
#define MIN_ATTEMPT_S	0.2 /* no retry starts with less of the budget left */
#define BOT_NAME	"profgate-bot"
#define BOT_EMAIL	"profgate-bot@users.noreply.github.com"
/* What a compaction pushes, as refs of the private repository. */
#define COMPACT_HEAD	"refs/profgate/compact/head"
#define COMPACT_ARCHIVE "refs/profgate/compact/archive"
#define COMPACT_SERIES	"refs/profgate/compact/series/" /* + <series> */
/* The closed months of each series: SERIES_REFS<branch>@/<series>. '@' is in
 * no branch name (history_branch_check), so a prefix names one branch. */
#define SERIES_REFS "refs/profgate/series/"
/* The blob at the root of a compacted tip naming its open month and the
 * series refs it was made with (compact_index); a reserved series name. */
#define INDEX_NAME HISTORY_INDEX_NAME
/* A record whose push to the branch lost a race: its own ref,
 * RECORD_REFS<branch>@/<series>/<record_id>, one root commit holding its
 * line, until a compaction folds it into the branch. */
#define RECORD_REFS "refs/profgate/records/"
/* A writer compacts once its record is delivered when this many record refs
 * wait to be folded, or when the branch holds this many closed months. */
#define FOLD_AT_RECORDS	  32
#define COMPACT_AT_MONTHS 3
/* The share of the budget an append's fetch of the branch leaves for
 * pushing the record to its own ref instead. */
#define OWN_REF_RESERVE_SHARE 0.25

/* RENEW: the private repository failed, not the remote: make it anew. */
enum attempt { ATTEMPT_DONE, ATTEMPT_RETRY, ATTEMPT_FAIL, ATTEMPT_RENEW };

struct store {
	const struct history_store_opts *o;
	const char *branch;
	char *url;   /* what libgit2 connects to (no credentials in it) */
	char *local; /* the remote repository's path when it is local; else NULL */
	char *cache, *dir, *lock_path;
	int lock_fd;
	git_repository *repo;
	git_remote *remote;
	char *tracking; /* refs/remotes/origin/<branch> */
	char *seen;	/* refs/profgate/seen/<branch>: the tip the last fetch got */
	char *head;	/* refs/heads/<branch>: what is pushed */
	char *series;	/* refs/profgate/series/<branch>@/: the series refs, here and there */
	char *records;	/* refs/profgate/records/<branch>@/: the records not folded yet */
	double deadline;
	uint32_t budget_s;
	double move_until; /* a compaction moves no more series after this (0: no limit) */
	uint64_t rng;
	int renewed; /* the private repository was made anew once already */
	/* per network operation */
	int cred_calls;
	char *status;	    /* a refused ref update (push_update_reference) */
	struct pg_buf said; /* what the server printed ("remote: ..."), raw */
	int out_of_time;    /* a progress callback stopped the operation at the deadline */
	int connected;	    /* s->remote has made a connection (a new one per attempt) */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(uint32_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The message of the libgit2 call that just failed; git_error_last() can be
 * stale after a success, so it is read only on failure. Redacted whole, then
 * cut: a token cut in two would no longer be found. */
static const char *git_why(void)
{
	static _Thread_local char msg[512];
	const git_error *e = git_error_last();
	char *all =
	    pg_xstrdup(e && e->message && *e->message ? e->message : "unknown libgit2 error");
	size_t n;

	pg_secret_redact(all);
	snprintf(msg, sizeof(msg), "%s", all);
	free(all);
	n = strlen(msg); /* our lines have no full stop; libgit2's do */
	while (n && (msg[n - 1] == '.' || msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = 0;
	return msg;
}

static void logf_(struct store *s, const char *fmt, ...) PG_PRINTF(2, 3);
static void logf_(struct store *s, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;

	if (!s->o->log)
		return;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	s->o->log(s->o->payload, tmp);
}

/* ---- the cache ---- */

char *history_cache_dir(void)
{
	return pg_cache_dir();
}

/* mkdir -p of the history's private folders (0700). */
static int mkdir_p(const char *path)
{
	if (pg_mkdir_p(path, 0700) == 0)
		return 0;
	return pg_error_set(PG_EIO, "history: %s", pg_error_last());
}

/* ---- opening ---- */

static int is_http(const char *url)
{
	return strncmp(url, "https://", 8) == 0 || strncmp(url, "http://", 7) == 0;
}

/* A path, file:// or http(s):// URL; ssh and scp-like remotes are refused
 * (their credentials are keys, not the token), and so are URLs that carry
 * credentials: libgit2 would send them before the token and show them in its
 * messages, and profgate prints the remote in its own. */
static int resolve_remote(struct store *s, const char *remote)
{
	const char *colon = strchr(remote, ':'), *slash = strchr(remote, '/');
	char *real;

	if (is_http(remote)) {
		if (http_url_has_userinfo(remote))
			return pg_error_set(
			    PG_EUSAGE, "history: the remote URL holds credentials "
				       "(user:password@host): give the URL without them and the "
				       "token in PROFGATE_GIT_TOKEN or GITHUB_TOKEN");
		s->url = pg_xstrdup(remote);
		return 0;
	}
	if (strncmp(remote, "file://", 7) == 0) {
		s->url = pg_xstrdup(remote);
		s->local = pg_xstrdup(remote + 7);
		return 0;
	}
	if (strstr(remote, "://") || (colon && (!slash || colon < slash)))
		return pg_error_set(PG_EUSAGE,
				    "history: remote '%s': give a path, a file:// URL or an "
				    "https:// URL",
				    remote);
	if (!(real = realpath(remote, NULL)))
		return pg_error_set(PG_EUSAGE, "history: remote '%s': %s", remote, strerror(errno));
	s->url = real;
	s->local = pg_xstrdup(real);
	return 0;
}

/* A local remote must be a bare repository: git refuses pushes into the
 * checked-out branch of a work tree, and so does profgate. */
static int check_local(struct store *s)
{
	git_repository *rr = NULL;
	int rc = 0;

	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0)
		rc = pg_error_set(PG_EUSAGE, "history: remote '%s' is not a git repository (%s)",
				  s->local, git_why());
	else if (!git_repository_is_bare(rr))
		rc = pg_error_set(PG_EUSAGE,
				  "history: remote '%s' is not a bare repository (create one with "
				  "'git init --bare')",
				  s->local);
	git_repository_free(rr);
	return rc;
}

/* The private repository's paths; nothing is created until it is used (a
 * read of a local remote never uses it, so needs no cache folder). */
static void open_private(struct store *s)
{
	struct pg_sha256 sha;
	char hex[65];
	char *repos;

	pg_sha256_init(&sha);
	pg_sha256_update(&sha, s->url, strlen(s->url));
	pg_sha256_hex(&sha, hex);
	repos = pg_xasprintf("%s/repos", s->cache);
	s->dir = pg_xasprintf("%s/%.16s.git", repos, hex);
	s->lock_path = pg_xasprintf("%s/%.16s.lock", repos, hex);
	free(repos);
}

static void store_release(struct store *s)
{
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	git_remote_free(s->remote);
	git_repository_free(s->repo);
	free(s->url);
	free(s->local);
	free(s->cache);
	free(s->dir);
	free(s->lock_path);
	free(s->tracking);
	free(s->seen);
	free(s->head);
	free(s->series);
	free(s->records);
	free(s->status);
	pg_buf_release(&s->said);
	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
}

/* Only the private repository's own config: the user's global and system
 * git configs (url rewrites, hooks, credentials helpers) are not read. */
static void isolate_config(void)
{
	static const int levels[] = {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG,
				     GIT_CONFIG_LEVEL_GLOBAL, GIT_CONFIG_LEVEL_PROGRAMDATA};

	for (size_t i = 0; i < PG_ARRAY_LEN(levels); i++)
		git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "");
}

int history_branch_check(const char *branch)
{
	size_t n = strlen(branch);
	char *ref;
	int valid;

	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/",
			    branch[i]))
			return pg_error_set(PG_EUSAGE,
					    "history: branch '%s': use letters, digits, '.', '_', "
					    "'-' and '/'",
					    branch);
	if (n == 0 || n > 200 || branch[0] == '-' || strcmp(branch, "HEAD") == 0 ||
	    strncmp(branch, "refs/", 5) == 0)
		return pg_error_set(PG_EUSAGE,
				    "history: branch '%s': not empty, at most 200 characters, not "
				    "starting with '-' or 'refs/', not HEAD",
				    branch);
	ref = pg_xasprintf("refs/heads/%s", branch);
	git_libgit2_init(); /* counted: callers may or may not hold it already */
	valid = git_reference_is_valid_name(ref);
	git_libgit2_shutdown();
	free(ref);
	if (!valid)
		return pg_error_set(PG_EUSAGE, "history: '%s' is not a valid branch name", branch);
	return 0;
}

/* The time budget: the caller's, else PROFGATE_HISTORY_TIMEOUT_S, else 60 s. */
static int budget_s(const struct history_store_opts *o, uint32_t *out)
{
	const char *v = getenv("PROFGATE_HISTORY_TIMEOUT_S");
	int64_t n;

	*out = o->max_seconds ? o->max_seconds : DEFAULT_SECONDS;
	if (o->max_seconds || !v || !*v)
		return 0;
	if (pg_parse_int(v, 1, MAX_SECONDS, &n))
		return pg_error_set(
		    PG_EUSAGE,
		    "PROFGATE_HISTORY_TIMEOUT_S='%.40s': give a whole number from 1 "
		    "to %u",
		    v, MAX_SECONDS);
	*out = (uint32_t)n;
	return 0;
}

/* libgit2's sockets: cut at the budget, connect and stalls as for HTTP. */
static int store_streams(struct store *s)
{
	struct http_env_limits env;
	uint32_t connect_s = HTTP_DEFAULT_CONNECT_S, idle_s = HTTP_DEFAULT_STALL_S;

	if (http_env_limits(&env))
		return PG_EUSAGE;
	if (env.timeout_s && env.timeout_s < connect_s)
		connect_s = env.timeout_s;
	if (env.timeout_s && env.timeout_s < idle_s)
		idle_s = env.timeout_s;
	return http_git_streams(s->deadline, connect_s, idle_s,
				!s->local && strncmp(s->o->remote, "https://", 8) == 0);
}

/* The token and the Basic form git sends it in: no message may carry either. */
static void secret_add_basic(const char *user, const char *token)
{
	struct pg_buf raw = PG_BUF_INIT, b64 = PG_BUF_INIT;

	if (!token || !*token)
		return;
	pg_secret_add(token);
	pg_buf_addf(&raw, "%s:%s", user, token);
	pg_base64_encode(&b64, raw.ptr, raw.len);
	pg_secret_add(b64.ptr);
	pg_buf_release(&raw);
	pg_buf_release(&b64);
}

static int store_open(struct store *s, const struct history_store_opts *o)
{
	uint32_t budget;
	int rc;

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	s->o = o;
	secret_add_basic("x-access-token", o->token);
	s->branch = o->branch ? o->branch : HISTORY_DEFAULT_BRANCH;
	if ((rc = budget_s(o, &budget)))
		return rc;
	s->deadline = now_s() + budget;
	s->budget_s = budget;
	s->rng = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(now_s() * 1e9);
	s->tracking = pg_xasprintf("refs/remotes/origin/%s", s->branch);
	s->seen = pg_xasprintf("refs/profgate/seen/%s", s->branch);
	s->head = pg_xasprintf("refs/heads/%s", s->branch);
	s->series = pg_xasprintf(SERIES_REFS "%s@/", s->branch);
	s->records = pg_xasprintf(RECORD_REFS "%s@/", s->branch);
	if ((rc = history_branch_check(s->branch)))
		return rc;
	if ((rc = resolve_remote(s, o->remote)) || (s->local && (rc = check_local(s))))
		return rc;
	s->cache = o->cache_dir ? pg_xstrdup(o->cache_dir) : history_cache_dir();
	open_private(s);
	return store_streams(s);
}

/* Jobs on one machine share the private repository: one at a time, waiting
 * no longer than the time budget. */
static int store_lock(struct store *s)
{
	if (s->lock_fd < 0) {
		char *repos = pg_xasprintf("%s/repos", s->cache);
		int rc = mkdir_p(repos);

		free(repos);
		if (rc)
			return rc;
		s->lock_fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	}
	if (s->lock_fd < 0)
		return pg_error_set(PG_EIO, "history: cannot open '%s': %s", s->lock_path,
				    strerror(errno));
	while (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return pg_error_set(PG_EIO, "history: cannot lock '%s': %s", s->lock_path,
					    strerror(errno));
		if (now_s() > s->deadline)
			return pg_error_set(PG_EDELIVERY,
					    "history: '%s' stayed locked by another profgate",
					    s->lock_path);
		sleep_ms(20);
	}
	return 0;
}

static void store_unlock(struct store *s)
{
	if (s->lock_fd >= 0)
		flock(s->lock_fd, LOCK_UN);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Drop the private repository (a cache: the remote holds the history). */
static int store_discard(struct store *s, const char *why)
{
	struct stat st;

	git_remote_free(s->remote);
	git_repository_free(s->repo);
	s->remote = NULL;
	s->repo = NULL;
	s->renewed = 1;
	if (lstat(s->dir, &st) != 0 && errno == ENOENT)
		return 0;
	logf_(s, "history: the private repository '%s' is damaged (%s); making it anew", s->dir,
	      why);
	if (nftw(s->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return pg_error_set(PG_EIO,
				    "history: cannot remove the damaged repository '%s': %s",
				    s->dir, strerror(errno));
	return 0;
}

/* 1 (why set) when a ref under refs/profgate/ (the series refs, the seen
 * ref, what a compaction made) cannot be read or names an object the
 * private repository does not hold. */
static int profgate_refs_broken(struct store *s, git_odb *odb, char *why, size_t len)
{
	git_reference_iterator *it = NULL;
	git_reference *ref = NULL;
	int r, rc = 0;

	if (git_reference_iterator_glob_new(&it, s->repo, "refs/profgate/*") < 0) {
		snprintf(why, len, "refs/profgate/: %s", git_why());
		return 1;
	}
	while (!rc && (r = git_reference_next(&ref, it)) != GIT_ITEROVER) {
		if (r < 0) {
			snprintf(why, len, "refs/profgate/: %s", git_why());
			rc = 1;
		} else if (git_reference_target(ref) &&
			   !git_odb_exists(odb, git_reference_target(ref))) {
			snprintf(why, len, "%s names an object it does not hold",
				 git_reference_name(ref));
			rc = 1;
		}
		git_reference_free(ref);
		ref = NULL;
	}
	git_reference_iterator_free(it);
	return rc;
}

/* 1 when the loose object at path does not inflate to its end: libgit2 1.5
 * reads a truncated one forever (its zstream loop makes no progress on
 * zlib's Z_BUF_ERROR, libgit2#7342), so each is inflated here first, its
 * output discarded. */
static int loose_truncated(const char *path)
{
	unsigned char in[16384], out[65536];
	z_stream z;
	int fd = open(path, O_RDONLY | O_CLOEXEC), zr = Z_OK, bad = 1;
	ssize_t n;

	if (fd < 0)
		return errno != ENOENT; /* one pruned meanwhile is no damage */
	memset(&z, 0, sizeof(z));
	if (inflateInit(&z) != Z_OK) {
		close(fd);
		return 1;
	}
	while (zr != Z_STREAM_END && (n = read(fd, in, sizeof(in))) > 0) {
		z.next_in = in;
		z.avail_in = (uInt)n;
		do {
			z.next_out = out;
			z.avail_out = sizeof(out);
			zr = inflate(&z, Z_NO_FLUSH);
		} while (zr == Z_OK && (z.avail_in || !z.avail_out));
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			break;
	}
	bad = zr != Z_STREAM_END;
	inflateEnd(&z);
	close(fd);
	return bad;
}

/* 1 (why set) when a loose object of the private repository is truncated or
 * is not zlib at all; -1 when the check ran past the deadline. The loose objects
 * are the commits this cache built; fetched ones stay in packs. */
static int loose_broken(struct store *s, char *why, size_t len)
{
	char *objects = pg_xasprintf("%s/objects", s->dir), *path = NULL;
	DIR *top = opendir(objects), *sub = NULL;
	struct dirent *d, *e;
	int rc = 0;

	while (!rc && top && (d = readdir(top))) {
		if (strlen(d->d_name) != 2 || !isxdigit((unsigned char)d->d_name[0]) ||
		    !isxdigit((unsigned char)d->d_name[1]))
			continue;
		free(path);
		path = pg_xasprintf("%s/%s", objects, d->d_name);
		if (!(sub = opendir(path)))
			continue;
		while (!rc && (e = readdir(sub))) {
			char *obj;

			if (strlen(e->d_name) != 38 || strspn(e->d_name, "0123456789abcdef") != 38)
				continue;
			obj = pg_xasprintf("%s/%s", path, e->d_name);
			if (loose_truncated(obj)) {
				snprintf(why, len, "the object %s%s is truncated", d->d_name,
					 e->d_name);
				rc = 1;
			} else if (now_s() > s->deadline) {
				rc = -1;
			}
			free(obj);
		}
		closedir(sub);
	}
	if (top)
		closedir(top);
	free(path);
	free(objects);
	return rc;
}

/* Why the opened private repository cannot be used, into why; 0 when it
 * can. Our refs must name objects it holds: a fetch from a repository that
 * lost them fails late, and libgit2 1.5 leaks on that path. */
static int store_broken(struct store *s, char *why, size_t len)
{
	const char *names[5] = {s->head, s->tracking, s->seen, COMPACT_HEAD, COMPACT_ARCHIVE};
	git_odb *odb = NULL;
	git_oid id;
	int rc = 0;

	if (git_repository_odb(&odb, s->repo) < 0) {
		snprintf(why, len, "%s", git_why());
		return 1;
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(names) && !rc; i++) {
		int r = git_reference_name_to_id(&id, s->repo, names[i]);

		if (r < 0 && r != GIT_ENOTFOUND) {
			snprintf(why, len, "%s: %s", names[i], git_why());
			rc = 1;
		} else if (r == 0 && !git_odb_exists(odb, &id)) {
			snprintf(why, len, "%s names an object it does not hold", names[i]);
			rc = 1;
		}
	}
	if (!rc)
		rc = profgate_refs_broken(s, odb, why, len);
	git_odb_free(odb);
	return rc;
}

/* A new anonymous remote, and with it a new connection for the next fetch
 * or push: libgit2 keeps an http connection alive inside a remote's
 * transport across operations, and one that the server closed while an
 * attempt backed off, or while the commit was built on a loaded machine,
 * fails the next request ("unexpected EOF"). No
 * url.*.insteadOf rewriting: the remote is what the user named (that lookup
 * also leaks in libgit2 1.5.1: libgit2#6382). */
static int store_remote(struct store *s)
{
	git_remote_create_options ro;

	git_remote_free(s->remote);
	s->remote = NULL;
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = s->repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&s->remote, s->url, &ro) < 0) {
		s->remote = NULL;
		return pg_error_set(PG_EUSAGE, "remote '%s': %s", s->url, git_why());
	}
	return 0;
}

/*
 * A local remote is read in place: its object store is made an alternate of
 * the private repository's (in memory, never written to
 * objects/info/alternates), so fetching is reading the branch's ref
 * (fetch_local), whatever the size of the history. libgit2 1.5's local
 * transport would copy every object through a pack, and its delta search
 * does not stop when a progress callback asks it to: it ran far past the
 * budget. Returns 0, or PG_EDELIVERY with the message set.
 */
static int local_alternate(struct store *s)
{
	git_repository *rr = NULL;
	git_odb *odb = NULL;
	char *objects = NULL;
	int rc = 0;

	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, git_why());
		goto out;
	}
	objects = pg_xasprintf("%sobjects", git_repository_path(rr));
	if (git_repository_odb(&odb, s->repo) < 0 || git_odb_add_disk_alternate(odb, objects) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot read the objects of '%s': %s", s->local,
				  git_why());
out:
	git_odb_free(odb);
	git_repository_free(rr);
	free(objects);
	return rc;
}

/* Open (or create) the private repository and its anonymous remote; done
 * under the lock, so that two jobs do not both create it. One that exists
 * but cannot be opened or used is made anew. */
static int store_repo(struct store *s)
{
	struct stat st;
	char why[512];
	int loose;

	if (s->repo)
		return 0;
	if ((loose = loose_broken(s, why, sizeof(why))) < 0)
		return pg_error_set(PG_EDELIVERY,
				    "history: out of time checking the objects of '%s' (the budget "
				    "is PROFGATE_HISTORY_TIMEOUT_S)",
				    s->dir);
	if (git_repository_open_ext(&s->repo, s->dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		s->repo = NULL;
		snprintf(why, sizeof(why), "%s", git_why());
	} else if (loose || (s->local && local_alternate(s)) || store_broken(s, why, sizeof(why))) {
		git_repository_free(s->repo);
		s->repo = NULL;
	}
	if (!s->repo) {
		if (lstat(s->dir, &st) == 0 && !s->renewed && store_discard(s, why))
			return PG_EIO;
		if (git_repository_init(&s->repo, s->dir, 1) < 0) {
			s->repo = NULL;
			return pg_error_set(PG_EIO, "cannot create the repository '%s': %s", s->dir,
					    git_why());
		}
		if (s->local && local_alternate(s))
			return PG_EDELIVERY;
	}
	return store_remote(s);
}

/* ---- callbacks ---- */

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
	if (now_s() < s->deadline)
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

static void callbacks(struct store *s, git_remote_callbacks *cb)
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

/* ---- one attempt ---- */

/* A failure of the private repository (its files), not of the remote. */
static int local_failure(void)
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
static enum attempt classify(struct store *s, int rc)
{
	const char *why = git_why();

	if (rc == GIT_EAUTH || rc == GIT_ECERTIFICATE || strstr(why, "status code: 401") ||
	    strstr(why, "status code: 403") || strstr(why, "status code: 404") ||
	    strstr(why, "authentication"))
		return ATTEMPT_FAIL;
	if (local_failure())
		return ATTEMPT_RENEW;
	return s->local ? ATTEMPT_FAIL : ATTEMPT_RETRY;
}

/* The name of series' ref (s->series<series>), or NULL when series cannot be
 * a ref's last component: such a folder's months stay on the branch. */
static char *series_ref(const struct store *s, const char *series)
{
	char *ref = pg_xasprintf("%s%s", s->series, series);

	if (!*series || strchr(series, '/') || !git_reference_is_valid_name(ref)) {
		free(ref);
		return NULL;
	}
	return ref;
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
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, git_why());
		return ATTEMPT_FAIL;
	}
	r = git_reference_name_to_id(&id, rr, s->head);
	if (r < 0 && r != GIT_ENOTFOUND) {
		pg_error_set(PG_EDELIVERY, "cannot read %s in '%s': %s", s->branch, s->local,
			     git_why());
		a = ATTEMPT_FAIL;
	} else if ((r == 0 && git_reference_create(&ref, s->repo, s->tracking, &id, 1,
						   "profgate: fetch") < 0) ||
		   (series && copy_series_refs(s, rr, series) < 0) ||
		   (records && copy_series_refs(s, rr, records) < 0)) {
		pg_error_set(PG_EDELIVERY, "cannot fetch '%s' from '%s': %s", s->branch, s->local,
			     git_why());
		a = local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
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
static enum attempt store_fetch(struct store *s, const char *series, const char *records)
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
	callbacks(s, &fo.callbacks);
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	fo.update_fetchhead = 0;
	fo.prune = series || records ? GIT_FETCH_PRUNE : GIT_FETCH_NO_PRUNE;
	fo.proxy_opts.type = GIT_PROXY_AUTO;
	git_error_clear();
	rc = git_remote_fetch(s->remote, &specs, &fo, NULL);
	if (rc < 0) {
		a = classify(s, rc);
		pg_error_set(PG_EDELIVERY, "cannot fetch '%s' from '%s': %s", s->branch, s->url,
			     git_why());
	}
out:
	for (size_t i = 0; i < specs.count; i++)
		free(spec[i]);
	return a;
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

static int is_gz(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && strcmp(name + n - 3, ".gz") == 0;
}

static int gz_deflate(const char *text, size_t len, struct pg_buf *out)
{
	z_stream z;
	uLong bound;
	int zr;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return pg_error_set(PG_EIO, "history: cannot compress a shard (zlib)");
	bound = deflateBound(&z, len);
	pg_buf_grow(out, bound);
	z.next_in = (Bytef *)text;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out->ptr + out->len;
	z.avail_out = (uInt)bound;
	zr = deflate(&z, Z_FINISH);
	out->len += z.total_out;
	out->ptr[out->len] = 0;
	deflateEnd(&z);
	return zr == Z_STREAM_END ? 0
				  : pg_error_set(PG_EIO, "history: cannot compress a shard (zlib)");
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
static int blob_text(const git_blob *blob, const char *name, struct pg_buf *out)
{
	const char *p = git_blob_rawcontent(blob);
	size_t n = (size_t)git_blob_rawsize(blob);

	if (is_gz(name))
		return gz_inflate(p, n, name, out);
	pg_buf_add(out, p, n);
	return 0;
}

/* The shard's bytes at the tip (empty when absent), into content. */
static int read_shard(struct store *s, git_tree *base, const char *shard, struct pg_buf *content)
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
		return pg_error_set(PG_EDELIVERY, "%s: %s", shard, git_why());
	if (git_tree_entry_type(entry) != GIT_OBJECT_BLOB)
		rc = pg_error_set(PG_EDELIVERY, "%s on branch %s is not a file", shard, s->branch);
	else if (git_blob_lookup(&blob, s->repo, git_tree_entry_id(entry)) < 0)
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", shard, git_why());
	else
		rc = blob_text(blob, shard, content);
	git_blob_free(blob);
	git_tree_entry_free(entry);
	return rc;
}

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
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir, git_why());
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
	git_error_clear(); /* local_failure() reads the class of what fails here */
	if (tip &&
	    (git_commit_lookup(&parent, s->repo, tip) < 0 || git_commit_tree(&base, parent) < 0)) {
		rc = pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, git_why());
		goto out;
	}
	if ((rc = read_shard(s, base, shard, &content)))
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
static enum attempt push_outcome(struct store *s, int rc, const char *moved, const char *what)
{
	struct pg_buf said = PG_BUF_INIT;
	enum attempt a = ATTEMPT_DONE;

	remote_text(s, &said);
	if (rc == GIT_ENONFASTFORWARD) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "%s (non-fast-forward)", moved);
	} else if (rc < 0) {
		a = classify(s, rc);
		pg_error_set(PG_EDELIVERY, "push to '%s' failed: %s%s%s%s", s->url, git_why(),
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
 * error left from an earlier attempt for push_outcome() to read. */
static void push_options(struct store *s, git_push_options *po)
{
	git_push_options_init(po, GIT_PUSH_OPTIONS_VERSION);
	callbacks(s, &po->callbacks);
	po->proxy_opts.type = GIT_PROXY_AUTO;
	free(s->status);
	s->status = NULL;
	git_error_clear();
}

/* Push the private ref to the same name there, never forced: the branch
 * (moved: someone appended since the fetch) or a record's ref. */
static enum attempt push_smart(struct store *s, const char *ref, const char *moved)
{
	git_push_options po;
	char *spec = pg_xasprintf("%s:%s", ref, ref); /* no '+': never forced */
	git_strarray specs = {&spec, 1};
	int rc;

	push_options(s, &po);
	rc = git_remote_push(s->remote, &specs, &po);
	enum attempt a = push_outcome(s, rc, moved, "update");
	free(spec);
	return a;
}

/* The objects of commits (n of them) that the hidden commits (m) lack, as
 * one pack into the remote's store. */
static int pack_commits(struct store *s, git_repository *rr, const git_oid *commits, size_t n,
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
				  git_why());
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	free(dir);
	return rc;
}

/* The new objects (what tip lacks) as one pack into the remote's store. */
static int pack_into(struct store *s, git_repository *rr, const git_oid *commit, const git_oid *tip)
{
	return pack_commits(s, rr, commit, 1, tip, tip ? 1 : 0);
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
		if ((errno != EWOULDBLOCK && errno != EINTR) || now_s() > s->deadline) {
			close(fd);
			fd = -1;
		} else {
			sleep_ms(5);
		}
	}
	if (fd >= 0 && (n = pread(fd, name, sizeof(name) - 1, 0)) > 0) {
		name[n] = 0;
		name[strcspn(name, "\n")] = 0;
		if (strncmp(name, "refs/", 5) == 0 && !strstr(name, "..")) {
			lock = pg_xasprintf("%s%s.lock", gitdir, name);
			if (unlink(lock) == 0)
				logf_(
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
static int remote_ref_update(struct store *s, git_repository *rr, const char *name,
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
			logf_(s, "history: cannot clear '%s%s': %s", gitdir, REF_NOTE,
			      strerror(errno));
		close(fd);
	}
	return rc;
}

/* Push to a local remote: objects first, then the ref moved only if it still
 * points at the tip this commit was built on (or, for an orphan, only if it
 * still does not exist). */
static enum attempt push_local(struct store *s, const git_oid *commit, const git_oid *tip)
{
	git_repository *rr = NULL;
	git_reference *ref = NULL;
	git_oid zero;
	enum attempt a = ATTEMPT_DONE;
	int rc;

	if (git_repository_open_ext(&rr, s->local, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL) < 0) {
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, git_why());
		return ATTEMPT_FAIL;
	}
	if ((!tip && local_clash(s, rr)) || pack_into(s, rr, commit, tip)) {
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
	rc = remote_ref_update(s, rr, s->head, commit, tip, "profgate: history append");
	if (rc == GIT_ELOCKED) {
		a = ATTEMPT_RETRY;
	} else if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ENOTFOUND) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "the branch moved during the push (%s)", git_why());
	} else if (rc < 0) {
		a = ATTEMPT_FAIL;
		pg_error_set(PG_EDELIVERY, "cannot update %s in '%s': %s", s->branch, s->local,
			     git_why());
	}
out:
	git_reference_free(ref);
	git_repository_free(rr);
	return a;
}

/* ---- a record's own ref ---- */

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
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir, git_why());
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
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, git_why());
		return ATTEMPT_FAIL;
	}
	if (pack_into(s, rr, commit, NULL)) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	rc = remote_ref_update(s, rr, ref, commit, &zero, "profgate: history append (own ref)");
	if (rc < 0 && git_reference_name_to_id(&have, rr, ref) == 0 && git_oid_equal(&have, commit))
		rc = 0;
	if (rc == GIT_EMODIFIED || rc == GIT_EEXISTS || rc == GIT_ELOCKED) {
		a = ATTEMPT_RETRY;
		pg_error_set(PG_EDELIVERY, "%s changed during the push (%s)", ref, git_why());
	} else if (rc < 0) {
		a = ATTEMPT_FAIL;
		pg_error_set(PG_EDELIVERY, "cannot create %s in '%s': %s", ref, s->local,
			     git_why());
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
		return local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
	if (s->local)
		return push_record_local(s, ref, commit);
	if (store_remote(s))
		return ATTEMPT_FAIL;
	return push_smart(s, ref, "the record's ref holds another commit");
}

/* PROFGATE_TEST_PUSH_DELAY_MS widens the window between the fetch and the
 * push, so that tests can make jobs race on purpose (every job sees the same
 * tip, all but one must be refused and rebuild); unset in real use. */
static void push_delay(void)
{
	const char *v = getenv("PROFGATE_TEST_PUSH_DELAY_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;

	if (ms > 0 && ms <= 10000)
		sleep_ms((uint32_t)ms);
}

/* The open month the index at tip names, into open ("": no index, an
 * uncompacted branch whose months are all on it). */
static void index_open(struct store *s, const git_oid *tip, char open[8])
{
	git_commit *c = NULL;
	git_tree *root = NULL;
	struct pg_buf text = PG_BUF_INIT;
	const char *p;

	open[0] = 0;
	if (git_commit_lookup(&c, s->repo, tip) == 0 && git_commit_tree(&root, c) == 0 &&
	    read_shard(s, root, INDEX_NAME, &text) == 0 && text.len) {
		pg_buf_addc(&text, 0);
		if ((p = strstr(text.ptr, "\nopen ")) && strlen(p + 6) >= 7)
			snprintf(open, 8, "%.7s", p + 6);
	}
	pg_buf_release(&text);
	git_tree_free(root);
	git_commit_free(c);
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
	index_open(s, tip, open);
	if (!month || !*open || strncmp(month + 1, open, 7) >= 0 ||
	    !(ref = series_ref(s, r->series)))
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
		    read_shard(s, root, gz, &text)) {
			pg_error_set(PG_EDELIVERY, "%s: %s", ref, git_why());
			a = local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
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
	git_oid tip;
	enum attempt a;
	int has_tip;

	*already = *raced = 0;
	if (store_repo(s) || (s->connected && store_remote(s)))
		return ATTEMPT_FAIL;
	s->connected = 1; /* every later attempt on a new connection */
	/* the fetch leaves a part of the budget for the record's own ref: a
	 * branch too long to fetch in time (a first fetch of years of records
	 * in the old layout) cannot keep the record from being delivered */
	s->deadline -= OWN_REF_RESERVE_SHARE * s->budget_s;
	a = store_fetch(s, NULL, all);
	s->deadline += OWN_REF_RESERVE_SHARE * s->budget_s;
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
		return local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
	if (*already)
		return ATTEMPT_DONE;
	push_delay();
	/* the push on a new connection too: under load the fetch's, kept alive,
	 * can sit idle past the server's keep-alive timeout while the commit is
	 * built (seen with 64 writers on 2 cores) */
	if (!s->local && store_remote(s))
		return ATTEMPT_FAIL;
	a = s->local ? push_local(s, commit, has_tip ? &tip : NULL)
		     : push_smart(s, s->head, "the branch moved since the fetch");
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
static int retry_loop(struct store *s, enum attempt (*once)(struct store *, void *), void *ctx,
		      const char *what, uint32_t *attempts)
{
	double start = now_s();
	char prev[1024] = "";

	for (uint32_t n = 1;; n++) {
		enum attempt a;
		double left;
		uint32_t wait;
		char cause[1024];

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
		 * before it says why the remote keeps failing */
		left = s->deadline - now_s();
		if (n > 1 && *prev && left <= 0)
			return pg_error_set(
			    PG_EDELIVERY,
			    "history: %sgave up after %u attempts in %.1f s: %s (the last "
			    "attempt ran out of the time budget)",
			    what, n, now_s() - start, prev);
		if (left < MIN_ATTEMPT_S)
			return pg_error_set(
			    PG_EDELIVERY,
			    "history: %sgave up after %u attempt%s in %.1f s (the time "
			    "budget): %s",
			    what, n, n == 1 ? "" : "s", now_s() - start, cause);
		wait = backoff_ms(s, n);
		if (wait / 1e3 > left - MIN_ATTEMPT_S) /* one last try before the deadline */
			wait = (uint32_t)((left - MIN_ATTEMPT_S) * 1e3);
		snprintf(prev, sizeof(prev), "%s", cause);
		logf_(s,
		      "history: %sattempt %u (%.1f s of the budget left): %s; retrying in %.2f s",
		      what, n, left, cause, wait / 1e3);
		sleep_ms(wait);
	}
}

/* An append's attempt, for retry_loop. */
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

/* Attempts until r is on the branch (retry_loop). */
static int append_loop(struct store *s, const struct history_record *r, const char *shard,
		       const struct pg_buf *line, struct history_append_result *res)
{
	struct append_job j = {r, shard, line, res};

	return retry_loop(s, append_once, &j, "", &res->attempts);
}

static void auto_compact(struct store *s);

/* ---- pending records ---- */

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
	if (resolve_remote(&t, o->remote) == 0)
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
static int pending_dirs(const struct history_store_opts *o, char *dirs[3], int create)
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
	int n = pending_dirs(o, dirs, 1);

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
			logf_(s, "history: pending record '%s': %s; left in place", path,
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
		rc = append_loop(s, &p[i].r, shard.ptr, &line, &one);
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
static int pending_deliver_all(struct store *s, char **dirs, int n, const char *skip_id,
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
	isolate_config();
	if ((rc = store_open(&s, o)))
		goto out;
	if (dir)
		dirs[n++] = pg_xstrdup(dir);
	else
		n = pending_dirs(o, dirs, 0);
	rc = pending_deliver_all(&s, dirs, n, NULL, res);
	if (rc == 0)
		auto_compact(&s);
out:
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
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
	isolate_config();
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
	rc = append_loop(&s, r, shard.ptr, &line, res);
	if (rc == 0) {
		/* the remote works: deliver what earlier runs kept, in what is left
		 * of the budget (a failure there leaves them pending, as they were) */
		n = pending_dirs(o, dirs, 0);
		if (pending_deliver_all(&s, dirs, n, r->record_id, &res->pending))
			snprintf(res->pending_why, sizeof(res->pending_why), "%s", pg_error_last());
		/* the writer whose record went to the branch: in a burst of
		 * writers, the one or few that won, not all of them at once */
		if (!res->own_ref)
			auto_compact(&s);
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

/* ---- reading ---- */

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
		rc = pg_error_set(PG_EDELIVERY, "history: %s: %s", path, git_why());
		goto out;
	}
	if (!is_gz(path))
		rc = history_shard_parse(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
					 path, &all, s->o->log, s->o->payload);
	else if ((rc = blob_text(blob, path, &text)) == 0)
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

/* A month file of a series: "<YYYY-MM>.jsonl", or ".jsonl.gz" on a series ref. */
static int is_shard_name(const char *name)
{
	size_t n = strlen(name);

	return (n > 6 && strcmp(name + n - 6, ".jsonl") == 0) ||
	       (n > 9 && strcmp(name + n - 9, ".jsonl.gz") == 0);
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

		if (git_tree_entry_type(e) != GIT_OBJECT_BLOB || !is_shard_name(name))
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
		rc = pg_error_set(PG_EDELIVERY, "history: the tip of %s: %s", s->branch, git_why());
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
					  git_why());
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
	return f->series ? series_ref(s, f->series) : pg_xasprintf("%s*", s->series);
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
				  git_why());
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
				  git_why());
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
				  git_why());
		goto out;
	}
	r = git_tree_entry_bypath(&e, root, f->series);
	if (r == GIT_ENOTFOUND || (r == 0 && git_tree_entry_type(e) != GIT_OBJECT_TREE))
		goto out;
	if (r < 0 || git_tree_lookup(keep, repo, git_tree_entry_id(e)) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "history: %s: %s", f->series, git_why());
		goto out;
	}
	*v = pg_xrealloc(*v, (*n + git_tree_entrycount(*keep) + 1) * sizeof(**v));
	for (size_t i = 0; i < git_tree_entrycount(*keep); i++) {
		const git_tree_entry *m = git_tree_entry_byindex(*keep, i);
		const char *name = git_tree_entry_name(m);

		if (git_tree_entry_type(m) == GIT_OBJECT_BLOB && is_shard_name(name) &&
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
	char *ref = series_ref(s, f->series);
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
	a = *rc == 0				   ? ATTEMPT_DONE
	    : *rc != PG_EUNSUPP && local_failure() ? ATTEMPT_RENEW
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
				    git_why());
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
				  git_why());
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
	isolate_config();
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

/* ---- compaction ---- */

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

static int all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

/* "YYYY-MM....jsonl": a month shard, the month in its first 7 bytes. */
static int is_month_shard(const git_tree_entry *e)
{
	const char *n = git_tree_entry_name(e);
	size_t len = strlen(n);

	return git_tree_entry_type(e) == GIT_OBJECT_BLOB && len >= 13 &&
	       strcmp(n + len - 6, ".jsonl") == 0 && all_digits(n, 4) && n[4] == '-' &&
	       all_digits(n + 5, 2);
}

/* The newest month of root's shards into open ("" when it has none). */
static int open_month(struct store *s, git_tree *root, char open[8])
{
	open[0] = 0;
	for (size_t i = 0; i < git_tree_entrycount(root); i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			continue;
		if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0)
			return pg_error_set(PG_EDELIVERY, "%s: %s", git_tree_entry_name(e),
					    git_why());
		for (size_t k = 0; k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (is_month_shard(f) && strncmp(git_tree_entry_name(f), open, 7) > 0)
				snprintf(open, 8, "%.7s", git_tree_entry_name(f));
		}
		git_tree_free(dir);
	}
	return 0;
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
		rc = pg_error_set(PG_EDELIVERY, "a record ref: %s", git_why());
		goto out;
	}
	for (size_t i = 0; i < git_tree_entrycount(root) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(root, i);
		git_tree *dir = NULL;

		if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
			continue;
		if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0) {
			rc = pg_error_set(PG_EDELIVERY, "a record ref: %s", git_why());
			break;
		}
		for (size_t k = 0; k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (!is_month_shard(f))
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

	if ((rc = read_shard(s, root, v[0].path, &text)))
		goto out;
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct history_list got = {0};
		git_blob *blob = NULL;

		if (git_blob_lookup(&blob, s->repo, &v[i].blob) < 0) {
			rc = pg_error_set(PG_EDELIVERY, "%s: %s", v[i].path, git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "cannot write %s: %s", v[0].path, git_why());
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
	char *ref = series_ref(s, series), *gz = pg_xasprintf("%s.gz", path);
	git_oid at;
	int has =
	    read_shard(s, root, path, &text) == 0 && history_shard_has(text.ptr, text.len, id);

	if (!has && ref && git_reference_name_to_id(&at, s->repo, ref) == 0 &&
	    git_commit_lookup(&c, s->repo, &at) == 0 && git_commit_tree(&tree, c) == 0) {
		text.len = 0;
		has = read_shard(s, tree, gz, &text) == 0 &&
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
		rc = pg_error_set(PG_EDELIVERY, "the record refs: %s", git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "cannot fold the record refs: %s", git_why());
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

	if ((rc = read_shard(s, base, path, &text)))
		goto out;
	if (git_blob_lookup(&blob, s->repo, id) < 0) {
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", path, git_why());
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
	if (rc == 0 && (rc = gz_deflate(text.ptr, text.len, &gz)) == 0 &&
	    git_blob_create_from_buffer(out, s->repo, gz.ptr, gz.len) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot write %s: %s", path, git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "%s: %s", m->ref, git_why());
		goto out;
	}
	for (size_t i = 0; i < git_tree_entrycount(dir) && rc == 0; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(dir, i);
		git_tree_update *u = &upd[*shards];

		if (!is_month_shard(e) || strncmp(git_tree_entry_name(e), c->open, 7) >= 0)
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
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir, git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "the series refs: %s", git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "cannot write the index: %s", git_why());
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

		if (c->n && s->move_until && now_s() > s->move_until)
			break; /* the rest keep their months until the next compaction */
		m = (struct moved){pg_xstrdup(name), NULL, {{0}}, {{0}}};
		git_tree *dir = NULL;
		uint32_t shards = 0;

		if (git_tree_entry_type(e) == GIT_OBJECT_TREE && (m.ref = series_ref(s, name))) {
			if (git_tree_lookup(&dir, s->repo, git_tree_entry_id(e)) < 0)
				rc = pg_error_set(PG_EDELIVERY, "%s: %s", name, git_why());
			else
				rc = move_series(s, c, dir, &m, &shards);
		}
		for (size_t k = 0; rc == 0 && shards && k < git_tree_entrycount(dir); k++) {
			const git_tree_entry *f = git_tree_entry_byindex(dir, k);

			if (!is_month_shard(f) || strncmp(git_tree_entry_name(f), c->open, 7) >= 0)
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
		rc = pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, git_why());
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
	if ((rc = open_month(s, root, c->open)) || (rc = compact_series(s, c, root, &upd, &n)))
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
		rc = pg_error_set(PG_EDELIVERY, "cannot commit in '%s': %s", s->dir, git_why());
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
	int rc = remote_ref_update(s, rr, name, id, old, why);

	if (rc == GIT_ELOCKED)
		return ATTEMPT_RETRY;
	if (rc == GIT_EMODIFIED || rc == GIT_ENOTFOUND || rc == GIT_EEXISTS) {
		pg_error_set(PG_EDELIVERY, "a record landed during the compaction (%s)", git_why());
		return ATTEMPT_RETRY;
	}
	if (rc < 0) {
		pg_error_set(PG_EDELIVERY, "cannot update %s in '%s': %s", name, s->local,
			     git_why());
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
		pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, git_why());
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
	if (pack_commits(s, rr, commits, c->n + 1, hide, m)) {
		a = ATTEMPT_FAIL;
		goto out;
	}
	for (uint32_t i = 0; i < c->n && a == ATTEMPT_DONE; i++)
		a = cas_local(s, rr, c->m[i].ref, &c->m[i].commit, &c->m[i].old,
			      "profgate: history compact (closed months)");
	if (a != ATTEMPT_DONE)
		goto out;
	if (c->archive) {
		rc = remote_ref_update(s, rr, c->archive, tip, &zero,
				       "profgate: history compact (archive)");
		if (rc == GIT_ELOCKED) {
			a = ATTEMPT_RETRY;
			goto out;
		}
		if (rc < 0 && !(git_reference_name_to_id(&have, rr, c->archive) == 0 &&
				git_oid_equal(&have, tip))) {
			pg_error_set(PG_EDELIVERY, "cannot create %s in '%s': %s", c->archive,
				     s->local, git_why());
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
	callbacks(s, &cb);
	git_proxy_options_init(&px, GIT_PROXY_OPTIONS_VERSION);
	px.type = GIT_PROXY_AUTO;
	git_error_clear();
	rc = git_remote_connect(s->remote, GIT_DIRECTION_PUSH, &cb, &px, NULL);
	if (rc < 0) {
		a = classify(s, rc);
		pg_error_set(PG_EDELIVERY, "cannot connect to '%s': %s", s->url, git_why());
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
	push_options(s, &po);
	rc = git_remote_upload(s->remote, &arr, &po);
	a = push_outcome(s, rc, "a record landed during the compaction", "compaction");
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
		push_options(s, &po);
		if (git_remote_push(s->remote, &arr, &po) == 0 && !s->status)
			gone = c->nfolded;
		for (uint32_t i = 0; i < c->nfolded; i++)
			free(specs[i]);
		free(specs);
	}
	if (gone < c->nfolded)
		logf_(s, "history: %u of %u folded record refs stay until the next compaction",
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
		pg_error_set(PG_EDELIVERY, "the tip of %s: %s", s->branch, git_why());
		a = local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
		goto out;
	}
	res->exists = 1;
	res->commits = history_commits(s, &tip);
	if (compact_build(s, &c, &nothing)) {
		a = local_failure() ? ATTEMPT_RENEW : ATTEMPT_FAIL;
		goto out;
	}
	if (nothing) {
		unfold(s, &c); /* one commit, its closed months moved already */
		goto out;
	}
	push_delay();
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
	    open_month(s, root, open))
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

			if (!is_month_shard(f) || strncmp(name, open, 7) >= 0)
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
 * After a writer's record is delivered to the branch (not to its own ref:
 * a writer that lost a race leaves the compaction to the one that won):
 * compact when it is due (compact_due), in one attempt with a time budget
 * of its own (the
 * record is safe already, so a compaction that runs out of time or loses
 * its lease to another writer loses nothing: the next writer tries again).
 * Series stop moving at half the budget, so a first migration of a long
 * branch moves what fits and leaves the rest on the branch for the next
 * run. The outcome is a note on the log.
 */
static void auto_compact(struct store *s)
{
	struct history_compact_result res;
	char why[128], err[1024];
	enum attempt a;

	if (!compact_due(s, why, sizeof(why)))
		return;
	memset(&res, 0, sizeof(res));
	s->deadline = now_s() + s->budget_s;
	s->move_until = now_s() + s->budget_s / 2.0;
	if (store_lock(s)) {
		logf_(s, "history: compaction (%s) left for the next run: %s", why,
		      pg_error_last());
		return;
	}
	a = compact_once(s, &res);
	snprintf(err, sizeof(err), "%s", pg_error_last());
	store_unlock(s);
	if (a == ATTEMPT_DONE && res.compacted)
		logf_(s,
		      "history: compacted %s (%s): %u month shard%s of %u series moved to their "
		      "refs, %u record%s folded in",
		      s->branch, why, res.shards, res.shards == 1 ? "" : "s", res.series,
		      res.folded, res.folded == 1 ? "" : "s");
	else if (a != ATTEMPT_DONE)
		logf_(s, "history: compaction (%s) left for the next run: %s", why, err);
	free(res.archive);
}

int history_compact(const struct history_store_opts *o, struct history_compact_result *res)
{
	struct store s;
	int rc;

	memset(res, 0, sizeof(*res));
	git_libgit2_init();
	isolate_config();
	if ((rc = store_open(&s, o)) == 0)
		rc = retry_loop(&s, compact_attempt, res, "compaction ", &res->attempts);
	store_release(&s);
	git_libgit2_shutdown();
	return rc;
}
