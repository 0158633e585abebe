/*
 * Naming and file facts of a Chrome trace: what the metadata events
 * (process_name, process_labels, thread_name) and the top-level blocks
 * (distributedInfo, deviceProperties) say, and what is decided once the
 * stream has ended: each track's device and kind, the dialect, and the
 * file's warnings.
 *
 * How it works: metadata events only record names as they come (they may
 * follow the events they name), so devices and track kinds are resolved after
 * the whole file is read. A track's device comes from its process name
 * ("/device:GPU:0", JAX), else its process labels ("GPU 0", Kineto, where the
 * pid is the device index), else from the categories of its events. The top-level
 * blocks were captured as text by the scanner and are parsed here with cJSON:
 * they are small, and read once.
 *
 * A GPU's hardware name comes from deviceProperties (name_gpus: by id, else
 * the one model all its entries name, since Kineto's device ids are the
 * remapped ones HIP/CUDA_VISIBLE_DEVICES left), else from its process name or
 * label ("/device:GPU:0 (MODEL)"); several models and no matching id leave it
 * unnamed rather than guessed.
 *
 * The dialect is weighed from evidence counted while scanning: Kineto's
 * top-level keys and categories, JAX's "/device:" and "/host:" process names.
 * A file with neither is PyTorch's legacy export (what torch.profiler and
 * torch.autograd.profiler write in a build without Kineto) when it is a bare
 * array, every event sits on one of the two process keys that exporter
 * writes, "CPU functions" (at least one) and "CUDA functions", and some event
 * has a name only torch gives (an "aten::" op or a "ProfilerStep#" scope):
 * the pid strings alone are too generic a word to trust. Its "CPU functions"
 * tracks are host threads like Kineto's cpu_op threads; its "CUDA functions"
 * tracks are GPU streams, one per device, the tid being the device index.
 * Anything else is generic.
 */
#include "chrome_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char legacy_cpu_pid[] = "CPU functions";
static const char legacy_cuda_pid[] = "CUDA functions";

void cj_handle_metadata(struct cj *c)
{
	size_t n;
	const char *v;
	trace_str pid = intern_buf(c, &c->pid);

	if (c->name.len == 12 && memcmp(c->name.ptr, "process_name", 12) == 0) {
		v = cj_arg_text(c, c->a_name, &n);
		if (v) {
			/* cj_pid_index() may grow c->pids: index only after it returns */
			uint32_t pi_at = cj_pid_index(c, pid);
			struct pidinfo *pi = &c->pids[pi_at];
			pi->process_name = trace_intern(c->t, v, n);
			if ((n >= 8 && memcmp(v, "/device:", 8) == 0) ||
			    (n >= 6 && memcmp(v, "/host:", 6) == 0))
				c->jax_evidence++;
		}
	} else if (c->name.len == 14 && memcmp(c->name.ptr, "process_labels", 14) == 0) {
		v = cj_arg_text(c, c->a_labels, &n);
		if (v) {
			uint32_t pi_at = cj_pid_index(c, pid);
			c->pids[pi_at].labels = trace_intern(c->t, v, n);
		}
	} else if (c->name.len == 11 && memcmp(c->name.ptr, "thread_name", 11) == 0) {
		v = cj_arg_text(c, c->a_name, &n);
		if (v) {
			uint32_t tr = cj_track_for(c, pid, intern_buf(c, &c->tid));
			c->t->tracks[tr].name = trace_intern(c->t, v, n);
		}
	}
}

/* The name of the deviceProperties entry whose id is index, or NULL. */
static const char *props_name_for(const cJSON *props, int32_t index)
{
	const cJSON *d;

	cJSON_ArrayForEach (d, props) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "id");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
		if (cJSON_IsNumber(id) && cJSON_IsString(name) && name->valuestring[0] &&
		    id->valuedouble == (double)index)
			return name->valuestring;
	}
	return NULL;
}

/* The one model every named deviceProperties entry has, or NULL when they
 * differ or none is named. */
static const char *props_single_model(const cJSON *props)
{
	const cJSON *d;
	const char *model = NULL;

	cJSON_ArrayForEach (d, props) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
		if (!cJSON_IsString(name) || !name->valuestring[0])
			continue;
		if (model && strcmp(model, name->valuestring) != 0)
			return NULL;
		model = name->valuestring;
	}
	return model;
}

