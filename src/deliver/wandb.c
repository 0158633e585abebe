/*
 * W&B publish: a summary (and report) logged as a profile_summary artifact
 * version, and the headline numbers merged into the run's summary.
 *
 * The artifact sequence (integrations.md §1.7 C, wandb-core's saver):
 * CreateArtifact (state COMMITTED means W&B already holds these files: stop),
 * CreateArtifactManifest without upload, CreateArtifactFiles (a null uploadUrl
 * means the bytes are stored already), PUT each file, the manifest with every
 * entry's birth artifact, CreateArtifactManifest with upload, PUT it,
 * CommitArtifact, whose answer must name this artifact and its digest. A
 * mutation answered with any errors entry or a null payload is a failure with
 * the server's message (W&B answers a refused commit, e.g. a storage quota,
 * with HTTP 200). Signed PUTs carry the upload headers W&B gave and no
 * Content-Type of ours: storage that signs the header refuses any other.
 *
 * Only after the commit is the run summary read, merged and written whole
 * (UpsertBucket), since whether W&B merges a partial one is not documented.
 * The merge is textual (wandb_json_members): every key profgate does not own
 * is copied byte for byte, so NaN and Infinity, which W&B stores and cJSON
 * cannot read, stay as they are; a summary that does not scan in full is
 * never written back. A 409 (the run changed meanwhile: the training run
 * itself may be writing its summary) reads it again and writes the merge
 * again, a few times. A summary that did not come (a field error beside the
 * run) is never written over.
 */
#include "deliver.h"

#include "../net/http.h"
#include "../source/source.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE_BYTES (256u << 20)

struct pub_file {
	const char *name; /* path inside the artifact */
	struct pg_buf bytes;
	char md5[32]; /* base64 */
	char *birth;  /* the artifact that stored it */
	char *upload_url;
	char **headers; /* "Name: value" */
	uint32_t n_headers;
};

struct pub {
	struct wandb_config c;
	const struct wandb_publish_opts *o;
	struct wandb_publish_result *r;
	char *entity, *project, *run_id, *run_storage_id;
	struct pub_file files[2];
	int n_files;
	char *art_id, *base_id, *manifest_id;
	char digest[33]; /* the manifest's, hex: what the commit must answer */
	long version;
};

#define SUMMARY_ATTEMPTS 5

static int gql_status(struct pub *p, const char *op, const char *query, cJSON *vars, cJSON **root,
		      cJSON **data, long *status)
{
	char *text = cJSON_PrintUnformatted(vars);
	int rc = wandb_graphql_status(&p->c, op, query, text, root, data, status);

	free(text);
	cJSON_Delete(vars);
	return rc;
}

static int gql(struct pub *p, const char *op, const char *query, cJSON *vars, cJSON **root,
	       cJSON **data)
{
	char *text = cJSON_PrintUnformatted(vars);
	int rc = wandb_graphql(&p->c, op, query, text, root, data);

	free(text);
	cJSON_Delete(vars);
	return rc;
}

/* A mutation: its payload data.<field> (in *root, which the caller deletes),
 * or a failure for any errors entry or a null payload. */
static int mutate(struct pub *p, const char *op, const char *query, cJSON *vars, const char *field,
		  cJSON **root, const cJSON **payload)
{
	cJSON *data;
	int rc = gql(p, op, query, vars, root, &data);

	if (!rc && (rc = wandb_mutation_payload(&p->c, *root, data, op, field, payload)) != 0) {
		cJSON_Delete(*root);
		*root = NULL;
	}
	return rc;
}

/* ---- the files ---- */

static int read_file(struct pub_file *f, const char *path)
{
	unsigned char md5[16];
	struct pg_buf b64 = PG_BUF_INIT;
	int rc = pg_read_small(path, MAX_FILE_BYTES, 0, &f->bytes);

	if (rc == PG_ELIMIT)
		rc = pg_error_set(PG_ELIMIT, "'%s' is over %u MiB", path, MAX_FILE_BYTES >> 20);
	if (!rc && (rc = pg_md5(f->bytes.ptr, f->bytes.len, md5)) == 0) {
		pg_base64_encode(&b64, md5, 16);
		snprintf(f->md5, sizeof(f->md5), "%s", b64.ptr);
	}
	pg_buf_release(&b64);
	return rc;
}

