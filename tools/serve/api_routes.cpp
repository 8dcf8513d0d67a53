#include "api_routes.h"

#include <algorithm>
#include <ctime>

#include "api_error.h"
#include "embeddings_route.h"
#include "harmony_output.h"
#include "apply_template.h"
#include "openai_json.h"
#include "request_parse.h"
#include "sequence_prep.h"
#include "rocmforge/error.h"
#include "sse.h"
#include "tool_call_output.h"

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

// The end of a streamed choice's output: its held content, then each call as OpenAI streams it (a
// first piece with the id and the name, then the arguments).
template <class Send> bool send_tool_call_chunks(const ResponseMeta &meta, int choice, const ChoiceCalls &calls, Send &send) {
    if (!calls.content.empty() && !send(sse_event(chunk_body(meta, Choice{choice, calls.content}, false)))) return false;
    for (const ToolCallOut &call : calls.calls) {
        Choice head{choice, ""}, args{choice, ""};
        head.tool_calls.push_back({call.index, call.id, call.name, ""});
        args.tool_calls.push_back({call.index, "", "", call.arguments});
        if (!send(sse_event(chunk_body(meta, head, false))) || !send(sse_event(chunk_body(meta, args, false)))) return false;
    }
    return true;
}

bool is_endpoint(const std::string &path) {
    return path == "/health" || path == "/metrics" || path == "/v1/models" || path == "/v1/completions" ||
           path == "/v1/chat/completions" || is_utility_endpoint(path) ||
           path == "/v1/embeddings" || path == "/apply-template";
}

// A choice's Done event into the response's usage (and timings).
void count_done(Usage &usage, const StreamEvent &e) {
    usage.completion_tokens += e.completion_tokens;
    usage.speculative = usage.speculative || e.speculative;
    usage.draft_n += e.draft_n;
    usage.draft_n_accepted += e.draft_n_accepted;
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
    if (utility_route(req, ex, path, tok_, config_.props)) return;
    if (path == "/v1/completions" && post) return completion(req, ex, false);
    if (path == "/v1/chat/completions" && post) return completion(req, ex, true);
    if (path == "/v1/embeddings" && post && config_.embeddings) return config_.embeddings->handle(req, ex, config_.model_id);
    if (path == "/apply-template" && post) return apply_template(req, ex, config_.chat_template);
    if (is_endpoint(path)) return respond_error(ex, {405, "method " + std::string(req.method_string()) + " not allowed on " + path,
                                          "invalid_request_error", ""});
    respond_error(ex, {404, "no such endpoint: " + path, "invalid_request_error", ""});
}

// Structured output: every choice follows the request's grammar, bound to the vocabulary once
// for all requests that send it. Its start is checked here (a grammar too ambiguous to begin is
// the request's 400, not a failure in the scheduler).
void ApiRouter::attach_grammar(const CompletionRequest &r, PreparedSequences &prep) {
    if (r.grammar.empty()) return;
    const auto g = grammars_.get(r);
    try {
        grammar::GrammarMatcher start(g);
        const grammar::TokenMask &mask = start.allowed();
        if (std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; }))
            throw Error("no token of the vocabulary can begin it");
    } catch (const Error &e) {
        throw bad_request("'" + r.grammar_field + "': " + e.what(), r.grammar_field);
    }
    for (GenerationRequest &s : prep.sequences) s.grammar = g;
}

