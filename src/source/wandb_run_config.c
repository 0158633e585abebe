/*
 * A W&B run's config and summary as the fetch reads them: JSONString fields
 * parsed in W&B's dialect, the config's {"value": v} wrapping undone, and
 * marin's config_hash, the sha256 of the config as Python's
 * json.dumps(sort_keys=True) writes it, so that a hash computed here matches
 * the one marin logs for the same run.
 */
#include "wandb_fetch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSONString field (config, summaryMetrics): parsed in W&B's dialect (NaN
 * and Infinity read as null), or a copy when the server already sent an
 * object. One that does not parse is said on its line and read as absent:
 * these are provenance facts, not the profile. */
cJSON *wandb_run_json_field(const cJSON *run, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(run, key);
	cJSON *out = NULL;

	if (cJSON_IsString(v)) {
		char what[64];
		snprintf(what, sizeof(what), "wandb: the run's %s", key);
		if (wandb_json_strict(v->valuestring, strlen(v->valuestring), what, &out)) {
			pg_log("%s; its facts are not used", pg_error_last());
			pg_error_clear();
		}
		return out;
	}
	return cJSON_IsObject(v) ? cJSON_Duplicate(v, 1) : NULL;
}

/* Each top-level key is {"value": v} (older SDKs add "desc"): unwrap; drop the
 * SDK's own keys. */
void wandb_run_config_unwrap(cJSON *cfg)
{
	if (!cJSON_IsObject(cfg))
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "_wandb");
	cJSON_DeleteItemFromObjectCaseSensitive(cfg, "wandb_version");
	for (cJSON *it = cfg->child, *next; it; it = next) {
		cJSON *v =
		    cJSON_IsObject(it) ? cJSON_GetObjectItemCaseSensitive(it, "value") : NULL;
		next = it->next;
		if (v && it->string)
			cJSON_ReplaceItemInObjectCaseSensitive(cfg, it->string,
							       cJSON_DetachItemViaPointer(it, v));
	}
}

/* A string as Python's json.dumps writes it (ensure_ascii). */
static void canon_str(struct pg_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	pg_buf_addc(b, '"');
	while (*p) {
		uint32_t cp = *p++;
		int more = cp >= 0xf0 ? 3 : cp >= 0xe0 ? 2 : cp >= 0xc0 ? 1 : 0;
		if (more) {
			cp &= 0x3fu >> more;
			for (int k = 0; k < more && (*p & 0xc0) == 0x80; k++)
				cp = (cp << 6) | (*p++ & 0x3f);
		}
		if (cp == '"' || cp == '\\')
			pg_buf_addf(b, "\\%c", (char)cp);
		else if (cp == '\n')
			pg_buf_adds(b, "\\n");
		else if (cp == '\r')
			pg_buf_adds(b, "\\r");
		else if (cp == '\t')
			pg_buf_adds(b, "\\t");
		else if (cp == '\b')
			pg_buf_adds(b, "\\b");
		else if (cp == '\f')
			pg_buf_adds(b, "\\f");
		else if (cp < 0x20 || (cp >= 0x80 && cp < 0x10000))
			pg_buf_addf(b, "\\u%04x", (unsigned)cp);
		else if (cp >= 0x10000)
			pg_buf_addf(b, "\\u%04x\\u%04x", 0xd800 + ((cp - 0x10000) >> 10),
				    0xdc00 + ((cp - 0x10000) & 0x3ff));
		else
			pg_buf_addc(b, (char)cp);
	}
	pg_buf_addc(b, '"');
}

/* A number as Python writes it: whole numbers as integers (JSON text does not
 * say int or float once parsed), others as the shortest text that reads back. */
static void canon_num(struct pg_buf *b, double v)
{
	char tmp[64];

	if (floor(v) == v && fabs(v) < 1e16) {
		pg_buf_addf(b, "%.0f", v == 0 ? 0.0 : v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	pg_buf_adds(b, tmp);
	if (!strpbrk(tmp, ".e"))
		pg_buf_adds(b, ".0");
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* json.dumps(v, sort_keys=True): what marin hashes for config_hash. */
static void canon(struct pg_buf *b, const cJSON *v, int depth)
{
	const cJSON *it;
	int n = 0;

	if (depth > 64) {
		pg_buf_adds(b, "null");
	} else if (cJSON_IsObject(v)) {
		const cJSON **kids = pg_xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(*kids));
		cJSON_ArrayForEach (it, v)
			kids[n++] = it;
		qsort(kids, (size_t)n, sizeof(*kids), cmp_key);
		pg_buf_addc(b, '{');
		for (int i = 0; i < n; i++) {
			pg_buf_adds(b, i ? ", " : "");
			canon_str(b, kids[i]->string);
			pg_buf_adds(b, ": ");
			canon(b, kids[i], depth + 1);
		}
		pg_buf_addc(b, '}');
		free(kids);
	} else if (cJSON_IsArray(v)) {
		pg_buf_addc(b, '[');
		cJSON_ArrayForEach (it, v) {
			pg_buf_adds(b, n++ ? ", " : "");
			canon(b, it, depth + 1);
		}
		pg_buf_addc(b, ']');
	} else if (cJSON_IsString(v)) {
		canon_str(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		canon_num(b, v->valuedouble);
	} else {
		pg_buf_adds(b, cJSON_IsTrue(v) ? "true" : cJSON_IsFalse(v) ? "false" : "null");
	}
}

/* The first 16 hex digits of the sha256 of the canonical config. */
char *wandb_run_config_hash(const cJSON *cfg)
{
	struct pg_buf b = PG_BUF_INIT;
	struct pg_sha256 s;
	char hex[65];

	canon(&b, cfg, 0);
	pg_sha256_init(&s);
	pg_sha256_update(&s, b.ptr, b.len);
	pg_sha256_hex(&s, hex);
	pg_buf_release(&b);
	hex[16] = '\0';
	return pg_xstrdup(hex);
}

/* A positive number the config holds at a dotted path, or 0. */
double wandb_run_config_number(const cJSON *cfg, const char *path)
{
	const cJSON *v = cfg ? wandb_at(cfg, path) : NULL;
	return cJSON_IsNumber(v) && v->valuedouble > 0 ? v->valuedouble : 0;
}
