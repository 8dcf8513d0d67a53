/* ROCmForge plugin ABI: plain C, the only contract between the core and a plugin.
 *
 * Rules (see docs/PLUGINS.md):
 *  - Every plugin exports one symbol, RF_PLUGIN_ENTRY_SYMBOL, returning a const rf_plugin_info*.
 *  - The loader refuses a plugin whose abi_major differs from RF_ABI_MAJOR, naming both versions.
 *  - Structs that a plugin implements start with `struct_size`; the host never reads a member
 *    beyond it (RF_SLOT), so the ABI grows by appending members (minor version bump) and a
 *    plugin built against an older minor version keeps working with the slots it has.
 *  - No C++ types or exceptions cross this boundary. Errors come back as an int status
 *    (RF_OK == 0) plus a message written into a caller-provided buffer.
 */
#ifndef ROCMFORGE_ABI_H
#define ROCMFORGE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2.0: kernel packs became plugins with fusions (rocmforge/pack_abi.h); the backend and profiler
 * vtables are those of 1.3, so a 1.x backend rebuilds against 2.0 without a source change.
 * 2.1: set_observer (a profiler observes what the backend ran); compute_timed and compute_events
 * are retired (their places stay, the host never calls them).
 * 2.2: device_memory (a device's free and total memory without init, for every device a plugin
 * lists).
 * 2.3: host_pin / host_unpin.
 * 2.4: a kernel-pack launch may also write the q8_1 activation columns of one of its outputs
 * into scratch the backend lends (pack_abi.h: rf_fusion_launch.q8_of, rf_pack_device.launch_size).
 * 2.5: op GATHER (a sampler's candidate logits after TOPK); a 2.4 backend declines it in
 * supports_op like any op it does not know.
 * 2.6: a kernel-pack launch may read a matmul's activations as the q8_1 columns the backend makes
 * (rf_fusion_launch.act_in), name its kernel per claim (rf_fusion_launch.kernel) and set integer
 * members of its arguments from tensor addresses (rf_fusion_launch.words); the backend tells a
 * claim how it would run a MATMUL itself (rf_pack_device.matmul_form).
 * 2.7: a kernel-pack claim may fill several launches (rf_fusion.claim_launches), borrow scratch
 * for all of them (rf_fusion_launch.lent_bytes, RF_BIND_LENT) and replace the data address of a
 * bound tensor (RF_KFIELD_DST_DATA, RF_KFIELD_SRC0_DATA); the backend names its tensor-core tile
 * launch of a MATMUL (rf_pack_device.matmul_tiles).
 * 2.8: ROPE's optional src3, the tokens' (cos, sin) rows; a kernel-pack launch may declare that
 * it can run beside the claim's launch before it (rf_fusion_launch.beside_previous).
 * 2.9: rf_backend_vtable.compute_same, a rerun of an unchanged graph.
 * 2.10: rf_backend_vtable.option_descs, each backend option's type, default, range and meaning,
 * so the host validates values (not only keys) before init and `rocmforge info` lists them;
 * rf_pack_device.options (pack_abi.h, rf_pack_options), the backend options a kernel pack reads.
 * 2.11: named kernel parameters (kernel_params.h): rf_kargs' and rf_fusion_launch's iparams and
 * fparams are a union with one struct per launch family (a.mv, l->mmq, ...) and
 * rf_matmul_tiles.iparams with its tuning members; the same bytes, so 2.10 packs are served;
 * rf_exec_observer.chose, the kernels each observed unit launched and the rule of the backend's
 * kernel table (or the fusion) that chose them.
 * 2.12: ops LAYER_NORM and GELU, ATTENTION's iparams[2] (bidirectional, for encoders); a 2.11
 * backend declines the new ops in supports_op like any op it does not know, and must decline an
 * ATTENTION with iparams[2] != 0 (the host sets it only for encoder models).
 * 2.13: op SIGMOID (the shared expert's gate of Qwen2-MoE); a 2.12 backend declines it in
 * supports_op like any op it does not know.
 * 2.14: gpt-oss: ops SWIGLU_OAI (clamped SwiGLU) and ADD_ID (a bias row per chosen expert),
 * ATTENTION's src5 (per-head sink logits), ROPE's YaRN parameters (iparams[2..3], fparams[2..5]),
 * MOE_WEIGHTS' iparams[0] = 2 (the softmax of the chosen logits alone).
 * 2.15: DeepSeek-V2/V3 (multi-head latent attention, grouped routing): ops CONCAT and
 * MOE_GROUP_MASK, ATTENTION's V head size (dst rows of Dv*Hq, Dv != D; the V pool may be the K
 * pool, V the first Dv elements of each row), MOE_WEIGHTS' iparams[0] = 3 (the chosen
 * probabilities normalised by their sum).
 * 2.16: Qwen3.5 / Qwen3-Next (Gated DeltaNet layers): ops SSM_CONV, GATED_DELTA_NET and SOFTPLUS.
 * A backend of an older minor version never sees a node that needs these: the host asks
 * rf_node_abi_minor() and runs such nodes elsewhere. */
