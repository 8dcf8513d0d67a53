// Contexts: creation within memory, batch decode with logits by batch index, per-sequence KV
// cache operations.
#include <algorithm>
#include <cstdlib>

#include "api_objects.h"
#include "api_status.h"
#include "rocmforge/types.h"

namespace {

int cache_type(const rocmforge_cache_type &field, const char *which) {
    const int t = rf::api::enum_value(field);
    switch (t) {
    case ROCMFORGE_CACHE_F16: return RF_TYPE_F16;
    case ROCMFORGE_CACHE_F32: return RF_TYPE_F32;
    case ROCMFORGE_CACHE_Q8_0: return RF_TYPE_Q8_0;
    }
    throw rf::UsageError(std::string("rocmforge_context_init: params.") + which + " is " + std::to_string(t) +
                         ", not a rocmforge_cache_type");
}

rocmforge_status check_seq(const rocmforge_context *ctx, rocmforge_seq_id seq, const char *fn) {
    const int n = ctx->ctx->params().n_seq_max;
    if (seq < 0 || seq >= n)
        return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, std::string(fn) + ": sequence id " + std::to_string(seq) +
                                                                 " is outside 0.." + std::to_string(n - 1) +
                                                                 " (the context's n_seq_max is " + std::to_string(n) + ")");
    return ROCMFORGE_OK;
}

} // namespace

extern "C" {

rocmforge_context_params rocmforge_context_default_params(void) {
    rocmforge_context_params p{};
    p.n_ctx = 0;
    p.n_batch = 512;
    p.n_seq_max = 1;
    p.type_k = ROCMFORGE_CACHE_F16;
    p.type_v = ROCMFORGE_CACHE_F16;
    return p;
}

rocmforge_status rocmforge_context_init(rocmforge_model *model, const rocmforge_context_params *params,
                                        rocmforge_context **out_ctx) {
    RF_API_REQUIRE(out_ctx);
    *out_ctx = nullptr;
    RF_API_REQUIRE(model);
    const rocmforge_context_params p = params ? *params : rocmforge_context_default_params();
    return rf::api::api_call([&] {
        rf::ContextParams cp;
        cp.n_ctx = p.n_ctx ? (int64_t)p.n_ctx : std::min<int64_t>(4096, model->session.model->hparams().n_ctx_train);
        cp.n_batch = p.n_batch;
        cp.n_seq_max = (int)p.n_seq_max;
        cp.type_k = cache_type(p.type_k, "type_k");
        cp.type_v = cache_type(p.type_v, "type_v");
        if (cp.n_batch <= 0) throw rf::UsageError("rocmforge_context_init: params.n_batch must be positive");
        if (p.n_seq_max == 0 || p.n_seq_max > 4096)
            throw rf::UsageError("rocmforge_context_init: params.n_seq_max must be in 1..4096, got " + std::to_string(p.n_seq_max));
        auto ctx = std::make_unique<rocmforge_context>();
        ctx->model = model;
        ctx->ctx = model->session.new_context(cp);
        *out_ctx = ctx.release();
        return ROCMFORGE_OK;
    }, ROCMFORGE_ERR_BACKEND);
}

void rocmforge_context_free(rocmforge_context *ctx) { delete ctx; }

uint32_t rocmforge_n_ctx(const rocmforge_context *ctx) { return ctx ? (uint32_t)ctx->ctx->params().n_ctx : 0; }

const rocmforge_model *rocmforge_context_model(const rocmforge_context *ctx) { return ctx ? ctx->model : nullptr; }

rocmforge_batch rocmforge_batch_init(int32_t n_tokens_max) {
    rocmforge_batch b{};
    if (n_tokens_max <= 0) return b;
    b.token = static_cast<rocmforge_token *>(std::calloc((size_t)n_tokens_max, sizeof(rocmforge_token)));
    b.seq_id = static_cast<rocmforge_seq_id *>(std::calloc((size_t)n_tokens_max, sizeof(rocmforge_seq_id)));
    b.logits = static_cast<int8_t *>(std::calloc((size_t)n_tokens_max, sizeof(int8_t)));
    return b;
}

void rocmforge_batch_free(rocmforge_batch batch) {
    std::free(batch.token);
    std::free(batch.seq_id);
    std::free(batch.logits);
}

rocmforge_status rocmforge_decode(rocmforge_context *ctx, const rocmforge_batch *batch) {
    RF_API_REQUIRE(ctx);
    RF_API_REQUIRE(batch);
    if (batch->n_tokens <= 0)
        return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_decode: the batch has " + std::to_string(batch->n_tokens) + " tokens");
    RF_API_REQUIRE(batch->token);
    RF_API_REQUIRE(batch->seq_id);
    const int64_t n_vocab = ctx->model->session.model->hparams().n_vocab;
    for (int32_t i = 0; i < batch->n_tokens; ++i) {
        if (const rocmforge_status st = check_seq(ctx, batch->seq_id[i], __func__)) return st;
        if (batch->token[i] < 0 || batch->token[i] >= n_vocab)
            return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_decode: token id " + std::to_string(batch->token[i]) +
                                                                     " at batch index " + std::to_string(i) +
                                                                     " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")");
    }
    return rf::api::api_call([&] {
        rf::Batch b;
        ctx->logit_row.assign((size_t)batch->n_tokens, -1);
        int32_t rows = 0;
        for (int32_t i = 0; i < batch->n_tokens; ++i) {
            const bool want = batch->logits ? batch->logits[i] != 0 : i + 1 == batch->n_tokens; // default: the last
            if (want) ctx->logit_row[(size_t)i] = rows++;
            b.add(batch->token[i], batch->seq_id[i], want);
        }
        ctx->logits = nullptr;
        ctx->logits = &ctx->ctx->decode(b);
        return ROCMFORGE_OK;
    }, ROCMFORGE_ERR_BACKEND);
}

