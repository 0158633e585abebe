/*
 * source: where profiles come from. Local files as given, and profile
 * directories (TensorBoard logdirs, plugins/profile/<timestamp>/ per host,
 * Kineto trace folders, artifact roots) resolved to the files of one capture.
 * Parses no trace format: it goes by names, sizes, digests and timestamps.
 */
#ifndef PG_SOURCE_H
#define PG_SOURCE_H

#include <stdint.h>

#include "../util/util.h"

enum source_kind {
	SOURCE_XPLANE,
	SOURCE_JAX_JSON,   /* <host>.trace.json.gz */
	SOURCE_PERFETTO,   /* perfetto_trace.json.gz */
	SOURCE_KINETO,	   /* *.pt.trace.json[.gz] */
	SOURCE_JSON,	   /* any other *.json[.gz] */
	SOURCE_RIEGELI,	   /* *.xplane.riegeli: found, not readable */
	SOURCE_XPROF_TOOL, /* <tool>.json: a table xprof made of an .xplane.pb, not a trace */
	SOURCE_GIVEN,	   /* a file named on the command line */
};

struct source_file {
	char *path;
	enum source_kind kind;
	uint64_t bytes;
	char sha256[65];      /* "" unless computed (only files that share a size) */
	int32_t duplicate_of; /* index in the chosen list, or -1 */
};

struct source_capture {
	char *name; /* timestamp folder name(s), a folder, or folder@kineto-timestamp */
	char *dir;
	int64_t key; /* newer is larger: folder timestamp, Kineto ms, or mtime */
	struct source_file *files;
	uint32_t n_files;
};

/* Where a folder of the set came from when it is not a local path: a W&B run
 * or artifact, downloaded (or a run's trainer.log_dir found here). */
struct source_origin {
	char *input;	   /* the input as given */
	char *dir;	   /* the local folder handed to discovery */
	char *display;	   /* shown instead of dir in summaries ("wandb-artifact://e/p/n:v3") */
	char *run_path;	   /* "entity/project/run_id", or NULL */
	char *run_id;	   /* the run id, or NULL */
	char *run_name;	   /* the run's display name, or NULL */
	char *git_sha;	   /* config git_commit / git_sha, else the run's commit, or NULL */
	char *config_hash; /* 16 hex of the sha256 of the run's canonical config, or NULL */
	char *device_kind; /* summary throughput/device_kind or device_kind, or NULL */
	char *artifact;	   /* "entity/project/name:vN", or NULL (trainer.log_dir) */
	/* the config's tokens_per_step, samples_per_step, model_flops_per_step
	 * (summarize's --tokens-per-step ... when not given); 0 when absent */
	double tokens_per_step, samples_per_step, model_flops_per_step;
};

struct source_set {
	struct source_file *files; /* the files to read, in a stable order */
	uint32_t n_files;
	struct source_capture *captures; /* every capture seen in the directories */
	uint32_t n_captures;
	int32_t *chosen; /* per directory input: the chosen capture, or -1 */
	uint32_t n_chosen;
	char **notes; /* what was chosen and why, duplicates, skipped files */
	uint32_t n_notes;
	/* the notes (indices into notes) of profgate's own outputs skipped in a
	 * folder: commands that read a folder say so, since they may have
	 * written them there */
	uint32_t *own_notes;
	uint32_t n_own_notes;
	struct source_origin *origins; /* one per W&B input, in input order */
	uint32_t n_origins;
};

/*
 * Resolve inputs (files, directories, W&B refs) to the files of one capture
 * each. A W&B ref is downloaded first (wandb_fetch into the cache, progress
 * on stderr) and its folder resolved like any other; its origin is recorded.
 * capture, when non-NULL, picks a capture by name instead of the newest.
 * Returns 0, or PG_EIO / PG_ENOTFOUND / PG_EUSAGE / PG_EFORMAT / PG_ELIMIT /
 * PG_EDELIVERY with the message set.
 */
int source_resolve(struct source_set *out, const char *const *inputs, int n_inputs,
		   const char *capture) PG_WUR;
void source_set_release(struct source_set *s);
/*
 * What profgate itself writes, known by its content whatever its name: a
 * JSON document whose first key is "schema" with a "profgate." value (a
 * summary, verdict, history record, trend or thresholds file), or a markdown
 * report (its first line a "# profgate" or "## profgate" heading). Copies the
 * schema (or "report markdown") into what (size n) and returns 1, else 0.
 * Reads the file's first bytes only.
 */
int source_profgate_output(const char *path, char *what, size_t n);
const char *source_kind_name(enum source_kind k);
void source_origin_release(struct source_origin *o);

