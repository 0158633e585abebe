/*
 * The history store's cache and its lock: a private bare repository per
 * remote under the cache (<cache>/repos/<hash of the URL>.git), never the
 * user's work tree, index or config (the global and system git configs are
 * not read), which jobs on one machine take turns on (an flock), and the
 * remote it talks to, resolved and checked once (store_open).
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
 * or read, and fetched again; its new loose objects are inflated to their
 * end before libgit2 reads any, since libgit2 1.5 reads one cut mid-stream
 * for ever (loose_broken). A ref lock a killed profgate left in a local
 * remote is removed by the next writer (store_remote_ref_update). An append or
 * compaction to a local remote takes the remote's object store as an
 * alternate of the private repository and its branch as the fetched tip
 * (fetch_local), so nothing is copied.
 */
#include "store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

double store_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void store_sleep_ms(uint32_t ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* The message of the libgit2 call that just failed; git_error_last() can be
 * stale after a success, so it is read only on failure. Redacted whole, then
 * cut: a token cut in two would no longer be found. */
const char *store_git_why(void)
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
void store_logf(struct store *s, const char *fmt, ...)
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

static int is_http(const char *url)
{
	return strncmp(url, "https://", 8) == 0 || strncmp(url, "http://", 7) == 0;
}

/* A path, file:// or http(s):// URL; ssh and scp-like remotes are refused
 * (their credentials are keys, not the token), and so are URLs that carry
 * credentials: libgit2 would send them before the token and show them in its
 * messages, and profgate prints the remote in its own. */
int store_resolve_remote(struct store *s, const char *remote)
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
				  s->local, store_git_why());
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

void store_release(struct store *s)
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
void store_isolate_config(void)
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

/* Seconds from the environment variable name, else def (the caller's, when
 * it gave one). */
static int env_seconds(const char *name, uint32_t def, int caller, uint32_t *out)
{
	const char *v = getenv(name);
	int64_t n;

	*out = def;
	if (caller || !v || !*v)
		return 0;
	if (pg_parse_int(v, 1, MAX_SECONDS, &n))
		return pg_error_set(PG_EUSAGE, "%s='%.40s': give a whole number from 1 to %u", name,
				    v, MAX_SECONDS);
	*out = (uint32_t)n;
	return 0;
}

/* The time budget: the caller's, else PROFGATE_HISTORY_TIMEOUT_S, else 60 s;
 * a conversion's (store_migrate): PROFGATE_HISTORY_MIGRATE_S, else 600 s. */
static int budget_s(const struct history_store_opts *o, uint32_t *out, uint32_t *migrate)
{
	uint32_t def = o->max_seconds ? o->max_seconds : DEFAULT_SECONDS;
	int rc = env_seconds("PROFGATE_HISTORY_TIMEOUT_S", def, o->max_seconds != 0, out);

	return rc ? rc
		  : env_seconds("PROFGATE_HISTORY_MIGRATE_S", DEFAULT_MIGRATE_SECONDS, 0, migrate);
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

int store_open(struct store *s, const struct history_store_opts *o)
{
	uint32_t budget, migrate;
	int rc;

	memset(s, 0, sizeof(*s));
	s->lock_fd = -1;
	s->o = o;
	secret_add_basic("x-access-token", o->token);
	s->branch = o->branch ? o->branch : HISTORY_DEFAULT_BRANCH;
	if ((rc = budget_s(o, &budget, &migrate)))
		return rc;
	s->deadline = store_now_s() + budget;
	s->budget_s = budget;
	s->migrate_s = migrate;
	s->rng = (uint64_t)getpid() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(store_now_s() * 1e9);
	s->tracking = pg_xasprintf("refs/remotes/origin/%s", s->branch);
	s->seen = pg_xasprintf("refs/profgate/seen/%s", s->branch);
	s->head = pg_xasprintf("refs/heads/%s", s->branch);
	s->series = pg_xasprintf(SERIES_REFS "%s@/", s->branch);
	s->records = pg_xasprintf(RECORD_REFS "%s@/", s->branch);
	if ((rc = history_branch_check(s->branch)))
		return rc;
	if ((rc = store_resolve_remote(s, o->remote)) || (s->local && (rc = check_local(s))))
		return rc;
	s->cache = o->cache_dir ? pg_xstrdup(o->cache_dir) : history_cache_dir();
	open_private(s);
	return store_streams(s);
}

/* The deadline of what s does next (an append's fetch, a writer's
 * compaction after its append), the sockets' with it. */
int store_set_deadline(struct store *s, double deadline)
{
	s->deadline = deadline;
	return store_streams(s);
}

/* Jobs on one machine share the private repository: one at a time, waiting
 * no longer than the time budget. */
int store_lock(struct store *s)
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
		if (store_now_s() > s->deadline)
			return pg_error_set(PG_EDELIVERY,
					    "history: '%s' stayed locked by another profgate",
					    s->lock_path);
		store_sleep_ms(20);
	}
	return 0;
}