/*
 * Name the file's GPUs from deviceProperties. A device whose index is an
 * entry's id takes that entry's name. Kineto's device index is the one the
 * process saw after HIP/CUDA_VISIBLE_DEVICES or ROCm remapped it, while
 * deviceProperties lists the visible devices from 0: a device no id names
 * takes the model when the entries name one model only (one entry, or all
 * alike), and stays unnamed when they name several (which one is a guess).
 */
static void name_gpus(struct cj *c, const cJSON *props)
{
	struct trace_file *f = &c->t->files[c->file];
	const char *single = props_single_model(props);
	const cJSON *d;

	for (uint32_t i = 0; i < c->t->n_devices; i++) {
		struct trace_device *dev = &c->t->devices[i];
		const char *name;
		if (dev->file != c->file || dev->kind != TRACE_DEV_GPU || dev->name)
			continue;
		name = props_name_for(props, dev->index);
		if (!name)
			name = single;
		if (name)
			dev->name = trace_intern_cstr(c->t, name);
	}
	cJSON_ArrayForEach (d, props) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
		if (!f->device_kind && cJSON_IsString(name) && name->valuestring[0])
			f->device_kind = pg_xstrdup(name->valuestring);
	}
}

void cj_apply_header_json(struct cj *c)
{
	struct trace_file *f = &c->t->files[c->file];
	cJSON *j;

	if (c->dist_info.len && (j = cJSON_ParseWithLength(c->dist_info.ptr, c->dist_info.len))) {
		cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "rank");
		cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "world_size");
		cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "backend");
		cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "nccl_version");
		if (cJSON_IsNumber(r) && r->valuedouble >= 0 && r->valuedouble < 1e9)
			f->rank = (int32_t)r->valuedouble;
		if (cJSON_IsNumber(w) && w->valuedouble >= 0 && w->valuedouble < 1e9)
			f->world_size = (int32_t)w->valuedouble;
		/* the devices were made before the rank was known */
		for (uint32_t i = 0; i < c->t->n_devices; i++)
			if (c->t->devices[i].file == c->file)
				c->t->devices[i].rank = f->rank;
		if (cJSON_IsString(b))
			f->backend = pg_xstrdup(b->valuestring);
		if (cJSON_IsString(v) && !f->framework_version) {
			size_t n = strlen(v->valuestring) + 8;
			f->framework_version = pg_xmalloc(n);
			snprintf(f->framework_version, n, "nccl %s", v->valuestring);
		}
		cJSON_Delete(j);
	}
	if (c->dev_props.len && (j = cJSON_ParseWithLength(c->dev_props.ptr, c->dev_props.len))) {
		if (cJSON_IsArray(j))
			f->declared_devices = (uint32_t)cJSON_GetArraySize(j);
		name_gpus(c, j);
		cJSON_Delete(j);
	}
}

/*
 * The model a process name or label gives after the device it names, as in
 * "/device:GPU:0 (NVIDIA A100-SXM4-80GB)" or "GPU 0 (AMD Instinct MI300X)":
 * the text in the parentheses closing the name, or NULL. "(pid 3)", which
 * trace viewers add, names no model.
 */
static const char *model_after_device(const char *s, const char *prefix, size_t *len)
{
	size_t n = strlen(prefix), end;
	const char *p, *open;

	if (strncmp(s, prefix, n) != 0)
		return NULL;
	p = s + n;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == s + n || strncmp(p, " (", 2) != 0)
		return NULL;
	open = p + 2;
	end = strlen(open);
	if (end < 2 || open[end - 1] != ')' || strncmp(open, "pid ", 4) == 0)
		return NULL;
	*len = end - 1;
	return open;
}

/* Devices are keyed by (kind, index, label) within the file. */
static uint32_t device_for(struct cj *c, enum trace_dev_kind kind, int32_t index, trace_str label)
{
	for (uint32_t i = 0; i < c->t->n_devices; i++) {
		struct trace_device *d = &c->t->devices[i];
		if (d->file == c->file && d->kind == kind && d->index == index && d->label == label)
			return i;
	}
	struct trace_device d;
	memset(&d, 0, sizeof(d));
	d.kind = kind;
	d.index = index;
	d.rank = c->t->files[c->file].rank;
	d.file = c->file;
	d.label = label;
	return trace_device_add(c->t, &d);
}

