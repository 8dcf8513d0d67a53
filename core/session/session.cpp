// Loading a model with its runtime and tokenizer, and making contexts that fit in memory.
#include "rocmforge/session.h"

#include <chrono>
#include <cstdio>

#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"

namespace rf {

Session Session::load(const std::string &path, const Config &config, const ModelLoadOptions &options,
                      bool load_tokenizer) {
    const auto t0 = std::chrono::steady_clock::now();
    Session s = load(path, Runtime::create(config), options, load_tokenizer);
    s.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); // with the backends' start
    return s;
}

Session Session::load(const std::string &path, std::unique_ptr<Runtime> runtime, const ModelLoadOptions &options,
                      bool load_tokenizer) {
    Session s;
    s.path = path;
    const auto t0 = std::chrono::steady_clock::now();
    s.runtime = std::move(runtime);
    if (!s.runtime || !s.runtime->primary()) throw Error("no backend could start (see `rocmforge info`)");
    s.runtime->phase("load");
    s.model = Model::load(path, *s.runtime, options); // marks "upload" when the weights go to the backend
    s.runtime->phase("load");
    if (load_tokenizer) {
        s.tokenizer = Tokenizer::from_gguf(s.model->file());
        // As llama.cpp: the embedding rows must match the vocabulary.
        if (s.tokenizer->n_vocab() != s.model->hparams().n_vocab)
            throw Error(path + ": the tokenizer has " + std::to_string(s.tokenizer->n_vocab()) +
                        " tokens but token_embd.weight has " + std::to_string(s.model->hparams().n_vocab) + " rows");
    }
    s.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return s;
}

std::unique_ptr<InferenceContext> Session::new_context(const ContextParams &params) const {
    const ModelHparams &hp = model->hparams();
    if (params.n_ctx <= 0) throw UsageError("context size must be positive, got " + std::to_string(params.n_ctx));
    if (params.n_seq_max <= 0) throw UsageError("the number of sequences must be positive, got " + std::to_string(params.n_seq_max));
    // Checked here so that an impossible size is an error, not an allocation that the OS grants
    // lazily (or that the sanitizers refuse).
    const Backend &backend = kv_cache_backend(*runtime, model->backend(), hp);
    const double need = (double)KvCache::bytes_per_token(hp.n_layer_kv(), hp.n_embd_kv(), params.type_k, params.type_v, hp.is_mla()) *
                        (double)(params.n_ctx + (int64_t)params.n_seq_max * params.page_size);
    const uint64_t free_bytes = backend.info().free_memory;
    if (free_bytes > 0 && need > (double)free_bytes) {
        char msg[256];
        std::snprintf(msg, sizeof msg, "a KV cache of %lld tokens needs %.2f GiB but backend '%s' has %.2f GiB free",
                      (long long)params.n_ctx, need / (1 << 30), backend.name().c_str(), (double)free_bytes / (1 << 30));
        throw OutOfMemoryError(msg);
    }
    return std::make_unique<InferenceContext>(*model, *runtime, params);
}

} // namespace rf
