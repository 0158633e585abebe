/*
 * Profile-directory discovery. A directory is walked (bounded in depth and
 * entries, symlinked folders not followed) for files named like profiles;
 * they are grouped into captures, one capture is chosen per directory, and
 * the choice is explained in notes.
 *
 * Rules (docs/formats.md "Profile directories"):
 *  - a capture is the set of files in one folder; adjacent timestamp folders
 *    (plugins/profile/YYYY_MM_DD_HH_MM_SS) within 120 s of each other whose
 *    hosts do not overlap are one capture (hosts of a multi-host run often
 *    stamp their folders a second or two apart);
 *  - Kineto files (<worker>.<ms>.pt.trace.json[.gz]) in one folder split into
 *    captures where their timestamps are more than 60 s apart, a worker
 *    repeats, or what the files say makes them two runs: a file joins the
 *    files before it only when each names its rank (distributedInfo, read
 *    from the file's head: kineto_rank) and no rank repeats, since the ranks
 *    of one job all write it and two runs (a rerun seconds later, another
 *    process on the machine) share rank 0 or have none; such a split within
 *    60 s is named in a note;
 *  - the newest capture wins unless one is named; older ones are listed, not
 *    mixed in;
 *  - within a capture XPlane wins over JSON of the same capture, a
 *    <host>.trace.json.gz over perfetto_trace.json.gz (same events), and
 *    other *.json files count only when nothing else is there;
 *  - xprof tool tables (<tool>.json) and .xplane.riegeli files are skipped
 *    with a note; a capture of nothing else is refused, naming them;
 *  - profgate's own outputs (summaries, verdicts, records, trends, reports:
 *    known by content, source_profgate_output) are no candidates at all, so
 *    `summarize prof -o prof/summary.json` reads the same capture again; each
 *    gets a note (own_notes). A folder that holds no profile and one summary
 *    (a W&B artifact of a published summary) resolves to that summary, which
 *    `gate` reads as one;
 *  - byte-identical files (same size and sha256) are read once and reported.
 */
#include "source.h"

#include "../read/read.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_DEPTH   10
#define MAX_ENTRIES 200000

struct cand {
	char *path;
	char *dir;
	char *base;
	enum source_kind kind;
	uint64_t bytes;
	int64_t mtime;
	int64_t kineto_ms; /* -1 when the name has none */
	int32_t rank;	   /* distributedInfo's rank (kineto_rank), -1 none, -2 not read */
	char *worker;	   /* Kineto worker/rank name, or the host for XPlane */
};

struct cands {
	struct cand *v;
	uint32_t n, cap;
	char **own; /* "<path>: profgate's own output (<what>)" of files left out */
	uint32_t n_own;
	/* the summaries among them: the last one's place, and how many */
	char *summary_dir, *summary_base;
	struct stat summary_st;
	uint32_t n_summaries, summary_own;
	uint32_t seen;
	int truncated;
};

