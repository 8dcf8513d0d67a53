// Decode attention's launch (kernels/attention_decode.hip, attention_stream.hip): which kernel,
// chunking and block size a decode ATTENTION node takes. ops.cpp's dispatch hands it here.
#include "attention_decode.h"

#include <algorithm>
#include <cstdlib>

#include "ops.h"

namespace rf_hip {

// A sliding window (Gemma, gpt-oss) or a score soft cap (Gemma): not every kernel has them.
bool attention_limited(const rf_node &n) { return n.iparams[0] != 0 || n.fparams[1] != 0.f; }

namespace {

// 16384 (token, KV head) counters before the partials (attention_decode.hip's RF_ATD_COUNTER_BYTES).
constexpr uint64_t kAttCounterBytes = 64 << 10;

} // namespace

int attention_decode(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *q = n.src[0], *k = n.src[1], *v = n.src[2], *tab = n.src[3];
    const int64_t D = q->ne[0], Hq = q->ne[1], T = q->ne[2], Hkv = k->ne[0] / D, G = Hq / Hkv;
    // A block per (KV head, chunk, token): right for a few tokens, or for many sequences that
    // decode one or two tokens each (tab->ne[1] = sequences in the batch); long runs of one
    // sequence's tokens take the prefill tiles, which share each K/V row among queries.
    if ((T > 8 && T > 2 * tab->ne[1]) || G > 8 || D % 2 || D > 256 || (k->type != RF_TYPE_F16 && k->type != RF_TYPE_Q8_0)) return -1;
    for (const rf_tensor *p : {k, v})
        if ((size_t)p->data % 4 || p->nb[1] % 4) return -1;
    // Positions a token may see: the context, or at most the sliding window (the kernels start a
    // token's chunks at its window's first position).
    const int64_t n_kv = std::max<int64_t>(n.iparams[0] > 0 ? std::min<int64_t>(tab->ne[0], n.iparams[0]) : tab->ne[0], 1);
    const bool fixed_d = D == 64 || D == 128;
#if defined(RF_HIP_NVIDIA)
    // Head sizes whose streaming kernels also take Gemma's soft cap (attention_stream.hip AstCap);
    // the streaming kernels cover them and 64 / 128.
    const bool limits_d = D == 96 || D == 256;
    const bool stream = (fixed_d || limits_d) && b.attention_stream;
    int64_t C = fixed_d ? 64 : 128;
#else
    const bool limits_d = false;
    const bool stream = false; // the AMD packs have no rf_attention_stream_* (attention_stream.hip)
    int64_t C = fixed_d ? (D == 128 ? 32 : 64) : 128; // attention_decode.hip's RF_ADV_MAXC
#endif
    // The window: only the streaming kernels have it; the soft cap: those of head sizes 96 and 256.
    // Every kernel here takes the sinks (aux[3]).
    if (n.iparams[0] != 0 && !stream) return -1;
    if (n.fparams[1] != 0.f && !(stream && limits_d)) return -1;
    // Query heads a block computes (the kernels' GP: G rounded up to a power of two).
    int64_t GP = G <= 1 ? 1 : G <= 2 ? 2 : G <= 4 ? 4 : 8;
    // A short context in one chunk on the wide streaming kernels (16 warps, 8 for groups of 8
    // heads: each warp's positions in one or two steps of loads, no partials to merge): up to
    // att_wide_max positions. Head size 256 has no 16-warp form (its partial outputs would not
    // fit the static shared memory): the 8-warp one for groups of up to 4 heads, or the 4-warp one.
    const bool short_ctx = stream && n_kv <= b.att_wide_max;
    // A one-chunk block's time grows with its heads, not its positions (each warp step is unrolled
    // over GP heads): where the launch leaves most multiprocessors idle (Gemma 3 1B's one KV head,
    // Qwen3-MoE's four) the heads split over blocks (grid y), halving GP while the launch stays
    // within half the multiprocessors. The split reads each KV row once per block, from L2.
    if (short_ctx)
        while (GP > 1 && Hkv * T * ((G + GP - 1) / GP) * 2 <= b.multiprocessors) GP /= 2;
    const int64_t head_groups = (G + GP - 1) / GP, blocks = Hkv * T * head_groups;
    const bool wide = short_ctx && (D != 256 || GP <= 4);
    // More than two blocks a multiprocessor: the one-chunk form over 4 warps (_w4; one 16-warp
    // block fills a multiprocessor's registers).
    const bool wide4 = wide && b.att_wide4_blocks > 0 && blocks >= b.att_wide4_blocks;
    // Up to two blocks a multiprocessor: groups of up to 4 heads on 8 warps (_w8).
    const bool wide8 = wide && !wide4 && ((GP <= 4 && b.att_wide8_blocks > 0 && blocks >= b.att_wide8_blocks) || D == 256);
    if (wide) {
        C = (n_kv + 31) / 32 * 32;
    } else if (stream) {
        // About att_blocks_per_sm blocks per multiprocessor (enough loads in flight), chunks of 64..1024
        // positions (attention_stream.hip's RF_AST_MAXC), so long contexts merge few partials.
        const int64_t want = std::max<int64_t>(1, (b.att_blocks_per_sm * b.multiprocessors + Hkv * T - 1) / (Hkv * T));
        const int64_t chunks = std::clamp<int64_t>(want, (n_kv + 1023) / 1024, (n_kv + 63) / 64);
        C = ((n_kv + chunks - 1) / chunks + 31) / 32 * 32;
    } else if (!fixed_d) {
        while (C > 32 && Hkv * T * ((n_kv + C - 1) / C) < 2 * b.multiprocessors) C /= 2;
    }
    const int64_t nch = (n_kv + C - 1) / C;
    if (nch > 65535) return -1;
    // The arrival counters of the chunk merge keep one fixed place at the front of att_scratch,
    // which nothing else writes: zeroed when it is allocated, each merging block resets its own,
    // so they are zero between launches whatever the earlier launches' token counts. (Sized by
    // each launch, the counters of a wider launch lay on the partials or q8_1 columns a narrower
    // one had left there: a server's batch growing from 1 to 3 sequences merged garbage.)
    if (T * Hkv * 4 > (int64_t)kAttCounterBytes) return -1;
    const uint64_t counters = kAttCounterBytes;
    uint64_t bytes = counters + (nch > 1 ? (uint64_t)(T * Hq * nch * (D + 2) * 4) : 0);
    if (!ensure_scratch(b, b.att_scratch, std::max<uint64_t>(bytes, 8 << 20), true, err)) return RF_ERR_OUT_OF_MEMORY;
    rf_kargs a = make_args(n);
    a.scratch = b.att_scratch.ptr;
    a.aux[0] = C;
    a.aux[1] = nch;
    a.aux[2] = k->type == RF_TYPE_F16 && D % 8 == 0 && aligned(k, 16) && aligned(v, 16) ? 1 : 0;
    a.aux[3] = n.src[5] ? (int64_t)(uintptr_t)n.src[5]->data : 0; // the sinks (kernels/attention_sinks.h)
    std::string kernel = D == 64 ? "rf_attention_dec64" : D == 128 ? "rf_attention_dec128" : "rf_attention_decode";
    if (stream) { // _h: f16 rows held packed between load and use (16-byte loads); _w: the wide form
        kernel = "rf_attention_stream_d" + std::to_string(D) + "_g" + std::to_string(GP);
        if (a.aux[2] == 1) kernel += "_h"; // f16 K/V: the kernels that keep them packed
        if (wide) kernel += wide4 ? "_w4" : wide8 ? "_w8" : "_w";
    }
    // Grid y: the chunks, or in the one-chunk forms the head groups.
    return launch(b, kernel, (unsigned)Hkv, (unsigned)(wide ? head_groups : nch), (unsigned)T,
                  !wide || wide4 ? 128 : GP <= 4 && !wide8 ? 512 : 256, a, err);
}

} // namespace rf_hip
