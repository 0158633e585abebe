/*
 * profgate fetch: download what a W&B ref names (a run's jax_profile artifact,
 * or an artifact) into the cache or a folder, and say what arrived: the run,
 * the artifact, every file with its size, and what discovery reads of it.
 */
#include "cmd.h"

#include <stdlib.h>
#include <string.h>

#include "../source/source.h"

static const char *opt_out;

static const struct cmd_opt fetch_opts[] = {
    {"output", 'o', "DIR", "lay the files out here (default: the cache's folder)", NULL, &opt_out,
     0},
};

const struct cmd_spec cmd_fetch_spec = {
    "fetch", "SOURCE",
    "Download the profile a W&B run logged (wandb://ENTITY/PROJECT/RUN_ID[:ALIAS] or a run\n"
    "URL: its jax_profile artifact, else its trainer.log_dir when that folder is here) or an\n"
    "artifact (wandb-artifact://ENTITY/PROJECT/NAME[:ALIAS]); check every file's size and MD5;\n"
    "keep them in the cache by digest, so a rerun downloads nothing; print what arrived.",
    fetch_opts, (int)PG_ARRAY_LEN(fetch_opts)};

static void print_origin(const struct wandb_fetch_result *r)
{
	const struct source_origin *o = &r->origin;

	printf("%s\n", o->display ? o->display : o->input);
	if (o->run_path)
		printf("  run: %s%s%s%s\n", o->run_path, o->run_name ? " (" : "",
		       o->run_name ? o->run_name : "", o->run_name ? ")" : "");
	if (o->git_sha)
		printf("  git sha: %s\n", o->git_sha);
	if (o->config_hash)
		printf("  config hash: %s\n", o->config_hash);
	if (o->device_kind)
		printf("  device kind: %s\n", o->device_kind);
	if (r->alias_note)
		printf("  chosen by: %s\n", r->alias_note);
	if (!o->artifact)
		printf("  folder: %s (the run's trainer.log_dir; nothing downloaded)\n", o->dir);
	else
		printf("  folder: %s\n", o->dir);
}

static void print_files(const struct wandb_fetch_result *r)
{
	const struct wandb_manifest *m = &r->manifest;

	if (!r->origin.artifact)
		return;
	printf("  files: %u, %llu bytes: %u downloaded, %u from the cache\n", m->n,
	       (unsigned long long)m->total_bytes, r->downloaded, r->cached);
	for (uint32_t i = 0; i < m->n; i++)
		printf("    %12llu  %-10s %s\n", (unsigned long long)m->v[i].size,
		       m->v[i].downloaded ? "downloaded" : "cached", m->v[i].path);
}

/* What summarize would read of the folder. */
static int print_capture(const struct wandb_fetch_result *r)
{
	struct source_set s;
	const char *in[1] = {r->origin.dir};
	int rc = source_resolve(&s, in, 1, NULL);

	if (rc == 0) {
		printf("  profiles read: %u\n", s.n_files);
		for (uint32_t i = 0; i < s.n_files; i++)
			printf("    %s  %s\n", source_kind_name(s.files[i].kind), s.files[i].path);
	} else {
		printf("  profiles read: none (%s)\n", pg_error_last());
		pg_error_clear();
	}
	source_set_release(&s);
	return 0;
}

int cmd_fetch(int argc, char **argv)
{
	const char **pos = pg_xcalloc((size_t)argc + 1, sizeof(char *));
	struct wandb_fetch_opts o = {NULL, NULL, NULL};
	struct wandb_fetch_result r;
	int n_pos, rc = PG_EXIT_OK;

	opt_out = NULL;
	memset(&r, 0, sizeof(r));
	if (cmd_parse_or_help(&cmd_fetch_spec, argc, argv, pos, &n_pos, NULL, &rc))
		goto out;
	if (n_pos != 1 || !wandb_is_ref(pos[0])) {
		pg_error_set(PG_EUSAGE, "fetch: give one W&B run or artifact ref (see 'profgate "
					"fetch --help')");
		rc = cmd_error(PG_EXIT_USAGE);
		goto out;
	}
	o.out_dir = opt_out;
	if ((rc = wandb_fetch(&r, pos[0], &o)) != 0) {
		rc = cmd_error(pg_exit_code(rc));
		goto out;
	}
	print_origin(&r);
	print_files(&r);
	print_capture(&r);
out:
	wandb_fetch_result_release(&r);
	free(pos);
	return cmd_finish(rc);
}
