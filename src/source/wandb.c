/*
 * W&B refs and artifact manifests: parsing what the user typed (run refs,
 * run URLs, artifact refs) and what the server sent (the manifest, with every
 * path checked before anything is created under a download folder).
 * The fetch itself is wandb_fetch.c; the API client wandb_api.c.
 */
#include "source.h"

#include "../net/http.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COMPONENT 128 /* entity, project, run id, artifact name */

/* ---- refs ---- */

int wandb_is_ref(const char *t)
{
	return strncmp(t, "wandb://", 8) == 0 || strncmp(t, "wandb-artifact://", 17) == 0 ||
	       strncmp(t, "https://", 8) == 0 || strncmp(t, "http://", 7) == 0;
}

void wandb_ref_release(struct wandb_ref *r)
{
	free(r->entity);
	free(r->project);
	free(r->name);
	free(r->alias);
	free(r->url_base);
	memset(r, 0, sizeof(*r));
}

/* Names W&B allows in entities, projects, run ids, artifact names and aliases
 * (run ids are URL-quoted with the safe characters =+&$@). */
static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MAX_COMPONENT || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._-+=&$@", *s)))
			return 0;
	return 1;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* A path segment of a URL, percent-decoded; NULL when the encoding is bad. */
static char *url_decode(const char *s, size_t n)
{
	char *out = pg_xmalloc(n + 1), *o = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			*o++ = s[i];
			continue;
		}
		if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0 ||
		    (hexval(s[i + 1]) == 0 && hexval(s[i + 2]) == 0)) {
			free(out);
			return NULL;
		}
		*o++ = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
		i += 2;
	}
	*o = '\0';
	return out;
}

struct parts {
	char *v[8];
	int n;
};

static void parts_release(struct parts *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->v[i]);
	p->n = 0;
}

/* Split s[0..n) on '/', skipping empty segments; decode when asked. -1 (p
 * left empty) when there are more than 8 or one does not decode. */
static int split(struct parts *p, const char *s, size_t n, int decode)
{
	size_t i = 0;

	p->n = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		if (j > i) {
			if (p->n == (int)PG_ARRAY_LEN(p->v))
				goto fail;
			p->v[p->n] = decode ? url_decode(s + i, j - i) : pg_xstrndup(s + i, j - i);
			if (!p->v[p->n])
				goto fail;
			p->n++;
		}
		i = j + 1;
	}
	return 0;
fail:
	parts_release(p);
	return -1;
}

/* "name:alias" into name and alias (alias NULL without a colon). */
static void split_alias(const char *s, char **name, char **alias)
{
	const char *c = strrchr(s, ':');

	*name = pg_xstrndup(s, c ? (size_t)(c - s) : strlen(s));
	*alias = c ? pg_xstrdup(c + 1) : NULL;
}

static int bad_ref(const char *text, const char *why)
{
	return pg_error_set(PG_EUSAGE, "wandb: '%s' is not a W&B ref: %s", text, why);
}

/* https://HOST/ENTITY/PROJECT/runs/ID[/...] and .../artifacts/TYPE/NAME[/ALIAS] */
static int parse_url(struct wandb_ref *r, const char *text)
{
	const char *host = strstr(text, "://") + 3;
	const char *path = host + strcspn(host, "/?#");
	size_t plen = strcspn(path, "?#");
	struct parts p;
	int rc = 0;

	if (path == host)
		return bad_ref(text, "no host");
	r->url_base = pg_xstrndup(text, (size_t)(path - text));
	if (split(&p, path, plen, 1))
		return bad_ref(text, "a path segment that does not decode");
	if (p.n >= 4 && strcmp(p.v[2], "runs") == 0) {
		r->kind = WANDB_REF_RUN;
		r->name = pg_xstrdup(p.v[3]);
	} else if (p.n >= 5 && strcmp(p.v[2], "artifacts") == 0) {
		r->kind = WANDB_REF_ARTIFACT;
		r->name = pg_xstrdup(p.v[4]);
		r->alias = pg_xstrdup(p.n >= 6 ? p.v[5] : "latest");
	} else {
		rc = bad_ref(text, "want https://HOST/ENTITY/PROJECT/runs/RUN_ID");
	}
	if (!rc) {
		r->entity = pg_xstrdup(p.v[0]);
		r->project = pg_xstrdup(p.v[1]);
	}
	parts_release(&p);
	return rc;
}

