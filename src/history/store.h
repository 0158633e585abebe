/*
 * The history store's private declarations, shared by its files (history.h
 * is the public API): the names of its refs, the budget's constants, struct
 * store (one append, read or compaction against one remote) and the
 * functions one file of the store gives the others. The store is split by
 * its seams: store.c (the cache, its lock, opening a remote), transport.c
 * (fetch and push, over http or to a local path), layout.c (the branch's
 * files and refs), append.c, pending.c, read.c and compact.c.
 */
#ifndef PG_HISTORY_STORE_H
#define PG_HISTORY_STORE_H

#include "history.h"

#include "../net/http.h"

#include <git2.h>

#define DEFAULT_SECONDS 60
#define MAX_SECONDS	3600
/* The budget of the conversion a writer starts when its fetch of the branch
 * ran out of its share of the budget (store_migrate):
 * PROFGATE_HISTORY_MIGRATE_S, else this. */
#define DEFAULT_MIGRATE_SECONDS 600
#define BACKOFF_BASE_MS		200
#define BACKOFF_CAP_MS		4000
#define MIN_ATTEMPT_S		0.2 /* no retry starts with less of the budget left */
#define BOT_NAME		"profgate-bot"
#define BOT_EMAIL		"profgate-bot@users.noreply.github.com"
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
	uint32_t migrate_s; /* store_migrate's budget */
	int fetch_cut;	    /* an append's fetch of the branch (http) ran out of its share */
	double move_until;  /* a compaction moves no more series after this (0: no limit) */
	uint64_t rng;
	int renewed; /* the private repository was made anew once already */
	/* per network operation */
	int cred_calls;
	char *status;	    /* a refused ref update (push_update_reference) */
	struct pg_buf said; /* what the server printed ("remote: ..."), raw */
	int out_of_time;    /* a progress callback stopped the operation at the deadline */
	int connected;	    /* s->remote has made a connection (a new one per attempt) */
};

/* ---- store.c ---- */

double store_now_s(void);
void store_sleep_ms(uint32_t ms);
const char *store_git_why(void);
void store_logf(struct store *s, const char *fmt, ...) PG_PRINTF(2, 3);
int store_resolve_remote(struct store *s, const char *remote);
void store_release(struct store *s);
void store_isolate_config(void);
int store_open(struct store *s, const struct history_store_opts *o);
int store_lock(struct store *s);
void store_unlock(struct store *s);
int store_discard(struct store *s, const char *why);
int store_remote(struct store *s);
int store_repo(struct store *s);
int store_set_deadline(struct store *s, double deadline);

/* ---- transport.c ---- */

void store_callbacks(struct store *s, git_remote_callbacks *cb);
int store_local_failure(void);
enum attempt store_classify(struct store *s, int rc);
enum attempt store_fetch(struct store *s, const char *series, const char *records);
enum attempt store_push_outcome(struct store *s, int rc, const char *moved, const char *what);
void store_push_options(struct store *s, git_push_options *po);
enum attempt store_push_smart(struct store *s, const char *ref, const char *moved);
int store_pack_commits(struct store *s, git_repository *rr, const git_oid *commits, size_t n,
		       const git_oid *hide, size_t m);
int store_pack_into(struct store *s, git_repository *rr, const git_oid *commit, const git_oid *tip);
int store_remote_ref_update(struct store *s, git_repository *rr, const char *name,
			    const git_oid *id, const git_oid *old, const char *msg);
enum attempt store_push_local(struct store *s, const git_oid *commit, const git_oid *tip);
void store_push_delay(void);

/* ---- layout.c ---- */

char *store_series_ref(const struct store *s, const char *series);
int store_is_gz(const char *name);
int store_gz_deflate(const char *text, size_t len, struct pg_buf *out);
int store_blob_text(const git_blob *blob, const char *name, struct pg_buf *out);
int store_read_shard(struct store *s, git_tree *base, const char *shard, struct pg_buf *content);
void store_index_open(struct store *s, const git_oid *tip, char open[8]);
int store_is_shard_name(const char *name);
int store_is_month_shard(const git_tree_entry *e);
int store_open_month(struct store *s, git_tree *root, char open[8]);

/* ---- append.c ---- */

int store_retry_loop(struct store *s, enum attempt (*once)(struct store *, void *), void *ctx,
		     const char *what, uint32_t *attempts);
int store_append_loop(struct store *s, const struct history_record *r, const char *shard,
		      const struct pg_buf *line, struct history_append_result *res);

/* ---- pending.c ---- */

int store_pending_dirs(const struct history_store_opts *o, char *dirs[3], int create);
int store_pending_deliver_all(struct store *s, char **dirs, int n, const char *skip_id,
			      struct history_flush_result *res);

/* ---- compact.c ---- */

void store_auto_compact(struct store *s);
void store_migrate(struct store *s);

#endif