const char *source_kind_name(enum source_kind k)
{
	static const char *names[] = {"xplane", "jax-trace-json", "perfetto-json",    "kineto-json",
				      "json",	"xplane-riegeli", "xprof-tool-table", "file"};
	return (unsigned)k < PG_ARRAY_LEN(names) ? names[k] : "file";
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int classify(const char *base, enum source_kind *out)
{
	if (ends_with(base, ".xplane.pb"))
		*out = SOURCE_XPLANE;
	else if (ends_with(base, ".xplane.riegeli"))
		*out = SOURCE_RIEGELI;
	else if (strcmp(base, "perfetto_trace.json.gz") == 0 ||
		 strcmp(base, "perfetto_trace.json") == 0)
		*out = SOURCE_PERFETTO;
	else if (ends_with(base, ".pt.trace.json") || ends_with(base, ".pt.trace.json.gz"))
		*out = SOURCE_KINETO;
	else if (ends_with(base, ".trace.json.gz") || ends_with(base, ".trace.json"))
		*out = SOURCE_JAX_JSON;
	else if (read_xprof_tool(base))
		*out = SOURCE_XPROF_TOOL;
	else if (ends_with(base, ".json") || ends_with(base, ".json.gz"))
		*out = SOURCE_JSON;
	else
		return 0;
	return 1;
}

/* "<worker>.<13 digits>.pt.trace.json": the worker and the ms timestamp. */
static void kineto_name(struct cand *c)
{
	const char *b = c->base, *suf = strstr(b, ".pt.trace.json");
	const char *dot = NULL;

	c->kineto_ms = -1;
	for (const char *p = b; p < suf; p++)
		if (*p == '.')
			dot = p;
	if (dot && suf - dot - 1 >= 10) {
		int digits = 1;
		for (const char *p = dot + 1; p < suf; p++)
			if (*p < '0' || *p > '9')
				digits = 0;
		if (digits) {
			/* Kineto stamps in ms (13 digits); some writers use us or ns */
			long long v = strtoll(dot + 1, NULL, 10);
			int nd = (int)(suf - dot - 1);
			c->kineto_ms = nd >= 19 ? v / 1000000 : nd >= 16 ? v / 1000 : v;
			c->worker = pg_xstrndup(b, (size_t)(dot - b));
			return;
		}
	}
	c->worker = pg_xstrndup(b, suf ? (size_t)(suf - b) : strlen(b));
}

static void host_name(struct cand *c)
{
	const char *b = c->base;
	const char *suf = strstr(b, ".xplane.");

	if (!suf)
		suf = strstr(b, ".trace.json");
	c->worker = pg_xstrndup(b, suf ? (size_t)(suf - b) : strlen(b));
}

static void add_cand(struct cands *cs, const char *dir, const char *base, enum source_kind kind,
		     const struct stat *st)
{
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? 2 * cs->cap : 64;
		cs->v = pg_xrealloc(cs->v, cs->cap * sizeof(*cs->v));
	}
	struct cand *c = &cs->v[cs->n++];
	size_t n = strlen(dir) + strlen(base) + 2;
	memset(c, 0, sizeof(*c));
	c->path = pg_xmalloc(n);
	snprintf(c->path, n, "%s/%s", dir, base);
	c->dir = pg_xstrdup(dir);
	c->base = pg_xstrdup(base);
	c->kind = kind;
	c->bytes = (uint64_t)st->st_size;
	c->mtime = (int64_t)st->st_mtime;
	c->kineto_ms = -1;
	c->rank = -2;
	if (kind == SOURCE_KINETO)
		kineto_name(c);
	else
		host_name(c);
}

int source_profgate_output(const char *path, char *what, size_t n)
{
	static const char *const keys[] = {"{", "\"schema\"", ":", "\"profgate."};
	char head[256];
	const char *p = head;
	size_t got;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 0;
	got = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[got] = 0;
	if (strncmp(head, "# profgate", 10) == 0 || strncmp(head, "## profgate", 11) == 0) {
		snprintf(what, n, "report markdown");
		return 1;
	}
	for (size_t i = 0; i < PG_ARRAY_LEN(keys); i++) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (strncmp(p, keys[i], strlen(keys[i])) != 0)
			return 0;
		p += strlen(keys[i]);
	}
	got = strcspn(p, "\"\n");
	if (p[got] != '"')
		return 0;
	snprintf(what, n, "profgate.%.*s", (int)got, p);
	return 1;
}

static void add_own(struct cands *cs, const char *path, const char *what)
{
	cs->own = pg_xrealloc(cs->own, (cs->n_own + 1) * sizeof(char *));
	cs->own[cs->n_own++] = pg_xasprintf("%s: profgate's own output (%s)", path, what);
}