/* wandb://[[E/]P/]RUN[:ALIAS] (an optional runs/ segment) and
 * wandb-artifact://[[E/]P/]NAME[:ALIAS] */
static int parse_scheme(struct wandb_ref *r, const char *text, const char *rest)
{
	struct parts p;
	int rc = 0;

	if (split(&p, rest, strlen(rest), 0))
		return bad_ref(text, "too many segments");
	if (r->kind == WANDB_REF_RUN && p.n == 4 && strcmp(p.v[2], "runs") == 0) {
		free(p.v[2]);
		p.v[2] = p.v[3];
		p.n = 3;
	}
	if (p.n < 1 || p.n > 3) {
		rc = bad_ref(text, r->kind == WANDB_REF_RUN
				       ? "want wandb://ENTITY/PROJECT/RUN_ID"
				       : "want wandb-artifact://ENTITY/PROJECT/NAME:ALIAS");
	} else {
		split_alias(p.v[p.n - 1], &r->name, &r->alias);
		if (p.n >= 2)
			r->project = pg_xstrdup(p.v[p.n - 2]);
		if (p.n == 3)
			r->entity = pg_xstrdup(p.v[0]);
	}
	parts_release(&p);
	return rc;
}

static int check_names(struct wandb_ref *r, const char *text)
{
	if (!r->entity)
		return bad_ref(text, "no entity (give ENTITY/PROJECT/... or set WANDB_ENTITY)");
	if (!r->project)
		return bad_ref(text, "no project (give ENTITY/PROJECT/... or set WANDB_PROJECT)");
	if (!name_ok(r->entity) || !name_ok(r->project) || !name_ok(r->name))
		return bad_ref(text, "a name holds characters W&B does not allow");
	if (r->alias && !name_ok(r->alias))
		return bad_ref(text, "the alias holds characters W&B does not allow");
	if (r->kind == WANDB_REF_ARTIFACT && !r->alias)
		r->alias = pg_xstrdup("latest");
	return 0;
}

int wandb_ref_parse(struct wandb_ref *out, const char *text, const char *entity,
		    const char *project)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (strncmp(text, "wandb://", 8) == 0) {
		out->kind = WANDB_REF_RUN;
		rc = parse_scheme(out, text, text + 8);
	} else if (strncmp(text, "wandb-artifact://", 17) == 0) {
		out->kind = WANDB_REF_ARTIFACT;
		rc = parse_scheme(out, text, text + 17);
	} else if (strncmp(text, "https://", 8) == 0 || strncmp(text, "http://", 7) == 0) {
		rc = parse_url(out, text);
	} else {
		rc = bad_ref(text, "want wandb://, wandb-artifact:// or a run URL");
	}
	if (!rc && !out->entity && entity && *entity)
		out->entity = pg_xstrdup(entity);
	if (!rc && !out->project && project && *project)
		out->project = pg_xstrdup(project);
	if (!rc)
		rc = check_names(out, text);
	return rc;
}

/* ---- manifests ---- */