static int load_files(struct pub *p)
{
	int rc;

	p->files[0].name = "summary.json";
	if ((rc = read_file(&p->files[0], p->o->summary_path)) != 0)
		return rc;
	p->n_files = 1;
	if (p->o->report_path) {
		/* manifests list paths sorted: report.md before summary.json */
		p->files[1] = p->files[0];
		memset(&p->files[0], 0, sizeof(p->files[0]));
		pg_buf_init(&p->files[0].bytes);
		p->files[0].name = "report.md";
		p->n_files = 2;
		if ((rc = read_file(&p->files[0], p->o->report_path)) != 0)
			return rc;
	}
	return 0;
}

/* hex MD5 of "wandb-artifact-manifest-v1\n" and "path:digest\n" per file by path. */
static int artifact_digest(const struct pub *p, char out[33])
{
	struct pg_buf b = PG_BUF_INIT;
	unsigned char md5[16];
	int rc;

	pg_buf_adds(&b, "wandb-artifact-manifest-v1\n");
	for (int i = 0; i < p->n_files; i++)
		pg_buf_addf(&b, "%s:%s\n", p->files[i].name, p->files[i].md5);
	rc = pg_md5(b.ptr, b.len, md5);
	if (!rc)
		pg_hex(out, md5, 16);
	pg_buf_release(&b);
	return rc;
}

static void manifest_json(const struct pub *p, struct pg_buf *out)
{
	struct pg_json j;

	pg_json_init(&j, out, 0);
	pg_json_obj_begin(&j);
	pg_json_key(&j, "version");
	pg_json_int(&j, 1);
	pg_json_key(&j, "storagePolicy");
	pg_json_str(&j, "wandb-storage-policy-v1");
	pg_json_key(&j, "storagePolicyConfig");
	pg_json_obj_begin(&j);
	pg_json_key(&j, "storageLayout");
	pg_json_str(&j, "V2");
	pg_json_obj_end(&j);
	pg_json_key(&j, "contents");
	pg_json_obj_begin(&j);
	for (int i = 0; i < p->n_files; i++) {
		pg_json_key(&j, p->files[i].name);
		pg_json_obj_begin(&j);
		pg_json_key(&j, "digest");
		pg_json_str(&j, p->files[i].md5);
		pg_json_key(&j, "size");
		pg_json_uint(&j, p->files[i].bytes.len);
		pg_json_key(&j, "birthArtifactID");
		pg_json_str(&j, p->files[i].birth ? p->files[i].birth : p->art_id);
		pg_json_obj_end(&j);
	}
	pg_json_obj_end(&j);
	pg_json_obj_end(&j);
}

/* ---- the run ---- */

static const char RUN_Q[] = "query RunInfo($entity: String!, $project: String!, $name: String!) {\n"
			    "  project(name: $project, entityName: $entity) {\n"
			    "    run(name: $name) { id name summaryMetrics }\n"
			    "  }\n"
			    "}";

/* The run's storage id and, when asked, its summary's text (malloc'd; "{}"
 * when the run has none). */
static int run_lookup(struct pub *p, char **summary)
{
	cJSON *v = cJSON_CreateObject(), *root = NULL, *data;
	const cJSON *run;
	int rc;

	cJSON_AddStringToObject(v, "entity", p->entity);
	cJSON_AddStringToObject(v, "project", p->project);
	cJSON_AddStringToObject(v, "name", p->run_id);
	if ((rc = gql(p, "RunInfo", RUN_Q, v, &root, &data)) != 0)
		return rc;
	run = wandb_at(data, "project.run");
	if ((rc = wandb_answer_need(root, run, "RunInfo", "data.project.run")) != 0) {
		if (rc == PG_ENOTFOUND)
			pg_error_set(rc, "wandb: run '%s/%s/%s' not found", p->entity, p->project,
				     p->run_id);
		goto out;
	}
	free(p->run_storage_id);
	p->run_storage_id = wandb_dup_at(run, "id");
	if (!p->run_storage_id) {
		rc = pg_error_set(PG_EFORMAT, "wandb: run '%s/%s/%s' came without an id", p->entity,
				  p->project, p->run_id);
		goto out;
	}
	if (summary) {
		const cJSON *sm = cJSON_GetObjectItemCaseSensitive(run, "summaryMetrics");
		/* writing a merge into a summary that did not come would drop it */
		if (!cJSON_IsString(sm) && !cJSON_IsNull(sm) && sm) {
			rc = pg_error_set(PG_EFORMAT,
					  "wandb: the summary of run '%s/%s/%s' is no JSON string",
					  p->entity, p->project, p->run_id);
			goto out;
		}
		if (!cJSON_IsString(sm) &&
		    (rc = wandb_answer_need(root, NULL, "RunInfo",
					    "data.project.run.summaryMetrics")) == PG_EDELIVERY) {
			char *why = pg_xstrdup(pg_error_last());
			rc = pg_error_set(PG_EDELIVERY, "%s; the run's summary is not written over",
					  why);
			free(why);
			goto out;
		}
		rc = 0;
		*summary = pg_xstrdup(cJSON_IsString(sm) ? sm->valuestring : "{}");
	}
out:
	cJSON_Delete(root);
	return rc;
}