/* Walk dir; entries in name order so the result never depends on readdir. */
static int walk(struct cands *cs, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (depth > MAX_DEPTH)
		return 0;
	d = opendir(dir);
	if (!d)
		return depth == 0 ? pg_error_set(PG_EIO, "cannot read directory '%s': %s", dir,
						 strerror(errno))
				  : 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (++cs->seen > MAX_ENTRIES) {
			cs->truncated = 1;
			break;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = pg_xrealloc(names, cap * sizeof(char *));
		}
		names[n++] = pg_xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(char *), pg_cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *p = pg_xasprintf("%s/%s", dir, names[i]);
		struct stat st;
		enum source_kind kind;
		char what[64];
		if (lstat(p, &st) == 0) {
			if (S_ISDIR(st.st_mode))
				walk(cs, p, depth + 1);
			else if ((S_ISREG(st.st_mode) ||
				  (S_ISLNK(st.st_mode) && stat(p, &st) == 0 &&
				   S_ISREG(st.st_mode))) &&
				 classify(names[i], &kind)) {
				if (kind != SOURCE_XPLANE && kind != SOURCE_RIEGELI &&
				    source_profgate_output(p, what, sizeof(what))) {
					if (strncmp(what, "profgate.summary/", 17) == 0) {
						free(cs->summary_dir);
						free(cs->summary_base);
						cs->summary_dir = pg_xstrdup(dir);
						cs->summary_base = pg_xstrdup(names[i]);
						cs->summary_st = st;
						cs->summary_own = cs->n_own;
						cs->n_summaries++;
					}
					add_own(cs, p, what);
				} else
					add_cand(cs, dir, names[i], kind, &st);
			}
		}
		free(p);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* YYYY_MM_DD_HH_MM_SS -> seconds (UTC), or -1. */
static int64_t folder_time(const char *dir)
{
	const char *b = strrchr(dir, '/');
	struct tm tm;
	int y, mo, da, h, mi, s;
	char tail;

	b = b ? b + 1 : dir;
	if (sscanf(b, "%4d_%2d_%2d_%2d_%2d_%2d%c", &y, &mo, &da, &h, &mi, &s, &tail) != 6)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = da;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return (int64_t)timegm(&tm);
}

static void note(struct source_set *s, const char *fmt, ...) PG_PRINTF(2, 3);

static void note(struct source_set *s, const char *fmt, ...)
{
	va_list ap;

	s->notes = pg_xrealloc(s->notes, (s->n_notes + 1) * sizeof(char *));
	va_start(ap, fmt);
	s->notes[s->n_notes++] = pg_xvasprintf(fmt, ap);
	va_end(ap);
}

/* ---- grouping ---- */

struct group {
	uint32_t *idx; /* into cands */
	uint32_t n;
	char *name;
	char *dir;
	int64_t key;
	int64_t folder_t; /* timestamp folder seconds, or -1 */
};

struct groups {
	struct group *v;
	uint32_t n;
};

static struct group *group_new(struct groups *g, const char *name, const char *dir)
{
	g->v = pg_xrealloc(g->v, (g->n + 1) * sizeof(*g->v));
	struct group *x = &g->v[g->n++];
	memset(x, 0, sizeof(*x));
	x->name = pg_xstrdup(name);
	x->dir = pg_xstrdup(dir);
	x->folder_t = -1;
	return x;
}

static void group_add(struct group *x, uint32_t i)
{
	x->idx = pg_xrealloc(x->idx, (x->n + 1) * sizeof(uint32_t));
	x->idx[x->n++] = i;
}

static const char *rel(const char *root, const char *dir)
{
	size_t n = strlen(root);
	if (strncmp(dir, root, n) == 0 && (dir[n] == '/' || dir[n] == '\0'))
		return dir[n] ? dir + n + 1 : ".";
	return dir;
}

static const struct cand *cmp_cands;

static int cmp_by_ms(const void *a, const void *b)
{
	const struct cand *x = &cmp_cands[*(const uint32_t *)a];
	const struct cand *y = &cmp_cands[*(const uint32_t *)b];
	if (x->kineto_ms != y->kineto_ms)
		return x->kineto_ms < y->kineto_ms ? -1 : 1;
	return strcmp(x->base, y->base);
}

#define RANK_HEAD_BYTES (256u << 10)

/* The rank a Kineto file's distributedInfo names, from the first 256 KiB of
 * its content (Kineto writes the block ahead of traceEvents); -1 when the
 * head names none or the file cannot be read (the read says why later). */
static int32_t kineto_rank(const char *path)
{
	struct pg_buf head = PG_BUF_INIT;
	struct rd_in in;
	int32_t rank = -1;
	const char *at;

	if (rd_in_open(&in, path, 1) != 0) {
		pg_error_clear();
		return -1;
	}
	while (head.len < RANK_HEAD_BYTES) {
		if (in.p < in.end) {
			size_t n = (size_t)(in.end - in.p);
			if (n > RANK_HEAD_BYTES - head.len)
				n = RANK_HEAD_BYTES - head.len;
			pg_buf_add(&head, in.p, n);
			in.p += n;
		} else if (rd_in_refill(&in) <= 0) {
			break;
		}
	}
	rd_in_close(&in);
	pg_error_clear();
	pg_buf_adds(&head, "");
	at = head.ptr ? strstr(head.ptr, "\"distributedInfo\"") : NULL;
	at = at ? strstr(at, "\"rank\"") : NULL;
	if (at && (at = strchr(at, ':')) != NULL) {
		char *end;
		long v = strtol(at + 1, &end, 10);
		if (end != at + 1 && v >= 0 && v < (1L << 30))
			rank = (int32_t)v;
	}
	pg_buf_release(&head);
	return rank;
}

/* Whether Kineto file c can be of one job with the files of group k: each
 * names its rank and none repeats. */
static int same_job(const struct cands *cs, const struct group *k, const struct cand *c)
{
	if (c->rank < 0)
		return 0;
	for (uint32_t j = 0; j < k->n; j++)
		if (cs->v[k->idx[j]].rank < 0 || cs->v[k->idx[j]].rank == c->rank)
			return 0;
	return 1;
}

/* Split the candidates of one folder into captures. */
static void group_folder(struct source_set *s, struct groups *g, struct cands *cs,
			 const uint32_t *idx, uint32_t n, const char *root)
{
	const char *dir = cs->v[idx[0]].dir;
	int64_t ft = folder_time(dir);
	uint32_t *kin = pg_xmalloc((n + 1) * sizeof(uint32_t)), nk = 0;
	struct group *x = NULL;
	char name[1024];

	for (uint32_t i = 0; i < n; i++)
		if (cs->v[idx[i]].kind == SOURCE_KINETO && cs->v[idx[i]].kineto_ms >= 0)
			kin[nk++] = idx[i];
		else {
			if (!x) {
				x = group_new(g, rel(root, dir), dir);
				x->folder_t = ft;
			}
			group_add(x, idx[i]);
		}
	/* Kineto files with timestamps: cluster */
	cmp_cands = cs->v;
	qsort(kin, nk, sizeof(uint32_t), cmp_by_ms);
	for (uint32_t i = 0; nk > 1 && i < nk; i++)
		cs->v[kin[i]].rank = kineto_rank(cs->v[kin[i]].path);
	struct group *k = NULL;
	int64_t last = 0;
	for (uint32_t i = 0; i < nk; i++) {
		const struct cand *c = &cs->v[kin[i]];
		int repeat = 0, near = k && c->kineto_ms - last <= 60000;
		for (uint32_t j = 0; k && j < k->n; j++)
			if (strcmp(cs->v[k->idx[j]].worker, c->worker) == 0)
				repeat = 1;
		if (near && !repeat && !same_job(cs, k, c))
			note(
			    s,
			    "%s: '%s' and '%s' were written %.1f s apart but are not one job (%s): "
			    "read as two captures",
			    rel(root, dir), cs->v[k->idx[k->n - 1]].base, c->base,
			    (double)(c->kineto_ms - last) / 1000.0,
			    c->rank < 0 || cs->v[k->idx[k->n - 1]].rank < 0
				? "not every one names its rank in distributedInfo"
				: "they name the same rank");
		if (!near || repeat || !same_job(cs, k, c)) {
			snprintf(name, sizeof(name), "%s@%lld", rel(root, dir),
				 (long long)c->kineto_ms);
			k = group_new(g, name, dir);
			k->key = c->kineto_ms / 1000;
		}
		group_add(k, kin[i]);
		last = c->kineto_ms;
	}
	free(kin);
}

static int hosts_overlap(const struct cands *cs, const struct group *a, const struct group *b)
{
	for (uint32_t i = 0; i < a->n; i++)
		for (uint32_t j = 0; j < b->n; j++)
			if (strcmp(cs->v[a->idx[i]].worker, cs->v[b->idx[j]].worker) == 0 &&
			    cs->v[a->idx[i]].kind == cs->v[b->idx[j]].kind)
				return 1;
	return 0;
}

static char *parent_of(const char *dir)
{
	const char *s = strrchr(dir, '/');
	return s ? pg_xstrndup(dir, (size_t)(s - dir)) : pg_xstrdup("");
}

/* Merge adjacent timestamp folders of one window (same parent, <=120 s apart,
 * disjoint hosts). Groups are in folder-name order, which is time order. */
static void merge_adjacent(struct groups *g, const struct cands *cs)
{
	for (uint32_t i = 0; i + 1 < g->n;) {
		struct group *a = &g->v[i], *b = &g->v[i + 1];
		char *pa = parent_of(a->dir), *pb = parent_of(b->dir);
		int same_parent = strcmp(pa, pb) == 0;
		free(pa);
		free(pb);
		if (a->folder_t < 0 || b->folder_t < 0 || !same_parent ||
		    b->folder_t - a->folder_t > 120 || hosts_overlap(cs, a, b)) {
			i++;
			continue;
		}
		for (uint32_t j = 0; j < b->n; j++)
			group_add(a, b->idx[j]);
		size_t n = strlen(a->name) + strlen(b->name) + 4;
		char *nm = pg_xmalloc(n);
		const char *bb = strrchr(b->name, '/');
		snprintf(nm, n, "%s+%s", a->name, bb ? bb + 1 : b->name);
		free(a->name);
		a->name = nm;
		a->folder_t = b->folder_t;
		free(b->idx);
		free(b->name);
		free(b->dir);
		memmove(b, b + 1, (g->n - i - 2) * sizeof(*b));
		g->n--;
	}
}

static void free_groups(struct groups *g)
{
	for (uint32_t i = 0; i < g->n; i++) {
		free(g->v[i].idx);
		free(g->v[i].name);
		free(g->v[i].dir);
	}
	free(g->v);
}

static void free_cands(struct cands *cs)
{
	for (uint32_t i = 0; i < cs->n; i++) {
		free(cs->v[i].path);
		free(cs->v[i].dir);
		free(cs->v[i].base);
		free(cs->v[i].worker);
	}
	free(cs->v);
	for (uint32_t i = 0; i < cs->n_own; i++)
		free(cs->own[i]);
	free(cs->own);
	free(cs->summary_dir);
	free(cs->summary_base);
}

static void add_file(struct source_set *s, const char *path, enum source_kind kind, uint64_t bytes)
{
	s->files = pg_xrealloc(s->files, (s->n_files + 1) * sizeof(*s->files));
	struct source_file *f = &s->files[s->n_files++];
	memset(f, 0, sizeof(*f));
	f->path = pg_xstrdup(path);
	f->kind = kind;
	f->bytes = bytes;
	f->duplicate_of = -1;
}

/* Which files of a capture to read: XPlane over JSON, per-host JSON over the
 * Perfetto copy, generic JSON only alone. Notes say what was dropped. */
static void choose_files(struct source_set *s, const struct cands *cs, const struct group *x)
{
	int has[SOURCE_GIVEN + 1] = {0};

	for (uint32_t i = 0; i < x->n; i++)
		has[cs->v[x->idx[i]].kind]++;
	for (uint32_t i = 0; i < x->n; i++) {
		const struct cand *c = &cs->v[x->idx[i]];
		const char *why = NULL;
		switch (c->kind) {
		case SOURCE_XPLANE: break;
		case SOURCE_JAX_JSON:
		case SOURCE_PERFETTO:
			if (has[SOURCE_XPLANE])
				why =
				    "the capture has XPlane, which holds the same events and more";
			else if (c->kind == SOURCE_PERFETTO && has[SOURCE_JAX_JSON])
				why = "perfetto_trace.json.gz repeats the per-host .trace.json.gz";
			break;
		case SOURCE_KINETO: break;
		case SOURCE_JSON:
			if (has[SOURCE_XPLANE] || has[SOURCE_JAX_JSON] || has[SOURCE_PERFETTO] ||
			    has[SOURCE_KINETO])
				why = "not named like a profile, and the capture has profiles";
			break;
		case SOURCE_RIEGELI:
			why = ".xplane.riegeli is not supported (export .xplane.pb)";
			break;
		case SOURCE_XPROF_TOOL:
			why = "an xprof tool table (aggregates xprof computes from an .xplane.pb), "
			      "not a trace";
			break;
		default: break;
		}
		if (why) {
			note(s, "skipped %s: %s", c->path, why);
			continue;
		}
		add_file(s, c->path, c->kind, c->bytes);
	}
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct source_file *)a)->path, ((const struct source_file *)b)->path);
}