int wandb_path_check(const char *path, size_t len, const char **why)
{
	*why = NULL;
	if (len == 0)
		*why = "empty";
	else if (len > WANDB_MAX_PATH)
		*why = "longer than 1024 bytes";
	else if (path[0] == '/')
		*why = "absolute";
	for (size_t i = 0; i < len && !*why; i++) {
		unsigned char ch = (unsigned char)path[i];
		if (ch == 0)
			*why = "holds a NUL byte";
		else if (ch < 0x20 || ch == 0x7f)
			*why = "holds a control character";
		else if (ch == '\\')
			*why = "holds a backslash";
	}
	for (size_t start = 0; !*why;) {
		size_t end = start;
		while (end < len && path[end] != '/')
			end++;
		size_t n = end - start;
		if (n == 0)
			*why = "has an empty segment";
		else if (n == 2 && path[start] == '.' && path[start + 1] == '.')
			*why = "climbs out of the folder ('..')";
		else if (n == 1 && path[start] == '.')
			*why = "has a '.' segment";
		else if (n > WANDB_MAX_NAME)
			*why = "has a segment longer than 255 bytes";
		if (end >= len)
			break;
		start = end + 1;
	}
	return *why ? -1 : 0;
}

void wandb_manifest_release(struct wandb_manifest *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].birth_artifact_id);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* A hostile path, printable for a message: control bytes as '?', cut. */
static void printable(char *out, size_t cap, const char *s)
{
	size_t i = 0;

	for (; s[i] && i + 4 < cap && i < 96; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (s[i] && i + 4 < cap)
		out[i++] = '.', out[i++] = '.', out[i++] = '.';
	out[i] = '\0';
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct wandb_entry *)a)->path, ((const struct wandb_entry *)b)->path);
}

static int find_entry(const struct wandb_manifest *m, const char *path)
{
	struct wandb_entry key = {.path = (char *)path};
	const struct wandb_entry *e = bsearch(&key, m->v, m->n, sizeof(key), cmp_entry);
	return e ? (int)(e - m->v) : -1;
}

/* Two entries with one path, or a file that another path needs as a folder. */
static int check_layout(const struct wandb_manifest *m, const char *what)
{
	char shown[128];

	for (uint32_t i = 0; i < m->n; i++) {
		const char *p = m->v[i].path;
		if (i > 0 && strcmp(p, m->v[i - 1].path) == 0) {
			printable(shown, sizeof(shown), p);
			return pg_error_set(PG_EFORMAT, "%s: the manifest lists '%s' twice", what,
					    shown);
		}
		char *dir = pg_xstrdup(p);
		for (char *s = strchr(dir, '/'); s; s = strchr(s + 1, '/')) {
			*s = '\0';
			int hit = find_entry(m, dir);
			*s = '/';
			if (hit >= 0) {
				printable(shown, sizeof(shown), p);
				free(dir);
				return pg_error_set(
				    PG_EFORMAT, "%s: the manifest path '%s' runs through a file",
				    what, shown);
			}
		}
		free(dir);
	}
	return 0;
}

static int parse_entry(struct wandb_manifest *m, const cJSON *it, const char *what)
{
	struct wandb_entry *e = &m->v[m->n];
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "digest");
	const cJSON *sz = cJSON_GetObjectItemCaseSensitive(it, "size");
	const cJSON *birth = cJSON_GetObjectItemCaseSensitive(it, "birthArtifactID");
	const char *why;
	char shown[128];
	size_t n = 0;

	printable(shown, sizeof(shown), it->string);
	if (wandb_path_check(it->string, strlen(it->string), &why))
		return pg_error_set(PG_EFORMAT, "%s: refused the manifest path '%s': %s", what,
				    shown, why);
	if (!cJSON_IsObject(it))
		return pg_error_set(PG_EFORMAT, "%s: the manifest entry '%s' is not an object",
				    what, shown);
	if (cJSON_GetObjectItemCaseSensitive(it, "ref"))
		return pg_error_set(PG_EUNSUPP,
				    "%s: '%s' is a reference to outside storage, which profgate "
				    "does not download",
				    what, shown);
	if (!cJSON_IsString(d) || strlen(d->valuestring) >= sizeof(e->digest) ||
	    pg_base64_decode(d->valuestring, e->md5, sizeof(e->md5), &n) || n != 16)
		return pg_error_set(PG_EFORMAT, "%s: '%s' has no MD5 digest in base64", what,
				    shown);
	if (!cJSON_IsNumber(sz) || sz->valuedouble < 0 || floor(sz->valuedouble) != sz->valuedouble)
		return pg_error_set(PG_EFORMAT, "%s: '%s' has no size", what, shown);
	if (sz->valuedouble > (double)WANDB_MAX_FILE_BYTES)
		return pg_error_set(PG_ELIMIT, "%s: '%s' is %.0f bytes, over the cap of %llu GiB",
				    what, shown, sz->valuedouble,
				    (unsigned long long)(WANDB_MAX_FILE_BYTES >> 30));
	e->size = (uint64_t)sz->valuedouble;
	snprintf(e->digest, sizeof(e->digest), "%s", d->valuestring);
	e->path = pg_xstrdup(it->string);
	e->birth_artifact_id = cJSON_IsString(birth) ? pg_xstrdup(birth->valuestring) : NULL;
	m->n++;
	m->total_bytes += e->size;
	if (m->total_bytes > WANDB_MAX_TOTAL_BYTES)
		return pg_error_set(PG_ELIMIT, "%s: the files add up to over the cap of %llu GiB",
				    what, (unsigned long long)(WANDB_MAX_TOTAL_BYTES >> 30));
	return 0;
}