static const char UPSERT_Q[] =
    "mutation UpsertBucket($id: String, $name: String, $modelName: String, $entityName: String, "
    "$jobType: String, $displayName: String, $summaryMetrics: JSONString) {\n"
    "  upsertBucket(input: {id: $id, name: $name, modelName: $modelName, entityName: "
    "$entityName, jobType: $jobType, displayName: $displayName, summaryMetrics: "
    "$summaryMetrics}) {\n"
    "    bucket { id name }\n"
    "  }\n"
    "}";

/* 8 characters of [a-z0-9], as W&B's own run ids. */
static void random_id(char out[9])
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[8];
	int fd = open("/dev/urandom", O_RDONLY);

	if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
		uint64_t x = (uint64_t)time(NULL) * 6364136223846793005ULL ^ (uint64_t)getpid();
		memcpy(raw, &x, sizeof(raw));
	}
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 8; i++)
		out[i] = al[raw[i] % (sizeof(al) - 1)];
	out[8] = '\0';
}

/* No run given: a run of job type profile-summary-publish to log from. */
static int create_run(struct pub *p)
{
	cJSON *v = cJSON_CreateObject(), *root = NULL;
	const cJSON *data;
	char id[9], *display = pg_xasprintf("publish-%s", p->o->name);
	int rc;

	random_id(id);
	cJSON_AddStringToObject(v, "name", id);
	cJSON_AddStringToObject(v, "modelName", p->project);
	cJSON_AddStringToObject(v, "entityName", p->entity);
	cJSON_AddStringToObject(v, "jobType", "profile-summary-publish");
	cJSON_AddStringToObject(v, "displayName", display);
	free(display);
	if ((rc = mutate(p, "UpsertBucket", UPSERT_Q, v, "upsertBucket", &root, &data)) != 0)
		return rc;
	p->run_id = wandb_dup_at(data, "bucket.name");
	if (!p->run_id)
		p->run_id = pg_xstrdup(id);
	p->r->created_run = 1;
	cJSON_Delete(root);
	return 0;
}

/* Where it goes: the run given, else ENTITY/PROJECT and a new run. */
static int target(struct pub *p)
{
	struct wandb_ref ref;
	int rc = 0;

	if (p->o->run) {
		if ((rc = wandb_ref_parse(&ref, p->o->run, p->c.entity, p->c.project)) == 0 &&
		    ref.kind != WANDB_REF_RUN)
			rc = pg_error_set(PG_EUSAGE, "publish: --run takes a run, not '%s'",
					  p->o->run);
		if (!rc)
			rc = wandb_check_host(&p->c, &ref, p->o->run);
		if (!rc) {
			p->entity = pg_xstrdup(ref.entity);
			p->project = pg_xstrdup(ref.project);
			p->run_id = pg_xstrdup(ref.name);
		}
		wandb_ref_release(&ref);
		return rc ? rc : run_lookup(p, NULL);
	}
	if (p->o->project) {
		const char *slash = strchr(p->o->project, '/');
		if (!slash || slash == p->o->project || !slash[1] || strchr(slash + 1, '/'))
			return pg_error_set(PG_EUSAGE,
					    "publish: --project takes ENTITY/PROJECT, not '%s'",
					    p->o->project);
		p->entity = pg_xstrndup(p->o->project, (size_t)(slash - p->o->project));
		p->project = pg_xstrdup(slash + 1);
	} else if (p->c.entity && p->c.project) {
		p->entity = pg_xstrdup(p->c.entity);
		p->project = pg_xstrdup(p->c.project);
	} else {
		return pg_error_set(PG_EUSAGE, "publish: give --run wandb://ENTITY/PROJECT/RUN_ID, "
					       "--project ENTITY/PROJECT, or set WANDB_ENTITY and "
					       "WANDB_PROJECT");
	}
	return create_run(p);
}

