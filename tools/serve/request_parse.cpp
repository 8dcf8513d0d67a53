#include "request_parse.h"

#include <cmath>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "../chat_messages_json.h"
#include "api_error.h"
#include "structured_output.h"
#include "tool_choice.h"
#include "../json_type_name.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

constexpr size_t kMaxStops = 4; // as OpenAI

const char *type_name(const Value &v) { return json_type_name(v); }

ApiError wrong_type(const std::string &field, const char *want, const Value &v) {
    return bad_request("'" + field + "' must be " + want + ", got " + type_name(v), field);
}

double number(const Value &v, const std::string &field, double lo, double hi) {
    if (!v.IsNumber()) throw wrong_type(field, "a number", v);
    const double d = v.GetDouble();
    if (!std::isfinite(d) || d < lo || d > hi)
        throw bad_request("'" + field + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi), field);
    return d;
}

int64_t integer(const Value &v, const std::string &field) {
    if (!v.IsInt64()) throw wrong_type(field, "an integer", v);
    return v.GetInt64();
}

std::string string(const Value &v, const std::string &field) {
    if (!v.IsString()) throw wrong_type(field, "a string", v);
    return {v.GetString(), v.GetStringLength()};
}

// A member's name, all of it (a NUL inside does not end it: "prompt\u0000x" is not "prompt").
std::string name(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

// messages and tools: the parser `rocmforge template` shares (tools/chat_messages_json.cpp).
std::vector<ChatMessage> messages(const Value &v) {
    try {
        return chat_messages_from_json(v);
    } catch (const ChatFieldError &e) {
        throw bad_request(e.what(), e.field());
    }
}

std::string template_kwargs(const Value &v) {
    try {
        return chat_template_kwargs_from_json(v);
    } catch (const ChatFieldError &e) {
        throw bad_request(e.what(), e.field());
    }
}

std::string tools(const Value &v) {
    try {
        return chat_tools_from_json(v);
    } catch (const ChatFieldError &e) {
        throw bad_request(e.what(), e.field());
    }
}

std::vector<std::string> stops(const Value &v) {
    std::vector<std::string> out;
    if (v.IsNull()) return out;
    if (v.IsString()) out.push_back(string(v, "stop"));
    else if (v.IsArray()) {
        if (v.Size() > kMaxStops) throw bad_request("'stop' holds at most 4 strings", "stop");
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) out.push_back(string(v[i], "stop[" + std::to_string(i) + "]"));
    } else
        throw wrong_type("stop", "a string or an array of strings", v);
    for (const auto &s : out)
        if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
    return out;
}

// A token id: an integer in int32's range (the vocabulary's is checked where it is known).
int64_t token_id(const Value &v, const std::string &field) {
    if (!v.IsInt64()) throw wrong_type(field, "an integer token id", v);
    const int64_t id = v.GetInt64();
    if (id < 0 || id > INT32_MAX) throw bad_request("'" + field + "' is not a token id: " + std::to_string(id), field);
    return id;
}

PromptInput token_prompt(const Value &v, const std::string &field) {
    if (v.Empty()) throw bad_request("'" + field + "' must hold at least one token", field);
    PromptInput p;
    p.is_tokens = true;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) p.tokens.push_back(token_id(v[i], field + "[" + std::to_string(i) + "]"));
    return p;
}

// `prompt`: a string, an array of strings, an array of token ids, or an array of token arrays
// (one kind per request, as OpenAI).
std::vector<PromptInput> prompts(const Value &v) {
    const char *want = "a string, an array of strings, an array of token ids or an array of token arrays";
    if (v.IsString()) return {PromptInput{false, string(v, "prompt"), {}}};
    if (!v.IsArray()) throw wrong_type("prompt", want, v);
    if (v.Empty()) throw bad_request("'prompt' must hold at least one prompt", "prompt");
    if (v[0].IsNumber()) return {token_prompt(v, "prompt")};
    if (v.Size() > kMaxChoices)
        throw bad_request("'prompt' holds " + std::to_string(v.Size()) + " prompts, at most " + std::to_string(kMaxChoices),
                          "prompt");
    std::vector<PromptInput> out;
    const bool strings = v[0].IsString();
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string field = "prompt[" + std::to_string(i) + "]";
        if (strings && v[i].IsString()) out.push_back({false, string(v[i], field), {}});
        else if (strings) throw wrong_type(field, "a string (the prompts of one request are all of one kind)", v[i]);
        else if (v[i].IsArray()) out.push_back(token_prompt(v[i], field));
        else throw wrong_type(field, "an array of token ids (the prompts of one request are all of one kind)", v[i]);
    }
    return out;
}

int64_t bounded_integer(const Value &v, const std::string &field, int64_t lo, int64_t hi) {
    const int64_t n = integer(v, field);
    if (n < lo || n > hi)
        throw bad_request("'" + field + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                              std::to_string(n),
                          field);
    return n;
}

bool boolean(const Value &v, const std::string &field) {
    if (!v.IsBool()) throw wrong_type(field, "a boolean", v);
    return v.GetBool();
}

} // namespace