/* The storage layout and region (they go into a URL: a plain name only). */
static void storage_config(struct wandb_manifest *m, const cJSON *cfg)
{
	const cJSON *layout = cJSON_GetObjectItemCaseSensitive(cfg, "storageLayout");
	const cJSON *region = cJSON_GetObjectItemCaseSensitive(cfg, "storageRegion");
	const char *r = cJSON_IsString(region) ? region->valuestring : "";
	size_t n = strspn(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-");

	m->layout_v1 = !(cJSON_IsString(layout) && strcmp(layout->valuestring, "V2") == 0);
	snprintf(m->region, sizeof(m->region), "%s",
		 n && !r[n] && n < sizeof(m->region) && r[0] != '.' ? r : "default");
}

int wandb_manifest_parse(struct wandb_manifest *out, const char *text, size_t len, const char *what)
{
	cJSON *root = NULL;
	const cJSON *v, *contents, *it;
	int rc = 0, count;

	memset(out, 0, sizeof(*out));
	/* cJSON cuts strings at an escaped NUL: refuse it before parsing */
	if (memchr(text, 0, len) || memmem(text, len, "\\u0000", 6))
		return pg_error_set(PG_EFORMAT, "%s: refused the manifest: a path holds a NUL byte",
				    what);
	root = cJSON_ParseWithLength(text, len);
	v = cJSON_GetObjectItemCaseSensitive(root, "version");
	contents = cJSON_GetObjectItemCaseSensitive(root, "contents");
	if (!cJSON_IsObject(root) || !cJSON_IsObject(contents)) {
		rc = pg_error_set(PG_EFORMAT, "%s: the manifest is not a W&B artifact manifest",
				  what);
		goto out;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble != 1) {
		rc = pg_error_set(PG_EUNSUPP, "%s: manifest version %s (profgate reads 1)", what,
				  cJSON_IsNumber(v) ? "other than 1" : "missing");
		goto out;
	}
	count = cJSON_GetArraySize(contents);
	if (count > WANDB_MAX_FILES) {
		rc = pg_error_set(PG_ELIMIT, "%s: the manifest lists %d files, over the cap of %d",
				  what, count, WANDB_MAX_FILES);
		goto out;
	}
	out->v = pg_xcalloc((size_t)count + 1, sizeof(*out->v));
	cJSON_ArrayForEach (it, contents)
		if ((rc = parse_entry(out, it, what)) != 0)
			goto out;
	qsort(out->v, out->n, sizeof(*out->v), cmp_entry);
	storage_config(out, cJSON_GetObjectItemCaseSensitive(root, "storagePolicyConfig"));
	rc = check_layout(out, what);
out:
	cJSON_Delete(root);
	if (rc)
		wandb_manifest_release(out);
	return rc;
}