/* ---- W&B (wandb.c: refs and manifests; wandb_api.c: the client; wandb_fetch.c the
 * fetch, with wandb_run_config.c and wandb_download.c behind wandb_fetch.h)
 * -------------------------------------------------------- Profiles logged to Weights & Biases: a
 * run's output artifact of type jax_profile, or an artifact by name. Refs:
 *   wandb://ENTITY/PROJECT/RUN_ID[:ALIAS]       (ALIAS picks the artifact; default latest)
 *   wandb://PROJECT/RUN_ID, wandb://RUN_ID       (WANDB_ENTITY, WANDB_PROJECT fill in)
 *   https://wandb.ai/ENTITY/PROJECT/runs/RUN_ID  (and a self-hosted server's run URLs)
 *   wandb-artifact://ENTITY/PROJECT/NAME[:ALIAS] (also .../artifacts/TYPE/NAME/ALIAS URLs)
 * The key (WANDB_API_KEY) goes to WANDB_BASE_URL only, never to signed
 * storage URLs, and never into a message.
 */

#define WANDB_MAX_FILES	      10000
#define WANDB_MAX_FILE_BYTES  (16ULL << 30)
#define WANDB_MAX_TOTAL_BYTES (64ULL << 30)
#define WANDB_MAX_PATH	      1024
#define WANDB_MAX_NAME	      255 /* one path component */

enum wandb_ref_kind {
	WANDB_REF_RUN,
	WANDB_REF_ARTIFACT,
};

struct wandb_ref {
	enum wandb_ref_kind kind;
	char *entity, *project;
	char *name;	/* the run id, or the artifact's collection name */
	char *alias;	/* run: the artifact alias wanted (NULL: latest, else newest);
			   artifact: the alias or vN (never NULL) */
	char *url_base; /* run URLs: "scheme://host[:port]" the URL named, else NULL */
};

/* 1 when text is meant as a W&B ref (wandb://, wandb-artifact://, http(s)://). */
int wandb_is_ref(const char *text);
/*
 * Parse text into out (released by wandb_ref_release, also on failure).
 * entity and project (may be NULL) fill in short refs. Returns 0 or
 * PG_EUSAGE with the message set.
 */
int wandb_ref_parse(struct wandb_ref *out, const char *text, const char *entity,
		    const char *project) PG_WUR;
void wandb_ref_release(struct wandb_ref *r);

/* One file of an artifact manifest. */
struct wandb_entry {
	char *path;	       /* logical path, checked safe */
	char digest[32];       /* base64 MD5, as the manifest says */
	unsigned char md5[16]; /* the same, decoded */
	uint64_t size;
	char *birth_artifact_id; /* or NULL */
	int downloaded;		 /* wandb_fetch: 1 when it came over the network this time */
};

struct wandb_manifest {
	struct wandb_entry *v; /* sorted by path */
	uint32_t n;
	uint64_t total_bytes;
	/* storagePolicyConfig: where W&B's own download handler keeps the files
	 * (the authenticated fallback of a signed URL) */
	int layout_v1;	 /* storageLayout "V1" (also when absent, as the SDK reads it) */
	char region[64]; /* storageRegion, "default" when absent or not a plain name */
};

/*
 * 0 when a manifest path may be created under a download folder: relative,
 * no "..", "." or empty component, no NUL or backslash or control byte, at
 * most WANDB_MAX_PATH bytes and WANDB_MAX_NAME per component. Else -1 and
 * *why says which rule.
 */
int wandb_path_check(const char *path, size_t len, const char **why);
/*
 * Parse a manifest (version 1) of what (for messages). Refuses unsafe paths,
 * reference entries, bad digests, more than WANDB_MAX_FILES files and sizes
 * over the caps. Returns 0, or PG_EFORMAT / PG_ELIMIT / PG_EUNSUPP with the
 * message set; out is always initialised (release it).
 */
int wandb_manifest_parse(struct wandb_manifest *out, const char *text, size_t len,
			 const char *what) PG_WUR;
void wandb_manifest_release(struct wandb_manifest *m);

/* Where the API is and who asks. */
struct wandb_config {
	char *base_url;		/* WANDB_BASE_URL without a trailing '/'; https://api.wandb.ai */
	char *api_key;		/* WANDB_API_KEY, or NULL */
	char *entity, *project; /* WANDB_ENTITY, WANDB_PROJECT, or NULL */
	char *cache_dir;	/* pg_cache_dir() */
};

/* From the environment; 0 or PG_EUSAGE (a base URL that is not http(s)). */
int wandb_config_from_env(struct wandb_config *c) PG_WUR;
void wandb_config_release(struct wandb_config *c);

/*
 * A GraphQL call to {base_url}/graphql with the key (Basic api:<key>),
 * retried on 408, 429 and 5xx with Retry-After. *root gets the parsed
 * response (free it with cJSON_Delete) and *data its "data" object.
 * GraphQL errors beside data (fields that failed, now null) are each
 * reported on a line; whether one is fatal the caller decides by what it
 * needs (wandb_answer_need). Returns 0, or PG_EDELIVERY (401, 403, other
 * HTTP errors, GraphQL errors without data, transport failures) /
 * PG_EFORMAT with the message set. wandb_graphql_status also gives the last
 * HTTP status (0 when none came), for callers that retry a status
 * themselves (a 409 on a run's summary).
 */
struct cJSON;
int wandb_graphql(const struct wandb_config *c, const char *operation, const char *query,
		  const char *variables_json, struct cJSON **root, struct cJSON **data) PG_WUR;
