/*
 * The dashboard: a static site of a history's trend, for a browser, from
 * file:// or any static host (GitHub Pages), with no network.
 *
 *   index.html          every series: latest step, last change, a sparkline
 *                       (plain HTML and inline SVG: no script, so it is fast)
 *   s/<name>.html       a series' page: a shell that loads the chart library,
 *                       the site's script and its own data script
 *   data/<name>.js      that series' data: its profgate.trend/1 JSON (the
 *                       bytes `history trend --series S --format json` writes,
 *                       from the same trend) and the links of its records,
 *                       as one call profgateDashboard.series(trend, links).
 *                       A script, not a .json file, because a page opened
 *                       from file:// may not fetch files; each page loads
 *                       its own series' only, so the index stays small
 *   assets/             the embedded files (report_dashboard_assets)
 *
 * It renders what the trend decided (history_trend_build) and decides
 * nothing: change points, nightly runs and verdicts are the trend's and the
 * records'. Untrusted text (labels, series, metric and op names, commit facts)
 * reaches the HTML through report_html() and the scripts as JSON strings; the
 * site's script only ever puts text into the page as text (textContent), and
 * a link is built only from pieces checked here (report_url_ok, a repository
 * "owner/name", a hex sha, a numeric run id), so no name can become markup,
 * script or a javascript: link. Deterministic bytes: no clock, series in the
 * trend's order.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "../gate/gate.h"
#include "../history/history.h"

#define SPARK_W	     160
#define SPARK_H	     28
#define SPARK_POINTS 160
#define STEP_METRIC  "step.median_us"

/* ---- names and links ---- */

static int safe_file_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 120 || s[0] == '.' || s[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

/* The file name of a series' page and data: the series when it is safe, else a digest. */
static void file_name(const char *series, struct pg_buf *out)
{
	struct pg_sha256 h;
	char hex[65];

	if (safe_file_name(series)) {
		pg_buf_adds(out, series);
		return;
	}
	pg_sha256_init(&h);
	pg_sha256_update(&h, series, strlen(series));
	pg_sha256_hex(&h, hex);
	pg_buf_addf(out, "series-%.16s", hex);
}

void report_dashboard_page(const char *series, struct pg_buf *out)
{
	pg_buf_adds(out, "s/");
	file_name(series, out);
	pg_buf_adds(out, ".html");
}

static int chars_in(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr(extra, *s)))
			return 0;
	return 1;
}

int report_url_ok(const char *url)
{
	const char *rest = NULL;
	size_t n = url ? strlen(url) : 0;

	if (n > 7 && strncmp(url, "http://", 7) == 0)
		rest = url + 7;
	else if (n > 8 && strncmp(url, "https://", 8) == 0)
		rest = url + 8;
	return rest && *rest && *rest != '/' && url[n - 1] != '/' && n < 512 &&
	       chars_in(rest, "-._~:/%");
}

/* "owner/name" of GitHub's characters. */
static int repo_ok(const char *s)
{
	const char *slash = s ? strchr(s, '/') : NULL;

	return slash && slash != s && slash[1] && !strchr(slash + 1, '/') && strlen(s) < 200 &&
	       chars_in(s, "-._/") && s[0] != '.' && slash[1] != '.';
}

static int hex_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 7 && n <= 64 && strspn(s, "0123456789abcdef") == n;
}

static int digits_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= 20 && strspn(s, "0123456789") == n;
}

/* ---- the data script of a series ---- */

