/*
 * Rates: what a step processes, as the user declares it, over the steady
 * median step (throughput.tokens_per_s, samples_per_s, mfu), and the table of
 * device peaks MFU is taken against.
 *
 * The peaks are dense (no structured sparsity) tensor-core / matrix-unit
 * TFLOP/s of one device as its maker publishes them; a row matches when every
 * one of its words is in the summary's device_kind (case folded), first row
 * first, so the more specific rows ("H100 PCIe") come before the general
 * ones ("H100"). docs/summary.md shows the table.
 */
#include "summary.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct peak_row {
	const char *model;  /* as docs and peak_source name it */
	const char *words;  /* space-separated, all in the device_kind */
	const char *dtype;  /* bf16, fp16, fp8, tf32, fp32 */
	double tflops;	    /* dense */
	const char *source; /* where the number is published */
};

#define NV_H100	   "NVIDIA H100 Tensor Core GPU datasheet"
#define NV_A100	   "NVIDIA A100 Tensor Core GPU datasheet"
#define NV_B200	   "NVIDIA HGX B200 datasheet (per GPU)"
#define AMD_MI300X "AMD Instinct MI300X data sheet"
#define AMD_MI250X "AMD Instinct MI250X data sheet"
#define GC_TPU(v)  "Google Cloud TPU " v " documentation"

static const struct peak_row peaks[] = {
    {"H100 PCIe", "h100 pcie", "bf16", 756, NV_H100},
    {"H100 PCIe", "h100 pcie", "fp16", 756, NV_H100},
    {"H100 PCIe", "h100 pcie", "fp8", 1513, NV_H100},
    {"H100 PCIe", "h100 pcie", "tf32", 378, NV_H100},
    {"H100 PCIe", "h100 pcie", "fp32", 51, NV_H100},
    {"H100 SXM", "h100", "bf16", 989, NV_H100},
    {"H100 SXM", "h100", "fp16", 989, NV_H100},
    {"H100 SXM", "h100", "fp8", 1979, NV_H100},
    {"H100 SXM", "h100", "tf32", 494, NV_H100},
    {"H100 SXM", "h100", "fp32", 67, NV_H100},
    {"H200", "h200", "bf16", 989, "NVIDIA H200 Tensor Core GPU datasheet"},
    {"H200", "h200", "fp8", 1979, "NVIDIA H200 Tensor Core GPU datasheet"},
    {"B200", "b200", "bf16", 2250, NV_B200},
    {"B200", "b200", "fp16", 2250, NV_B200},
    {"B200", "b200", "fp8", 4500, NV_B200},
    {"B200", "b200", "tf32", 1100, NV_B200},
    {"A100", "a100", "bf16", 312, NV_A100},
    {"A100", "a100", "fp16", 312, NV_A100},
    {"A100", "a100", "tf32", 156, NV_A100},
    {"A100", "a100", "fp32", 19.5, NV_A100},
    {"V100", "v100", "fp16", 125, "NVIDIA V100 Tensor Core GPU datasheet"},
    {"V100", "v100", "fp32", 15.7, "NVIDIA V100 Tensor Core GPU datasheet"},
    {"MI300X", "mi300x", "bf16", 1307.4, AMD_MI300X},
    {"MI300X", "mi300x", "fp16", 1307.4, AMD_MI300X},
    {"MI300X", "mi300x", "fp8", 2614.9, AMD_MI300X},
    {"MI300X", "mi300x", "tf32", 653.7, AMD_MI300X},
    {"MI300X", "mi300x", "fp32", 163.4, AMD_MI300X},
    {"MI250X", "mi250x", "bf16", 383, AMD_MI250X},
    {"MI250X", "mi250x", "fp16", 383, AMD_MI250X},
    {"MI250X", "mi250x", "fp32", 95.7, AMD_MI250X},
    {"TPU v4", "tpu v4", "bf16", 275, GC_TPU("v4")},
    {"TPU v5e", "tpu v5 lite", "bf16", 197, GC_TPU("v5e")},
    {"TPU v5e", "tpu v5e", "bf16", 197, GC_TPU("v5e")},
    {"TPU v5p", "tpu v5p", "bf16", 459, GC_TPU("v5p")},
    {"TPU v5p", "tpu v5", "bf16", 459, GC_TPU("v5p")},
    {"TPU v6e", "tpu v6", "bf16", 918, GC_TPU("v6e")},
};

/* 1 when the word (n bytes) is in hay, case folded. */
static int has_word(const char *hay, const char *w, size_t n)
{
	for (const char *p = hay; *p; p++) {
		size_t k = 0;
		while (k < n && p[k] && tolower((unsigned char)p[k]) == w[k])
			k++;
		if (k == n)
			return 1;
	}
	return 0;
}

static int row_matches(const struct peak_row *r, const char *kind)
{
	for (const char *w = r->words; *w;) {
		size_t n = strcspn(w, " ");
		if (!has_word(kind, w, n))
			return 0;
		w += n;
		w += *w == ' ';
	}
	return 1;
}

double summary_peak_tflops(const char *device_kind, const char *dtype, const char **model,
			   const char **source)
{
	*model = *source = NULL;
	if (!device_kind || !dtype)
		return -1;
	for (size_t i = 0; i < PG_ARRAY_LEN(peaks); i++) {
		const struct peak_row *r = &peaks[i];
		if (strcmp(r->dtype, dtype) != 0 || !row_matches(r, device_kind))
			continue;
		*model = r->model;
		*source = r->source;
		return r->tflops;
	}
	return -1;
}

/* The devices MFU divides by: the job's (world_size) when the profile says,
 * else the summary's. */
static double mfu_devices(const struct summary *s)
{
	if (s->world_size > 0 && (uint32_t)s->world_size > s->device_count)
		return s->world_size;
	return s->device_count;
}

/* The peak from the table for the summary's device model, unless the user
 * gave one (--peak-tflops). */
static void table_peak(struct summary *s)
{
	struct sum_rate *r = &s->rate;
	const char *model, *src;

	if (r->peak_source && strcmp(r->peak_source, SUMMARY_PEAK_GIVEN) == 0)
		return;
	free(r->peak_source);
	r->peak_source = NULL;
	r->peak_tflops_per_device = summary_peak_tflops(
	    s->device_kind, r->peak_dtype ? r->peak_dtype : "bf16", &model, &src);
	if (r->peak_tflops_per_device < 0)
		return;
	if (!r->peak_dtype)
		r->peak_dtype = pg_xstrdup("bf16");
	r->peak_source = pg_xasprintf("%s %s dense (%s)", model, r->peak_dtype, src);
}

void summary_rates(struct summary *s)
{
	struct sum_rate *r = &s->rate;
	double step_s = s->steady.count > 0 ? s->steady.median_us * 1e-6 : -1;

	table_peak(s);

	r->tokens_per_s = r->samples_per_s = r->mfu = r->hfu = r->devices = -1;
	if (step_s > 0 && r->tokens_per_step >= 0)
		r->tokens_per_s = r->tokens_per_step / step_s;
	if (step_s > 0 && r->samples_per_step >= 0)
		r->samples_per_s = r->samples_per_step / step_s;
	if (r->model_flops_per_step >= 0 && r->peak_tflops_per_device > 0 && step_s > 0 &&
	    mfu_devices(s) > 0) {
		r->devices = mfu_devices(s);
		r->mfu = r->model_flops_per_step /
			 (step_s * r->peak_tflops_per_device * 1e12 * r->devices);
	}
	if (s->tflops_per_device >= 0 && r->peak_tflops_per_device > 0)
		r->hfu = s->tflops_per_device / r->peak_tflops_per_device;
}
