/*
 * Fuzz target: history shards and record lines (src/history/record.c): every
 * record the tolerant reader keeps writes one line that reads back the same,
 * in a shard that is a safe relative path; the same bytes as a RECORD.json.
 */
#include "fuzz.h"

#include <string.h>

#include "../../src/history/history.h"

static void warn(void *payload, const char *msg)
{
	(void)payload;
	for (const char *p = msg; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f, "control byte in: %s", msg);
}

static void check_record(const struct history_record *r, const char *text, size_t size)
{
	struct pg_buf line = PG_BUF_INIT, again = PG_BUF_INIT, shard = PG_BUF_INIT;
	struct history_record back;
	struct history_filter f = {0};

	history_record_write(r, &line);
	FUZZ_CHECK(memchr(line.ptr, '\n', line.len) == line.ptr + line.len - 1,
		   "a record is not one line");
	FUZZ_CHECK(fuzz_utf8_valid(line.ptr, line.len) || !fuzz_utf8_valid(text, size),
		   "a record line of UTF-8 input is not UTF-8");
	FUZZ_CHECK(history_record_parse(&back, line.ptr, line.len - 1) == 0,
		   "a record written does not read back: %s", pg_error_last());
	history_record_write(&back, &again);
	FUZZ_CHECK(again.len == line.len && memcmp(again.ptr, line.ptr, line.len) == 0,
		   "a record read back is written differently");
	history_record_shard(r, &shard);
	FUZZ_CHECK(shard.ptr[0] != '/' && shard.ptr[0] != '.' && shard.ptr[0] != '-' &&
		       !strstr(shard.ptr, "..") &&
		       strchr(shard.ptr, '/') == strrchr(shard.ptr, '/'),
		   "shard '%s' is not <series>/<month>.jsonl", shard.ptr);
	FUZZ_CHECK(history_shard_has(text, size, r->record_id), "the shard lost record %s",
		   r->record_id);
	f.series = r->series;
	f.since = "2024-05";
	(void)history_filter_match(&f, r);
	history_record_release(&back);
	pg_buf_release(&line);
	pg_buf_release(&again);
	pg_buf_release(&shard);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct history_list list = {0};
	struct history_record r;
	struct history_env e = {0};

	if (history_shard_parse(text, size, "s-1a2b3c4d/2024-05.jsonl", &list, warn, NULL))
		fuzz_check_error_line();
	for (uint32_t i = 0; i < list.n; i++)
		check_record(&list.r[i], text, size);
	history_list_release(&list);
	/* the whole input as the RECORD.json of `history append` */
	e.time = "2024-05-01T12:00:00Z";
	if (history_record_load(&r, text, size, "record.json", &e, NULL) == 0) {
		struct pg_buf line = PG_BUF_INIT;
		struct history_record back;
		history_record_write(&r, &line);
		FUZZ_CHECK(history_record_parse(&back, line.ptr, line.len - 1) == 0,
			   "a loaded record written does not read back: %s", pg_error_last());
		history_record_release(&back);
		pg_buf_release(&line);
	} else {
		fuzz_check_error_line();
	}
	history_record_release(&r);
	return 0;
}