CompletionRequest parse_completion_request(std::string_view body, bool chat) {
    rapidjson::Document doc;
    // JSON is UTF-8 (RFC 8259): invalid bytes in a string are refused here rather than echoed
    // into a response no client could parse.
    // Iterative: a body nested a million levels deep must not overflow the connection's stack.
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(body.data(), body.size());
    if (doc.HasParseError())
        throw bad_request(std::string("malformed JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw bad_request("the request body must be a JSON object");
    CompletionRequest r;
    r.chat = chat;
    const char *input = chat ? "messages" : "prompt";
    if (!doc.HasMember(input)) throw bad_request(std::string("'") + input + "' is required", input);
    bool chat_logprobs = false;
    std::optional<int> top_logprobs;
    const Value &root = doc;
    for (auto it = root.MemberBegin(); it != root.MemberEnd(); ++it) {
        const std::string key = name(it->name);
        const Value &v = it->value;
        if (key == "model") r.model = string(v, key);
        else if (key == input && chat) r.messages = messages(v);
        else if (key == input) r.prompts = prompts(v);
        else if (key == "tools" && chat) {
            if (!v.IsNull()) r.tools_json = tools(v);
        } else if (key == "chat_template_kwargs" && chat) {
            if (!v.IsNull()) r.template_kwargs_json = template_kwargs(v);
        }
        else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
            if (v.IsNull()) continue;
            const int64_t n = integer(v, key);
            if (n < (chat ? 1 : 0)) throw bad_request("'" + key + "' must be at least 1", key);
            r.max_tokens = n; // 0: only with echo (below)
        } else if (key == "temperature") r.temperature = v.IsNull() ? 1.0f : (float)number(v, key, 0, 2);
        else if (key == "top_p") {
            r.top_p = v.IsNull() ? 1.0f : (float)number(v, key, 0, 1);
            if (r.top_p <= 0) throw bad_request("'top_p' must be greater than 0", key);
        } else if (key == "frequency_penalty" || key == "presence_penalty") {
            (key[0] == 'f' ? r.frequency_penalty : r.presence_penalty) = v.IsNull() ? 0.0f : (float)number(v, key, -2, 2);
        } else if (key == "top_k") { // llama.cpp server's sampling extensions
            if (!v.IsNull()) r.top_k = (int32_t)bounded_integer(v, key, 0, INT32_MAX);
        } else if (key == "min_p") {
            r.min_p = v.IsNull() ? 0.0f : (float)number(v, key, 0, 1);
        } else if (key == "repeat_penalty") {
            r.repeat_penalty = v.IsNull() ? 1.0f : (float)number(v, key, 0, 10);
            if (r.repeat_penalty <= 0) throw bad_request("'repeat_penalty' must be greater than 0", key);
        } else if (key == "repeat_last_n") {
            if (!v.IsNull()) r.repeat_last_n = (int32_t)bounded_integer(v, key, -1, INT32_MAX);
        } else if (key == "seed") {
            if (!v.IsNull()) r.seed = (uint32_t)integer(v, key);
        } else if (key == "stop") r.stop = stops(v);
        else if (key == "stream") {
            r.stream = !v.IsNull() && boolean(v, key);
        } else if (key == "stream_options") {
            if (v.IsNull()) continue;
            if (!v.IsObject()) throw wrong_type(key, "an object", v);
            for (auto o = v.MemberBegin(); o != v.MemberEnd(); ++o) {
                if (name(o->name) != "include_usage")
                    throw bad_request("unsupported field 'stream_options." + name(o->name) + "'", key);
                if (!o->value.IsBool()) throw wrong_type("stream_options.include_usage", "a boolean", o->value);
                r.include_usage = o->value.GetBool();
            }
        } else if (key == "n") {
            if (!v.IsNull()) r.n = bounded_integer(v, key, 1, kMaxChoices);
        } else if (key == "logprobs" && !chat) {
            if (!v.IsNull()) r.logprobs = (int)bounded_integer(v, key, 0, kMaxCompletionLogprobs);
        } else if (key == "logprobs") {
            chat_logprobs = !v.IsNull() && boolean(v, key);
        } else if (key == "top_logprobs" && chat) {
            if (!v.IsNull()) top_logprobs = (int)bounded_integer(v, key, 0, kMaxChatTopLogprobs);
        } else if (key == "echo" && !chat) {
            r.echo = !v.IsNull() && boolean(v, key);
        } else if (key == "user") {
            if (!v.IsNull()) string(v, key); // accepted, not used
        } else if (chat && parse_tool_field(key, v, r))
            continue; // tool_choice, parallel_tool_calls (tool_choice.cpp)
        else if (!parse_structured_field(key, v, r))
            throw bad_request("unsupported field '" + key + "'", key);
    }
    // max_tokens 0 scores a prompt without generating (echo, usually with logprobs: what
    // evaluation harnesses send); anything else would return nothing.
    if (r.max_tokens && *r.max_tokens == 0 && !r.echo)
        throw bad_request("'max_tokens' must be at least 1 (0 only with 'echo': true, to score the prompt)", "max_tokens");
    if (chat) {
        finish_tool_choice(r);
        if (top_logprobs && !chat_logprobs) throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");
        if (chat_logprobs) r.logprobs = top_logprobs.value_or(0);
    }
    if (r.n_choices() > kMaxChoices)
        throw bad_request("'n' x the number of prompts is " + std::to_string(r.n_choices()) + " choices, at most " +
                              std::to_string(kMaxChoices),
                          "n");
    return r;
}

} // namespace rf::serve