int wandb_graphql_status(const struct wandb_config *c, const char *operation, const char *query,
			 const char *variables_json, struct cJSON **root, struct cJSON **data,
			 long *status) PG_WUR;
/*
 * What a GraphQL answer holds at path (e.g. "data.project.run", for messages):
 * 0 when v is an object; PG_ENOTFOUND (no message) when it is null or absent,
 * W&B's way of saying "not found"; PG_EFORMAT with a one-line message
 * ("wandb: <op>: the answer's <path> is a number, not an object") otherwise.
 */
int wandb_answer_object(const struct cJSON *v, const char *op, const char *path) PG_WUR;
/* wandb_answer_object, except that when v is null and the answer's errors
 * (root) name path or a step above it, that error is the reason:
 * PG_EDELIVERY "wandb: <op>: <message>" (a permission error is no "not
 * found"). */
int wandb_answer_need(const struct cJSON *root, const struct cJSON *v, const char *op,
		      const char *path) PG_WUR;
/* A mutation's payload, data.<field>: 0 and *out when it is an object and the
 * answer has no errors; else PG_EDELIVERY "wandb: <op>: <the server's
 * message>" (an errors entry, redacted) or "... answered a null <field>". */
int wandb_mutation_payload(const struct wandb_config *c, const struct cJSON *root,
			   const struct cJSON *data, const char *op, const char *field,
			   const struct cJSON **out) PG_WUR;
/* The member of o at a dotted path ("project.run.outputArtifacts"), NULL
 * when a step is missing or not an object; wandb_dup_at: a copy of it when it
 * is a non-empty string, else NULL. */
const struct cJSON *wandb_at(const struct cJSON *o, const char *path);
char *wandb_dup_at(const struct cJSON *o, const char *path);
/* The Authorization header line for c's key, or "" without one. */
void wandb_auth_header(const struct wandb_config *c, struct pg_buf *out);
/* Replace the key (and its Basic form) in s by "***". */
void wandb_redact(const struct wandb_config *c, char *s);
/* 0 when r is no URL, or a URL on c's server: its API host, or the app host W&B
 * derives from it (api.wandb.ai -> wandb.ai, api.X -> app.X). Else PG_EUSAGE:
 * the key goes to WANDB_BASE_URL only. */
int wandb_check_host(const struct wandb_config *c, const struct wandb_ref *r,
		     const char *text) PG_WUR;
/* An absolute URL for a signed URL the API returned ('/...' is under the base). */
char *wandb_absolute_url(const struct wandb_config *c, const char *url);

/* ---- W&B's JSON dialect (wandb_json.c): JSON plus bare NaN, Infinity and
 * -Infinity, as a run's summary holds them ---- */
struct wandb_json_member {
	const char *key, *value; /* raw spans of the text: "key" with its escapes, the value */
	size_t key_len, value_len;
	char *name; /* the key decoded, owned */
};
struct wandb_json_members {
	struct wandb_json_member *v;
	size_t n;
};
/* The members of the top-level object of text, in order, as raw spans into
 * text (which must outlive out); a text that does not scan in full, or is
 * no object, is PG_EFORMAT "<what> is not JSON as W&B writes it (byte N:
 * why)". out is released by wandb_json_members_release, also on failure. */
int wandb_json_members(const char *text, size_t len, const char *what,
		       struct wandb_json_members *out) PG_WUR;
void wandb_json_members_release(struct wandb_json_members *m);
/* text parsed by cJSON with each NaN and Infinity read as null (for readers
 * that look a few keys up); PG_EFORMAT as above when it does not scan. */
int wandb_json_strict(const char *text, size_t len, const char *what, struct cJSON **out) PG_WUR;

struct wandb_fetch_opts {
	const char *out_dir; /* materialize the files here; NULL: the cache's artifact folder */
	/* progress and stage lines (no "profgate: " prefix); NULL: stderr */
	void (*log)(void *payload, const char *line);
	void *payload;
};

struct wandb_fetch_result {
	struct source_origin origin;	/* dir is the folder to resolve */
	struct wandb_manifest manifest; /* empty for a trainer.log_dir */
	char *alias_note;		/* how the artifact was chosen, or NULL */
	uint32_t downloaded, cached;	/* files */
	uint64_t downloaded_bytes;
	uint32_t requests; /* HTTP requests made (GraphQL and storage) */
};

/*
 * Fetch what ref names: look the run or artifact up, download every file of
 * the artifact that the cache (by MD5) lacks from its signed URL, verify
 * size and digest, and lay the files out in a folder. A run without a
 * jax_profile artifact falls back to its config's trainer.log_dir when that
 * folder exists here. Returns 0, or PG_EUSAGE (a bad ref), PG_ENOTFOUND (no
 * such run, artifact, or profile), PG_EDELIVERY (the API or storage failed),
 * PG_EFORMAT / PG_ELIMIT / PG_EUNSUPP (a bad, hostile or oversized manifest or
 * download) with the message set. out is always initialised (release it).
 */
int wandb_fetch(struct wandb_fetch_result *out, const char *ref,
		const struct wandb_fetch_opts *o) PG_WUR;
void wandb_fetch_result_release(struct wandb_fetch_result *r);

#endif