#define RF_ABI_MAJOR 2
#define RF_ABI_MINOR 16
#define RF_PLUGIN_ENTRY_SYMBOL "rocmforge_plugin_entry"

#if defined(_WIN32)
#define RF_PLUGIN_EXPORT __declspec(dllexport)
#else
#define RF_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Slot `slot` of the vtable `vt` points at (a struct of type `type`), or NULL when the plugin's
 * struct_size does not reach it: a plugin built against an older minor version has a shorter
 * struct, and the bytes after it are not slots. Hosts read every optional slot through this. */
#define RF_SLOT(vt, type, slot) \
    ((vt)->struct_size >= offsetof(type, slot) + sizeof((vt)->slot) ? (vt)->slot : NULL)

enum rf_status {
    RF_OK = 0,
    RF_ERR_UNSUPPORTED = 1,   /* op/type not supported by this backend */
    RF_ERR_OUT_OF_MEMORY = 2, /* allocation failed; message says requested and free bytes */
    RF_ERR_INVALID = 3,       /* bad arguments */
    RF_ERR_DEVICE = 4,        /* driver/runtime failure */
    RF_ERR_NO_DEVICE = 5,     /* backend cannot run here (no GPU, no driver) */
};

enum rf_plugin_kind {
    RF_PLUGIN_BACKEND = 1,
    RF_PLUGIN_KERNEL_PACK = 2,
    RF_PLUGIN_PROFILER = 3,
};

/* Tensor element types. Values equal the GGUF/ggml type ids so a tensor's type in a GGUF
 * file is used as is. MXFP6 has no ggml id; ROCmForge assigns 200/201 (docs/FORMATS.md). */
enum rf_type {
    RF_TYPE_F32 = 0,
    RF_TYPE_F16 = 1,
    RF_TYPE_Q4_0 = 2,
    RF_TYPE_Q4_1 = 3,
    RF_TYPE_Q5_0 = 6,
    RF_TYPE_Q5_1 = 7,
    RF_TYPE_Q8_0 = 8,
    RF_TYPE_Q8_1 = 9,
    RF_TYPE_Q2_K = 10,
    RF_TYPE_Q3_K = 11,
    RF_TYPE_Q4_K = 12,
    RF_TYPE_Q5_K = 13,
    RF_TYPE_Q6_K = 14,
    RF_TYPE_Q8_K = 15,
    RF_TYPE_IQ2_XXS = 16,
    RF_TYPE_IQ2_XS = 17,
    RF_TYPE_IQ3_XXS = 18,
    RF_TYPE_IQ1_S = 19,
    RF_TYPE_IQ4_NL = 20,
    RF_TYPE_IQ3_S = 21,
    RF_TYPE_IQ2_S = 22,
    RF_TYPE_IQ4_XS = 23,
    RF_TYPE_I8 = 24,
    RF_TYPE_I16 = 25,
    RF_TYPE_I32 = 26,
    RF_TYPE_I64 = 27,
    RF_TYPE_F64 = 28,
    RF_TYPE_IQ1_M = 29,
    RF_TYPE_BF16 = 30,
    RF_TYPE_TQ1_0 = 34,
    RF_TYPE_TQ2_0 = 35,
    RF_TYPE_MXFP4 = 39,
    RF_TYPE_MXFP6_E2M3 = 200,
    RF_TYPE_MXFP6_E3M2 = 201,
};

#define RF_MAX_DIMS 4
#define RF_MAX_SRC 6
#define RF_MAX_PARAMS 8

/* A tensor as a backend sees it. ne[0] is the fastest-varying dimension (row length);
 * nb[i] is the byte stride of dimension i (nb[0] = type size for unquantized types, for
 * block types a row is contiguous and nb[1] = row bytes). `data` is an address in the
 * owning backend's address space (a device pointer for GPU backends). */
typedef struct rf_tensor {
    int32_t type;            /* enum rf_type */
    int32_t flags;           /* RF_TENSOR_* */
    int64_t ne[RF_MAX_DIMS]; /* unused dims are 1 */
    int64_t nb[RF_MAX_DIMS];
    void *data;
    void *buffer; /* opaque backend buffer handle that owns `data` */
    const char *name;
} rf_tensor;

#define RF_TENSOR_WEIGHT 1 /* constant for the model's lifetime: backends may cache repacked forms */

