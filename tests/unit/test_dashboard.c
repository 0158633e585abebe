/*
 * The dashboard writer: HTML and JavaScript escaping of hostile text, the
 * links' server check, page names of any series, and a site of a hand-made
 * trend (records parsed from lines, the trend built by trend.c): its files,
 * its data script holding the trend JSON of the series, and no hostile name
 * left raw in its HTML.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/history/history.h"
#include "../../src/report/report.h"

static char *html(const char *s)
{
	struct pg_buf b = PG_BUF_INIT;
	report_html(&b, s);
	pg_buf_addc(&b, 0);
	return b.ptr;
}

static char *js(const char *s)
{
	struct pg_buf b = PG_BUF_INIT;
	report_js_string(&b, s);
	pg_buf_addc(&b, 0);
	return b.ptr;
}

static void test_html(void **state)
{
	char *s;
	(void)state;

	s = html("<img src=x onerror=\"a('1')\">&amp;");
	assert_string_equal(s, "&lt;img src=x onerror=&quot;a(&#39;1&#39;)&quot;&gt;&amp;amp;");
	free(s);
	s = html("a\nb\x01"
		 "c\xff"
		 "d\xe2\x80\xae"
		 "e caf\xc3\xa9");
	assert_string_equal(s, "a b c\xef\xbf\xbd"
			       "d\xef\xbf\xbd"
			       "e caf\xc3\xa9");
	free(s);
	s = html(NULL);
	assert_string_equal(s, "");
	free(s);
}

static void test_js(void **state)
{
	char *s;
	(void)state;

	s = js("</script><!--\"\\'&");
	assert_string_equal(s, "\"\\u003c/script\\u003e\\u003c!--\\\"\\\\\\u0027\\u0026\"");
	free(s);
	s = js("line\nsep\xe2\x80\xa8par\xe2\x80\xa9"
	       "bidi\xe2\x81\xa6"
	       "bad\xc3"
	       "\xf0\x9f\x98\x80");
	assert_string_equal(
	    s, "\"line\\u000asep\\u2028par\\u2029bidi\\ufffdbad\\ufffd\xf0\x9f\x98\x80\"");
	free(s);
	s = js(NULL);
	assert_string_equal(s, "\"\"");
	free(s);
}

static void test_url_and_pages(void **state)
{
	struct pg_buf b = PG_BUF_INIT;
	(void)state;

	assert_true(report_url_ok("https://github.com"));
	assert_true(report_url_ok("https://ghe.example.com:8443/git"));
	assert_false(report_url_ok("javascript:alert(1)"));
	assert_false(report_url_ok("https://github.com/"));
	assert_false(report_url_ok("https://a.example/\"><b>"));
	assert_false(report_url_ok("https://"));
	assert_false(report_url_ok(NULL));
	report_dashboard_page("bench-00-2273a722", &b);
	pg_buf_addc(&b, 0);
	assert_string_equal(b.ptr, "s/bench-00-2273a722.html");
	pg_buf_reset(&b);
	report_dashboard_page("../../etc/passwd", &b);
	pg_buf_addc(&b, 0);
	assert_int_equal(strlen(b.ptr), strlen("s/series-") + 16 + strlen(".html"));
	assert_null(strstr(b.ptr, ".."));
	pg_buf_release(&b);
}

/* A record line of series s-0000000<k>, label l, at day d, step value v, verdict vd. */
static void add_series_record(struct history_list *l, int k, const char *label, int d, double v,
			      const char *vd)
{
	char line[2048];
	struct history_record r;

	snprintf(
	    line, sizeof(line),
	    "{\"schema\":\"profgate.history/1\",\"record_id\":\"%032x\",\"time\":"
	    "\"2024-03-%02dT06:00:00Z\",\"series\":\"s-0000000%d\",\"label\":\"%s\",\"kind\":"
	    "\"nightly\",\"verdict\":\"%s\",\"exit_code\":0,\"repo\":\"acme/train\",\"sha\":"
	    "\"%040x\",\"ref\":\"refs/heads/main\",\"pr\":null,\"run_id\":\"%d\",\"run_attempt\":"
	    "null,\"identity\":{},\"metrics\":{\"step.median_us\":%.3f,\"op.<script>x</script>"
	    ".us_per_step\":1.0},\"baseline\":{\"kind\":\"file\",\"path\":\"b.json\",\"sha256\":"
	    "null,\"summary_sha256\":null},\"summary_sha256\":null,\"thresholds\":\"default\","
	    "\"profgate_version\":\"0.1.0\"}",
	    (unsigned)(k * 100 + d + 1), d + 1, k, label, vd, (unsigned)d + 1, 100 + d, v);
	assert_int_equal(history_record_parse(&r, line, strlen(line)), 0);
	history_list_move(l, &r);
}