static void links_json(struct pg_buf *b, const struct history_trend_series *s, const char *server)
{
	pg_buf_adds(b, "{\"server\":");
	report_js_string(b, server);
	pg_buf_adds(b, ",\"repo\":[");
	for (uint32_t i = 0; i < s->n; i++) {
		pg_buf_adds(b, i ? "," : "");
		if (repo_ok(s->r[i]->repo))
			report_js_string(b, s->r[i]->repo);
		else
			pg_buf_adds(b, "null");
	}
	pg_buf_adds(b, "],\"commit\":[");
	for (uint32_t i = 0; i < s->n; i++) {
		pg_buf_adds(b, i ? "," : "");
		if (hex_ok(s->r[i]->sha))
			report_js_string(b, s->r[i]->sha);
		else
			pg_buf_adds(b, "null");
	}
	pg_buf_adds(b, "],\"pr\":[");
	for (uint32_t i = 0; i < s->n; i++) {
		pg_buf_adds(b, i ? "," : "");
		if (s->r[i]->pr > 0)
			pg_buf_addf(b, "%lld", (long long)s->r[i]->pr);
		else
			pg_buf_adds(b, "null");
	}
	pg_buf_adds(b, "],\"run\":[");
	for (uint32_t i = 0; i < s->n; i++) {
		pg_buf_adds(b, i ? "," : "");
		if (digits_ok(s->r[i]->run_id))
			report_js_string(b, s->r[i]->run_id);
		else
			pg_buf_adds(b, "null");
	}
	pg_buf_adds(b, "]}");
}

static void data_script(struct pg_buf *b, const struct history_trend *t, uint32_t i,
			const struct report_dashboard_opts *o)
{
	struct history_trend one = *t;
	struct history_filter f = {t->s[i].series, NULL, NULL, NULL, NULL, 0};

	one.s = &t->s[i];
	one.n = 1;
	pg_buf_adds(b,
		    "/* profgate dashboard data: profgate.trend/1 of one series, and its links */\n"
		    "profgateDashboard.series(");
	history_trend_write_json(&one, o->branch, &f, b);
	pg_buf_adds(b, ",");
	links_json(b, &t->s[i], o->server_url);
	pg_buf_adds(b, ");\n");
}

/* ---- HTML ---- */

static void head(struct pg_buf *b, const char *title, const char *root, int charts)
{
	pg_buf_adds(b, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		       "<meta name=\"generator\" content=\"profgate " PG_VERSION "\">\n<title>");
	report_html(b, title);
	/* no icon: a browser would ask the host for /favicon.ico */
	pg_buf_adds(b, "</title>\n<link rel=\"icon\" href=\"data:,\">\n");
	if (charts)
		pg_buf_addf(b, "<link rel=\"stylesheet\" href=\"%sassets/uPlot.min.css\">\n", root);
	pg_buf_addf(b, "<link rel=\"stylesheet\" href=\"%sassets/dashboard.css\">\n</head>\n",
		    root);
}

static const struct history_trend_metric *metric(const struct history_trend_series *s,
						 const char *name)
{
	for (uint32_t i = 0; i < s->n_m; i++)
		if (strcmp(s->m[i].name, name) == 0)
			return &s->m[i];
	return NULL;
}

static void time_us(struct pg_buf *b, double us)
{
	if (isfinite(us))
		report_time(b, us);
	else
		pg_buf_adds(b, "—");
}

/* The step's values as a polyline, averaged into at most SPARK_POINTS buckets,
 * and a dot at its last change point. */
static void sparkline(struct pg_buf *b, const struct history_trend_series *s,
		      const struct history_trend_metric *m)
{
	double lo = INFINITY, hi = -INFINITY, *v = pg_xcalloc(SPARK_POINTS + 1, sizeof(double));
	uint32_t *k = pg_xcalloc(SPARK_POINTS + 1, sizeof(uint32_t)), nb = 0;

	for (uint32_t i = 0; m && i < s->n; i++) {
		uint32_t at = (uint32_t)((uint64_t)i * SPARK_POINTS / s->n);
		if (isnan(m->value[i]))
			continue;
		v[at] += m->value[i];
		k[at]++;
		nb = at + 1;
	}
	for (uint32_t i = 0; i < nb; i++)
		if (k[i]) {
			v[i] /= k[i];
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
	pg_buf_addf(b,
		    "<svg class=\"spark\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		    "role=\"img\" aria-label=\"step time over the records\"><polyline points=\"",
		    SPARK_W, SPARK_H, SPARK_W, SPARK_H);
	for (uint32_t i = 0; i < nb; i++) {
		double y = hi > lo ? (hi - v[i]) / (hi - lo) : 0.5;
		if (k[i])
			pg_buf_addf(b, "%s%.1f,%.1f", i ? " " : "",
				    nb > 1 ? (double)i * (SPARK_W - 4) / (nb - 1) + 2
					   : SPARK_W / 2.0,
				    2 + y * (SPARK_H - 4));
	}
	pg_buf_adds(b, "\"/>");
	if (m && m->n_cp && nb > 1) {
		uint32_t at = (uint32_t)((uint64_t)m->cp[m->n_cp - 1].index * SPARK_POINTS / s->n);
		double y = hi > lo && k[at] ? (hi - v[at]) / (hi - lo) : 0.5;
		pg_buf_addf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>",
			    (double)at * (SPARK_W - 4) / (nb - 1) + 2, 2 + y * (SPARK_H - 4));
	}
	pg_buf_adds(b, "</svg>");
	free(v);
	free(k);
}