void store_unlock(struct store *s)
{
	if (s->lock_fd >= 0)
		flock(s->lock_fd, LOCK_UN);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Drop the private repository (a cache: the remote holds the history). */
int store_discard(struct store *s, const char *why)
{
	struct stat st;

	git_remote_free(s->remote);
	git_repository_free(s->repo);
	s->remote = NULL;
	s->repo = NULL;
	s->renewed = 1;
	if (lstat(s->dir, &st) != 0 && errno == ENOENT)
		return 0;
	store_logf(s, "history: the private repository '%s' is damaged (%s); making it anew",
		   s->dir, why);
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
		snprintf(why, len, "refs/profgate/: %s", store_git_why());
		return 1;
	}
	while (!rc && (r = git_reference_next(&ref, it)) != GIT_ITEROVER) {
		if (r < 0) {
			snprintf(why, len, "refs/profgate/: %s", store_git_why());
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

/* The stamp of the last check of the loose objects: its mtime is when that
 * check began, and only objects written since (by mtime, with LOOSE_SLACK_S
 * for coarse file times) are inflated again: an object never changes once
 * written, and one damaged later is a new file (a new mtime). So an append
 * costs the objects the last one made, not every object the cache built. */
#define LOOSE_STAMP   "profgate-loose-checked"
#define LOOSE_SLACK_S 2

/* 1 (why set) when a loose object of the private repository written since
 * the last check is truncated or is not zlib at all; -1 when the check ran
 * past the deadline. The loose objects are the commits this cache built;
 * fetched ones stay in packs. Runs under the lock. */
static int loose_broken(struct store *s, char *why, size_t len)
{
	char *objects = pg_xasprintf("%s/objects", s->dir), *path = NULL;
	char *stamp = pg_xasprintf("%s/" LOOSE_STAMP, s->dir);
	DIR *top = opendir(objects), *sub = NULL;
	struct dirent *d, *e;
	struct stat st;
	struct timespec began;
	time_t since = 0;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &began);
	if (stat(stamp, &st) == 0)
		since = st.st_mtim.tv_sec - LOOSE_SLACK_S;
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
			if (fstatat(dirfd(sub), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    st.st_mtim.tv_sec < since)
				continue;
			obj = pg_xasprintf("%s/%s", path, e->d_name);
			if (loose_truncated(obj)) {
				snprintf(why, len, "the object %.2s%.38s is truncated", d->d_name,
					 e->d_name);
				rc = 1;
			} else if (store_now_s() > s->deadline) {
				rc = -1;
			}
			free(obj);
		}
		closedir(sub);
	}
	if (top)
		closedir(top);
	if (top && rc == 0) { /* a stamp that cannot be written costs a full check next time */
		int fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		struct timespec times[2] = {began, began};

		if (fd >= 0) {
			if (futimens(fd, times) != 0)
				(void)unlink(stamp);
			close(fd);
		}
	}
	free(path);
	free(stamp);
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
		snprintf(why, len, "%s", store_git_why());
		return 1;
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(names) && !rc; i++) {
		int r = git_reference_name_to_id(&id, s->repo, names[i]);

		if (r < 0 && r != GIT_ENOTFOUND) {
			snprintf(why, len, "%s: %s", names[i], store_git_why());
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
int store_remote(struct store *s)
{
	git_remote_create_options ro;

	git_remote_free(s->remote);
	s->remote = NULL;
	git_remote_create_options_init(&ro, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	ro.repository = s->repo;
	ro.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if (git_remote_create_with_opts(&s->remote, s->url, &ro) < 0) {
		s->remote = NULL;
		return pg_error_set(PG_EUSAGE, "remote '%s': %s", s->url, store_git_why());
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
		rc = pg_error_set(PG_EDELIVERY, "cannot open '%s': %s", s->local, store_git_why());
		goto out;
	}
	objects = pg_xasprintf("%sobjects", git_repository_path(rr));
	if (git_repository_odb(&odb, s->repo) < 0 || git_odb_add_disk_alternate(odb, objects) < 0)
		rc = pg_error_set(PG_EDELIVERY, "cannot read the objects of '%s': %s", s->local,
				  store_git_why());
out:
	git_odb_free(odb);
	git_repository_free(rr);
	free(objects);
	return rc;
}

/* Open (or create) the private repository and its anonymous remote; done
 * under the lock, so that two jobs do not both create it. One that exists
 * but cannot be opened or used is made anew. */
int store_repo(struct store *s)
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
		snprintf(why, sizeof(why), "%s", store_git_why());
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
					    store_git_why());
		}
		if (s->local && local_alternate(s))
			return PG_EDELIVERY;
	}
	return store_remote(s);
}