/* ---- the artifact ---- */

static const char CREATE_Q[] =
    "mutation CreateArtifact($input: CreateArtifactInput!) {\n"
    "  createArtifact(input: $input) {\n"
    "    artifact { id state versionIndex artifactSequence { latestArtifact { id } } }\n"
    "  }\n"
    "}";

static cJSON *metadata(const struct pub *p)
{
	cJSON *m = cJSON_CreateObject();

	for (uint32_t i = 0; i < p->o->n_metrics; i++) {
		const struct wandb_metric *x = &p->o->metrics[i];
		if (x->text)
			cJSON_AddStringToObject(m, x->key, x->text);
		else
			cJSON_AddNumberToObject(m, x->key, x->value);
	}
	return m;
}

static void add_aliases(const struct pub *p, cJSON *input)
{
	cJSON *list = cJSON_AddArrayToObject(input, "aliases");

	for (uint32_t i = 0; i <= p->o->n_aliases; i++) {
		const char *a = i ? p->o->aliases[i - 1] : "latest";
		cJSON *x;
		if (i && strcmp(a, "latest") == 0)
			continue;
		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "artifactCollectionName", p->o->name);
		cJSON_AddStringToObject(x, "alias", a);
		cJSON_AddItemToArray(list, x);
	}
}

/* The new version; 1 when W&B answers that it holds these files already. */
static int create_artifact(struct pub *p)
{
	cJSON *v = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(v, "input"), *root;
	cJSON *meta = metadata(p);
	const cJSON *data;
	char digest[33], client[33], sequence[33], *meta_text = cJSON_PrintUnformatted(meta);
	const cJSON *a;
	int rc;

	cJSON_Delete(meta);
	if ((rc = artifact_digest(p, digest)) != 0) {
		cJSON_Delete(v);
		free(meta_text);
		return rc;
	}
	/* two ids, as the official clients draw them: the version's and its sequence's */
	for (int k = 0; k < 4; k++) {
		random_id(client + 8 * k);
		random_id(sequence + 8 * k);
	}
	cJSON_AddStringToObject(in, "entityName", p->entity);
	cJSON_AddStringToObject(in, "projectName", p->project);
	cJSON_AddStringToObject(in, "runName", p->run_id);
	cJSON_AddStringToObject(in, "artifactTypeName", "profile_summary");
	cJSON_AddStringToObject(in, "artifactCollectionName", p->o->name);
	cJSON_AddStringToObject(in, "digest", digest);
	cJSON_AddStringToObject(in, "digestAlgorithm", "MANIFEST_MD5");
	cJSON_AddStringToObject(in, "description", "profgate summary");
	add_aliases(p, in);
	cJSON_AddStringToObject(in, "metadata", meta_text);
	cJSON_AddBoolToObject(in, "enableDigestDeduplication", 1);
	cJSON_AddStringToObject(in, "clientID", client);
	cJSON_AddStringToObject(in, "sequenceClientID", sequence);
	free(meta_text);
	if ((rc = mutate(p, "CreateArtifact", CREATE_Q, v, "createArtifact", &root, &data)) != 0)
		return rc;
	memcpy(p->digest, digest, sizeof(digest));
	a = wandb_at(data, "artifact");
	p->art_id = wandb_dup_at(a, "id");
	p->base_id = wandb_dup_at(a, "artifactSequence.latestArtifact.id");
	p->version = cJSON_IsNumber(wandb_at(a, "versionIndex"))
			 ? (long)wandb_at(a, "versionIndex")->valuedouble
			 : -1;
	if (!p->art_id)
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: CreateArtifact answered without an artifact id");
	else if (cJSON_IsString(wandb_at(a, "state")) &&
		 strcmp(wandb_at(a, "state")->valuestring, "COMMITTED") == 0)
		rc = 1;
	cJSON_Delete(root);
	return rc;
}

/* includeUpload is no field of CreateArtifactManifestInput (W&B refuses
 * unknown input fields): it is a variable of the query, which asks for the
 * upload URL only when it is set, as both official clients write it. */