static void last_change(struct pg_buf *b, const struct history_trend_series *s,
			const struct history_trend_metric *m)
{
	const struct history_cp *c;

	if (!m || m->n_cp == 0) {
		pg_buf_adds(b, m && m->tested ? "none" : "too few records");
		return;
	}
	c = &m->cp[m->n_cp - 1];
	pg_buf_addf(b, "%.10s ", s->r[c->index]->time);
	if (s->r[c->index]->sha) {
		char shortsha[8];
		snprintf(shortsha, sizeof(shortsha), "%s", s->r[c->index]->sha);
		pg_buf_adds(b, "<code>");
		report_html(b, shortsha);
		pg_buf_adds(b, "</code> ");
	}
	time_us(b, c->before);
	pg_buf_adds(b, " → ");
	time_us(b, c->after);
	if (c->before != 0)
		pg_buf_addf(b, " (%+.1f%%)", 100 * (c->after - c->before) / fabs(c->before));
}

static void index_row(struct pg_buf *b, const struct history_trend_series *s)
{
	const struct history_trend_metric *m = metric(s, STEP_METRIC);
	const struct history_record *last = s->r[s->n - 1];
	uint32_t changed = 0;

	for (uint32_t i = 0; i < s->n_m; i++)
		changed += s->m[i].n_cp > 0;
	pg_buf_adds(b, "<tr data-series=\"");
	report_html(b, s->series);
	pg_buf_adds(b, "\"><td><a href=\"");
	report_dashboard_page(s->series, b);
	pg_buf_adds(b, "\">");
	report_html(b, s->label ? s->label : s->series);
	pg_buf_adds(b, "</a><br><code>");
	report_html(b, s->series);
	pg_buf_addf(b, "</code></td><td class=\"num\">%u</td><td class=\"num\">", s->n);
	time_us(b, m ? m->value[s->n - 1] : NAN);
	pg_buf_adds(b, "<br><span class=\"verdict v-");
	report_html(b, last->verdict);
	pg_buf_adds(b, "\">");
	report_html(b, last->verdict);
	pg_buf_adds(b, "</span> ");
	pg_buf_addf(b, "%.10s</td><td>", last->time);
	last_change(b, s, m);
	pg_buf_addf(b, "<br><small>%u of %u metrics changed, %u flagged</small></td><td>", changed,
		    s->n_m, s->n_flagged);
	sparkline(b, s, m);
	pg_buf_adds(b, "</td></tr>\n");
}

