// The recurrent layers' state pools (recurrent_state.h) and where they live.
#include "rocmforge/recurrent_state.h"

#include <cstdio>

#include "rocmforge/error.h"
#include "rocmforge/model.h"

namespace rf {

namespace {

uint64_t conv_row(const ModelHparams &hp) { return (uint64_t)((hp.ssm_d_conv - 1) * hp.ssm_conv_channels()); }
uint64_t delta_row(const ModelHparams &hp) { return (uint64_t)(hp.ssm_d_state * hp.ssm_head_v_dim() * hp.ssm_dt_rank); }

// Whether b runs both recurrent ops at the model's sizes on its own pools (one-token probes).
bool runs_recurrent_ops(const Backend &b, const ModelHparams &hp) {
    const int64_t C = hp.ssm_conv_channels(), K = hp.ssm_d_conv, Hk = hp.ssm_n_group, Sk = hp.ssm_d_state,
                  Hv = hp.ssm_dt_rank, Sv = hp.ssm_head_v_dim();
    rf_tensor x{}, w{}, cs{}, info{}, rows{}, y{}, g{}, beta{}, ds{}, o{};
    init_tensor_layout(x, RF_TYPE_F32, {C, 1});
    init_tensor_layout(w, RF_TYPE_F32, {K, C});
    init_tensor_layout(cs, RF_TYPE_F32, {(K - 1) * C, 1});
    init_tensor_layout(info, RF_TYPE_I32, {2, 1});
    init_tensor_layout(rows, RF_TYPE_I32, {1});
    init_tensor_layout(y, RF_TYPE_F32, {C, 1});
    rf_node conv{};
    conv.op = RF_OP_SSM_CONV;
    conv.dst = &y;
    conv.src[0] = &x, conv.src[1] = &w, conv.src[2] = &cs, conv.src[3] = &info, conv.src[4] = &rows;
    init_tensor_layout(g, RF_TYPE_F32, {Hv, 1});
    init_tensor_layout(beta, RF_TYPE_F32, {Hv, 1});
    init_tensor_layout(ds, RF_TYPE_F32, {Sk * Sv * Hv, 1});
    init_tensor_layout(o, RF_TYPE_F32, {Sv * Hv, 1});
    rf_node delta{};
    delta.op = RF_OP_GATED_DELTA_NET;
    delta.dst = &o;
    delta.src[0] = &x, delta.src[1] = &g, delta.src[2] = &beta, delta.src[3] = &ds, delta.src[4] = &info, delta.src[5] = &rows;
    delta.iparams[0] = (int32_t)Hk, delta.iparams[1] = (int32_t)Sk, delta.iparams[2] = (int32_t)Hv, delta.iparams[3] = (int32_t)Sv;
    delta.fparams[0] = hp.rms_eps, delta.fparams[1] = 1.0f;
    return b.supports(conv) && b.supports(delta);
}

} // namespace

uint64_t RecurrentState::bytes_per_sequence(const ModelHparams &hp) {
    int64_t n = 0;
    for (int64_t l = 0; l < hp.n_layer; ++l) n += hp.is_recurrent(l) ? 1 : 0;
    return (uint64_t)n * (conv_row(hp) + delta_row(hp)) * sizeof(float);
}

RecurrentState::RecurrentState(Backend &backend, const ModelHparams &hp, int n_seq_max) : n_seq_max_(n_seq_max) {
    if (n_seq_max <= 0) throw UsageError("recurrent state: need at least one sequence");
    const int64_t cr = (int64_t)conv_row(hp), dr = (int64_t)delta_row(hp);
    uint64_t slab = 0;
    for (int64_t l = 0; l < hp.n_layer; ++l)
        if (hp.is_recurrent(l))
            slab += BufferSlab::slice_bytes((uint64_t)(cr * n_seq_max) * 4) + BufferSlab::slice_bytes((uint64_t)(dr * n_seq_max) * 4);
    slab_ = std::make_unique<BufferSlab>(backend, slab);
    conv_.resize((size_t)hp.n_layer);
    delta_.resize((size_t)hp.n_layer);
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        if (!hp.is_recurrent(l)) continue;
        ++n_layers_;
        conv_[(size_t)l] = std::make_unique<PersistentTensor>(backend, "state_conv_l" + std::to_string(l), RF_TYPE_F32,
                                                              std::initializer_list<int64_t>{cr, n_seq_max}, slab_.get());
        delta_[(size_t)l] = std::make_unique<PersistentTensor>(backend, "state_delta_l" + std::to_string(l), RF_TYPE_F32,
                                                               std::initializer_list<int64_t>{dr, n_seq_max}, slab_.get());
    }
    bytes_per_seq_ = bytes_per_sequence(hp);
}

void RecurrentState::copy(int src, int dst) {
    if (src < 0 || dst < 0 || src >= n_seq_max_ || dst >= n_seq_max_)
        throw Error("recurrent state: sequence ids " + std::to_string(src) + ", " + std::to_string(dst) + " outside 0.." +
                    std::to_string(n_seq_max_ - 1));
    if (src == dst) return;
    std::vector<uint8_t> staging;
    for (auto *pools : {&conv_, &delta_})
        for (auto &p : *pools) {
            if (!p) continue;
            Tensor *t = p->get();
            const uint64_t row = (uint64_t)t->t.nb[1];
            auto *base = static_cast<uint8_t *>(t->t.data);
            staging.resize(row);
            t->home->download(staging.data(), base + row * (uint64_t)src, row);
            t->home->upload(base + row * (uint64_t)dst, staging.data(), row);
        }
}

std::string RecurrentState::summary() const {
    char buf[160];
    std::snprintf(buf, sizeof buf, "recurrent state: %lld layers, %.1f KiB per sequence, %d sequences, %.2f MiB", (long long)n_layers_,
                  bytes_per_seq_ / 1024.0, n_seq_max_, total_bytes() / (1024.0 * 1024.0));
    return buf;
}

Backend &recurrent_state_backend(const Runtime &runtime, Backend &preferred, const ModelHparams &hp) {
    if (runs_recurrent_ops(preferred, hp)) return preferred;
    for (Backend *b : runtime.backends())
        if (runs_recurrent_ops(*b, hp)) return *b;
    throw UsageError(hp.arch_name + ": no backend started runs its Gated DeltaNet ops (ssm_conv, gated_delta_net); "
                     "the CPU backend does: add \"cpu\" to the backends");
}

} // namespace rf