float *rocmforge_get_logits_ith(rocmforge_context *ctx, int32_t i) {
    if (!ctx) {
        rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_get_logits_ith: ctx is NULL");
        return nullptr;
    }
    const int32_t n = (int32_t)ctx->logit_row.size();
    const int32_t idx = i < 0 ? n + i : i;
    if (!ctx->logits || idx < 0 || idx >= n || ctx->logit_row[(size_t)idx] < 0) {
        rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT,
                      "rocmforge_get_logits_ith: batch index " + std::to_string(i) +
                          (ctx->logits ? " has no logits (not marked in the last decode of " + std::to_string(n) + " tokens)"
                                       : ": no decode has succeeded on this context yet"));
        return nullptr;
    }
    const size_t n_vocab = (size_t)ctx->model->session.model->hparams().n_vocab;
    return const_cast<float *>(ctx->logits->data()) + (size_t)ctx->logit_row[(size_t)idx] * n_vocab;
}

rocmforge_status rocmforge_kv_seq_clear(rocmforge_context *ctx, rocmforge_seq_id seq) {
    RF_API_REQUIRE(ctx);
    if (const rocmforge_status st = check_seq(ctx, seq, __func__)) return st;
    return rf::api::api_call([&] {
        ctx->ctx->clear_sequence(seq);
        return ROCMFORGE_OK;
    });
}

rocmforge_status rocmforge_kv_seq_rm(rocmforge_context *ctx, rocmforge_seq_id seq, int32_t p0, int32_t p1) {
    RF_API_REQUIRE(ctx);
    if (const rocmforge_status st = check_seq(ctx, seq, __func__)) return st;
    return rf::api::api_call([&] {
        const int64_t len = ctx->ctx->seq_length(seq);
        if (p0 < 0 || (p1 >= 0 && p1 < p0))
            return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_kv_seq_rm: bad range [" + std::to_string(p0) + ", " +
                                                                     std::to_string(p1) + ")");
        if (p1 >= 0 && p1 < len)
            return rf::api::fail(ROCMFORGE_ERR_UNSUPPORTED, "rocmforge_kv_seq_rm: only a tail can be removed (positions are "
                                                            "fixed in the cached keys); sequence " + std::to_string(seq) + " holds " +
                                                                std::to_string(len) + " tokens, the range ends at " + std::to_string(p1));
        if (p0 < len) ctx->ctx->cache().truncate(seq, p0);
        return ROCMFORGE_OK;
    });
}

rocmforge_status rocmforge_kv_seq_cp(rocmforge_context *ctx, rocmforge_seq_id src, rocmforge_seq_id dst, int32_t n_tokens) {
    RF_API_REQUIRE(ctx);
    if (const rocmforge_status st = check_seq(ctx, src, __func__)) return st;
    if (const rocmforge_status st = check_seq(ctx, dst, __func__)) return st;
    return rf::api::api_call([&] {
        const int64_t len = ctx->ctx->seq_length(src);
        if (n_tokens > len)
            return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_kv_seq_cp: sequence " + std::to_string(src) + " holds " +
                                                                     std::to_string(len) + " tokens, fewer than the " +
                                                                     std::to_string(n_tokens) + " asked for");
        if (src == dst) return ROCMFORGE_OK;
        ctx->ctx->cache().copy_prefix(src, dst, n_tokens < 0 ? len : n_tokens);
        return ROCMFORGE_OK;
    }, ROCMFORGE_ERR_BACKEND);
}

int32_t rocmforge_kv_seq_length(const rocmforge_context *ctx, rocmforge_seq_id seq) {
    if (!ctx || seq < 0 || seq >= ctx->ctx->params().n_seq_max) return -1;
    return (int32_t)ctx->ctx->seq_length(seq);
}

} // extern "C"
