/*
 * Fuzz target: what GitHub's REST API answers (src/deliver/github.c over
 * net/http.c and libcurl), served raw by the loopback server: the sticky
 * comment (GET /user, comment pages with Link headers, PATCH or POST), then
 * a pull request's head sha and a check run, each taking the next scripted
 * responses. One attempt per request. Errors are one line without the token;
 * the token never travels in a URL (the server checks).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/deliver/deliver.h"

#define TOKEN "ghp_FUZZsecret0123456789abcdefABCDEF"

static const char report[] = "## profgate: fail\n\n| metric | delta |\n|---|---|\n| step | +9% |\n"
			     "<!-- profgate:v1 series=fuzz-0123abcd verdict=fail -->\n";
static const char report_pass[] = "## profgate: pass\n\n"
				  "<!-- profgate:v1 series=fuzz-0123abcd verdict=pass -->\n";

static void check_failure(int rc, const char *what)
{
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: how far an input got */
		fprintf(stderr, "%s: rc %d after %d requests: %s\n", what, rc, fuzz_http_served(),
			pg_error_last());
	FUZZ_CHECK(rc == PG_EDELIVERY, "%s: rc %d: %s", what, rc, pg_error_last());
	fuzz_check_error_line();
	FUZZ_CHECK(!strstr(pg_error_last(), TOKEN), "%s: the token in: %s", what, pg_error_last());
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char api[64];
	struct github g;
	struct github_comment_result res;
	uint8_t sel = size ? data[0] : 0;
	const char *md = sel & 1 ? report_pass : report;
	enum github_comment_mode mode = sel & 2 ? GITHUB_COMMENT_ON_ALERT : GITHUB_COMMENT_ALWAYS;
	char *sha = NULL, *url = NULL;
	int rc;

	if (!api[0]) {
		setenv("PROFGATE_HTTP_ATTEMPTS", "1", 1);
		setenv("PROFGATE_HTTP_TIMEOUT_S", "5", 1);
		unsetenv("PROFGATE_GITHUB_LOGIN");
		snprintf(api, sizeof(api), "http://127.0.0.1:%d", fuzz_http_port());
	}
	fuzz_http_script(size ? data + 1 : data, size ? size - 1 : 0, TOKEN, NULL);
	FUZZ_CHECK(github_init(&g, api, "octo/repo", TOKEN) == 0, "github_init");
	g.max_wait_s = 1;

	rc = github_comment_upsert(&g, 7, md, strlen(md), mode, NULL, "https://ci.example/run/1",
				   &res);
	if (rc) {
		check_failure(rc, "comment");
	} else {
		FUZZ_CHECK(res.action <= GITHUB_COMMENT_UNCHANGED, "action %d", (int)res.action);
		FUZZ_CHECK(res.action != GITHUB_COMMENT_SKIPPED || !res.url,
			   "a skipped comment's url");
		if (res.url)
			FUZZ_CHECK(!strstr(res.url, TOKEN), "the token in a comment url");
		free(res.url);
	}
	if ((rc = github_pull_head_sha(&g, 7, &sha)))
		check_failure(rc, "pull head sha");
	else
		FUZZ_CHECK(sha && *sha, "a head sha that is empty");
	rc =
	    github_check_run(&g, "profgate", sha ? sha : "0123456789abcdef0123456789abcdef01234567",
			     sel & 1 ? "pass" : "fail", "profgate: fuzz", md, strlen(md), &url);
	if (rc)
		check_failure(rc, "check run");
	free(url);
	free(sha);
	github_release(&g);
	return 0;
}