/* The op set of a llama-family forward pass. Semantics (shapes use ne order [ne0, ne1, ...]):
 *
 * GET_ROWS   dst[K,M] f32 = src0[K,V] (any type) rows selected by src1[M] (i32).
 * MATMUL     dst[N,M] f32 = src0[K,N] (weight, any type)^T * src1[K,M] (f32).
 *            dst[n,m] = sum_k src0[k,n] * src1[k,m]. Higher dims broadcast src0 over src1.
 * ADD, MUL   dst = src0 (op) src1, f32; src1 broadcasts when its ne[i] == 1 (or divides).
 * SCALE      dst = src0 * fparams[0].
 * RMS_NORM   dst[K,M] = src0 / sqrt(mean(src0^2 over K) + fparams[0]).
 * ROPE       dst[D,H,T] = rotate(src0[D,H,T], positions src1[T] i32); src2 optional f32[D/2]
 *            frequency factors (Llama 3). iparams[0] = mode (RF_ROPE_NORMAL | RF_ROPE_NEOX),
 *            iparams[1] = n_rot (dims rotated, <= D); fparams[0] = freq_base,
 *            fparams[1] = freq_scale (position multiplier).
 *            theta_i = pos * freq_scale * base^(-2i/n_rot) / factor_i.
 *            NORMAL rotates pairs (x[2i], x[2i+1]); NEOX rotates (x[i], x[i + n_rot/2]).
 *            src3 optional f32[2, n_rot/2, T] (dense): each token's (cos theta_i, sin theta_i),
 *            theta_i evaluated in double and each rounded to float once (rope_angles.h); a
 *            backend may read them instead of evaluating theta (the same values either way).
 *            iparams[2] = 1 (ABI 2.14): YaRN, as ggml_rope_ext: iparams[3] = n_ctx_orig,
 *            fparams[2] = ext_factor, fparams[3] = attn_factor, fparams[4] = beta_fast,
 *            fparams[5] = beta_slow. With corr dims c0 = max(0, floor(cd(beta_fast))),
 *            c1 = min(n_rot - 1, ceil(cd(beta_slow))), cd(b) = n_rot ln(n_ctx_orig / (2 pi b)) /
 *            (2 ln base) (in f32), ramp_i = 1 - clamp((i - c0) / max(0.001, c1 - c0), 0, 1):
 *            theta_i = te_i freq_scale (1 - r) + te_i r with r = ramp_i ext_factor and
 *            te_i = pos base^(-2i/n_rot) / factor_i; cos and sin are multiplied by
 *            mscale = attn_factor (1 + 0.1 ln(1 / freq_scale)) when ext_factor != 0, else by
 *            attn_factor. src3's rows then hold these products. 0: plain RoPE as above.
 * SOFTMAX    dst[K,M] = softmax(src0 * fparams[0]) over K.
 * SILU       dst = src0 * sigmoid(src0).
 * SWIGLU     dst = silu(src0) * src1.
 * SET_ROWS   KV append: dst (the cache pool, [R, S] rows of R elements, type f16/q8_0/f32) row
 *            src1[t] (i32 slot) = src0[R, T] row t (f32), converted to dst's type. dst is
 *            modified in place; the node's result is dst.
 * ATTENTION  dst[D*Hq, T] f32 = causal scaled-dot-product attention with GQA over a paged cache:
 *            src0 = Q [D, Hq, T] f32;  src1 = K pool [D*Hkv, S];  src2 = V pool [D*Hkv, S]
 *            (pool types f16, q8_0 or f32);
 *            src3 = slot table i32 [n_kv_max, n_seq]: slot of position p of batch-sequence s;
 *            src4 = token info i32 [2, T]: (sequence index in batch, position) of each token.
 *            Token t attends positions 0..pos(t) of its sequence (slots src3[0..pos, seq]);
 *            with iparams[0] = W > 0 (sliding window) only positions pos(t)-W+1..pos(t).
 *            fparams[0] = scale (usually 1/sqrt(D)). Head h uses kv head h / (Hq/Hkv).
 *            fparams[1] = c > 0: scores soft-capped, s = c * tanh(scale * q.k / c) (Gemma 2).
 *            iparams[1] = n > 0: a hint, never a change of the result: each of tokens 0..n-1
 *            is the only token of its sequence in this node (decode rows ahead of a prompt
 *            chunk); a backend may run those rows and the rest as two parts. 0: no hint.
 *            iparams[2] = 1: bidirectional (encoders): token t attends positions 0..P of its
 *            sequence, P the largest position of that sequence's tokens in this node (not
 *            pos(t)); no window. 0: causal.
 *            src5 optional f32 [Hq] (ABI 2.14): attention sinks (gpt-oss): head h's softmax
 *            denominator gains exp(sink[h] - m), m the max over the scores and sink[h]; the
 *            sink has no value row, so it only scales the output down.
 *            V head size (ABI 2.15): dst [Dv*Hq, T] with Dv = dst->ne[0] / Hq, which may differ
 *            from D; V head g is elements g*Dv..(g+1)*Dv-1 of a V pool row, which holds at least
 *            Dv*Hkv elements (multi-head latent attention passes the K pool itself: its rows
 *            begin with the latent, the values of the one KV head). Dv = D otherwise.
 * ARGMAX     dst[M] i32 = index of the max of each row of src0[K,M] (first on ties).
 * COPY       dst = src0 converted to dst's type (same element count).
 * GEGLU      dst = gelu(src0) * src1, f32, same shapes; gelu is the tanh approximation
 *            0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Gemma's FFN gate).
 * SOFTCAP    dst = fparams[0] * tanh(src0 / fparams[0]), f32 (Gemma 2's final logits).
 * LAYER_NORM dst[K,M] = (src0 - mean) / sqrt(var + fparams[0]) over K, f32 (BERT; the weight and
 *            bias follow as MUL and ADD). mean and var = mean((src0 - mean)^2) summed in double,
 *            the scale 1/sqrt rounded to f32 once (ggml_norm on the CPU).
 * GELU       dst = gelu(src0), f32, the tanh approximation of GEGLU (BERT's FFN).
 * SIGMOID    dst = 1 / (1 + exp(-src0)), f32, each step rounded to f32 (ggml_sigmoid's
 *            arithmetic; the gate of Qwen2-MoE's shared expert).
 * SWIGLU_OAI dst = x sigmoid(alpha x) (y + 1) with x = min(src0, limit), y = clamp(src1, -limit,
 *            limit), f32, same shapes (ABI 2.14; ggml's swiglu_oai, gpt-oss's experts):
 *            fparams[0] = alpha, fparams[1] = limit; x / (1 + exp(-alpha x)) in f32.
 * ADD_ID     dst[N, S, M] f32 = src0[N, S, M] + src1[:, src2[s, m]] (ABI 2.14; ggml_add_id): a
 *            bias row of src1 f32 [N, E] per chosen expert, src2 i32 [S, M] (TOPK's ids); an id
 *            outside 0..E-1 adds nothing.
 * CONCAT     dst[Da+Db, n1, n2, n3] f32 = src0 [Da, n1, n2, n3] f32 followed by src1 [Db, n1, n2,
 *            n3] f32 along dim 0 (ABI 2.15; ggml_concat(a, b, 0)).
 * GATHER     dst[k, M] f32 = src0[src1[j, m], m]: entries of each row of src0[E, M] f32 picked by
 *            src1[k, M] i32 (e.g. TOPK's indices: the sampler's candidate logits); an index
 *            outside 0..E-1 gives 0.
 *
 * Mixture of experts (docs/MODELS.md): router logits -> TOPK -> MOE_WEIGHTS; the expert FFN as
 * MATMUL_ID (gate, up) -> SWIGLU -> MATMUL_ID (down) -> MOE_SUM.
 * TOPK       dst[k, M] i32 = the indices of the k largest values of each row of src0[E, M] f32,
 *            largest first; equal values (-0 equals +0): the lower index first. k = dst->ne[0],
 *            1 <= k <= E. (Also a sampler's candidates over a vocabulary, with GATHER. Rows
 *            holding NaN: the order is the backend's.) The ties are llama.cpp's for E <= 16: its
 *            router takes the first k of ggml's CPU argsort (std::sort by v[a] > v[b], no
 *            tie-break), which libstdc++ runs as a stable insertion sort up to 16 elements;
 *            beyond, its order among equal values is whatever introsort leaves (docs/MODELS.md).
 * MOE_WEIGHTS dst[k, M] f32 = the gating weights of the experts src1[k, M] (i32, 0 <= id < E,
 *            as TOPK writes them) from the router logits src0[E, M] f32:
 *            iparams[0] = 1: softmax over the k chosen logits, w_j = exp(l[id_j]) / sum_i exp(l[id_i])
 *                            (Mixtral; Qwen3-MoE with norm_topk_prob: normalised top-k);
 *            iparams[0] = 0: the chosen entries of the softmax over all E logits (not renormalised).
 *            iparams[0] = 2 (ABI 2.14): softmax of the k chosen logits computed from them alone
 *                            (gpt-oss; llama.cpp's SOFTMAX_WEIGHT gating): exp(l[id_j] - max_j) in
 *                            f32, their sum in double, times the f32 reciprocal.
 *            Rounded as llama.cpp's build_moe_ffn on ggml's CPU: p = softmax over all E (f32
 *            exp(l - max), their sum in double, times the f32 reciprocal), w_j = p[id_j]; mode 1
 *            then divides by max(f32 of the double sum of the k p[id_j], 6.103515625e-5).
 *            iparams[0] = 3 (ABI 2.15): the chosen entries of src0 taken as probabilities
 *                            (e.g. SIGMOID's output: DeepSeek-V3) divided by their sum (summed in
 *                            double, then f32, clamped below at 6.103515625e-5).
 * MOE_GROUP_MASK dst[E, M] f32 = src0[E, M] f32 with the experts outside the chosen groups set to
 *            -inf (ABI 2.15; DeepSeek-V3's grouped top-k as llama.cpp's build_moe_ffn): the E
 *            experts of a row form G = iparams[0] groups of E/G consecutive experts, a group's
 *            score is the f32 sum of its two largest values (its one value when E/G = 1), and
 *            the iparams[1] groups of the highest scores are kept (ties: the lower group).
 * MATMUL_ID  dst[N, S, M] f32: dst[:, s, m] = src0[:, :, e]^T * src1[:, s', m] with e = src2[s, m],
 *            s' = s when src1 is [K, S, M], s' = 0 when it is [K, 1, M] (one activation row per
 *            token shared by its S experts). src0 [K, N, E] weight of any MATMUL type (expert e is
 *            slice e), src1 f32, src2 i32 [S, M] expert ids. Activations quantized as MATMUL
 *            quantizes them for the weight type, and rounded to f16 for F16 experts (ggml's
 *            vec_dot_type): = MATMUL on the expert's slice and that row (f16-rounded for F16; the
 *            CPU backend bit for bit). Only the chosen experts' weights are
 *            read. An id outside 0..E-1 fails the compute() naming it (the CPU backend) or is
 *            skipped with its outputs set to 0 (GPU backends, which cannot report per node).
 * MOE_SUM    dst[N, M] f32 = sum_s src1[s, m] * src0[n, s, m]: src0 f32 [N, S, M] (MATMUL_ID's
 *            output), src1 f32 [S, M] (MOE_WEIGHTS' output); the sum runs over s = 0..S-1 in order,
 *            each product rounded to f32 before it is added (ggml's mul, then add; no fused
 *            multiply-add).
 *
 * Recurrent layers (Qwen3.5's Gated DeltaNet; docs/MODELS.md). Their state lives in pools of one
 * f32 row per sequence (the state cache beside the KV cache), updated in place like SET_ROWS'
 * pool; src4 / src5 below are the KV cache's token info i32 [2, T] (batch sequence index,
 * position) and the pool row of each batch sequence i32 [n_seq]. Tokens of one sequence are
 * taken in batch order; a token at position 0 starts its sequence from a zero state (so a
 * cleared sequence needs no reset of its rows).
 * SSM_CONV   dst[C, T] f32 = causal depthwise convolution of src0[C, T] f32 over each sequence's
 *            time: dst[c, t] = sum_{i<K} src1[i, c] * x[c, t - K + 1 + i] (summed in f32 in that
 *            order, ggml_ssm_conv), src1 f32 [K, C] the kernel; x before the first token of the
 *            node are the sequence's last K - 1 inputs from src2 f32 [(K-1) * C, rows] (element
 *            i + c (K - 1), oldest first), which the node then sets to its last K - 1 inputs.
 *            src3 = token info, src4 = pool rows (as above, shifted down one source).
 * GATED_DELTA_NET dst[Sv * Hv, T] f32: the gated delta rule per value head h (llama.cpp's
 *            delta-net recurrence). src0 f32 [2 Hk Sk + Hv Sv, T] holds each token's q (Hk heads
 *            of Sk), k (Hk heads of Sk) and v (Hv heads of Sv); head h reads q/k head h % Hk
 *            (ggml's broadcast; iparams[4] = 1: key head h / (Hv / Hk), qwen3next's repeat
 *            interleave). q and k are L2-normalised, x / max(sqrt(sum x^2), fparams[0])
 *            (sum in double: ggml_l2_norm), q then times fparams[1] (1/sqrt(Sk)). src1 f32 [Hv, T]
 *            the log decay g, src2 f32 [Hv, T] beta (sigmoid applied), src3 f32 [Sk Sv Hv, rows]
 *            the state pool (S[a, b] of head h at h Sk Sv + b Sk + a), src4 token info, src5 pool
 *            rows. Per token: S = exp(g) S; d = beta (v - S^T k); S += k d^T; out = S^T q.
 *            iparams[0] = Hk, iparams[1] = Sk, iparams[2] = Hv, iparams[3] = Sv.
 * SOFTPLUS   dst = src0 > 20 ? src0 : log1p(exp(src0)), f32 (the decay's rate).
 */