static void index_page(struct pg_buf *b, const struct history_trend *t,
		       const struct report_dashboard_opts *o)
{
	const char *newest = NULL;
	uint32_t records = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		const char *tm = t->s[i].r[t->s[i].n - 1]->time;
		records += t->s[i].n;
		if (!newest || strcmp(tm, newest) > 0)
			newest = tm;
	}
	head(b, "profgate history dashboard", "", 0);
	pg_buf_adds(b, "<body>\n<header><h1>profgate history</h1>\n<p>Branch <code>");
	report_html(b, o->branch ? o->branch : HISTORY_DEFAULT_BRANCH);
	pg_buf_addf(b, "</code> · %u series · %u records of kinds ", t->n, records);
	for (uint32_t i = 0; t->o.kinds[i]; i++) {
		pg_buf_adds(b, i ? ", " : "");
		report_html(b, t->o.kinds[i]);
	}
	if (newest)
		pg_buf_addf(b, " · newest %s", newest);
	pg_buf_adds(b, "</p></header>\n<main>\n");
	if (t->n == 0)
		pg_buf_adds(b, "<p id=\"empty\">No records yet.</p>\n");
	pg_buf_adds(b, "<table id=\"series\">\n<thead><tr><th>Series</th><th>Records</th>"
		       "<th>Latest step (median)</th><th>Last change of the step</th>"
		       "<th>Step time</th></tr></thead>\n<tbody>\n");
	for (uint32_t i = 0; i < t->n; i++)
		index_row(b, &t->s[i]);
	pg_buf_adds(b,
		    "</tbody>\n</table>\n</main>\n<footer>Made by profgate " PG_VERSION
		    " from the history branch. Charts: <a href=\"assets/uPlot.LICENSE\">uPlot</a>"
		    " (MIT).</footer>\n</body>\n</html>\n");
}

static void series_page(struct pg_buf *b, const struct history_trend_series *s)
{
	struct pg_buf title = PG_BUF_INIT, file = PG_BUF_INIT;

	pg_buf_adds(&title, s->label ? s->label : s->series);
	pg_buf_adds(&title, " · profgate history");
	file_name(s->series, &file);
	head(b, title.ptr, "../", 1);
	pg_buf_adds(b, "<body>\n<nav><a href=\"../index.html\">All series</a></nav>\n<header><h1>");
	report_html(b, s->label ? s->label : s->series);
	pg_buf_adds(b, "</h1>\n<p>Series <code>");
	report_html(b, s->series);
	pg_buf_addf(b,
		    "</code> · %u records</p></header>\n<main id=\"app\">"
		    "<p id=\"loading\">Loading the series…</p></main>\n"
		    "<noscript>The charts need JavaScript; the data is in "
		    "<a href=\"../data/%s.js\">data/%s.js</a>.</noscript>\n"
		    "<script src=\"../assets/uPlot.iife.min.js\"></script>\n"
		    "<script src=\"../assets/dashboard.js\"></script>\n"
		    "<script src=\"../data/%s.js\"></script>\n</body>\n</html>\n",
		    s->n, file.ptr, file.ptr, file.ptr);
	pg_buf_release(&title);
	pg_buf_release(&file);
}

/* ---- the site ---- */

static struct pg_buf *add_file(struct report_site *site, const char *dir, const char *name,
			       const char *ext)
{
	struct report_file *f;
	struct pg_buf p = PG_BUF_INIT;

	site->f = pg_xrealloc(site->f, (site->n + 1) * sizeof(*site->f));
	f = &site->f[site->n++];
	pg_buf_addf(&p, "%s%s%s", dir, name, ext);
	f->path = pg_xstrdup(p.ptr);
	pg_buf_release(&p);
	pg_buf_init(&f->body);
	return &f->body;
}

static const char *asset_name(const char *name)
{
	return strcmp(name, "LICENSE") == 0 ? "uPlot.LICENSE" : name;
}

void report_dashboard(const struct history_trend *t, const struct report_dashboard_opts *o,
		      struct report_site *site)
{
	memset(site, 0, sizeof(*site));
	for (size_t i = 0; i < report_dashboard_n_assets; i++)
		pg_buf_add(
		    add_file(site, "assets/", asset_name(report_dashboard_assets[i].name), ""),
		    report_dashboard_assets[i].data, report_dashboard_assets[i].len);
	index_page(add_file(site, "", "index", ".html"), t, o);
	for (uint32_t i = 0; i < t->n; i++) {
		struct pg_buf name = PG_BUF_INIT;
		file_name(t->s[i].series, &name);
		series_page(add_file(site, "s/", name.ptr, ".html"), &t->s[i]);
		data_script(add_file(site, "data/", name.ptr, ".js"), t, i, o);
		pg_buf_release(&name);
	}
}

void report_site_release(struct report_site *site)
{
	for (uint32_t i = 0; i < site->n; i++) {
		free(site->f[i].path);
		pg_buf_release(&site->f[i].body);
	}
	free(site->f);
	memset(site, 0, sizeof(*site));
}