static int64_t group_key(const struct cands *cs, const struct group *x)
{
	if (x->folder_t >= 0)
		return x->folder_t;
	if (x->key)
		return x->key;
	int64_t m = 0;
	for (uint32_t i = 0; i < x->n; i++)
		if (cs->v[x->idx[i]].mtime > m)
			m = cs->v[x->idx[i]].mtime;
	return m;
}

static int cmp_cand_dir(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	int c = strcmp(x->dir, y->dir);
	return c ? c : strcmp(x->base, y->base);
}

static int resolve_dir(struct source_set *s, const char *dir, const char *capture)
{
	struct cands cs = {0};
	struct groups g = {NULL, 0};
	int rc;
	char *root = pg_xstrdup(dir);
	size_t rl = strlen(root);

	while (rl > 1 && root[rl - 1] == '/')
		root[--rl] = '\0';
	rc = walk(&cs, root, 0);
	if (rc)
		goto out;
	if (cs.n == 0 && cs.n_summaries == 1)
		add_cand(&cs, cs.summary_dir, cs.summary_base, SOURCE_JSON, &cs.summary_st);
	for (uint32_t i = 0; i < cs.n_own; i++) {
		if (cs.n_summaries == 1 && cs.n == 1 && i == cs.summary_own &&
		    cs.v[0].kind == SOURCE_JSON && strcmp(cs.v[0].base, cs.summary_base) == 0)
			continue; /* the folder's one summary, read as one */
		s->own_notes =
		    pg_xrealloc(s->own_notes, (s->n_own_notes + 1) * sizeof(*s->own_notes));
		s->own_notes[s->n_own_notes++] = s->n_notes;
		note(s, "skipped %s", cs.own[i]);
	}
	if (cs.truncated)
		note(s, "%s: stopped after %d entries; name a smaller folder", root, MAX_ENTRIES);
	if (cs.n == 0) {
		rc =
		    pg_error_set(PG_ENOTFOUND,
				 "no profiles in '%s' (looked for *.xplane.pb, *.trace.json.gz, "
				 "perfetto_trace.json.gz, *.pt.trace.json[.gz], *.json[.gz]%s)",
				 root, cs.n_own ? "; profgate's own outputs are not profiles" : "");
		goto out;
	}
	/* group consecutive runs of one folder, folders in name order */
	qsort(cs.v, cs.n, sizeof(*cs.v), cmp_cand_dir);
	for (uint32_t i = 0; i < cs.n;) {
		uint32_t j = i;
		uint32_t *idx = pg_xmalloc((cs.n - i) * sizeof(uint32_t));
		while (j < cs.n && strcmp(cs.v[j].dir, cs.v[i].dir) == 0) {
			idx[j - i] = j;
			j++;
		}
		group_folder(s, &g, &cs, idx, j - i, root);
		free(idx);
		i = j;
	}
	merge_adjacent(&g, &cs);
	/* record every capture; choose one */
	int32_t best = -1;
	for (uint32_t i = 0; i < g.n; i++) {
		struct group *x = &g.v[i];
		x->key = group_key(&cs, x);
		s->captures = pg_xrealloc(s->captures, (s->n_captures + 1) * sizeof(*s->captures));
		struct source_capture *c = &s->captures[s->n_captures++];
		c->name = pg_xstrdup(x->name);
		c->dir = pg_xstrdup(x->dir);
		c->key = x->key;
		c->n_files = x->n;
		c->files = pg_xcalloc(x->n, sizeof(*c->files));
		for (uint32_t k = 0; k < x->n; k++) {
			c->files[k].path = pg_xstrdup(cs.v[x->idx[k]].path);
			c->files[k].kind = cs.v[x->idx[k]].kind;
			c->files[k].bytes = cs.v[x->idx[k]].bytes;
			c->files[k].duplicate_of = -1;
		}
		if (capture) {
			if (strcmp(x->name, capture) == 0)
				best = (int32_t)i;
		} else if (best < 0 || x->key > g.v[best].key ||
			   (x->key == g.v[best].key && strcmp(x->name, g.v[best].name) > 0)) {
			best = (int32_t)i;
		}
	}
	if (best < 0) {
		rc = pg_error_set(PG_ENOTFOUND,
				  "no capture named '%s' in '%s' (see 'profgate inspect %s')",
				  capture, root, root);
		goto out;
	}
	s->chosen = pg_xrealloc(s->chosen, (s->n_chosen + 1) * sizeof(int32_t));
	s->chosen[s->n_chosen++] = (int32_t)(s->n_captures - g.n + (uint32_t)best);
	if (g.n > 1)
		note(s, "%s: %u captures; chose '%s' (%s)", root, g.n, g.v[best].name,
		     capture ? "named by --capture" : "the newest; --capture NAME picks another");
	uint32_t first = s->n_files, first_note = s->n_notes;
	choose_files(s, &cs, &g.v[best]);
	if (s->n_files > first)
		qsort(s->files + first, s->n_files - first, sizeof(*s->files), cmp_path);
	else if (s->n_notes > first_note) /* every file skipped: say why, do not read nothing */
		rc = pg_error_set(PG_EUNSUPP, "no profile profgate reads in '%s': %s (%u skipped)",
				  root, s->notes[first_note], s->n_notes - first_note);
out:
	free(root);
	free_groups(&g);
	free_cands(&cs);
	return rc;
}