enum rf_op {
    RF_OP_NONE = 0,
    RF_OP_GET_ROWS,
    RF_OP_MATMUL,
    RF_OP_ADD,
    RF_OP_MUL,
    RF_OP_SCALE,
    RF_OP_RMS_NORM,
    RF_OP_ROPE,
    RF_OP_SOFTMAX,
    RF_OP_SILU,
    RF_OP_SWIGLU,
    RF_OP_SET_ROWS,
    RF_OP_ATTENTION,
    RF_OP_ARGMAX,
    RF_OP_COPY,
    RF_OP_GEGLU,
    RF_OP_SOFTCAP,
    RF_OP_TOPK,
    RF_OP_MOE_WEIGHTS,
    RF_OP_MATMUL_ID,
    RF_OP_MOE_SUM,
    RF_OP_GATHER,
    RF_OP_LAYER_NORM, /* ABI 2.12 */
    RF_OP_GELU,       /* ABI 2.12 */
    RF_OP_SIGMOID,    /* ABI 2.13 */
    RF_OP_SWIGLU_OAI, /* ABI 2.14 */
    RF_OP_ADD_ID,     /* ABI 2.14 */
    RF_OP_CONCAT,     /* ABI 2.15 */
    RF_OP_MOE_GROUP_MASK, /* ABI 2.15 */
    RF_OP_SSM_CONV,   /* ABI 2.16 */
    RF_OP_GATED_DELTA_NET, /* ABI 2.16 */
    RF_OP_SOFTPLUS,   /* ABI 2.16 */
    RF_OP_COUNT
};