/* A device still unnamed takes the model its process name or label gives. */
static void name_from_process(struct cj *c, struct trace_device *d, const char *pname,
			      const char *labels)
{
	static const char *const prefixes[] = {"/device:GPU:", "/device:TPU:"};
	const char *m = NULL;
	size_t n = 0;

	if (d->name || (d->kind != TRACE_DEV_GPU && d->kind != TRACE_DEV_TPU))
		return;
	for (size_t i = 0; i < PG_ARRAY_LEN(prefixes) && !m; i++)
		m = model_after_device(pname, prefixes[i], &n);
	if (!m)
		m = model_after_device(labels, "GPU ", &n);
	if (m)
		d->name = trace_intern(c->t, m, n);
}

void cj_resolve_tracks(struct cj *c)
{
	struct trace *t = c->t;
	struct trace_file *f = &t->files[c->file];
	int jax = f->dialect == TRACE_DIALECT_JAX;
	int legacy = f->dialect == TRACE_DIALECT_PYTORCH_LEGACY;

	for (uint32_t i = c->first_track; i < t->n_tracks; i++) {
		struct trace_track *tr = &t->tracks[i];
		struct pidinfo *pi = &c->pids[cj_pid_index(c, tr->pid)];
		const char *pname = trace_str_get(t, pi->process_name);
		const char *labels = trace_str_get(t, pi->labels);
		const char *tname = trace_str_get(t, tr->name);
		const char *pidtext = trace_str_get(t, tr->pid);
		enum trace_dev_kind kind = TRACE_DEV_CPU;
		int32_t index = 0;
		trace_str label = pi->process_name;

		if (read_parse_index(pname, "/device:GPU:", 1, &index)) {
			kind = TRACE_DEV_GPU;
		} else if (read_parse_index(pname, "/device:TPU:", 1, &index)) {
			kind = TRACE_DEV_TPU;
		} else if (strncmp(pname, "/device:", 8) == 0) {
			kind = TRACE_DEV_OTHER;
			index = -1;
		} else if (legacy && strcmp(pidtext, legacy_cuda_pid) == 0) {
			kind = TRACE_DEV_GPU;
			if (!read_parse_index(trace_str_get(t, tr->tid), "", 0, &index))
				index = -1;
			label = tr->pid;
		} else if (read_parse_index(labels, "GPU ", 1, &index) ||
			   (tr->cat_mask & (TRACE_CATCLASS_DEVICE | TRACE_CATCLASS_DEVICE_ANN))) {
			/* Kineto: the device is the pid of its events */
			char *end;
			long v = strtol(pidtext, &end, 10);
			kind = TRACE_DEV_GPU;
			index = (*pidtext && !*end && v >= 0 && v < 1000000) ? (int32_t)v : index;
			label = pi->labels ? pi->labels : tr->pid;
		} else if (tr->cat_mask & TRACE_CATCLASS_ACCEL) {
			char *end;
			long v = strtol(pidtext, &end, 10);
			kind = TRACE_DEV_OTHER;
			index = (*pidtext && !*end && v >= 0 && v < 1000000) ? (int32_t)v : -1;
			label = pi->labels ? pi->labels : tr->pid;
		} else {
			label = pi->process_name ? pi->process_name : tr->pid;
		}
		tr->device = device_for(c, kind, index, label);
		name_from_process(c, &t->devices[tr->device], pname, labels);
		if (jax || kind == TRACE_DEV_TPU || strncmp(pname, "/", 1) == 0) {
			tr->kind = read_track_kind_for_name(tname, kind != TRACE_DEV_CPU);
		} else if (legacy && kind == TRACE_DEV_GPU) {
			tr->kind = TRACE_TRACK_STREAM;
		} else if (kind == TRACE_DEV_CPU) {
			tr->kind = strncmp(trace_str_get(t, tr->tid), "async:", 6) == 0
				       ? TRACE_TRACK_ANNOTATIONS
				       : TRACE_TRACK_HOST_THREAD;
		} else if (tr->cat_mask & (TRACE_CATCLASS_DEVICE | TRACE_CATCLASS_ACCEL)) {
			tr->kind = TRACE_TRACK_STREAM;
		} else if (tr->cat_mask & TRACE_CATCLASS_DEVICE_ANN) {
			tr->kind = TRACE_TRACK_ANNOTATIONS;
		} else {
			tr->kind = TRACE_TRACK_OTHER;
		}
		t->devices[tr->device].n_events += tr->n_events;
	}
}

/* The rule in the comment at the top. The name scan stops at the first torch
 * name, which in these files is nearly always the first event. */