/* Files that share a size get a sha256; equal digests are read once. */
static int mark_duplicates(struct source_set *s)
{
	for (uint32_t i = 0; i < s->n_files; i++) {
		for (uint32_t j = 0; j < i; j++) {
			struct source_file *a = &s->files[j], *b = &s->files[i];
			if (a->bytes != b->bytes || a->duplicate_of >= 0)
				continue;
			if (!a->sha256[0] && pg_sha256_file(a->path, a->sha256))
				return PG_EIO;
			if (!b->sha256[0] && pg_sha256_file(b->path, b->sha256))
				return PG_EIO;
			if (strcmp(a->sha256, b->sha256) == 0) {
				b->duplicate_of = (int32_t)j;
				note(s, "%s is byte-identical to %s: read once", b->path, a->path);
				break;
			}
		}
	}
	return 0;
}

/* A W&B ref: fetch it, then resolve its folder like any other. */
static int resolve_wandb(struct source_set *s, const char *ref, const char *capture)
{
	struct wandb_fetch_result r;
	int rc = wandb_fetch(&r, ref, NULL);

	if (!rc)
		rc = resolve_dir(s, r.origin.dir, capture);
	if (!rc) {
		s->origins = pg_xrealloc(s->origins, (s->n_origins + 1) * sizeof(*s->origins));
		s->origins[s->n_origins++] = r.origin;
		memset(&r.origin, 0, sizeof(r.origin));
	}
	wandb_fetch_result_release(&r);
	return rc;
}

