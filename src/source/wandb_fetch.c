/*
 * The W&B fetch: a run's jax_profile artifact (or an artifact by name) is
 * looked up over GraphQL, here; its files are downloaded from signed URLs
 * without the key, checked against the manifest's size and MD5, kept in a
 * cache by digest and laid out as a folder for discovery (wandb_download.c).
 * What a run's config says about the capture (tokens, FLOPs, the config
 * hash) is read by wandb_run_config.c. A run with no jax_profile artifact
 * names its trainer.log_dir instead, which discovery reads as it is.
 */
#include "wandb_fetch.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void wandb_art_release(struct art *a)
{
	free(a->id);
	free(a->name);
	free(a->entity);
	free(a->project);
	free(a->type);
	free(a->state);
	free(a->time);
	free(a->aliases);
	memset(a, 0, sizeof(*a));
}

void wandb_say(struct fetch *f, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	wandb_redact(&f->c, line);
	if (f->o && f->o->log)
		f->o->log(f->o->payload, line);
	else
		pg_log("%s", line);
}

/* {"k1": "v1", ...} from NULL-terminated key/value pairs (a NULL value is null). */
void wandb_vars(struct pg_buf *b, const char *const *kv, int n)
{
	pg_buf_addc(b, '{');
	for (int i = 0; i < n; i++) {
		if (i)
			pg_buf_adds(b, ", ");
		pg_json_escape(b, kv[2 * i], strlen(kv[2 * i]));
		pg_buf_adds(b, ": ");
		if (kv[2 * i + 1])
			pg_json_escape(b, kv[2 * i + 1], strlen(kv[2 * i + 1]));
		else
			pg_buf_adds(b, "null");
	}
}

/* The cursor of a connection's next page ("after:"), in place of *cursor;
 * NULL on the last page. */
void wandb_next_page(char **cursor, const cJSON *conn)
{
	free(*cursor);
	*cursor = cJSON_IsTrue(wandb_at(conn, "pageInfo.hasNextPage"))
		      ? wandb_dup_at(conn, "pageInfo.endCursor")
		      : NULL;
}

int wandb_gql(struct fetch *f, const char *op, const char *query, struct pg_buf *v, cJSON **root,
	      cJSON **data)
{
	__atomic_add_fetch(&f->r->requests, 1, __ATOMIC_RELAXED);
	return wandb_graphql(&f->c, op, query, v->ptr, root, data);
}

int wandb_gql_status(struct fetch *f, const char *op, const char *query, struct pg_buf *v,
		     cJSON **root, cJSON **data, long *status)
{
	__atomic_add_fetch(&f->r->requests, 1, __ATOMIC_RELAXED);
	return wandb_graphql_status(&f->c, op, query, v->ptr, root, data, status);
}

/* What a run's config and summary say about the capture. */
static void run_facts(struct fetch *f, const cJSON *run)
{
	struct source_origin *o = &f->r->origin;
	cJSON *cfg = wandb_run_json_field(run, "config"),
	      *sum = wandb_run_json_field(run, "summaryMetrics");

	wandb_run_config_unwrap(cfg);
	o->tokens_per_step = wandb_run_config_number(cfg, "tokens_per_step");
	o->samples_per_step = wandb_run_config_number(cfg, "samples_per_step");
	o->model_flops_per_step = wandb_run_config_number(cfg, "model_flops_per_step");
	if (cfg) {
		o->config_hash = wandb_run_config_hash(cfg);
		o->git_sha = wandb_dup_at(cfg, "git_commit");
		if (!o->git_sha)
			o->git_sha = wandb_dup_at(cfg, "git_sha");
		f->log_dir = wandb_dup_at(cfg, "trainer.log_dir");
		f->trainer_id = wandb_dup_at(cfg, "trainer.id");
		if (!f->log_dir) {
			f->log_dir = wandb_dup_at(cfg, "trainer.trainer.log_dir");
			free(f->trainer_id);
			f->trainer_id = wandb_dup_at(cfg, "trainer.trainer.id");
		}
	}
	if (!o->git_sha)
		o->git_sha = wandb_dup_at(run, "commit");
	if (sum) {
		const cJSON *dk = cJSON_GetObjectItemCaseSensitive(sum, "throughput/device_kind");
		if (!cJSON_IsString(dk))
			dk = cJSON_GetObjectItemCaseSensitive(sum, "device_kind");
		if (cJSON_IsString(dk) && *dk->valuestring)
			o->device_kind = pg_xstrdup(dk->valuestring);
	}
	cJSON_Delete(cfg);
	cJSON_Delete(sum);
}