static const char MANIFEST_Q[] =
    "mutation CreateArtifactManifest($artifactID: ID!, $baseArtifactID: ID, $name: String!, "
    "$digest: String!, $entityName: String!, $projectName: String!, $runName: String!, "
    "$manifestType: ArtifactManifestType!, $includeUpload: Boolean!) {\n"
    "  createArtifactManifest(input: {artifactID: $artifactID, baseArtifactID: $baseArtifactID, "
    "name: $name, digest: $digest, entityName: $entityName, projectName: $projectName, runName: "
    "$runName, type: $manifestType}) {\n"
    "    artifactManifest { id file { id uploadUrl @include(if: $includeUpload) uploadHeaders "
    "@include(if: $includeUpload) } }\n"
    "  }\n"
    "}";

/* "Key:Value" strings as header lines. */
static void take_headers(struct pub_file *f, const cJSON *list)
{
	const cJSON *h;

	cJSON_ArrayForEach (h, list) {
		const char *colon = cJSON_IsString(h) ? strchr(h->valuestring, ':') : NULL;
		if (!colon || f->n_headers >= 16)
			continue;
		f->headers = pg_xrealloc(f->headers, (f->n_headers + 2) * sizeof(char *));
		f->headers[f->n_headers++] = pg_xasprintf("%.*s: %s", (int)(colon - h->valuestring),
							  h->valuestring, colon + 1);
		f->headers[f->n_headers] = NULL;
	}
}

/* The manifest record: first without an upload, then with digest and upload. */
static int create_manifest(struct pub *p, const char *digest, struct pub_file *upload)
{
	cJSON *v = cJSON_CreateObject(), *in = v, *root;
	const cJSON *m;
	int rc;

	cJSON_AddStringToObject(in, "artifactID", p->art_id);
	if (p->base_id && strcmp(p->base_id, p->art_id) != 0)
		cJSON_AddStringToObject(in, "baseArtifactID", p->base_id);
	else
		cJSON_AddNullToObject(in, "baseArtifactID");
	cJSON_AddStringToObject(in, "name", "wandb_manifest.json");
	cJSON_AddStringToObject(in, "digest", digest);
	cJSON_AddStringToObject(in, "entityName", p->entity);
	cJSON_AddStringToObject(in, "projectName", p->project);
	cJSON_AddStringToObject(in, "runName", p->run_id);
	cJSON_AddStringToObject(in, "manifestType", "FULL");
	cJSON_AddBoolToObject(v, "includeUpload", upload != NULL);
	if ((rc = mutate(p, "CreateArtifactManifest", MANIFEST_Q, v, "createArtifactManifest",
			 &root, &m)) != 0)
		return rc;
	m = wandb_at(m, "artifactManifest");
	free(p->manifest_id);
	p->manifest_id = wandb_dup_at(m, "id");
	if (!p->manifest_id)
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: CreateArtifactManifest answered without an id");
	if (!rc && upload) {
		upload->upload_url = wandb_dup_at(m, "file.uploadUrl");
		take_headers(upload, wandb_at(m, "file.uploadHeaders"));
		if (!upload->upload_url)
			rc = pg_error_set(PG_EFORMAT,
					  "wandb: CreateArtifactManifest gave no upload URL");
	}
	cJSON_Delete(root);
	return rc;
}

static const char FILES_Q[] =
    "mutation CreateArtifactFiles($input: CreateArtifactFilesInput!) {\n"
    "  createArtifactFiles(input: $input) {\n"
    "    files { edges { node { id name uploadUrl uploadHeaders storagePath artifact { id } } } "
    "}\n"
    "  }\n"
    "}";

/* Upload URLs per file (none for bytes W&B has) and each file's birth artifact. */
static int create_files(struct pub *p)
{
	cJSON *v = cJSON_CreateObject(), *in = cJSON_AddObjectToObject(v, "input"), *root;
	cJSON *list = cJSON_AddArrayToObject(in, "artifactFiles");
	const cJSON *edge, *data;
	int i = 0, rc;

	cJSON_AddStringToObject(in, "storageLayout", "V2");
	for (int k = 0; k < p->n_files; k++) {
		cJSON *f = cJSON_CreateObject();
		cJSON_AddStringToObject(f, "artifactID", p->art_id);
		cJSON_AddStringToObject(f, "name", p->files[k].name);
		cJSON_AddStringToObject(f, "md5", p->files[k].md5);
		cJSON_AddStringToObject(f, "artifactManifestID", p->manifest_id);
		cJSON_AddArrayToObject(f, "uploadPartsInput");
		cJSON_AddItemToArray(list, f);
	}
	if ((rc = mutate(p, "CreateArtifactFiles", FILES_Q, v, "createArtifactFiles", &root,
			 &data)) != 0)
		return rc;
	cJSON_ArrayForEach (edge, wandb_at(data, "files.edges")) {
		if (i == p->n_files)
			break;
		struct pub_file *f = &p->files[i++];
		f->upload_url = wandb_dup_at(edge, "node.uploadUrl");
		f->birth = wandb_dup_at(edge, "node.artifact.id");
		take_headers(f, wandb_at(edge, "node.uploadHeaders"));
	}
	if (i != p->n_files)
		rc = pg_error_set(PG_EFORMAT,
				  "wandb: CreateArtifactFiles answered for %d of %d files", i,
				  p->n_files);
	cJSON_Delete(root);
	return rc;
}