static int looks_pytorch_legacy(const struct cj *c)
{
	const struct trace *t = c->t;
	int cpu = 0;

	if (!c->top_is_array || c->kineto_evidence || c->jax_evidence)
		return 0;
	for (uint32_t i = c->first_track; i < t->n_tracks; i++) {
		const char *pid = trace_str_get(t, t->tracks[i].pid);
		if (!t->tracks[i].n_events)
			continue;
		if (strcmp(pid, legacy_cpu_pid) == 0)
			cpu = 1;
		else if (strcmp(pid, legacy_cuda_pid) != 0)
			return 0;
	}
	if (!cpu)
		return 0;
	if (c->torch_name)
		return 1;
	for (uint64_t i = c->first_event, n; i < t->n_events; i += n) {
		const struct trace_event *e = trace_event_run(t, i, &n);
		for (uint64_t k = 0; k < n; k++)
			if (cj_is_torch_name(trace_str_get(t, e[k].name),
					     trace_str_len(t, e[k].name)))
				return 1;
	}
	return 0;
}

void cj_decide_dialect(struct cj *c)
{
	struct trace_file *f = &c->t->files[c->file];
	uint64_t other_phases = 0;

	for (int i = 0; i < 128; i++)
		if (i != 'X' && i != 'M')
			other_phases += f->phase_counts[i];
	if (c->kineto_evidence > c->jax_evidence) {
		f->dialect = TRACE_DIALECT_KINETO;
		f->framework = pg_xstrdup("pytorch");
	} else if (c->jax_evidence > 0 && other_phases == 0) {
		f->dialect = TRACE_DIALECT_JAX;
		f->framework = pg_xstrdup("jax");
	} else if (looks_pytorch_legacy(c)) {
		f->dialect = TRACE_DIALECT_PYTORCH_LEGACY;
		f->framework = pg_xstrdup("pytorch");
	} else {
		f->dialect = TRACE_DIALECT_GENERIC;
	}
}

/* A file that names GPUs (deviceProperties, or a GPU's process) but holds no
 * kernel, copy or set record: the profiler ran without its device tracer,
 * which a summary with no device activity alone does not tell. */
static void no_device_records(struct cj *c)
{
	const struct trace_file *f = &c->t->files[c->file];
	uint32_t gpus = 0;
	uint64_t stream_events = 0;

	for (uint32_t i = 0; i < c->t->n_devices; i++)
		gpus += c->t->devices[i].file == c->file && c->t->devices[i].kind == TRACE_DEV_GPU;
	for (uint32_t i = 0; i < c->t->n_tracks; i++) {
		const struct trace_track *tr = &c->t->tracks[i];
		if (tr->kind == TRACE_TRACK_STREAM && tr->device < c->t->n_devices &&
		    c->t->devices[tr->device].file == c->file)
			stream_events += tr->n_events;
	}
	if (stream_events || (!gpus && !f->declared_devices))
		return;
	trace_warn(c->t, c->file, "no-device-records",
		   "the file names %u GPU%s but holds no kernel, memcpy or memset record: the "
		   "profiler recorded no device activity (device activity not enabled, or its "
		   "tracer, CUPTI on NVIDIA or roctracer on AMD, missing or failing to load)",
		   gpus > f->declared_devices ? gpus : f->declared_devices,
		   (gpus > f->declared_devices ? gpus : f->declared_devices) == 1 ? "" : "s");
}

void cj_file_warnings(struct cj *c)
{
	struct trace_file *f = &c->t->files[c->file];
	uint64_t x = f->phase_counts['X'];

	if (x == 1000000 || x == 5000000 || f->entries == 1000000 || f->entries == 5000000)
		trace_warn(
		    c->t, c->file, "event-cap",
		    "%llu events is exactly an exporter cap: the trace is most likely truncated "
		    "(the exporter keeps the earliest events); prefer the .xplane.pb",
		    (unsigned long long)(x == 1000000 || x == 5000000 ? x : f->entries));
	if (c->in->truncated)
		trace_warn(
		    c->t, c->file, "ends-early",
		    "the gzip stream ends before its trailer; the JSON was complete, but the "
		    "file may have been cut while being written");
	if (c->unmatched_end)
		trace_warn(c->t, c->file, "unmatched-end", "%llu end events had no matching begin",
			   (unsigned long long)c->unmatched_end);
	if (c->unclosed_begin)
		trace_warn(c->t, c->file, "unclosed-begin",
			   "%llu begin events were never closed and were dropped",
			   (unsigned long long)c->unclosed_begin);
	if (c->xprof_ui)
		trace_warn(
		    c->t, c->file, "xprof-ui-json",
		    "this is xprof's trace-viewer JSON (viewport-filtered); prefer the .xplane.pb");
	no_device_records(c);
}