void ApiRouter::completion(const HttpRequest &req, Exchange &ex, bool chat) {
    if (!config_.embedding_only_arch.empty())
        return respond_error(ex, {400,
                                  "this server's model (" + config_.embedding_only_arch +
                                      ") is an embedding model: it has no completions (use /v1/embeddings)",
                                  "invalid_request_error", "model"});
    CompletionRequest r;
    PreparedSequences prep;
    try {
        r = parse_completion_request(req.body(), chat);
        if ((size_t)r.n_choices() > scheduler_.capacity())
            throw bad_request("the request asks for " + std::to_string(r.n_choices()) +
                                  " choices (n x prompts) but this server decodes and queues at most " +
                                  std::to_string(scheduler_.capacity()) + " sequences (--parallel + --queue)",
                              "n");
        prep = prepare_sequences(r, {config_.chat_template, config_.n_ctx_request, config_.default_max_tokens}, tok_,
                                 r.seed ? *r.seed : random_seed(), Clock::now() + config_.request_timeout);
        attach_grammar(r, prep);
    } catch (const ApiError &e) {
        return respond_error(ex, e);
    }
    const size_t n_choices = prep.sequences.size();
    const auto channel = scheduler_.submit(std::move(prep.sequences));
    if (!channel)
        return respond_error(ex, {429, "the server is busy: the wait queue is full, retry later", "rate_limit_error", ""},
                             {{"Retry-After", "1"}});

    ResponseMeta meta{chat, (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id_++), (int64_t)std::time(nullptr),
                      r.model.empty() ? config_.model_id : r.model};
    Usage usage{prep.prompt_tokens, 0};
    size_t n_done = 0;
    // A Text event as its choice: text_offset made to count from the start of the choice's text
    // (prompt tokens: where they begin in the echo; generated ones: after the echo). The event
    // with the prompt's logprobs brings the echo text itself when streaming.
    const bool prompt_logprobs = r.echo && r.logprobs;
    auto text_choice = [&](StreamEvent &e, bool with_echo) {
        const size_t k = (size_t)e.choice;
        Choice c{e.choice, e.prompt && with_echo ? prep.echo[k] : std::move(e.text)};
        if (!r.logprobs) return c;
        const int64_t echo_chars = utf8_chars(prep.echo[k]);
        const std::vector<int64_t> &prompt_offsets = prep.prompt_offsets[k]; // one per prompt token
        for (size_t i = 0; i < e.logprobs.size(); ++i)
            e.logprobs[i].text_offset = !e.prompt ? e.logprobs[i].text_offset + echo_chars
                                        : i < prompt_offsets.size() ? prompt_offsets[i] : 0;
        c.logprobs = std::move(e.logprobs);
        return c;
    };
    const ToolCallOptions tools = tool_call_options(r, config_.tool_call_format);
    // gpt-oss: its channels and calls read from the harmony markup (forced calls are the
    // grammar's generic JSON, read as for any format).
    const bool harmony = chat && config_.tool_call_format == ToolCallFormat::Harmony && !r.forces_tool_call();
    const HarmonyOptions harmony_opts = harmony_options(r);
    if (!r.stream) {
        std::vector<Choice> choices;
        for (size_t k = 0; k < n_choices; ++k) {
            choices.push_back(Choice{(int)k, prep.echo[k]});
            if (r.logprobs) choices.back().logprobs.emplace();
        }
        while (auto e = next_event(*channel, ex)) {
            Choice &c = choices[(size_t)e->choice];
            if (e->kind == StreamEvent::Kind::Text) {
                Choice part = text_choice(*e, false);
                c.text += part.text;
                if (c.logprobs) c.logprobs->insert(c.logprobs->end(), part.logprobs->begin(), part.logprobs->end());
            } else if (e->kind == StreamEvent::Kind::Error) {
                channel->cancel(); // the other choices end too
                return respond_error(ex, e->error);
            } else {
                c.finish_reason = e->finish_reason;
                count_done(usage, *e);
                if (++n_done < n_choices) continue;
                if (harmony)
                    for (Choice &whole : choices) apply_harmony(whole, harmony_opts);
                else if (r.parses_tool_calls())
                    for (Choice &whole : choices) apply_tool_calls(whole, tools);
                return (void)ex.respond(200, "application/json", completion_body(meta, choices, usage));
            }
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
    // First the role (chat) or the echoed prompt of every choice (no tokens: "logprobs": null;
    // with logprobs the echo waits for the prompt's, which come once its prefill is done).
    for (size_t k = 0; k < n_choices; ++k) {
        if (chat && !send(sse_event(chunk_body(meta, Choice{(int)k, ""}, /*with_role=*/true)))) return;
        if (!prep.echo[k].empty() && !prompt_logprobs && !send(sse_event(chunk_body(meta, Choice{(int)k, prep.echo[k]}, false))))
            return;
    }
    // Tool calls: each choice's output through its stream, which holds back what may be a call.
    std::vector<ToolCallStream> call_streams;
    std::vector<HarmonyStream> harmony_streams;
    if (harmony) harmony_streams.assign(n_choices, HarmonyStream(harmony_opts));
    else if (r.parses_tool_calls()) call_streams.assign(n_choices, ToolCallStream(tools));
    while (auto e = next_event(*channel, ex)) {
        if (e->kind == StreamEvent::Kind::Text) {
            Choice c = text_choice(*e, true);
            if (!harmony_streams.empty()) {
                HarmonyDelta d = harmony_streams[(size_t)c.index].push(c.text);
                c.text = std::move(d.content);
                c.reasoning = std::move(d.reasoning);
                if (c.text.empty() && c.reasoning.empty() && (!c.logprobs || c.logprobs->empty())) continue; // markup
            } else if (!call_streams.empty()) {
                c.text = call_streams[(size_t)c.index].push(c.text);
                if (c.text.empty() && (!c.logprobs || c.logprobs->empty())) continue; // all of it held
            }
            if (!send(sse_event(chunk_body(meta, c, false)))) return;
            continue;
        }
        if (e->kind == StreamEvent::Kind::Error) {
            channel->cancel();
            if (!send(sse_event(error_body(e->error)))) return;
        } else {
            Choice c{e->choice, ""};
            c.finish_reason = e->finish_reason;
            if (!harmony_streams.empty()) {
                HarmonyMessage m = harmony_streams[(size_t)e->choice].finish();
                Choice rest{e->choice, std::move(m.content)};
                rest.reasoning = std::move(m.reasoning);
                if ((!rest.text.empty() || !rest.reasoning.empty()) && !send(sse_event(chunk_body(meta, rest, false)))) return;
                if (!send_tool_call_chunks(meta, e->choice, ChoiceCalls{"", m.calls}, send)) return;
                c.finish_reason = tool_finish_reason(e->finish_reason, !m.calls.empty());
            } else if (!call_streams.empty()) {
                ChoiceCalls calls = call_streams[(size_t)e->choice].finish();
                if (!send_tool_call_chunks(meta, e->choice, calls, send)) return;
                c.finish_reason = tool_finish_reason(e->finish_reason, !calls.calls.empty());
            }
            count_done(usage, *e);
            if (!send(sse_event(chunk_body(meta, c, false, ++n_done == n_choices ? &usage : nullptr)))) return;
            if (n_done < n_choices) continue;
            if (r.include_usage && !send(sse_event(usage_chunk_body(meta, usage)))) return;
        }
        if (send(sse_done())) ex.end_stream();
        return;
    }
}

} // namespace rf::serve
