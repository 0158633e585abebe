/*
 * The classification rules: one ordered table from what an event says about
 * itself (kernel or op name, HLO opcode or category, Kineto category, NCCL
 * args) to a family, whose category follows from it (analyze_family_category).
 * First match wins. Every row has a test
 * (tests/unit/test_rules.c walks the table's own examples).
 *
 * Mistakes of the peers this avoids (docs/formats.md §14): memory is decided
 * before communication and from the category, so hipMemcpy is memory, not
 * communication; communication needs nccl/rccl/hccl or an HLO collective
 * opcode, never the bare substrings "permute", "send", "blocked" or
 * "collective"; HLO opcodes are compared after stripping ".N", so fusion.123
 * falls to its hlo_category instead of never matching.
 */
#include "analyze.h"

#include <ctype.h>
#include <string.h>

/* What a rule looks at. */
enum rule_field {
	F_CAT,	    /* Kineto category, exact */
	F_NAME,	    /* event name (kernel or op), case-insensitive substring */
	F_PREFIX,   /* event name, case-insensitive prefix */
	F_OPCODE,   /* HLO opcode: hlo_op's last "::" part or the name, ".N" stripped, exact */
	F_HLOCAT,   /* hlo_category, exact */
	F_COLLNAME, /* Kineto "Collective name" arg, case-insensitive substring */
	F_OP,	    /* host rules: an op name, the pattern followed by its end, '_' or a digit */
};

/* A row names a family only: its category is the family's
 * (analyze_family_category), said once. */
struct rule {
	enum rule_field field;
	const char *pattern;
	enum analyze_family family;
	const char *example; /* an input this row must classify (tests) */
};