int source_resolve(struct source_set *out, const char *const *inputs, int n_inputs,
		   const char *capture)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n_inputs; i++) {
		struct stat st;
		int rc;
		if (wandb_is_ref(inputs[i]) && stat(inputs[i], &st) != 0) {
			if ((rc = resolve_wandb(out, inputs[i], capture)) != 0)
				return rc;
			continue;
		}
		if (stat(inputs[i], &st) != 0)
			return pg_error_set(PG_EIO, "cannot open '%s': %s", inputs[i],
					    strerror(errno));
		if (S_ISDIR(st.st_mode)) {
			rc = resolve_dir(out, inputs[i], capture);
			if (rc)
				return rc;
		} else {
			add_file(out, inputs[i], SOURCE_GIVEN, (uint64_t)st.st_size);
		}
	}
	return mark_duplicates(out);
}

void source_origin_release(struct source_origin *o)
{
	free(o->input);
	free(o->dir);
	free(o->display);
	free(o->run_path);
	free(o->run_id);
	free(o->run_name);
	free(o->git_sha);
	free(o->config_hash);
	free(o->device_kind);
	free(o->artifact);
	memset(o, 0, sizeof(*o));
}

void source_set_release(struct source_set *s)
{
	for (uint32_t i = 0; i < s->n_files; i++)
		free(s->files[i].path);
	free(s->files);
	for (uint32_t i = 0; i < s->n_captures; i++) {
		for (uint32_t j = 0; j < s->captures[i].n_files; j++)
			free(s->captures[i].files[j].path);
		free(s->captures[i].files);
		free(s->captures[i].name);
		free(s->captures[i].dir);
	}
	free(s->captures);
	free(s->chosen);
	for (uint32_t i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->notes);
	free(s->own_notes);
	for (uint32_t i = 0; i < s->n_origins; i++)
		source_origin_release(&s->origins[i]);
	free(s->origins);
	memset(s, 0, sizeof(*s));
}