static const char RUN_INFO_Q[] =
    "query RunInfo($entity: String!, $project: String!, $name: String!) {\n"
    "  project(name: $project, entityName: $entity) {\n"
    "    run(name: $name) { id name displayName state config summaryMetrics createdAt commit }\n"
    "  }\n"
    "}";

/* Look the run up; its path, id, name and facts go into the origin. */
static int run_info(struct fetch *f, const char *entity, const char *project, const char *name)
{
	struct pg_buf v = PG_BUF_INIT;
	const char *kv[] = {"entity", entity, "project", project, "name", name};
	cJSON *root = NULL, *data;
	const cJSON *proj, *run;
	struct source_origin *o = &f->r->origin;
	int rc;

	wandb_vars(&v, kv, 3);
	pg_buf_addc(&v, '}');
	if ((rc = wandb_gql(f, "RunInfo", RUN_INFO_Q, &v, &root, &data)) != 0)
		goto out;
	proj = cJSON_GetObjectItemCaseSensitive(data, "project");
	run = cJSON_GetObjectItemCaseSensitive(proj, "run");
	if ((rc = wandb_answer_need(root, proj, "RunInfo", "data.project")) != 0) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(
			    rc, "wandb: project '%s/%s' not found (or not visible with this key)",
			    entity, project);
		goto out;
	}
	if ((rc = wandb_answer_need(root, run, "RunInfo", "data.project.run")) != 0) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: run '%s/%s/%s' not found", entity, project, name);
		goto out;
	}
	o->run_id = wandb_dup_at(run, "name");
	if (!o->run_id)
		o->run_id = pg_xstrdup(name);
	o->run_path = pg_xasprintf("%s/%s/%s", entity, project, o->run_id);
	o->run_name = wandb_dup_at(run, "displayName");
	run_facts(f, run);
out:
	cJSON_Delete(root);
	pg_buf_release(&v);
	return rc;
}

/* ---- which artifact ---- */

static void art_from_node(struct art *a, const cJSON *node)
{
	const cJSON *al = cJSON_GetObjectItemCaseSensitive(node, "aliases"), *it;
	const cJSON *vi = cJSON_GetObjectItemCaseSensitive(node, "versionIndex");
	struct pg_buf b = PG_BUF_INIT;

	memset(a, 0, sizeof(*a));
	a->id = wandb_dup_at(node, "id");
	a->name = wandb_dup_at(node, "artifactSequence.name");
	a->entity = wandb_dup_at(node, "artifactSequence.project.entityName");
	a->project = wandb_dup_at(node, "artifactSequence.project.name");
	a->type = wandb_dup_at(node, "artifactType.name");
	a->state = wandb_dup_at(node, "state");
	a->time = wandb_dup_at(node, "updatedAt");
	if (!a->time)
		a->time = wandb_dup_at(node, "createdAt");
	int64_t version;
	a->version = cJSON_IsNumber(vi) && pg_whole(vi->valuedouble, &version) && version >= 0 &&
			     version < (1LL << 31)
			 ? (long)version
			 : -1;
	pg_buf_addc(&b, ',');
	cJSON_ArrayForEach (it, al) {
		const cJSON *s = cJSON_IsString(it) ? it : wandb_at(it, "alias");
		if (cJSON_IsString(s))
			pg_buf_addf(&b, "%s,", s->valuestring);
	}
	a->aliases = pg_buf_detach(&b, NULL);
}

static int has_alias(const struct art *a, const char *alias)
{
	char tmp[160];

	snprintf(tmp, sizeof(tmp), ",%s,", alias);
	if (strstr(a->aliases, tmp))
		return 1;
	snprintf(tmp, sizeof(tmp), "v%ld", a->version);
	return a->version >= 0 && strcmp(tmp, alias) == 0;
}

