/*
 * What the W&B fetch's files share (source/ private; the API is wandb_fetch in
 * source.h): the fetch's state, the GraphQL helpers that count requests, the
 * run-config facts (wandb_run_config.c) and the downloads (wandb_download.c).
 */
#ifndef PG_SOURCE_WANDB_FETCH_H
#define PG_SOURCE_WANDB_FETCH_H

#include "source.h"

#include <cjson/cJSON.h>
#include <pthread.h>

#define MAX_COMPONENT	   128 /* entity, project, run id, artifact name */
#define PAGE_SIZE	   100
#define MAX_PAGES	   100
#define MAX_MANIFEST_BYTES (64u << 20)
#define FETCH_THREADS	   8 /* downloads at once */

/* An artifact version the API named. */
struct art {
	char *id, *name, *entity, *project, *type, *state, *time;
	char *aliases; /* ",latest,v3," */
	long version;
};

struct fetch {
	struct wandb_config c;
	struct wandb_ref ref;
	const struct wandb_fetch_opts *o;
	struct wandb_fetch_result *r;
	struct art art; /* the chosen artifact */
	int have_art;
	int alias_matched;
	char *log_dir, *trainer_id; /* the run config's trainer.log_dir and trainer.id */
	uint32_t n_profiles, n_other;
	char **url_names, **urls; /* signed URLs by logical path */
	uint32_t n_urls;
	int by_id;	    /* the server lacks the collection-membership file query */
	pthread_mutex_t mu; /* the URLs below, while downloads run side by side */
	unsigned url_gen;   /* how often the URLs were loaded */
	int urls_rc;	    /* loading them failed: every job after says so, none asks again */
	char *urls_err;
	int tty;
};

/* ---- wandb_fetch.c ---- */
void wandb_art_release(struct art *a);
/* A progress or result line, with the key redacted, to the caller's log. */
void wandb_say(struct fetch *f, const char *fmt, ...) PG_PRINTF(2, 3);
/* {"k1": "v1", ... of n pairs into b, without the closing brace (a NULL value is null). */
void wandb_vars(struct pg_buf *b, const char *const *kv, int n);
/* The cursor of a connection's next page ("after:"), in place of *cursor;
 * NULL on the last page. */
void wandb_next_page(char **cursor, const cJSON *conn);
/* wandb_graphql and wandb_graphql_status, counted in the result's requests. */
int wandb_gql(struct fetch *f, const char *op, const char *query, struct pg_buf *v, cJSON **root,
	      cJSON **data) PG_WUR;
int wandb_gql_status(struct fetch *f, const char *op, const char *query, struct pg_buf *v,
		     cJSON **root, cJSON **data, long *status) PG_WUR;

/* ---- wandb_run_config.c ---- */
/* A run's JSONString field (config, summaryMetrics) as an object the caller
 * deletes, or NULL when absent or unreadable (said on the log). */
cJSON *wandb_run_json_field(const cJSON *run, const char *key);
/* Unwrap each {"value": v} key in place and drop the SDK's own keys. */
void wandb_run_config_unwrap(cJSON *cfg);
/* marin's config_hash: 16 hex digits of the sha256 of json.dumps(cfg,
 * sort_keys=True); the caller frees it. */
char *wandb_run_config_hash(const cJSON *cfg);
/* A positive number the config holds at a dotted path, or 0. */
double wandb_run_config_number(const cJSON *cfg, const char *path);

/* ---- wandb_download.c ---- */
/* f->r->manifest of the chosen artifact (what names it in messages): from the
 * cache for a committed artifact seen before, else downloaded. */
int wandb_load_manifest(struct fetch *f, const char *what) PG_WUR;
/* Every file of the manifest into the blob store and linked into the
 * artifact's folder, f->r->origin.dir. */
int wandb_get_files(struct fetch *f, const char *what) PG_WUR;
void wandb_urls_release(struct fetch *f);

#endif
