// POST /v1/embeddings: the request's inputs run as jobs on the scheduler thread
// (Scheduler::run_exclusive), between two steps of the continuous-batching loop, on a context
// of their own (created on first use; each job embeds up to its n_seq_max inputs, several per
// graph as embed_batch packs them, and leaves it empty), so the generation requests' sequences
// and KV budget are never touched and streams go on between the jobs of a long request.
#pragma once
#include <memory>
#include <string>

#include "http_server.h"
#include "rocmforge/inference.h"
#include "rocmforge/tokenizer.h"
#include "scheduler.h"

namespace rf::serve {

class EmbeddingService {
public:
    // params: the embedding context's (n_ctx: the most tokens of one input and of one job's
    // inputs together; n_seq_max: the most inputs per job).
    // max_input_tokens: the most tokens of one input (a request's context, as for a prompt).
    EmbeddingService(Model &model, Runtime &runtime, const Tokenizer &tokenizer, Scheduler &scheduler,
                     const ContextParams &params, int64_t max_input_tokens);
    ~EmbeddingService();
    void handle(const HttpRequest &req, Exchange &ex, const std::string &model_id);

private:
    Model &model_;
    Runtime &runtime_;
    const Tokenizer &tok_;
    Scheduler &scheduler_;
    ContextParams params_;
    int64_t max_input_tokens_;
    std::unique_ptr<InferenceContext> ctx_; // scheduler thread only
};

} // namespace rf::serve