/* Newer first: updatedAt (else createdAt), then the version, then the name. */
static int newer(const struct art *a, const struct art *b)
{
	int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
	if (c)
		return c > 0;
	if (a->version != b->version)
		return a->version > b->version;
	return strcmp(a->name ? a->name : "", b->name ? b->name : "") > 0;
}

/* Keep node when it is a committed jax_profile that beats the current pick:
 * one with the wanted alias beats one without, then the newer wins. */
static void consider(struct fetch *f, const cJSON *node)
{
	const char *want = f->ref.alias ? f->ref.alias : "latest";
	struct art a;

	art_from_node(&a, node);
	if (!a.id || !a.name || !a.type || strcmp(a.type, "jax_profile") != 0) {
		f->n_other++;
		wandb_art_release(&a);
		return;
	}
	f->n_profiles++;
	int match = has_alias(&a, want);
	if (!a.state || strcmp(a.state, "COMMITTED") != 0 ||
	    (f->have_art && match < f->alias_matched) ||
	    (f->have_art && match == f->alias_matched && !newer(&a, &f->art))) {
		wandb_art_release(&a);
		return;
	}
	wandb_art_release(&f->art);
	f->art = a;
	f->have_art = 1;
	f->alias_matched = match;
}

static const char RUN_ARTS_Q[] =
    "query RunOutputArtifacts($entity: String!, $project: String!, $run: String!, "
    "$cursor: String, $perPage: Int) {\n"
    "  project(name: $project, entityName: $entity) {\n"
    "    run(name: $run) {\n"
    "      outputArtifacts(after: $cursor, first: $perPage) {\n"
    "        totalCount\n"
    "        pageInfo { endCursor hasNextPage }\n"
    "        edges { node {\n"
    "          id versionIndex state digest fileCount size createdAt updatedAt\n"
    "          artifactType { name }\n"
    "          artifactSequence { name project { name entityName } }\n"
    "          aliases { alias }\n"
    "        } }\n"
    "      }\n"
    "    }\n"
    "  }\n"
    "}";

/* Page through the run's output artifacts, keeping the best jax_profile. */
static int run_artifacts(struct fetch *f)
{
	char *cursor = NULL;
	int rc = 0;

	for (int page = 0; page < MAX_PAGES; page++) {
		struct pg_buf v = PG_BUF_INIT;
		const char *kv[] = {"entity", f->ref.entity,	   "project", f->ref.project,
				    "run",    f->r->origin.run_id, "cursor",  cursor};
		cJSON *root = NULL, *data;
		const cJSON *oa, *edge;

		wandb_vars(&v, kv, 4);
		pg_buf_addf(&v, ", \"perPage\": %d}", PAGE_SIZE);
		rc = wandb_gql(f, "RunOutputArtifacts", RUN_ARTS_Q, &v, &root, &data);
		pg_buf_release(&v);
		if (rc)
			break;
		oa = wandb_at(data, "project.run.outputArtifacts");
		cJSON_ArrayForEach (edge, cJSON_GetObjectItemCaseSensitive(oa, "edges"))
			consider(f, cJSON_GetObjectItemCaseSensitive(edge, "node"));
		wandb_next_page(&cursor, oa);
		cJSON_Delete(root);
		if (!cursor)
			break;
	}
	free(cursor);
	return rc;
}

/* No jax_profile artifact: the run config's trainer.log_dir, when it is a
 * folder here (<log_dir>/<trainer.id or run id>/profiler as Levanter writes,
 * else log_dir itself). */
