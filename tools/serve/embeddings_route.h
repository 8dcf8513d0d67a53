// POST /v1/embeddings: each input of the request runs as one job on the scheduler thread
// (Scheduler::run_exclusive), between two steps of the continuous-batching loop, on a context
// of its own (one sequence, created on first use, its cache emptied after every input), so the
// generation requests' sequences and KV budget are never touched and streams go on between the
// inputs of a long request.
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
    // params: the embedding context's (n_ctx: the most tokens of one input; n_seq_max is 1).
    EmbeddingService(Model &model, Runtime &runtime, const Tokenizer &tokenizer, Scheduler &scheduler,
                     const ContextParams &params);
    ~EmbeddingService();
    void handle(const HttpRequest &req, Exchange &ex, const std::string &model_id);

private:
    Model &model_;
    Runtime &runtime_;
    const Tokenizer &tok_;
    Scheduler &scheduler_;
    ContextParams params_;
    std::unique_ptr<InferenceContext> ctx_; // scheduler thread only
};

} // namespace rf::serve