enum rf_rope_mode { RF_ROPE_NORMAL = 0, RF_ROPE_NEOX = 2 };

/* The op's name as configs and reports spell it ("matmul", "attention", ...); "unknown" if none. */
static inline const char *rf_op_name(int op) {
    static const char *const names[RF_OP_COUNT] = {
        "none", "get_rows", "matmul", "add", "mul", "scale", "rms_norm", "rope", "softmax", "silu",
        "swiglu", "set_rows", "attention", "argmax", "copy", "geglu", "softcap",
        "topk", "moe_weights", "matmul_id", "moe_sum", "gather", "layer_norm", "gelu", "sigmoid",
        "swiglu_oai", "add_id", "concat", "moe_group_mask", "ssm_conv", "gated_delta_net", "softplus"};
    return op >= 0 && op < RF_OP_COUNT ? names[op] : "unknown";
}

typedef struct rf_node {
    int32_t op; /* enum rf_op */
    rf_tensor *dst;
    rf_tensor *src[RF_MAX_SRC]; /* unused = NULL */
    int32_t iparams[RF_MAX_PARAMS];
    float fparams[RF_MAX_PARAMS];
    const char *label; /* e.g. "blk.3.attn_q": for profilers and logs; may be NULL */
} rf_node;

/* The ABI minor version a backend must be built against to run `n` as this header defines it:
 * the host hands a node only to backends of at least this minor version (an older one would
 * ignore a source or parameter it does not know of). */