static int use_log_dir(struct fetch *f)
{
	const char *id = f->trainer_id ? f->trainer_id : f->r->origin.run_id;
	struct stat st;
	char *cand[2] = {NULL, NULL};
	int rc = 0;

	if (!f->log_dir)
		return pg_error_set(
		    PG_ENOTFOUND,
		    "wandb: run '%s' has no jax_profile artifact (%u of other types) "
		    "and its config has no trainer.log_dir",
		    f->r->origin.run_path, f->n_other);
	cand[0] = pg_xasprintf("%s/%s/profiler", f->log_dir, id);
	cand[1] = pg_xstrdup(f->log_dir);
	for (int i = 0; i < 2; i++)
		if (stat(cand[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			f->r->origin.dir = cand[i];
			cand[i] = NULL;
			wandb_say(f,
				  "wandb: run %s logged no jax_profile artifact; reading its "
				  "trainer.log_dir '%s'",
				  f->r->origin.run_path, f->r->origin.dir);
			goto out;
		}
	rc = pg_error_set(PG_ENOTFOUND,
			  "wandb: run '%s' has no jax_profile artifact (%u of other types) and its "
			  "trainer.log_dir '%s' is not a folder here",
			  f->r->origin.run_path, f->n_other, cand[0]);
out:
	free(cand[0]);
	free(cand[1]);
	return rc;
}

static const char ART_Q[] =
    "query ArtifactByName($entityName: String!, $projectName: String!, $name: String!) {\n"
    "  project(name: $projectName, entityName: $entityName) {\n"
    "    artifact(name: $name) {\n"
    "      id versionIndex state createdAt updatedAt\n"
    "      artifactType { name }\n"
    "      artifactSequence { name project { name entityName } }\n"
    "      aliases { alias }\n"
    "      createdBy { __typename ... on Run { name project { name entityName } } }\n"
    "    }\n"
    "  }\n"
    "}";

/* An artifact by entity/project/name:alias; the run that logged it, when the
 * API says, gives the run facts. */
static int artifact_by_name(struct fetch *f)
{
	struct pg_buf v = PG_BUF_INIT;
	char *full = pg_xasprintf("%s:%s", f->ref.name, f->ref.alias);
	const char *kv[] = {"entityName",   f->ref.entity, "projectName",
			    f->ref.project, "name",	   full};
	cJSON *root = NULL, *data;
	const cJSON *node;
	int rc;

	wandb_vars(&v, kv, 3);
	pg_buf_addc(&v, '}');
	if ((rc = wandb_gql(f, "ArtifactByName", ART_Q, &v, &root, &data)) != 0)
		goto out;
	if ((rc = wandb_answer_need(root, wandb_at(data, "project"), "ArtifactByName",
				    "data.project"))) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: project '%s/%s' not found", f->ref.entity,
				     f->ref.project);
		goto out;
	}
	node = wandb_at(data, "project.artifact");
	if ((rc = wandb_answer_need(root, node, "ArtifactByName", "data.project.artifact"))) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: artifact '%s/%s/%s' not found", f->ref.entity,
				     f->ref.project, full);
		goto out;
	}
	art_from_node(&f->art, node);
	f->have_art = 1;
	if (!f->art.id || !f->art.name) {
		rc = pg_error_set(PG_EFORMAT, "wandb: artifact '%s' came without an id or name",
				  full);
		goto out;
	}
	if (!f->art.type || (strcmp(f->art.type, "jax_profile") != 0 &&
			     strcmp(f->art.type, "profile_summary") != 0)) {
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: artifact '%s/%s/%s' is of type '%s', not jax_profile or "
				  "profile_summary",
				  f->ref.entity, f->ref.project, full,
				  f->art.type ? f->art.type : "(none)");
		goto out;
	}
	char *re = wandb_dup_at(node, "createdBy.project.entityName");
	char *rp = wandb_dup_at(node, "createdBy.project.name");
	char *rn = wandb_dup_at(node, "createdBy.name");
	if (re && rp && rn && run_info(f, re, rp, rn) != 0) {
		wandb_say(f, "wandb: the run that logged %s: %s", full, pg_error_last());
		pg_error_clear();
	}
	free(re);
	free(rp);
	free(rn);
out:
	cJSON_Delete(root);
	pg_buf_release(&v);
	free(full);
	return rc;
}

/* ---- the whole fetch ---- */

