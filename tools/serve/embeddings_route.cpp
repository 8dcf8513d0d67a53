#include "embeddings_route.h"

#include <cmath>

#include "api_error.h"
#include "embedding_request.h"
#include "embedding_response.h"
#include "rocmforge/embedding.h"

namespace rf::serve {

EmbeddingService::EmbeddingService(Model &model, Runtime &runtime, const Tokenizer &tokenizer, Scheduler &scheduler,
                                   const ContextParams &params)
    : model_(model), runtime_(runtime), tok_(tokenizer), scheduler_(scheduler), params_(params) {
    params_.n_seq_max = 1;
}

EmbeddingService::~EmbeddingService() = default;

void EmbeddingService::handle(const HttpRequest &req, Exchange &ex, const std::string &model_id) {
    const ModelHparams &hp = model_.hparams();
    EmbeddingRequest r;
    try {
        r = parse_embedding_request(req.body(), tok_, {hp.n_embd, hp.n_vocab, params_.n_ctx});
    } catch (const ApiError &e) {
        return (void)ex.respond(e.status, "application/json", error_body(e));
    }
    const EmbedOptions opts{r.pooling.value_or(default_pooling(model_)), true};
    std::vector<std::vector<float>> vectors;
    for (const std::vector<int32_t> &tokens : r.inputs) {
        if (ex.client_gone()) return;
        try {
            scheduler_.run_exclusive([&] {
                if (!ctx_) ctx_ = std::make_unique<InferenceContext>(model_, runtime_, params_);
                vectors.push_back(embed_tokens(*ctx_, tokens, 0, opts));
            });
        } catch (const ApiError &e) {
            return (void)ex.respond(e.status, "application/json", error_body(e));
        }
        for (float f : vectors.back())
            if (!std::isfinite(f)) {
                const ApiError e{500, "the model produced a non-finite embedding", "server_error", ""};
                return (void)ex.respond(e.status, "application/json", error_body(e));
            }
    }
    ex.respond(200, "application/json", embeddings_body(vectors, r.base64, r.model.empty() ? model_id : r.model, r.prompt_tokens));
}

} // namespace rf::serve
