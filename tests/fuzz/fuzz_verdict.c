/*
 * Fuzz target: a verdict JSON turned into a history record
 * (history_record_from_verdict, what `gate --history` and `history append`
 * do): a record made from it writes one line that reads back the same, in a
 * shard that is a safe relative path.
 */
#include "fuzz.h"

#include <string.h>

#include "../../src/history/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct history_env e = {0};
	struct history_record r, back;
	struct pg_buf line = PG_BUF_INIT, again = PG_BUF_INIT, shard = PG_BUF_INIT;

	e.time = "2024-05-01T12:00:00Z";
	e.repo = "o/r";
	e.run_id = "42";
	e.run_attempt = "1";
	if (history_record_from_verdict(&r, (const char *)data, size, "verdict.json", &e, NULL)) {
		fuzz_check_error_line();
		history_record_release(&r);
		return 0;
	}
	history_record_write(&r, &line);
	FUZZ_CHECK(memchr(line.ptr, '\n', line.len) == line.ptr + line.len - 1,
		   "a record is not one line");
	FUZZ_CHECK(fuzz_utf8_valid(line.ptr, line.len) ||
		       !fuzz_utf8_valid((const char *)data, size),
		   "a record line of UTF-8 input is not UTF-8");
	FUZZ_CHECK(history_record_parse(&back, line.ptr, line.len - 1) == 0,
		   "a record made from a verdict does not read back: %s", pg_error_last());
	history_record_write(&back, &again);
	FUZZ_CHECK(again.len == line.len && memcmp(again.ptr, line.ptr, line.len) == 0,
		   "a record read back is written differently");
	history_record_shard(&r, &shard);
	FUZZ_CHECK(shard.ptr[0] != '/' && shard.ptr[0] != '.' && shard.ptr[0] != '-' &&
		       !strstr(shard.ptr, "..") &&
		       strchr(shard.ptr, '/') == strrchr(shard.ptr, '/'),
		   "shard '%s' is not <series>/<month>.jsonl", shard.ptr);
	history_record_release(&back);
	history_record_release(&r);
	pg_buf_release(&line);
	pg_buf_release(&again);
	pg_buf_release(&shard);
	return 0;
}
