// ATTENTION: causal scaled-dot-product attention with GQA over the paged KV pool.
// Flash-attention style: keys/values are visited in chunks of kChunk positions with an online
// softmax (running max m, running sum l, f32 accumulator), so nothing scales with n_kv except
// the loop. One work item = (token, kv head): the kv rows are converted to f32 once and shared
// by the Hq/Hkv query heads of the group (or of a slice of it, when the items are few). A sliding window (iparams[0]) moves the first visited
// position; a soft cap (fparams[1]) bends each score before the softmax; bidirectional
// attention (iparams[2], encoders) visits every position of the token's sequence in the node;
// sinks (src5, gpt-oss) join each head's denominator once the positions are summed. V heads
// may be narrower than K's (Dv, ABI 2.15: latent attention reads V from the start of K's rows).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "fp16.h"
#include "ops.h"

namespace rfcpu {
namespace {

constexpr int64_t kChunk = 32;

bool pool_type_ok(int t) { return t == RF_TYPE_F32 || t == RF_TYPE_F16 || t == RF_TYPE_Q8_0; }

bool check_attention(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *q = n.src[0], *k = n.src[1], *v = n.src[2], *slots = n.src[3], *info = n.src[4];
    if (!d || !q || !k || !v || !slots || !info) { *why = "dst and src0..src4 are required"; return false; }
    if (q->type != RF_TYPE_F32 || d->type != RF_TYPE_F32) { *why = "Q and dst must be f32"; return false; }
    if (!pool_type_ok(k->type) || !pool_type_ok(v->type)) { *why = "K/V pools must be f32, f16 or q8_0"; return false; }
    if (!rows_contiguous(*q) || !rows_contiguous(*d) || !rows_contiguous(*k) || !rows_contiguous(*v)) {
        *why = "rows must be contiguous";
        return false;
    }
    if (slots->type != RF_TYPE_I32 || info->type != RF_TYPE_I32 || !rows_contiguous(*slots) || !is_contiguous(*info)) {
        *why = "slot table and token info must be i32";
        return false;
    }
    const int64_t D = q->ne[0], Hq = q->ne[1], T = q->ne[2];
    if (q->ne[3] != 1 || k->ne[0] % D || k->ne[1] != v->ne[1]) {
        *why = "K pool must be [D*Hkv, S] with Q [D, Hq, T], the V pool of as many rows";
        return false;
    }
    const int64_t Hkv = k->ne[0] / D;
    if (Hkv < 1 || Hq % Hkv) { *why = "Hq must be a multiple of Hkv"; return false; }
    // The V head size (ABI 2.15): D unless dst says otherwise; V heads at the start of V's rows.
    const int64_t Dv = d->ne[0] / Hq;
    if (d->ne[0] % Hq || Dv < 1 || v->ne[0] < Dv * Hkv) { *why = "dst must be [Dv*Hq, T], V pool rows at least Dv*Hkv"; return false; }
    if (Dv == D && v->ne[0] != k->ne[0]) { *why = "K/V pools must be [D*Hkv, S] with Q [D, Hq, T]"; return false; }
    if ((k->type == RF_TYPE_Q8_0 && D % 32) || (v->type == RF_TYPE_Q8_0 && Dv % 32)) {
        *why = "q8_0 pools need head sizes % 32 == 0";
        return false;
    }
    if (d->ne[1] != T || d->ne[2] != 1 || d->ne[3] != 1) { *why = "dst must be [Dv*Hq, T]"; return false; }
    if (info->ne[0] != 2 || info->ne[1] != T) { *why = "token info must be i32 [2, T]"; return false; }
    if (n.iparams[0] < 0 || !(n.fparams[1] >= 0)) { *why = "window and soft cap must not be negative"; return false; }
    if (n.iparams[2] != 0 && (n.iparams[2] != 1 || n.iparams[0] != 0)) { *why = "bidirectional is 0 or 1, without a window"; return false; }
    if (const rf_tensor *sk = n.src[5]; sk && (sk->type != RF_TYPE_F32 || nelements(*sk) != Hq || !is_contiguous(*sk))) {
        *why = "sinks must be f32 [Hq]";
        return false;
    }
    return true;
}

// Query-head slices per (token, kv head) item: with few items (decode over one KV head, as latent
// attention's) the group's heads split into slices of their own, each reading the K/V rows again.
// A function of the shape alone, so the parts (not the results: each head's arithmetic is the
// same) depend on nothing else.
int64_t head_slices(int64_t T, int64_t Hkv, int64_t G) {
    constexpr int64_t kMinItems = 8;
    return T * Hkv >= kMinItems ? 1 : std::min(G, (kMinItems + T * Hkv - 1) / (T * Hkv));
}

NodeWork plan_attention(const KernelSet &, const rf_node &n, int nth) {
    const int64_t D = n.src[0]->ne[0], Hkv = n.src[1]->ne[0] / D, G = n.src[0]->ne[1] / Hkv, T = n.src[0]->ne[2];
    const int64_t Dv = n.dst->ne[0] / n.src[0]->ne[1], S = head_slices(T, Hkv, G);
    NodeWork w;
    // One item = (token, kv head, head slice); its cost grows with the token's position (up to n_kv_max).
    w.parts[0] = parts_for(T * Hkv * S, (G / S) * (D + Dv) * std::max<int64_t>(n.src[3]->ne[0], 64), nth);
    // kbuf [kChunk*D] + vbuf [kChunk*Dv], scores [G*kChunk], acc [G*Dv], m/l [G]
    w.per_thread_bytes = size_t(kChunk * (D + Dv) + G * kChunk + G * Dv + 2 * G) * sizeof(float);
    return w;
}

// Head g of a pool row (slot), as D floats.
void load_head(const KernelSet &ks, const rf_tensor &pool, int64_t slot, int64_t g, int64_t D, float *out) {
    const uint8_t *row = row_ptr(pool, slot);
    switch (pool.type) {
    case RF_TYPE_F32: std::memcpy(out, row + g * D * 4, size_t(D) * 4); break;
    case RF_TYPE_F16: ks.f16_to_f32(reinterpret_cast<const uint16_t *>(row) + g * D, out, D); break;
    default: {
        const auto *b = reinterpret_cast<const rf::block_q8_0 *>(row) + g * D / 32;
        for (int64_t i = 0; i < D / 32; ++i) {
            const float d = half_to_float(b[i].d);
            for (int j = 0; j < 32; ++j) out[i * 32 + j] = d * float(b[i].qs[j]);
        }
    }
    }
}

void run_attention(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int tid) {
    const rf_tensor &q = *n.src[0], &kp = *n.src[1], &vp = *n.src[2], &st = *n.src[3], &d = *n.dst;
    const auto *info = static_cast<const int32_t *>(n.src[4]->data);
    const int64_t D = q.ne[0], Hq = q.ne[1], T = q.ne[2], Hkv = kp.ne[0] / D, G = Hq / Hkv, Dv = d.ne[0] / Hq;
    const int64_t S = kp.ne[1], n_kv_max = st.ne[0], n_seq = st.ne[1] * st.ne[2] * st.ne[3];
    const float scale = n.fparams[0], cap = n.fparams[1];
    const int64_t window = n.iparams[0];
    const bool bidirectional = n.iparams[2] == 1;
    const float *sinks = n.src[5] ? static_cast<const float *>(n.src[5]->data) : nullptr;
    const KernelSet &ks = ctx.ks;
    // Bidirectional: each sequence's last position among this node's tokens (O(T) per part).
    std::vector<int32_t> last_pos;
    if (bidirectional) {
        last_pos.assign(size_t(n_seq), -1);
        for (int64_t t = 0; t < T; ++t) {
            const int32_t s = info[2 * t], p = info[2 * t + 1];
            if (s >= 0 && s < n_seq && p >= 0 && p < n_kv_max) last_pos[size_t(s)] = std::max(last_pos[size_t(s)], p);
        }
    }

    float *kbuf = reinterpret_cast<float *>(ctx.thread_scratch(tid));
    float *vbuf = kbuf + kChunk * D;
    float *scores = vbuf + kChunk * Dv;
    float *acc = scores + G * kChunk;
    float *mrun = acc + G * Dv;
    float *lrun = mrun + G;

    const int64_t n_slices = head_slices(T, Hkv, G);
    int64_t i0, i1;
    split_range(T * Hkv * n_slices, part, n_parts, &i0, &i1);
    for (int64_t item = i0; item < i1; ++item) {
        const int64_t t = item / (Hkv * n_slices), g = item / n_slices % Hkv, slice = item % n_slices;
        const int64_t j0 = G * slice / n_slices, j1 = G * (slice + 1) / n_slices; // this item's heads of the group
        const int32_t seq = info[2 * t], pos = info[2 * t + 1];
        float *out0 = row_f32(d, t) + g * G * Dv;
        if (seq < 0 || seq >= n_seq || pos < 0 || pos >= n_kv_max) {
            ctx.errors.fail("ATTENTION: token " + std::to_string(t) + " has sequence " + std::to_string(seq) +
                            " / position " + std::to_string(pos) + " outside the slot table [" +
                            std::to_string(n_kv_max) + ", " + std::to_string(n_seq) + "]");
            std::memset(out0 + j0 * Dv, 0, size_t((j1 - j0) * Dv) * 4);
            continue;
        }
        const int32_t *slots = reinterpret_cast<const int32_t *>(static_cast<const uint8_t *>(st.data) + seq * st.nb[1]);
        std::memset(acc, 0, size_t(G * Dv) * 4);
        for (int64_t j = j0; j < j1; ++j) { mrun[j] = -INFINITY; lrun[j] = 0.f; }

        bool bad = false;
        const int64_t first = window > 0 ? std::max<int64_t>(0, pos - window + 1) : 0;
        const int64_t end = bidirectional ? last_pos[size_t(seq)] : pos; // last position visited
        for (int64_t p0 = first; p0 <= end && !bad; p0 += kChunk) {
            const int64_t cnt = std::min<int64_t>(kChunk, end + 1 - p0);
            for (int64_t c = 0; c < cnt; ++c) {
                const int32_t slot = slots[p0 + c];
                if (slot < 0 || slot >= S) {
                    ctx.errors.fail("ATTENTION: slot " + std::to_string(slot) + " of position " +
                                    std::to_string(p0 + c) + " outside the pool [0, " + std::to_string(S) + ")");
                    bad = true;
                    break;
                }
                load_head(ks, kp, slot, g, D, kbuf + c * D);
                load_head(ks, vp, slot, g, Dv, vbuf + c * Dv);
            }
            if (bad) break;
            for (int64_t j = j0; j < j1; ++j) {
                const float *qv = row_f32(q, g * G + j, t);
                float *sc = scores + j * kChunk;
                float mx = -INFINITY;
                for (int64_t c = 0; c < cnt; ++c) {
                    sc[c] = scale * ks.dot_f32(qv, kbuf + c * D, D);
                    if (cap > 0.f) sc[c] = cap * std::tanh(sc[c] / cap);
                    mx = std::fmax(mx, sc[c]);
                }
                const float m_new = std::fmax(mrun[j], mx);
                float *a = acc + j * Dv;
                if (mrun[j] != m_new) {
                    const float corr = std::exp(mrun[j] - m_new); // 0 on the first chunk
                    lrun[j] *= corr;
                    for (int64_t i = 0; i < Dv; ++i) a[i] *= corr;
                    mrun[j] = m_new;
                }
                for (int64_t c = 0; c < cnt; ++c) {
                    const float p = std::exp(sc[c] - m_new);
                    lrun[j] += p;
                    ks.axpy_f32(a, vbuf + c * Dv, p, Dv);
                }
            }
        }
        for (int64_t j = j0; j < j1 && sinks && !bad; ++j) {
            // As ggml's flash attention: the sink's exp against the larger of it and the max.
            const float s = sinks[g * G + j];
            if (s > mrun[j]) {
                const float corr = std::exp(mrun[j] - s);
                for (int64_t i = 0; i < Dv; ++i) acc[j * Dv + i] *= corr;
                lrun[j] = lrun[j] * corr + 1.f;
            } else {
                lrun[j] += std::exp(s - mrun[j]);
            }
        }
        for (int64_t j = j0; j < j1; ++j) {
            const float inv = (bad || lrun[j] == 0.f) ? 0.f : 1.f / lrun[j];
            for (int64_t i = 0; i < Dv; ++i) out0[j * Dv + i] = acc[j * Dv + i] * inv;
        }
    }
}

} // namespace

const OpImpl kOpAttention = {check_attention, plan_attention, run_attention};

} // namespace rfcpu
