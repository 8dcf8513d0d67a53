// What each URL does: the OpenAI endpoints (/v1/completions, /v1/chat/completions, /v1/models)
// and /health, /metrics, llama.cpp server's /tokenize, /detokenize, /props, behind the API key when one is set. Turns a request into a prompt for
// the scheduler and its events into a JSON or SSE response; a client that goes away cancels.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "http_server.h"
#include "metrics.h"
#include "rocmforge/chat_template.h"
#include "rocmforge/tokenizer.h"
#include "scheduler.h"
#include "sequence_prep.h"
#include "structured_output.h"
#include "tool_calls.h"
#include "utility_routes.h"

namespace rf::serve {

class EmbeddingService; // embeddings_route.h

struct RouterConfig {
    std::string model_id;
    std::string api_key;    // "" = no authentication
    ChatTemplate chat_template = ChatTemplate::builtin(ChatFormat::ChatML);
    ToolCallFormat tool_call_format = ToolCallFormat::Generic; // the template's (its markers)
    int64_t n_ctx_request = 512;     // prompt + max_tokens of one request at most
    int64_t default_max_tokens = 256; // when the request has no max_tokens
    std::chrono::seconds request_timeout{300};
    ServerProps props; // GET /props
    EmbeddingService *embeddings = nullptr; // POST /v1/embeddings; nullptr: 404
    std::string embedding_only_arch;        // an encoder (bert, nomic-bert): completions are a 400
};

class ApiRouter {
public:
    ApiRouter(const RouterConfig &config, const Tokenizer &tokenizer, Scheduler &scheduler, Metrics &metrics)
        : config_(config), tok_(tokenizer), scheduler_(scheduler), metrics_(metrics), started_(std::time(nullptr)),
          grammars_(tokenizer) {}
    void operator()(const HttpRequest &req, Exchange &ex);

private:
    void route(const HttpRequest &req, Exchange &ex, const std::string &path);
    void completion(const HttpRequest &req, Exchange &ex, bool chat);
    void attach_grammar(const CompletionRequest &r, PreparedSequences &prep);
    bool authorized(const HttpRequest &req) const;

    RouterConfig config_;
    const Tokenizer &tok_;
    Scheduler &scheduler_;
    Metrics &metrics_;
    int64_t started_;
    std::atomic<uint64_t> next_id_{1};
    GrammarCache grammars_; // structured output: grammars bound to the vocabulary, masks shared
};

} // namespace rf::serve