/* PUT to a signed URL: no key, unless the URL is under the base URL. */
static int put(struct pub *p, const struct pub_file *f, const void *body, size_t len)
{
	char *url = wandb_absolute_url(&p->c, f->upload_url), what[160];
	const char *heads[20], *secrets[2] = {p->c.api_key, NULL};
	struct pg_buf auth = PG_BUF_INIT;
	struct http_response rs = HTTP_RESPONSE_INIT;
	struct http_request rq;
	uint32_t n = 0;
	int rc;

	int typed = 0;

	for (uint32_t i = 0; i < f->n_headers && n < 17; i++) {
		typed |= strncasecmp(f->headers[i], "content-type:", 13) == 0;
		heads[n++] = f->headers[i];
	}
	/* libcurl adds a Content-Type to a body unless told: none but W&B's */
	if (!typed)
		heads[n++] = "Content-Type:";
	if (f->upload_url[0] == '/') {
		wandb_auth_header(&p->c, &auth);
		if (auth.len)
			heads[n++] = auth.ptr;
	}
	heads[n] = NULL;
	snprintf(what, sizeof(what), "wandb: upload of %s", f->name);
	rq = (struct http_request){
	    .method = "PUT",
	    .url = url,
	    .headers = heads,
	    .body = body,
	    .body_len = len,
	    .secrets = secrets,
	    .policy = HTTP_POLICY_PLAIN,
	    .what = what,
	};
	if ((rc = http_do(&rq, &rs)) == 0 && (rs.status < 200 || rs.status > 299))
		rc = pg_error_set(PG_EDELIVERY, "wandb: storage refused the upload of %s: HTTP %ld",
				  f->name, rs.status);
	if (!rc)
		p->r->uploads++;
	http_response_release(&rs);
	pg_buf_release(&auth);
	free(url);
	return rc;
}

static const char COMMIT_Q[] = "mutation CommitArtifact($artifactID: ID!) {\n"
			       "  commitArtifact(input: {artifactID: $artifactID}) {\n"
			       "    artifact { id digest versionIndex }\n"
			       "  }\n"
			       "}";

/* The commit, verified: W&B's answer names this artifact with this digest. */
static int commit(struct pub *p)
{
	cJSON *v = cJSON_CreateObject(), *root;
	const cJSON *a, *vi, *digest;
	int64_t version;
	int rc;

	cJSON_AddStringToObject(v, "artifactID", p->art_id);
	if ((rc = mutate(p, "CommitArtifact", COMMIT_Q, v, "commitArtifact", &root, &a)) != 0)
		return rc;
	a = wandb_at(a, "artifact");
	digest = wandb_at(a, "digest");
	if (!cJSON_IsString(wandb_at(a, "id")) || strcmp(wandb_at(a, "id")->valuestring, p->art_id))
		rc = pg_error_set(PG_EDELIVERY,
				  "wandb: CommitArtifact: W&B answered without artifact %s",
				  p->art_id);
	else if (!cJSON_IsString(digest) || strcmp(digest->valuestring, p->digest) != 0)
		rc = pg_error_set(
		    PG_EDELIVERY, "wandb: CommitArtifact: W&B committed digest %s, not %s",
		    cJSON_IsString(digest) ? digest->valuestring : "(none)", p->digest);
	vi = wandb_at(a, "versionIndex");
	if (!rc && cJSON_IsNumber(vi) && pg_whole(vi->valuedouble, &version) && version >= 0 &&
	    version < (1LL << 31))
		p->version = (long)version;
	cJSON_Delete(root);
	return rc;
}