static const struct rule rules[] = {
    /* memory first, by category, then by the names runtimes give copies */
    {F_CAT, "gpu_memcpy", ANALYZE_FAM_MEMCPY, "gpu_memcpy"},
    {F_CAT, "Memcpy", ANALYZE_FAM_MEMCPY, "Memcpy"},
    {F_CAT, "gpu_memset", ANALYZE_FAM_MEMSET, "gpu_memset"},
    {F_CAT, "Memset", ANALYZE_FAM_MEMSET, "Memset"},
    {F_PREFIX, "memcpy", ANALYZE_FAM_MEMCPY, "Memcpy DtoD (Device -> Device)"},
    {F_PREFIX, "memset", ANALYZE_FAM_MEMSET, "Memset (Device)"},
    {F_PREFIX, "hipmemcpy", ANALYZE_FAM_MEMCPY, "hipMemcpyDtoDAsync"},
    {F_PREFIX, "hipmemset", ANALYZE_FAM_MEMSET, "hipMemsetAsync"},
    {F_PREFIX, "__amd_rocclr_copybuffer", ANALYZE_FAM_MEMCPY, "__amd_rocclr_copyBuffer.kd"},
    {F_PREFIX, "memory_copy_", ANALYZE_FAM_MEMCPY, "MEMORY_COPY_DEVICE_TO_HOST"},
    {F_PREFIX, "__amd_rocclr_fillbuffer", ANALYZE_FAM_MEMSET, "__amd_rocclr_fillBufferAligned"},
    {F_OPCODE, "copy-start", ANALYZE_FAM_MEMCPY, "copy-start.3"},
    {F_OPCODE, "copy-done", ANALYZE_FAM_MEMCPY, "copy-done.3"},
    {F_HLOCAT, "async-copy", ANALYZE_FAM_MEMCPY, "async-copy"},

    /* communication: collective kinds by args, kernel names and HLO opcodes */
    {F_COLLNAME, "allreduce", ANALYZE_FAM_ALL_REDUCE, "allreduce"},
    {F_COLLNAME, "all_reduce", ANALYZE_FAM_ALL_REDUCE, "all_reduce"},
    {F_COLLNAME, "allgather", ANALYZE_FAM_ALL_GATHER, "allgather_into_tensor_coalesced"},
    {F_COLLNAME, "all_gather", ANALYZE_FAM_ALL_GATHER, "all_gather"},
    {F_COLLNAME, "reducescatter", ANALYZE_FAM_REDUCE_SCATTER, "reducescatter"},
    {F_COLLNAME, "reduce_scatter", ANALYZE_FAM_REDUCE_SCATTER, "_reduce_scatter_base"},
    {F_COLLNAME, "all_to_all", ANALYZE_FAM_ALL_TO_ALL, "all_to_allv"},
    {F_COLLNAME, "alltoall", ANALYZE_FAM_ALL_TO_ALL, "alltoall_base"},
    {F_COLLNAME, "send", ANALYZE_FAM_SEND_RECV, "send"},
    {F_COLLNAME, "recv", ANALYZE_FAM_SEND_RECV, "recv"},
    {F_COLLNAME, "", ANALYZE_FAM_COLLECTIVE_OTHER, "broadcast"},
    {F_NAME, "allreduce", ANALYZE_FAM_ALL_REDUCE, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
    {F_NAME, "all_reduce", ANALYZE_FAM_ALL_REDUCE, "multimem_all_reduce_kernel"},
    {F_NAME, "cross_device_reduce", ANALYZE_FAM_ALL_REDUCE, "cross_device_reduce_1stage"},
    {F_NAME, "allgather", ANALYZE_FAM_ALL_GATHER, "ncclDevKernel_AllGather_RING_LL"},
    {F_NAME, "reducescatter", ANALYZE_FAM_REDUCE_SCATTER, "ncclKernel_ReduceScatter_RING"},
    {F_NAME, "alltoall", ANALYZE_FAM_ALL_TO_ALL, "ncclKernel_AllToAll"},
    {F_NAME, "sendrecv", ANALYZE_FAM_SEND_RECV, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"},
    {F_NAME, "nccl", ANALYZE_FAM_COLLECTIVE_OTHER, "ncclDevKernel_Broadcast_RING_LL"},
    {F_NAME, "rccl", ANALYZE_FAM_COLLECTIVE_OTHER, "rcclGenericKernel<1, false>"},
    {F_PREFIX, "hccl", ANALYZE_FAM_COLLECTIVE_OTHER, "hcclBroadcastKernel"},
    {F_OPCODE, "all-reduce", ANALYZE_FAM_ALL_REDUCE, "all-reduce.12"},
    {F_OPCODE, "all-reduce-start", ANALYZE_FAM_ALL_REDUCE, "all-reduce-start.2"},
    {F_OPCODE, "all-reduce-done", ANALYZE_FAM_ALL_REDUCE, "all-reduce-done.2"},
    {F_HLOCAT, "all-reduce fusion", ANALYZE_FAM_ALL_REDUCE, "all-reduce fusion"},
    {F_HLOCAT, "all-reduce-scatter fusion", ANALYZE_FAM_REDUCE_SCATTER,
     "all-reduce-scatter fusion"},
    {F_OPCODE, "all-gather", ANALYZE_FAM_ALL_GATHER, "all-gather.4"},
    {F_OPCODE, "all-gather-start", ANALYZE_FAM_ALL_GATHER, "all-gather-start"},
    {F_OPCODE, "all-gather-done", ANALYZE_FAM_ALL_GATHER, "all-gather-done.1"},
    {F_HLOCAT, "all-gather fusion", ANALYZE_FAM_ALL_GATHER, "all-gather fusion"},
    {F_OPCODE, "reduce-scatter", ANALYZE_FAM_REDUCE_SCATTER, "reduce-scatter.7"},
    {F_OPCODE, "all-to-all", ANALYZE_FAM_ALL_TO_ALL, "all-to-all.1"},
    {F_OPCODE, "ragged-all-to-all", ANALYZE_FAM_ALL_TO_ALL, "ragged-all-to-all.3"},
    {F_OPCODE, "collective-permute", ANALYZE_FAM_COLLECTIVE_PERMUTE, "collective-permute.5"},
    {F_OPCODE, "collective-permute-start", ANALYZE_FAM_COLLECTIVE_PERMUTE,
     "collective-permute-start.1"},
    {F_OPCODE, "collective-permute-done", ANALYZE_FAM_COLLECTIVE_PERMUTE,
     "collective-permute-done.1"},
    {F_OPCODE, "collective-broadcast", ANALYZE_FAM_COLLECTIVE_OTHER, "collective-broadcast.2"},
    {F_OPCODE, "send", ANALYZE_FAM_SEND_RECV, "send.3"},
    {F_OPCODE, "send-done", ANALYZE_FAM_SEND_RECV, "send-done.3"},
    {F_OPCODE, "recv", ANALYZE_FAM_SEND_RECV, "recv.1"},
    {F_OPCODE, "recv-done", ANALYZE_FAM_SEND_RECV, "recv-done.1"},

    /* attention, backward before forward */
    {F_NAME, "fmhabwd", ANALYZE_FAM_ATTENTION_BWD, "FmhaBwdOGradDotO"},
    {F_NAME, "fmha_bwd", ANALYZE_FAM_ATTENTION_BWD, "ck_fmha_bwd_kernel"},
    {F_NAME, "flash_bprop", ANALYZE_FAM_ATTENTION_BWD, "cudnn_flash_bprop"},
    {F_NAME, "flash_bwd", ANALYZE_FAM_ATTENTION_BWD, "flash_bwd_dq_dk_dv_loop_kernel"},
    {F_NAME, "dk_dv", ANALYZE_FAM_ATTENTION_BWD, "ck_fused_attn::dk_dv_reduce_thd"},
    {F_NAME, "attention_backward", ANALYZE_FAM_ATTENTION_BWD,
     "aten::_scaled_dot_product_flash_attention_backward"},
    {F_NAME, "attn_bwd", ANALYZE_FAM_ATTENTION_BWD, "attn_bwd_kernel"},
    {F_NAME, "fmhafwd", ANALYZE_FAM_ATTENTION_FWD, "FmhaFwdKernel"},
    {F_NAME, "fmha_fwd", ANALYZE_FAM_ATTENTION_FWD, "fmha_fwd_hdim128"},
    {F_NAME, "flash_fprop", ANALYZE_FAM_ATTENTION_FWD, "cudnn_flash_fprop"},
    {F_NAME, "flash_fwd", ANALYZE_FAM_ATTENTION_FWD, "flash_fwd_kernel"},
    {F_NAME, "flash_attn", ANALYZE_FAM_ATTENTION_FWD, "flash_attn_fwd"},
    {F_NAME, "fused_attn", ANALYZE_FAM_ATTENTION_FWD, "te_fused_attn_fwd"},
    {F_NAME, "paged_attention", ANALYZE_FAM_ATTENTION_FWD, "paged_attention_v2_kernel"},
    {F_NAME, "scaled_dot_product", ANALYZE_FAM_ATTENTION_FWD,
     "aten::_scaled_dot_product_efficient_attention"},
    {F_NAME, "attention", ANALYZE_FAM_ATTENTION_FWD, "jit(attention)/dot_general"},

    /* convolution before matmul: cuDNN conv kernels say "implicit_gemm" */
    {F_HLOCAT, "convolution fusion", ANALYZE_FAM_CONV, "convolution fusion"},
    {F_OPCODE, "convolution", ANALYZE_FAM_CONV, "convolution.3"},
    {F_OPCODE, "cudnn-conv", ANALYZE_FAM_CONV, "cudnn-conv.1"},
    {F_PREFIX, "convolution", ANALYZE_FAM_CONV, "convolution base-dilated"},
    {F_NAME, "conv_", ANALYZE_FAM_CONV, "naive_conv_fwd"},
    {F_NAME, "convolve", ANALYZE_FAM_CONV, "implicit_convolve_sgemm"},
    {F_NAME, "conv2d", ANALYZE_FAM_CONV, "aten::conv2d"},
    {F_NAME, "convolution", ANALYZE_FAM_CONV, "aten::cudnn_convolution"},
    {F_NAME, "im2col", ANALYZE_FAM_CONV, "Im2Col3d.kd"},
    {F_NAME, "im3d2col", ANALYZE_FAM_CONV, "Im3d2Col.kd"},
    {F_NAME, "wgrad", ANALYZE_FAM_CONV, "sm80_xmma_wgrad_implicit_gemm_indexed"},
    {F_NAME, "dgrad", ANALYZE_FAM_CONV, "xmma_dgrad_kernel"},
    {F_NAME, "fprop_implicit", ANALYZE_FAM_CONV, "sm86_xmma_fprop_implicit_gemm"},

    /* matrix multiply */
    {F_NAME, "gemm", ANALYZE_FAM_MATMUL, "ampere_bf16_s16816gemm_bf16_128x128"},
    {F_PREFIX, "cijk_", ANALYZE_FAM_MATMUL, "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32"},
    {F_PREFIX, "nvjet", ANALYZE_FAM_MATMUL, "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_NTN"},
    {F_NAME, "cublaslt", ANALYZE_FAM_MATMUL, "cublasLt::splitKreduce_kernel"},
    {F_NAME, "matmul", ANALYZE_FAM_MATMUL, "triton_matmul_kernel"},
    {F_PREFIX, "triton_mm", ANALYZE_FAM_MATMUL, "triton_mm_0"},
    {F_PREFIX, "triton_tem", ANALYZE_FAM_MATMUL, "triton_tem_fused_mm_0"},
    {F_PREFIX, "aten::mm", ANALYZE_FAM_MATMUL, "aten::mm"},
    {F_PREFIX, "aten::addmm", ANALYZE_FAM_MATMUL, "aten::addmm"},
    {F_PREFIX, "aten::bmm", ANALYZE_FAM_MATMUL, "aten::bmm"},
    {F_PREFIX, "aten::baddbmm", ANALYZE_FAM_MATMUL, "aten::baddbmm"},
    {F_PREFIX, "aten::_scaled_mm", ANALYZE_FAM_MATMUL, "aten::_scaled_mm"},
    {F_OPCODE, "dot", ANALYZE_FAM_MATMUL, "dot.12"},
    {F_HLOCAT, "output fusion", ANALYZE_FAM_MATMUL, "output fusion"},
    /* normalization, optimizer, loss, embedding */
    {F_NAME, "layer_norm", ANALYZE_FAM_NORM, "vectorized_layer_norm_kernel"},
    {F_NAME, "layernorm", ANALYZE_FAM_NORM, "LayerNormForwardKernel"},
    {F_NAME, "rms_norm", ANALYZE_FAM_NORM, "aten::_fused_rms_norm"},
    {F_NAME, "rmsnorm", ANALYZE_FAM_NORM, "Rmsnorm2dFwd"},
    {F_NAME, "batch_norm", ANALYZE_FAM_NORM, "aten::native_batch_norm"},
    {F_NAME, "batchnorm", ANALYZE_FAM_NORM, "cudnn::bn_fw_tr_1C11_kernel_NCHW (batchnorm)"},
    {F_NAME, "bn_fw", ANALYZE_FAM_NORM, "cudnn::bn_fw_tr_1C11_kernel_NCHW"},
    {F_NAME, "bn_bw", ANALYZE_FAM_NORM, "cudnn::bn_bw_1C11_kernel_new"},
    {F_NAME, "group_norm", ANALYZE_FAM_NORM, "aten::native_group_norm"},
    {F_NAME, "multi_tensor_apply", ANALYZE_FAM_OPTIMIZER,
     "void at::native::(anonymous namespace)::multi_tensor_apply_kernel"},
    {F_NAME, "adam", ANALYZE_FAM_OPTIMIZER, "FusedAdamMathFunctor"},
    {F_NAME, "optimizer", ANALYZE_FAM_OPTIMIZER, "Optimizer.step#SGD.step"},
    {F_NAME, "sgd", ANALYZE_FAM_OPTIMIZER, "fused_sgd_kernel"},
    {F_NAME, "cross_entropy", ANALYZE_FAM_LOSS, "aten::cross_entropy_loss"},
    {F_NAME, "nll_loss", ANALYZE_FAM_LOSS, "nll_loss_forward_reduce_cuda_kernel_2d"},
    {F_NAME, "log_softmax", ANALYZE_FAM_LOSS, "cunn_SoftMaxForward<log_softmax>"},
    {F_NAME, "embedding", ANALYZE_FAM_EMBEDDING, "embedding_backward_feature_kernel"},
    {F_NAME, "index_select", ANALYZE_FAM_EMBEDDING, "indexSelectLargeIndex (index_select)"},
    {F_NAME, "indexselect", ANALYZE_FAM_EMBEDDING, "indexSelectLargeIndex"},

    /* reductions and elementwise work */
    {F_NAME, "softmax", ANALYZE_FAM_REDUCE, "cunn_SoftMaxForward"},
    {F_NAME, "reduce_kernel", ANALYZE_FAM_REDUCE, "at::native::reduce_kernel<512, 1>"},
    {F_PREFIX, "triton_red", ANALYZE_FAM_REDUCE, "triton_red_fused_sum_0"},
    {F_PREFIX, "triton_per", ANALYZE_FAM_REDUCE, "triton_per_fused_sum_1"},
    {F_PREFIX, "input_reduce", ANALYZE_FAM_REDUCE, "input_reduce_fusion_3"},
    {F_OPCODE, "reduce", ANALYZE_FAM_REDUCE, "reduce.7"},
    {F_HLOCAT, "input fusion", ANALYZE_FAM_REDUCE, "input fusion"},
    {F_NAME, "elementwise", ANALYZE_FAM_ELEMENTWISE, "vectorized_elementwise_kernel<4>"},
    {F_PREFIX, "triton_poi", ANALYZE_FAM_ELEMENTWISE, "triton_poi_fused_add_0"},
    {F_PREFIX, "loop_", ANALYZE_FAM_ELEMENTWISE, "loop_add_fusion"},
    {F_HLOCAT, "loop fusion", ANALYZE_FAM_ELEMENTWISE, "loop fusion"},
    {F_HLOCAT, "non-fusion elementwise", ANALYZE_FAM_ELEMENTWISE, "non-fusion elementwise"},
    {F_HLOCAT, "data formatting", ANALYZE_FAM_ELEMENTWISE, "data formatting"},
    {F_OPCODE, "add", ANALYZE_FAM_ELEMENTWISE, "add.3"},
    {F_OPCODE, "multiply", ANALYZE_FAM_ELEMENTWISE, "multiply.9"},
    {F_OPCODE, "transpose", ANALYZE_FAM_ELEMENTWISE, "transpose.1"},
    {F_OPCODE, "copy", ANALYZE_FAM_ELEMENTWISE, "copy.4"},
    {F_NAME, "copy_kernel", ANALYZE_FAM_ELEMENTWISE, "at::native::copy_kernel"},
    {F_NAME, "catarray", ANALYZE_FAM_ELEMENTWISE, "CatArrayBatchedCopy_aligned16_contig"},
    {F_NAME, "fill_kernel", ANALYZE_FAM_ELEMENTWISE, "FillFunctor fill_kernel"},
};

const char *analyze_category_name(enum analyze_category c)
{
	static const char *names[] = {"compute", "communication", "memory", "host", "other"};
	return (unsigned)c < PG_ARRAY_LEN(names) ? names[c] : "other";
}

enum analyze_category analyze_family_category(enum analyze_family f)
{
	if (f >= ANALYZE_FAM_ALL_REDUCE && f <= ANALYZE_FAM_COLLECTIVE_OTHER)
		return ANALYZE_CAT_COMMUNICATION;
	if (f == ANALYZE_FAM_MEMCPY || f == ANALYZE_FAM_MEMSET)
		return ANALYZE_CAT_MEMORY;
	if (f >= ANALYZE_FAM_COPY && f < ANALYZE_FAM_COUNT)
		return ANALYZE_CAT_HOST;
	return ANALYZE_CAT_COMPUTE;
}

const char *analyze_family_name(enum analyze_family f)
{
	static const char *names[] = {
	    "matmul",
	    "attention-fwd",
	    "attention-bwd",
	    "conv",
	    "norm",
	    "elementwise",
	    "reduce",
	    "optimizer",
	    "loss",
	    "embedding",
	    "all-reduce",
	    "all-gather",
	    "reduce-scatter",
	    "all-to-all",
	    "collective-permute",
	    "send-recv",
	    "collective-other",
	    "memcpy",
	    "memset",
	    "fusion",
	    "other",
	    "copy",
	    "data-loading",
	    "autograd",
	    "runtime",
	};
	return (unsigned)f < PG_ARRAY_LEN(names) ? names[f] : "other";
}

static int ci_contains(const char *hay, size_t hn, const char *needle)
{
	size_t nn = strlen(needle);

	if (nn == 0)
		return 1;
	for (size_t i = 0; i + nn <= hn; i++) {
		size_t k = 0;
		while (k < nn && tolower((unsigned char)hay[i + k]) == needle[k])
			k++;
		if (k == nn)
			return 1;
	}
	return 0;
}

static int ci_prefix(const char *s, size_t n, const char *p)
{
	size_t pn = strlen(p);

	if (n < pn)
		return 0;
	for (size_t i = 0; i < pn; i++)
		if (tolower((unsigned char)s[i]) != p[i])
			return 0;
	return 1;
}

/* HLO opcode of "fusion.123", "wrapped_add", "all-reduce-start.2": strip ".N". */
static size_t opcode_len(const char *s, size_t n)
{
	size_t end = n;

	while (end > 0 && s[end - 1] >= '0' && s[end - 1] <= '9')
		end--;
	if (end > 0 && end < n && s[end - 1] == '.')
		return end - 1;
	return n;
}

static int matches(const struct rule *r, const struct analyze_event_facts *f)
{
	const char *s;
	size_t n;

	switch (r->field) {
	case F_CAT: return f->cat && strcmp(f->cat, r->pattern) == 0;
	case F_NAME: return f->name && ci_contains(f->name, f->name_len, r->pattern);
	case F_PREFIX: return f->name && ci_prefix(f->name, f->name_len, r->pattern);
	case F_OPCODE:
		s = f->hlo_op ? f->hlo_op : f->name;
		if (!s)
			return 0;
		if (f->hlo_op) {
			const char *last = strstr(s, "::");
			while (last) {
				s = last + 2;
				last = strstr(s, "::");
			}
		}
		n = opcode_len(s, strlen(s));
		return n == strlen(r->pattern) && memcmp(s, r->pattern, n) == 0;
	case F_HLOCAT: return f->hlo_category && strcmp(f->hlo_category, r->pattern) == 0;
	case F_COLLNAME:
		return f->collective_name &&
		       ci_contains(f->collective_name, strlen(f->collective_name), r->pattern);
	case F_OP: return 0; /* host rules only */
	}
	return 0;
}

void analyze_classify(const struct analyze_event_facts *f, enum analyze_category *cat,
		      enum analyze_family *fam)
{
	*fam = ANALYZE_FAM_OTHER;
	for (size_t i = 0; i < PG_ARRAY_LEN(rules); i++)
		if (matches(&rules[i], f)) {
			*fam = rules[i].family;
			break;
		}
	/* an XLA fusion whose kind the profile does not say */
	if (*fam == ANALYZE_FAM_OTHER && f->name &&
	    (ci_prefix(f->name, f->name_len, "fusion") ||
	     ci_contains(f->name, f->name_len, "_fusion")))
		*fam = ANALYZE_FAM_FUSION;
	*cat = analyze_family_category(*fam);
}

size_t analyze_rules_count(void)
{
	return PG_ARRAY_LEN(rules);
}

int analyze_rule_example(size_t i, struct analyze_event_facts *f, enum analyze_category *cat,
			 enum analyze_family *fam)
{
	if (i >= PG_ARRAY_LEN(rules))
		return -1;
	memset(f, 0, sizeof(*f));
	switch (rules[i].field) {
	case F_CAT: f->cat = rules[i].example; break;
	case F_NAME:
	case F_PREFIX:
	case F_OP:
	case F_OPCODE:
		f->name = rules[i].example;
		f->name_len = strlen(rules[i].example);
		break;
	case F_HLOCAT: f->hlo_category = rules[i].example; break;
	case F_COLLNAME: f->collective_name = rules[i].example; break;
	}
	*cat = analyze_family_category(rules[i].family);
	*fam = rules[i].family;
	return 0;
}

/*
 * The host rules: framework ops and runtime calls on host threads, first
 * match wins, names compared case-insensitively. An op row (F_OP) names one
 * op and its variants ("aten::add" is aten::add_ and aten::add, not
 * aten::addcmul); a prefix row names a whole group (every aten::conv*). A host op's self time is
 * what it did itself, so the wrappers (autograd's evaluate_function, the
 * optimizer's step annotation) keep only their own overhead and the matmul
 * inside a linear layer's backward is matmul.
 */
struct host_rule {
	enum rule_field field; /* F_NAME (substring), F_PREFIX or F_CAT (exact) */
	const char *pattern;
	enum analyze_family family;
	const char *example;
};

static const struct host_rule host_rules[] = {
    /* what the step waits on outside the model */
    {F_PREFIX, "enumerate(dataloader)", ANALYZE_FAM_DATA_LOADING,
     "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"},
    {F_NAME, "dataloader", ANALYZE_FAM_DATA_LOADING,
     "torch/utils/data/dataloader.py(628): __next__"},
    {F_PREFIX, "optimizer.", ANALYZE_FAM_OPTIMIZER, "Optimizer.step#SGD.step"},
    {F_PREFIX, "aten::_foreach_", ANALYZE_FAM_OPTIMIZER, "aten::_foreach_add_"},
    {F_PREFIX, "aten::_fused_adam", ANALYZE_FAM_OPTIMIZER, "aten::_fused_adamw_"},
    {F_PREFIX, "autograd::", ANALYZE_FAM_AUTOGRAD,
     "autograd::engine::evaluate_function: MmBackward0"},
    {F_PREFIX, "torch::autograd::", ANALYZE_FAM_AUTOGRAD, "torch::autograd::AccumulateGrad"},
    {F_NAME, "backward0", ANALYZE_FAM_AUTOGRAD, "MmBackward0"},
    {F_NAME, "backward1", ANALYZE_FAM_AUTOGRAD, "AddmmBackward1"},
    /* runtime calls: launches, copies, syncs */
    {F_CAT, "cuda_runtime", ANALYZE_FAM_RUNTIME, "cudaLaunchKernel"},
    {F_CAT, "cuda_driver", ANALYZE_FAM_RUNTIME, "cuLaunchKernel"},
    {F_CAT, "Runtime", ANALYZE_FAM_RUNTIME, "hipLaunchKernel"},
    {F_PREFIX, "cuda", ANALYZE_FAM_RUNTIME, "cudaStreamSynchronize"},
    {F_PREFIX, "hip", ANALYZE_FAM_RUNTIME, "hipMemcpyAsync"},
    /* framework ops by family */
    {F_OP, "aten::mm", ANALYZE_FAM_MATMUL, "aten::mm"},
    {F_OP, "aten::addmm", ANALYZE_FAM_MATMUL, "aten::addmm"},
    {F_OP, "aten::bmm", ANALYZE_FAM_MATMUL, "aten::bmm"},
    {F_OP, "aten::baddbmm", ANALYZE_FAM_MATMUL, "aten::baddbmm"},
    {F_OP, "aten::addbmm", ANALYZE_FAM_MATMUL, "aten::addbmm"},
    {F_OP, "aten::matmul", ANALYZE_FAM_MATMUL, "aten::matmul"},
    {F_OP, "aten::linear", ANALYZE_FAM_MATMUL, "aten::linear"},
    {F_OP, "aten::addmv", ANALYZE_FAM_MATMUL, "aten::addmv_"},
    {F_OP, "aten::mv", ANALYZE_FAM_MATMUL, "aten::mv"},
    {F_OP, "aten::dot", ANALYZE_FAM_MATMUL, "aten::dot"},
    {F_OP, "aten::einsum", ANALYZE_FAM_MATMUL, "aten::einsum"},
    {F_PREFIX, "aten::conv", ANALYZE_FAM_CONV, "aten::conv2d"},
    {F_PREFIX, "aten::_conv", ANALYZE_FAM_CONV, "aten::_convolution"},
    {F_PREFIX, "aten::mkldnn_conv", ANALYZE_FAM_CONV, "aten::mkldnn_convolution"},
    {F_PREFIX, "aten::slow_conv", ANALYZE_FAM_CONV, "aten::slow_conv2d_forward"},
    {F_PREFIX, "aten::thnn_conv", ANALYZE_FAM_CONV, "aten::thnn_conv2d"},
    {F_NAME, "softmax", ANALYZE_FAM_REDUCE, "aten::_log_softmax"},
    {F_NAME, "nll_loss", ANALYZE_FAM_REDUCE, "aten::nll_loss_forward"},
    {F_NAME, "cross_entropy", ANALYZE_FAM_REDUCE, "aten::cross_entropy_loss"},
    {F_OP, "aten::sum", ANALYZE_FAM_REDUCE, "aten::sum"},
    {F_OP, "aten::mean", ANALYZE_FAM_REDUCE, "aten::mean"},
    {F_OP, "aten::amax", ANALYZE_FAM_REDUCE, "aten::amax"},
    {F_OP, "aten::max", ANALYZE_FAM_REDUCE, "aten::max"},
    {F_OP, "aten::min", ANALYZE_FAM_REDUCE, "aten::min"},
    {F_OP, "aten::argmax", ANALYZE_FAM_REDUCE, "aten::argmax"},
    {F_OP, "aten::norm", ANALYZE_FAM_REDUCE, "aten::norm"},
    {F_OP, "aten::var", ANALYZE_FAM_REDUCE, "aten::var_mean"},
    {F_OP, "aten::std", ANALYZE_FAM_REDUCE, "aten::std"},
    {F_NAME, "layer_norm", ANALYZE_FAM_NORM, "aten::native_layer_norm"},
    {F_NAME, "batch_norm", ANALYZE_FAM_NORM, "aten::native_batch_norm"},
    {F_NAME, "group_norm", ANALYZE_FAM_NORM, "aten::native_group_norm"},
    {F_OP, "aten::embedding", ANALYZE_FAM_EMBEDDING, "aten::embedding"},
    {F_OP, "aten::index_select", ANALYZE_FAM_EMBEDDING, "aten::index_select"},
    {F_OP, "aten::copy_", ANALYZE_FAM_COPY, "aten::copy_"},
    {F_OP, "aten::to", ANALYZE_FAM_COPY, "aten::to"},
    {F_OP, "aten::_to_copy", ANALYZE_FAM_COPY, "aten::_to_copy"},
    {F_OP, "aten::clone", ANALYZE_FAM_COPY, "aten::clone"},
    {F_OP, "aten::contiguous", ANALYZE_FAM_COPY, "aten::contiguous"},
    {F_OP, "aten::cat", ANALYZE_FAM_COPY, "aten::cat"},
    {F_OP, "aten::stack", ANALYZE_FAM_COPY, "aten::stack"},
    {F_OP, "aten::_cat", ANALYZE_FAM_COPY, "aten::_cat"},
    {F_OP, "aten::add", ANALYZE_FAM_ELEMENTWISE, "aten::add_"},
    {F_OP, "aten::addcmul", ANALYZE_FAM_ELEMENTWISE, "aten::addcmul_"},
    {F_OP, "aten::addcdiv", ANALYZE_FAM_ELEMENTWISE, "aten::addcdiv_"},
    {F_OP, "aten::sub", ANALYZE_FAM_ELEMENTWISE, "aten::sub"},
    {F_OP, "aten::mul", ANALYZE_FAM_ELEMENTWISE, "aten::mul"},
    {F_OP, "aten::div", ANALYZE_FAM_ELEMENTWISE, "aten::div_"},
    {F_OP, "aten::relu", ANALYZE_FAM_ELEMENTWISE, "aten::relu"},
    {F_OP, "aten::threshold", ANALYZE_FAM_ELEMENTWISE, "aten::threshold_backward"},
    {F_OP, "aten::clamp", ANALYZE_FAM_ELEMENTWISE, "aten::clamp_min"},
    {F_OP, "aten::gelu", ANALYZE_FAM_ELEMENTWISE, "aten::gelu_backward"},
    {F_OP, "aten::silu", ANALYZE_FAM_ELEMENTWISE, "aten::silu"},
    {F_OP, "aten::sigmoid", ANALYZE_FAM_ELEMENTWISE, "aten::sigmoid"},
    {F_OP, "aten::tanh", ANALYZE_FAM_ELEMENTWISE, "aten::tanh"},
    {F_OP, "aten::exp", ANALYZE_FAM_ELEMENTWISE, "aten::exp"},
    {F_OP, "aten::log", ANALYZE_FAM_ELEMENTWISE, "aten::log"},
    {F_OP, "aten::pow", ANALYZE_FAM_ELEMENTWISE, "aten::pow"},
    {F_OP, "aten::sqrt", ANALYZE_FAM_ELEMENTWISE, "aten::sqrt"},
    {F_OP, "aten::rsqrt", ANALYZE_FAM_ELEMENTWISE, "aten::rsqrt"},
    {F_OP, "aten::neg", ANALYZE_FAM_ELEMENTWISE, "aten::neg"},
    {F_OP, "aten::where", ANALYZE_FAM_ELEMENTWISE, "aten::where"},
    {F_OP, "aten::fill_", ANALYZE_FAM_ELEMENTWISE, "aten::fill_"},
    {F_OP, "aten::zero_", ANALYZE_FAM_ELEMENTWISE, "aten::zero_"},
    {F_OP, "aten::dropout", ANALYZE_FAM_ELEMENTWISE, "aten::dropout"},
    {F_OP, "aten::lerp", ANALYZE_FAM_ELEMENTWISE, "aten::lerp_"},
    /* last: a backward region by its name, once the ops' own rows had their say */
    {F_NAME, "backward", ANALYZE_FAM_AUTOGRAD, "## backward ##"},
};

static int host_matches(const struct host_rule *r, const char *name, size_t len, const char *cat)
{
	switch (r->field) {
	case F_CAT: return cat && strcmp(cat, r->pattern) == 0;
	case F_NAME: return ci_contains(name, len, r->pattern);
	case F_PREFIX: return ci_prefix(name, len, r->pattern);
	case F_OP: {
		size_t n = strlen(r->pattern);
		return ci_prefix(name, len, r->pattern) &&
		       (len == n || name[n] == '_' || (name[n] >= '0' && name[n] <= '9'));
	}
	default: return 0;
	}
}

enum analyze_family analyze_classify_host(const char *name, size_t len, const char *cat)
{
	struct analyze_event_facts f = {.name = name, .name_len = len};
	enum analyze_category c;
	enum analyze_family fam;

	for (size_t i = 0; i < PG_ARRAY_LEN(host_rules); i++)
		if (host_matches(&host_rules[i], name, len, cat))
			return host_rules[i].family;
	analyze_classify(&f, &c, &fam);
	/* the device table's memory rows name device copies */
	if (fam == ANALYZE_FAM_MEMCPY || fam == ANALYZE_FAM_MEMSET)
		return ANALYZE_FAM_COPY;
	return fam == ANALYZE_FAM_FUSION ? ANALYZE_FAM_OTHER : fam;
}

int analyze_host_rule_example(size_t i, const char **name, const char **cat,
			      enum analyze_family *fam)
{
	if (i >= PG_ARRAY_LEN(host_rules))
		return -1;
	*name = host_rules[i].example;
	*cat = host_rules[i].field == F_CAT ? host_rules[i].pattern : NULL;
	*fam = host_rules[i].family;
	return 0;
}
