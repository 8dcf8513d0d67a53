#include "embeddings_route.h"

#include <algorithm>
#include <cmath>

#include "api_error.h"
#include "embedding_request.h"
#include "embedding_response.h"
#include "rocmforge/embedding.h"

namespace rf::serve {

EmbeddingService::EmbeddingService(Model &model, Runtime &runtime, const Tokenizer &tokenizer, Scheduler &scheduler,
                                   const ContextParams &params, int64_t max_input_tokens)
    : model_(model), runtime_(runtime), tok_(tokenizer), scheduler_(scheduler), params_(params),
      max_input_tokens_(std::min(max_input_tokens, params.n_ctx)) {}

EmbeddingService::~EmbeddingService() = default;

void EmbeddingService::handle(const HttpRequest &req, Exchange &ex, const std::string &model_id) {
    const ModelHparams &hp = model_.hparams();
    EmbeddingRequest r;
    try {
        r = parse_embedding_request(req.body(), tok_, {hp.n_embd, hp.n_vocab, max_input_tokens_});
    } catch (const ApiError &e) {
        return (void)ex.respond(e.status, "application/json", error_body(e));
    }
    const EmbedOptions opts{r.pooling.value_or(default_pooling(model_)), true};
    // One job per n_seq_max inputs (a graph or a few): the streams step between the jobs.
    std::vector<std::vector<float>> vectors;
    const size_t per_job = (size_t)params_.n_seq_max;
    for (size_t first = 0; first < r.inputs.size(); first += per_job) {
        if (ex.client_gone()) return;
        const std::vector<std::vector<int32_t>> part(r.inputs.begin() + (long)first,
                                                     r.inputs.begin() + (long)std::min(r.inputs.size(), first + per_job));
        try {
            scheduler_.run_exclusive([&] {
                if (!ctx_) ctx_ = std::make_unique<InferenceContext>(model_, runtime_, params_);
                for (std::vector<float> &v : embed_batch(*ctx_, part, opts)) vectors.push_back(std::move(v));
            });
        } catch (const ApiError &e) {
            return (void)ex.respond(e.status, "application/json", error_body(e));
        }
    }
    for (const std::vector<float> &v : vectors)
        for (float f : v)
            if (!std::isfinite(f)) {
                const ApiError e{500, "the model produced a non-finite embedding", "server_error", ""};
                return (void)ex.respond(e.status, "application/json", error_body(e));
            }
    ex.respond(200, "application/json", embeddings_body(vectors, r.base64, r.model.empty() ? model_id : r.model, r.prompt_tokens));
}

} // namespace rf::serve