/* Files, manifest, commit. */
static int upload_all(struct pub *p)
{
	struct pg_buf man = PG_BUF_INIT, b64 = PG_BUF_INIT;
	struct pub_file mf;
	unsigned char md5[16];
	int rc;

	memset(&mf, 0, sizeof(mf));
	pg_buf_init(&mf.bytes);
	mf.name = "wandb_manifest.json";
	if ((rc = create_manifest(p, "", NULL)) != 0 || (rc = create_files(p)) != 0)
		goto out;
	for (int i = 0; i < p->n_files && !rc; i++)
		if (p->files[i].upload_url)
			rc = put(p, &p->files[i], p->files[i].bytes.ptr, p->files[i].bytes.len);
	if (rc)
		goto out;
	manifest_json(p, &man);
	if ((rc = pg_md5(man.ptr, man.len, md5)) != 0)
		goto out;
	pg_base64_encode(&b64, md5, 16);
	if ((rc = create_manifest(p, b64.ptr, &mf)) != 0 ||
	    (rc = put(p, &mf, man.ptr, man.len)) != 0)
		goto out;
	rc = commit(p);
out:
	free(mf.upload_url);
	for (uint32_t i = 0; i < mf.n_headers; i++)
		free(mf.headers[i]);
	free(mf.headers);
	pg_buf_release(&man);
	pg_buf_release(&b64);
	return rc;
}

/* ---- the run's summary ---- */

/* key is one profgate writes (the metrics and profgate/summary_artifact). */
static int owned_key(const struct pub *p, const char *key)
{
	if (strncmp(key, "profgate/", 9) != 0)
		return 0;
	if (strcmp(key + 9, "summary_artifact") == 0)
		return 1;
	for (uint32_t i = 0; i < p->o->n_metrics; i++)
		if (strcmp(key + 9, p->o->metrics[i].key) == 0)
			return 1;
	return 0;
}

/* The run's summary text with profgate's keys set: every other member is
 * copied as its bytes (NaN and Infinity included), ours follow. */
static int merge_summary(struct pub *p, const char *text, struct pg_buf *out)
{
	struct wandb_json_members m;
	char *what =
	    pg_xasprintf("wandb: the summary of run '%s/%s/%s'", p->entity, p->project, p->run_id);
	int rc = wandb_json_members(text, strlen(text), what, &m);

	free(what);
	if (rc) {
		char *why = pg_xstrdup(pg_error_last());
		rc = pg_error_set(rc, "%s; it is not written over", why);
		free(why);
		goto out;
	}
	pg_buf_adds(out, "{");
	for (size_t i = 0; i < m.n; i++) {
		if (owned_key(p, m.v[i].name))
			continue;
		if (out->len > 1)
			pg_buf_adds(out, ",");
		pg_buf_add(out, m.v[i].key, m.v[i].key_len);
		pg_buf_adds(out, ":");
		pg_buf_add(out, m.v[i].value, m.v[i].value_len);
	}
	p->r->summary_keys = 0;
	for (uint32_t i = 0; i <= p->o->n_metrics; i++) {
		const struct wandb_metric *x = i < p->o->n_metrics ? &p->o->metrics[i] : NULL;
		char *key = pg_xasprintf("profgate/%s", x ? x->key : "summary_artifact");
		cJSON *pair = cJSON_CreateObject();
		char *one;

		if (!x)
			cJSON_AddStringToObject(pair, key, p->r->artifact);
		else if (x->text)
			cJSON_AddStringToObject(pair, key, x->text);
		else
			cJSON_AddNumberToObject(pair, key, x->value);
		one = cJSON_PrintUnformatted(pair); /* {"key":value} */
		if (out->len > 1)
			pg_buf_adds(out, ",");
		pg_buf_add(out, one + 1, strlen(one) - 2);
		free(one);
		free(key);
		cJSON_Delete(pair);
		p->r->summary_keys++;
	}
	pg_buf_adds(out, "}");
out:
	wandb_json_members_release(&m);
	return rc;
}

/* Read the summary, set "profgate/<key>" for every metric, write it whole;
 * 409: *conflict, to read and merge again. */