static inline int rf_node_abi_minor(const rf_node *n) {
    switch (n->op) {
    case RF_OP_SSM_CONV: case RF_OP_GATED_DELTA_NET: case RF_OP_SOFTPLUS: return 16;
    case RF_OP_CONCAT: case RF_OP_MOE_GROUP_MASK: return 15;
    case RF_OP_SWIGLU_OAI: case RF_OP_ADD_ID: return 14;
    case RF_OP_ATTENTION:
        if (n->dst && n->src[0] && n->dst->ne[0] != n->src[0]->ne[0] * n->src[0]->ne[1]) return 15;
        return n->src[5] ? 14 : 0;
    case RF_OP_ROPE: return n->iparams[2] ? 14 : 0;
    case RF_OP_MOE_WEIGHTS: return n->iparams[0] == 3 ? 15 : n->iparams[0] == 2 ? 14 : 0;
    default: return 0; /* older ops and parameters: a backend declines what it does not know */
    }
}

typedef struct rf_graph {
    int32_t n_nodes;
    rf_node *const *nodes;
} rf_graph;

enum rf_device_kind { RF_DEVICE_CPU = 1, RF_DEVICE_GPU = 2 };

typedef struct rf_device_info {
    char name[128];
    char arch[64];          /* "x86_64-avx2", "sm_90", "gfx1100" */
    char details[512];      /* free text: pack loaded/JIT and why, features, driver */
    uint64_t total_memory;
    uint64_t free_memory;
    int32_t kind;           /* enum rf_device_kind */
    int32_t host_memory;    /* 1: tensor data pointers are host-addressable */
} rf_device_info;

typedef struct rf_buffer_desc {
    void *handle; /* opaque, passed back to buffer_free */
    void *base;   /* address of the first byte in the backend's address space */
    uint64_t size;
} rf_buffer_desc;

/* Backend flags (rf_backend_vtable.flags, ABI 1.2). */
enum rf_backend_flags {
    /* The backend needs hardware or a driver that a machine may lack (a GPU). When its init
     * fails with RF_ERR_NO_DEVICE, the host says why and goes on with the next backend of the
     * config, unless the user required it (--backend). Without this flag (or for any other
     * failure, such as a bad option) a backend the config names must start. */
    RF_BACKEND_OPTIONAL = 1,
};

/* One unit of work a backend ran: a kernel for one node, or a fused group computing several
 * nodes at once (then the unit is the smallest thing with a time of its own). */
typedef struct rf_exec_unit {
    const char *name;     /* what ran, never NULL: the op ("matmul") or the group ("rms_norm+mul") */
    const int32_t *nodes; /* the graph nodes it computed: indices into that compute()'s graph */
    int32_t n_nodes;      /* >= 1 */
    /* When it started and ended, in nanoseconds of std::chrono::steady_clock (CLOCK_MONOTONIC on
     * Linux): device timestamps placed on the host's clock by GPU backends. start <= end; a unit
     * starts when the previous one ends when the backend cannot tell them apart. */
    uint64_t start_ns;
    uint64_t end_ns;
} rf_exec_unit;

/* The callback side of rf_backend_vtable::set_observer (ABI 2.1). ran() is called on the thread
 * that called into the backend, once per successful compute() with its units in the order they
 * ran, calls in order. A synchronous backend calls it before compute() returns; an asynchronous
 * one may report a call late, so that reading its timings overlaps the device running later work
 * (the HIP backend reports a call during a later compute(), after that call's launch, once the
 * first call is complete), and reports everything still pending at the latest when
 * set_observer() returns (setting the same observer again is how a host collects everything
 * pending; the numbering then starts again) or during shutdown() (the observer must outlive the
 * backend, or be removed first). `call` counts compute() calls with a non-NULL graph from
 * 0 since the observer was set, failed ones included (they report nothing). `units` lives only during the
 * call. */