/* A run: its best jax_profile artifact, else its trainer.log_dir (1). */
static int pick_from_run(struct fetch *f)
{
	int rc;

	if ((rc = run_info(f, f->ref.entity, f->ref.project, f->ref.name)) != 0 ||
	    (rc = run_artifacts(f)) != 0)
		return rc;
	if (f->have_art && f->ref.alias && !f->alias_matched)
		return pg_error_set(PG_ENOTFOUND,
				    "wandb: run '%s' has no jax_profile artifact with alias '%s'",
				    f->r->origin.run_path, f->ref.alias);
	if (!f->have_art && f->n_profiles)
		return pg_error_set(PG_ENOTFOUND,
				    "wandb: run '%s' has %u jax_profile artifacts, none committed",
				    f->r->origin.run_path, f->n_profiles);
	if (!f->have_art)
		return (rc = use_log_dir(f)) != 0 ? rc : 1;
	if (!f->alias_matched)
		f->r->alias_note = pg_xstrdup("the newest: none has the alias 'latest'");
	else
		f->r->alias_note =
		    pg_xasprintf("alias '%s'", f->ref.alias ? f->ref.alias : "latest");
	return 0;
}

static void fetch_release(struct fetch *f)
{
	wandb_config_release(&f->c);
	wandb_ref_release(&f->ref);
	wandb_art_release(&f->art);
	wandb_urls_release(f);
	pthread_mutex_destroy(&f->mu);
	free(f->urls_err);
	free(f->log_dir);
	free(f->trainer_id);
}

int wandb_fetch(struct wandb_fetch_result *out, const char *text, const struct wandb_fetch_opts *o)
{
	struct fetch f;
	char *what = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.mu, NULL);
	f.o = o;
	f.r = out;
	f.tty = isatty(2);
	out->origin.input = pg_xstrdup(text);
	if ((rc = wandb_config_from_env(&f.c)) != 0 ||
	    (rc = wandb_ref_parse(&f.ref, text, f.c.entity, f.c.project)) != 0 ||
	    (rc = wandb_check_host(&f.c, &f.ref, text)) != 0)
		goto out;
	if (f.ref.kind == WANDB_REF_RUN) {
		rc = pick_from_run(&f);
		if (rc == 1)
			rc = 0; /* the trainer.log_dir: nothing to download */
		if (rc || !f.have_art)
			goto out;
	} else if ((rc = artifact_by_name(&f)) != 0) {
		goto out;
	}
	if (!f.art.entity)
		f.art.entity = pg_xstrdup(f.ref.entity);
	if (!f.art.project)
		f.art.project = pg_xstrdup(f.ref.project);
	what =
	    pg_xasprintf("%s/%s/%s:v%ld", f.art.entity, f.art.project, f.art.name, f.art.version);
	if (!f.art.state || strcmp(f.art.state, "COMMITTED") != 0) {
		rc = pg_error_set(PG_ENOTFOUND, "wandb: artifact %s is not committed (state %s)",
				  what, f.art.state ? f.art.state : "unknown");
		goto out;
	}
	out->origin.artifact = pg_xstrdup(what);
	out->origin.display = pg_xasprintf("wandb-artifact://%s", what);
	if ((rc = wandb_load_manifest(&f, what)) != 0)
		goto out;
	if (f.ref.kind == WANDB_REF_RUN)
		wandb_say(&f, "wandb: run %s: artifact %s (%s), %u file%s, %.1f MB",
			  out->origin.run_path, what, out->alias_note, out->manifest.n,
			  out->manifest.n == 1 ? "" : "s", (double)out->manifest.total_bytes / 1e6);
	else
		wandb_say(&f, "wandb: artifact %s: %u file%s, %.1f MB", what, out->manifest.n,
			  out->manifest.n == 1 ? "" : "s", (double)out->manifest.total_bytes / 1e6);
	if ((rc = wandb_get_files(&f, what)) != 0)
		goto out;
	if (out->downloaded)
		wandb_say(&f,
			  "wandb: %s: downloaded %u file%s (%.1f MB), %u from the cache, into %s",
			  what, out->downloaded, out->downloaded == 1 ? "" : "s",
			  (double)out->downloaded_bytes / 1e6, out->cached, out->origin.dir);
	else
		wandb_say(&f, "wandb: %s: every file from the cache, in %s", what, out->origin.dir);
out:
	free(what);
	fetch_release(&f);
	return rc;
}

void wandb_fetch_result_release(struct wandb_fetch_result *r)
{
	source_origin_release(&r->origin);
	wandb_manifest_release(&r->manifest);
	free(r->alias_note);
	memset(r, 0, sizeof(*r));
}