static int write_summary_once(struct pub *p, int *conflict)
{
	struct pg_buf text = PG_BUF_INIT;
	cJSON *v, *root, *data;
	const cJSON *payload;
	char *sum = NULL;
	long status = 0;
	int rc;

	*conflict = 0;
	if ((rc = run_lookup(p, &sum)) != 0 || (rc = merge_summary(p, sum, &text)) != 0)
		goto out;
	v = cJSON_CreateObject();
	cJSON_AddStringToObject(v, "id", p->run_storage_id);
	cJSON_AddStringToObject(v, "summaryMetrics", text.ptr);
	rc = gql_status(p, "UpsertBucket", UPSERT_Q, v, &root, &data, &status);
	if (rc && status == 409)
		*conflict = 1;
	if (!rc) {
		rc = wandb_mutation_payload(&p->c, root, data, "UpsertBucket", "upsertBucket",
					    &payload);
		cJSON_Delete(root);
	}
	if (rc)
		p->r->summary_keys = 0;
out:
	free(sum);
	pg_buf_release(&text);
	return rc;
}

static int write_summary(struct pub *p)
{
	int rc = 0, conflict;

	for (int n = 1; n <= SUMMARY_ATTEMPTS; n++) {
		struct timespec ts = {1L << (n - 1), 0};

		if ((rc = write_summary_once(p, &conflict)) == 0 || !conflict)
			return rc;
		if (n == SUMMARY_ATTEMPTS)
			break;
		pg_log("profgate: wandb: UpsertBucket: attempt %d of %d: HTTP 409 (the run changed "
		       "meanwhile); reading its summary again in %ld s",
		       n, SUMMARY_ATTEMPTS, (long)ts.tv_sec);
		pg_error_clear();
		nanosleep(&ts, NULL);
	}
	return rc;
}

/* ---- the whole publish ---- */

static int alias_ok(const char *a)
{
	size_t n = strlen(a);

	if (n == 0 || n > 128)
		return 0;
	for (; *a; a++)
		if (!((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') ||
		      (*a >= '0' && *a <= '9') || strchr("._-", *a)))
			return 0;
	return 1;
}

static int check_opts(const struct pub *p)
{
	if (!p->c.api_key)
		return pg_error_set(PG_EUSAGE, "publish: set WANDB_API_KEY");
	if (!p->o->name || !alias_ok(p->o->name))
		return pg_error_set(PG_EUSAGE,
				    "publish: the artifact name '%s' is not [A-Za-z0-9._-]",
				    p->o->name ? p->o->name : "");
	for (uint32_t i = 0; i < p->o->n_aliases; i++) {
		const char *a = p->o->aliases[i];
		int vn = a[0] == 'v' && a[1] && strspn(a + 1, "0123456789") == strlen(a + 1);
		if (!alias_ok(a) || vn)
			return pg_error_set(
			    PG_EUSAGE, "publish: '%s' cannot be an alias ([A-Za-z0-9._-], not vN)",
			    a);
	}
	return 0;
}

static void pub_release(struct pub *p)
{
	wandb_config_release(&p->c);
	free(p->entity);
	free(p->project);
	free(p->run_id);
	free(p->run_storage_id);
	for (int i = 0; i < 2; i++) {
		pg_buf_release(&p->files[i].bytes);
		free(p->files[i].birth);
		free(p->files[i].upload_url);
		for (uint32_t k = 0; k < p->files[i].n_headers; k++)
			free(p->files[i].headers[k]);
		free(p->files[i].headers);
	}
	free(p->art_id);
	free(p->base_id);
	free(p->manifest_id);
}

int wandb_publish(struct wandb_publish_result *out, const struct wandb_publish_opts *o)
{
	struct pub p;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	pg_buf_init(&p.files[0].bytes);
	pg_buf_init(&p.files[1].bytes);
	p.o = o;
	p.r = out;
	if ((rc = wandb_config_from_env(&p.c)) != 0 || (rc = check_opts(&p)) != 0 ||
	    (rc = load_files(&p)) != 0 || (rc = target(&p)) != 0)
		goto out;
	out->run_path = pg_xasprintf("%s/%s/%s", p.entity, p.project, p.run_id);
	rc = create_artifact(&p);
	if (rc == 1) {
		out->deduplicated = 1;
		rc = 0;
	} else if (rc == 0) {
		rc = upload_all(&p);
	}
	if (rc)
		goto out;
	if (p.version >= 0)
		out->artifact =
		    pg_xasprintf("%s/%s/%s:v%ld", p.entity, p.project, o->name, p.version);
	else
		out->artifact = pg_xasprintf("%s/%s/%s:latest", p.entity, p.project, o->name);
	if (o->run)
		rc = write_summary(&p);
out:
	pub_release(&p);
	return rc;
}

void wandb_publish_result_release(struct wandb_publish_result *r)
{
	free(r->artifact);
	free(r->run_path);
	memset(r, 0, sizeof(*r));
}