/* What ran a unit and why (ABI 2.11, rf_exec_observer.chose). */
typedef struct rf_unit_choice {
    const char *kernels; /* the kernels it launched, in order, space-separated; "" when none */
    const char *rule;    /* the condition of the backend's kernel table that picked them, or the
                            fusion that claimed the unit ("pack fusion 'norm_q8'"); never NULL */
} rf_unit_choice;

typedef struct rf_exec_observer {
    uint32_t struct_size;
    void *user;
    void (*ran)(void *user, uint64_t call, const rf_exec_unit *units, int32_t n_units);
    /* ABI 2.11, optional (NULL, or a struct_size that does not reach it: not called). Called just
     * before ran() for the same call, with one entry per unit in the same order; `choices` lives
     * only during the call. A backend without a kernel table of its own need not call it. */
    void (*chose)(void *user, uint64_t call, const rf_unit_choice *choices, int32_t n_units);
} rf_exec_observer;

/* One backend option (ABI 2.10, rf_backend_vtable.option_descs). The host checks a value in the
 * config's backend_options (or --backend-option) against it before init: the JSON type, and for
 * RF_OPTION_INT the range min..max, for RF_OPTION_ENUM one of `choices`. */
enum rf_option_type {
    RF_OPTION_BOOL = 0,        /* JSON true / false */
    RF_OPTION_INT = 1,         /* JSON integer in min..max */
    RF_OPTION_STRING = 2,      /* JSON string */
    RF_OPTION_ENUM = 3,        /* JSON string, one of choices */
    RF_OPTION_STRING_LIST = 4, /* JSON array of strings */
};
typedef struct rf_option_desc {
    const char *key;
    int32_t type;              /* enum rf_option_type */
    const char *default_value; /* as the user would write it ("true", "16", "auto"); "" when none */
    long long min, max;        /* RF_OPTION_INT: the accepted range, inclusive */
    const char *choices;       /* RF_OPTION_ENUM: "a|b|c"; else NULL */
    const char *help;          /* one line: what the option changes */
} rf_option_desc;

