// rocmforge_embed: rf::embed_tokens on one sequence of a context, into the caller's buffer.
#include <algorithm>

#include "api_objects.h"
#include "api_status.h"
#include "rocmforge/embedding.h"

extern "C" {

rocmforge_status rocmforge_embed(rocmforge_context *ctx, const rocmforge_token *tokens, int32_t n_tokens,
                                 rocmforge_seq_id seq, rocmforge_pooling pooling, bool normalize, float *out,
                                 size_t out_size) {
    RF_API_REQUIRE(ctx);
    RF_API_REQUIRE(out);
    if (n_tokens > 0) RF_API_REQUIRE(tokens);
    return rf::api::api_call(
        [&] {
            const rf::Model &model = *ctx->model->session.model;
            const int p = rf::api::enum_value(pooling);
            rf::EmbedOptions opts;
            opts.normalize = normalize;
            switch (p) {
            case ROCMFORGE_POOLING_DEFAULT: opts.pooling = rf::default_pooling(model); break;
            case ROCMFORGE_POOLING_MEAN: opts.pooling = rf::Pooling::Mean; break;
            case ROCMFORGE_POOLING_CLS: opts.pooling = rf::Pooling::Cls; break;
            case ROCMFORGE_POOLING_LAST: opts.pooling = rf::Pooling::Last; break;
            default:
                return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_embed: pooling is " + std::to_string(p) +
                                                                         ", not a rocmforge_pooling");
            }
            const size_t n_embd = (size_t)model.hparams().n_embd;
            if (out_size < n_embd)
                return rf::api::fail(ROCMFORGE_ERR_BUFFER_TOO_SMALL, "rocmforge_embed: out holds " + std::to_string(out_size) +
                                                                         " floats; the model's embeddings have " +
                                                                         std::to_string(n_embd));
            if (n_tokens <= 0)
                return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_embed: n_tokens is " + std::to_string(n_tokens) +
                                                                         "; an embedding needs at least one token");
            const std::vector<int32_t> ids(tokens, tokens + n_tokens);
            // The context's output buffer now holds hidden states: the logits are gone.
            ctx->logits = nullptr;
            ctx->logit_row.clear();
            const std::vector<float> v = rf::embed_tokens(*ctx->ctx, ids, seq, opts);
            std::copy(v.begin(), v.end(), out);
            return ROCMFORGE_OK;
        },
        ROCMFORGE_ERR_INVALID_ARGUMENT);
}

} // extern "C"
