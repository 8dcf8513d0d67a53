#include "api_routes.h"

#include <ctime>

#include "api_error.h"
#include "openai_json.h"
#include "request_parse.h"
#include "rocmforge/error.h"
#include "sse.h"

namespace rf::serve {
namespace {

namespace http = boost::beast::http;

void respond_error(Exchange &ex, const ApiError &e, const Headers &extra = {}) {
    ex.respond(e.status, "application/json", error_body(e), extra);
}

// Equal strings in time that does not depend on where they differ (the key is a secret).
bool same_secret(const std::string &a, const std::string &b) {
    unsigned char diff = a.size() != b.size();
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
        diff |= (unsigned char)((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
    return diff == 0;
}

// The next event of the request; nullopt (and the request cancelled) when the client is gone.
std::optional<StreamEvent> next_event(RequestChannel &channel, Exchange &ex) {
    for (;;) {
        if (auto e = channel.pop(std::chrono::milliseconds(50))) return e;
        if (ex.client_gone()) {
            channel.cancel();
            return std::nullopt;
        }
    }
}

bool is_endpoint(const std::string &path) {
    return path == "/health" || path == "/metrics" || path == "/v1/models" || path == "/v1/completions" ||
           path == "/v1/chat/completions";
}

} // namespace

bool ApiRouter::authorized(const HttpRequest &req) const {
    if (config_.api_key.empty()) return true;
    const auto it = req.find(http::field::authorization);
    const std::string given = it == req.end() ? "" : std::string(it->value());
    return same_secret(given, "Bearer " + config_.api_key);
}

void ApiRouter::operator()(const HttpRequest &req, Exchange &ex) {
    std::string path(req.target());
    path = path.substr(0, path.find('?'));
    try {
        route(req, ex, path);
    } catch (const std::exception &e) {
        // A bug, not the client's doing: answer 500 rather than dropping the connection.
        if (ex.status() == 0) respond_error(ex, {500, std::string("internal error: ") + e.what(), "server_error", ""});
    }
    metrics_.count_request(is_endpoint(path) ? path : "other", ex.status());
}

void ApiRouter::route(const HttpRequest &req, Exchange &ex, const std::string &path) {
    const bool get = req.method() == http::verb::get, post = req.method() == http::verb::post;
    if (path == "/health" && get) return (void)ex.respond(200, "application/json", "{\"status\":\"ok\"}");
    if (!authorized(req))
        return respond_error(ex, {401, "missing or wrong API key (send Authorization: Bearer KEY)", "authentication_error", ""},
                             {{"WWW-Authenticate", "Bearer"}});
    if (path == "/metrics" && get) return (void)ex.respond(200, "text/plain; version=0.0.4", metrics_.prometheus());
    if (path == "/v1/models" && get) return (void)ex.respond(200, "application/json", models_body(config_.model_id, started_));
    if (path == "/v1/completions" && post) return completion(req, ex, false);
    if (path == "/v1/chat/completions" && post) return completion(req, ex, true);
    if (is_endpoint(path)) return respond_error(ex, {405, "method " + std::string(req.method_string()) + " not allowed on " + path,
                                          "invalid_request_error", ""});
    respond_error(ex, {404, "no such endpoint: " + path, "invalid_request_error", ""});
}

void ApiRouter::completion(const HttpRequest &req, Exchange &ex, bool chat) {
    CompletionRequest r;
    GenerationRequest g;
    try {
        r = parse_completion_request(req.body(), chat);
        std::string text = r.prompt;
        if (chat) {
            try {
                text = apply_chat_template(config_.chat_format, r.messages, /*add_assistant=*/true);
            } catch (const UsageError &e) {
                throw bad_request(e.what(), "messages");
            }
        }
        g.prompt = tok_.encode(text, /*add_special=*/true, /*parse_special=*/true);
        if (g.prompt.empty()) throw bad_request("the prompt has no tokens", chat ? "messages" : "prompt");
        const int64_t n_prompt = (int64_t)g.prompt.size(), limit = config_.n_ctx_request;
        const char *max_field = "max_tokens";
        if (n_prompt >= limit)
            throw bad_request("the prompt has " + std::to_string(n_prompt) + " tokens but a request may hold at most " +
                                  std::to_string(limit) + " (prompt + max_tokens)",
                              chat ? "messages" : "prompt");
        if (r.max_tokens && n_prompt + *r.max_tokens > limit)
            throw bad_request("max_tokens " + std::to_string(*r.max_tokens) + " + the prompt's " + std::to_string(n_prompt) +
                                  " tokens exceed the " + std::to_string(limit) + " tokens a request may hold",
                              max_field);
        g.max_tokens = r.max_tokens ? *r.max_tokens : std::min(config_.default_max_tokens, limit - n_prompt);
    } catch (const ApiError &e) {
        return respond_error(ex, e);
    }
    g.sampling.temperature = r.temperature;
    g.sampling.top_p = r.top_p;
    g.sampling.top_k = 0; // OpenAI's sampling has neither top-k nor min-p
    g.sampling.min_p = 0;
    g.sampling.repeat_penalty = 1;
    g.sampling.seed = r.seed ? *r.seed : random_seed();
    g.stop = r.stop;
    g.deadline = Clock::now() + config_.request_timeout;
    const auto channel = scheduler_.submit(std::move(g));
    if (!channel)
        return respond_error(ex, {429, "the server is busy: the wait queue is full, retry later", "rate_limit_error", ""},
                             {{"Retry-After", "1"}});

    ResponseMeta meta{chat, (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++), (int64_t)std::time(nullptr),
                      r.model.empty() ? config_.model_id : r.model};
    if (!r.stream) {
        std::string text;
        while (auto e = next_event(*channel, ex)) {
            if (e->kind == StreamEvent::Kind::Text) text += e->text;
            else if (e->kind == StreamEvent::Kind::Error) return respond_error(ex, e->error);
            else
                return (void)ex.respond(200, "application/json",
                                        completion_body(meta, text, e->finish_reason, {e->prompt_tokens, e->completion_tokens}));
        }
        return; // client gone
    }
    // Streaming: every write that fails means the client left, which cancels the request.
    auto send = [&](const std::string &data) {
        if (ex.write_chunk(data)) return true;
        channel->cancel();
        return false;
    };
    if (!ex.start_stream(200, "text/event-stream")) return channel->cancel();
    if (chat && !send(sse_event(chunk_body(meta, "", /*with_role=*/true, std::nullopt)))) return;
    while (auto e = next_event(*channel, ex)) {
        if (e->kind == StreamEvent::Kind::Text) {
            if (!send(sse_event(chunk_body(meta, e->text, false, std::nullopt)))) return;
            continue;
        }
        if (e->kind == StreamEvent::Kind::Error) {
            if (!send(sse_event(error_body(e->error)))) return;
        } else {
            if (!send(sse_event(chunk_body(meta, "", false, e->finish_reason)))) return;
            if (r.include_usage && !send(sse_event(usage_chunk_body(meta, {e->prompt_tokens, e->completion_tokens})))) return;
        }
        if (send(sse_done())) ex.end_stream();
        return;
    }
}

} // namespace rf::serve