/* Backend vtable. Optional slots may be NULL; the host then uses the documented default. */
typedef struct rf_backend_vtable {
    uint32_t struct_size;

    /* config_json: the backend's object from the config file (may be "{}"); n_threads etc. */
    int (*init)(const char *config_json, void **ctx, char *err, size_t err_len);
    void (*shutdown)(void *ctx);
    int (*device_info)(void *ctx, rf_device_info *out);

    int (*buffer_alloc)(void *ctx, uint64_t size, rf_buffer_desc *out, char *err, size_t err_len);
    void (*buffer_free)(void *ctx, void *handle);
    /* Copies between host memory and a backend address (tensor->data + offset). Ordered after
     * all work submitted earlier by compute(). download: complete when it returns. upload: the
     * source may be reused when it returns; the bytes are in place for everything submitted to
     * this backend afterwards (compute, download, synchronize), which is when a backend that
     * queues small uploads (the HIP one) writes them. */
    int (*upload)(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t err_len);
    int (*download)(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t err_len);

    /* 1 if the backend can run this node with these types and shapes. */
    int (*supports_op)(void *ctx, const rf_node *node);
    /* Runs the nodes in order. May return before the device finishes (see synchronize). */
    int (*compute)(void *ctx, const rf_graph *graph, char *err, size_t err_len);
    int (*synchronize)(void *ctx, char *err, size_t err_len);

    /* Timing events on the backend's stream; optional (NULL: host steady clock is used). */
    int (*event_create)(void *ctx, void **event);
    int (*event_record)(void *ctx, void *event);
    int (*event_elapsed_ms)(void *ctx, void *start, void *end, float *ms); /* waits for end */
    void (*event_destroy)(void *ctx, void *event);

    /* Optional: wrap existing host memory (e.g. an mmap'd GGUF) without a copy. NULL or
     * RF_ERR_UNSUPPORTED: the host allocates and uploads instead. */
    int (*buffer_from_host)(void *ctx, void *host_ptr, uint64_t size, rf_buffer_desc *out,
                            char *err, size_t err_len);

    /* ---- ABI 1.1 (retired in 2.1) ---- */
    /* Were compute_timed and compute_events (per-node marks for a profiler); set_observer replaced
     * them. The places stay so later slots keep their offsets; the host never reads them and
     * plugins leave them NULL. */
    void *retired_compute_timed;
    void *retired_compute_events;

    /* ---- ABI 1.2 ---- */
    /* Optional: the keys init() accepts in this backend's object of the config's
     * "backend_options", a NULL-terminated list valid while the plugin is loaded. No ctx: the host
     * checks a config before init (also for a backend that cannot start on this machine) and
     * refuses a key that is not listed, naming the listed ones. The host itself adds "n_threads"
     * and "kernel_pack_dirs" to every backend's object; init ignores those it does not list.
     * NULL: the host passes the keys on unchecked. */
    const char *const *(*option_keys)(void);
    /* Optional: RF_BACKEND_* flags; NULL means none. No ctx: read before init. */
    uint32_t (*flags)(void);

    /* ---- ABI 1.3 ---- */
    /* Optional: the devices this plugin can run on, without init (no ctx): up to `max` entries
     * written to `out` (name, arch, total memory, kind; free memory and details may be 0/empty),
     * their number in *count (which may exceed max; 0 with RF_OK: none on this machine). init's
     * config picks one by index ("device": N; --device N on the command line; "hip:N" in the
     * config's backends). init may be called several times with different devices: each ctx is an
     * instance of its own, on its own device, and instances live side by side in one process
     * (each slot call with a ctx acts on that ctx's device, whichever device another ctx made
     * current). An index out of range fails init with RF_ERR_INVALID and a message naming the
     * count (the host checks it first when list_devices is there). NULL: one device, the one
     * device_info describes after init. */
    int (*list_devices)(rf_device_info *out, int32_t max, int32_t *count, char *err, size_t err_len);

    /* ---- ABI 2.1 ---- */
    /* Optional: report what compute() ran to `observer` (rf_exec_observer, above), or stop with
     * NULL (what is pending is reported first). Observing must not change execution: the same
     * kernels, fusions and graph replay, the same results; only timing marks are added. The
     * observer struct is copied; observer->user must outlive the observation. NULL slot or
     * RF_ERR_UNSUPPORTED: the profiler times the backend from outside (one compute() per node). */
    int (*set_observer)(void *ctx, const rf_exec_observer *observer, char *err, size_t err_len);

    /* ---- ABI 2.2 ---- */
    /* Optional: device `index`'s (list_devices' numbering) memory now, without init (no ctx):
     * bytes free for new allocations, all processes and instances counted, and the total. It may
     * cost what a first use of the device costs (the HIP plugin makes the device's context
     * current), so the host calls it only to report (`rocmforge info`), never on a run's path.
     * An index out of range: RF_ERR_INVALID. NULL: the host shows free memory only for devices
     * with an instance started (device_info). */
    int (*device_memory)(int32_t index, uint64_t *free_bytes, uint64_t *total_bytes, char *err, size_t err_len);

    /* ---- ABI 2.3 ---- */
    /* Optional: page-lock `size` bytes of host memory at `ptr` (the host pins the buffer it reads
     * logits into), so that download() into it and upload() from it run at the bus's speed
     * instead of through the runtime's staging of pageable memory; host_unpin(ptr) undoes it, and
     * the host calls it before it frees or moves that memory. Only a speed hint: copies to and
     * from memory not pinned work the same, and the host goes on without when the slot is NULL
     * or returns an error. */
    int (*host_pin)(void *ctx, void *ptr, uint64_t size, char *err, size_t err_len);
    void (*host_unpin)(void *ctx, void *ptr);

    /* ---- ABI 2.9 ---- */
    /* Optional: compute() of a graph that is exactly the one of the last compute() or
     * compute_same() call given the same node array (graph->nodes, same n_nodes): the host
     * promises that nothing in those nodes and the tensors they point to changed since (only bytes
     * in tensor memory did, e.g. uploaded inputs). A backend may then skip checking the graph
     * against what it prepared for it; one that has nothing saved for that array runs the graph
     * as compute() would. NULL: the host calls compute(). */
    int (*compute_same)(void *ctx, const rf_graph *graph, char *err, size_t err_len);

    /* ---- ABI 2.10 ---- */
    /* Optional: every key of option_keys described (rf_option_desc), *count entries, valid while
     * the plugin is loaded. No ctx, like option_keys. The host refuses a value of the wrong type
     * or out of range, naming the option's type and range; NULL: values are passed on unchecked. */
    const rf_option_desc *(*option_descs)(int32_t *count);
} rf_backend_vtable;

/* Kernel packs (RF_PLUGIN_KERNEL_PACK): their vtable, rf_kernel_pack_vtable, and the fusion
 * interface are in rocmforge/pack_abi.h, which includes this header. */
struct rf_kernel_pack_vtable;

/* Profiler: a decorator. wrap() receives a backend and returns a vtable+ctx that forwards to it,
 * timing each node. The core never knows which ops are being timed. */
typedef struct rf_profiler_vtable {
    uint32_t struct_size;
    int (*init)(const char *config_json, void **ctx, char *err, size_t err_len);
    void (*shutdown)(void *ctx);
    int (*wrap)(void *prof_ctx, const char *backend_name, const rf_backend_vtable *inner,
                void *inner_ctx, const rf_backend_vtable **out_vtable, void **out_ctx);
    /* Marks a phase ("load", "prefill", "decode", ...): attributes following work to it. */
    void (*phase)(void *prof_ctx, const char *name);
    /* Writes the report (table to the stream named in config, trace file). */
    int (*report)(void *prof_ctx, char *err, size_t err_len);
} rf_profiler_vtable;

typedef struct rf_plugin_info {
    uint32_t abi_major;
    uint32_t abi_minor;
    int32_t kind;          /* enum rf_plugin_kind */
    const char *name;      /* "cpu", "hip", "profiler", ... */
    const char *version;
    const void *vtable;    /* rf_backend_vtable*, rf_kernel_pack_vtable* (pack_abi.h) or rf_profiler_vtable* */
} rf_plugin_info;

typedef const rf_plugin_info *(*rf_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