static void add_record(struct history_list *l, const char *label, int d, double v, const char *vd)
{
	add_series_record(l, 1, label, d, v, vd);
}

static const struct report_file *find(const struct report_site *s, const char *path)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (strcmp(s->f[i].path, path) == 0)
			return &s->f[i];
	return NULL;
}

static char *text(const struct report_file *f)
{
	char *s = malloc(f->body.len + 1);
	memcpy(s, f->body.ptr, f->body.len);
	s[f->body.len] = 0;
	return s;
}

static void test_site(void **state)
{
	static const char *label = "<img src=x onerror=alert(1)>\\u0026 @everyone";
	struct history_list l = {0};
	struct history_trend t;
	struct history_trend_opts o = {0};
	struct report_site site;
	struct report_dashboard_opts ro = {NULL, "https://github.com"};
	const struct report_file *index, *page, *data;
	struct pg_buf want = PG_BUF_INIT;
	char *s;
	(void)state;

	for (int d = 0; d < 20; d++)
		add_record(&l, label, d, d < 10 ? 1000 + d % 3 : 1200 + d % 3,
			   d == 10 ? "fail" : "pass");
	history_trend_build(&l, &o, &t);
	assert_int_equal(t.n, 1);
	report_dashboard(&t, &ro, &site);
	index = find(&site, "index.html");
	page = find(&site, "s/s-00000001.html");
	data = find(&site, "data/s-00000001.js");
	assert_non_null(index);
	assert_non_null(page);
	assert_non_null(data);
	assert_non_null(find(&site, "assets/uPlot.iife.min.js"));
	assert_non_null(find(&site, "assets/uPlot.LICENSE"));
	s = text(index);
	assert_null(strstr(s, "<img"));
	assert_non_null(strstr(s, "&lt;img src=x onerror=alert(1)&gt;&amp; @everyone"));
	assert_null(strstr(s, "<script"));
	free(s);
	s = text(page);
	assert_null(strstr(s, "<img"));
	free(s);
	/* the data script holds the series' trend JSON, as `history trend --series` writes it */
	{
		struct history_trend one = t;
		struct history_filter f = {"s-00000001", NULL, NULL, NULL, NULL, 0};
		history_trend_write_json(&one, NULL, &f, &want);
		pg_buf_addc(&want, 0);
	}
	s = text(data);
	assert_non_null(strstr(s, want.ptr));
	assert_non_null(strstr(s, "\"commit\":[\"0000000000000000000000000000000000000001\""));
	assert_non_null(strstr(s, "\"run\":[\"100\""));
	free(s);
	pg_buf_release(&want);
	report_site_release(&site);
	history_trend_release(&t);
	history_list_release(&l);
}

/* The trend built on several threads is the trend built on one, byte for byte. */
static void test_trend_threads(void **state)
{
	struct history_list l = {0};
	struct history_trend t1, t3;
	struct history_trend_opts o = {0};
	struct pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	(void)state;

	for (int k = 1; k <= 7; k++)
		for (int d = 0; d < 24; d++)
			add_series_record(&l, k, "x", d,
					  1000 + (d >= 8 + k ? 40 * k : 0) + (d * 7 % 5), "pass");
	o.threads = 1;
	history_trend_build(&l, &o, &t1);
	o.threads = 3;
	history_trend_build(&l, &o, &t3);
	assert_int_equal(t1.n, 7);
	history_trend_write_json(&t1, NULL, NULL, &a);
	history_trend_write_json(&t3, NULL, NULL, &b);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.ptr, b.ptr, a.len);
	assert_non_null(strstr(a.ptr, "\"change_points\": [\n            {"));
	history_trend_release(&t1);
	history_trend_release(&t3);
	history_list_release(&l);
	pg_buf_release(&a);
	pg_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_html),	  cmocka_unit_test(test_js),
	    cmocka_unit_test(test_url_and_pages), cmocka_unit_test(test_site),
	    cmocka_unit_test(test_trend_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
