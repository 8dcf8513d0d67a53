// The body of POST /v1/completions and /v1/chat/completions, checked field by field: every
// mistake (bad JSON, a wrong type, an unknown or unsupported field, a value out of range) is an
// ApiError 400 naming the field, so a client learns what to fix instead of getting a guess.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/chat_template.h"
#include "rocmforge/grammar.h"

namespace rf::serve {

// One prompt of /v1/completions: text, or token ids used as they are (no BOS added).
struct PromptInput {
    bool is_tokens = false;
    std::string text;
    std::vector<int64_t> tokens; // range against the vocabulary is checked by the caller
};

constexpr int64_t kMaxChoices = 128;          // prompts x n of one request (OpenAI's n limit)
constexpr int kMaxCompletionLogprobs = 5;     // /v1/completions `logprobs`, as OpenAI
constexpr int kMaxChatTopLogprobs = 20;       // /v1/chat/completions `top_logprobs`, as OpenAI

// tool_choice (tool_choice.cpp): auto parses calls from the output, none never does, required
// and a named function constrain the output to calls (the grammar below).
enum class ToolChoice { Auto, None, Required, Function };

struct CompletionRequest {
    bool chat = false;
    std::string model;
    std::vector<PromptInput> prompts;  // /v1/completions: a string, strings, tokens or token arrays
    std::vector<ChatMessage> messages; // /v1/chat/completions
    std::string tools_json;            // chat: the request's tools as JSON ("" when none)
    std::string template_kwargs_json;  // chat: chat_template_kwargs as JSON ("" when none)
    ToolChoice tool_choice = ToolChoice::Auto;
    std::string tool_choice_function; // ToolChoice::Function: the tool's name
    bool tool_choice_given = false;   // tool_choice was in the body (not null)
    bool parallel_tool_calls = true;  // false: one call at most
    std::vector<std::string> tool_names; // the functions of `tools`: a parsed call must name one
    std::optional<int64_t> max_tokens;
    float temperature = 1.0f; // OpenAI's defaults
    float top_p = 1.0f;
    float frequency_penalty = 0.0f, presence_penalty = 0.0f; // OpenAI's, over the last 64 tokens
    // llama.cpp server's extensions (off unless given): top_k (0: off), min_p (0: off),
    // repeat_penalty (1: off), repeat_last_n (the tokens the penalties look back; -1: all).
    int32_t top_k = 0;
    float min_p = 0.0f, repeat_penalty = 1.0f;
    int32_t repeat_last_n = 64;
    std::optional<uint32_t> seed;
    std::vector<std::string> stop;
    int64_t n = 1; // choices per prompt
    // Log probabilities of the sampled tokens with this many alternatives (completions'
    // `logprobs` N; chat's `logprobs: true` with `top_logprobs` N, 0 when absent); nullopt: none.
    std::optional<int> logprobs;
    bool echo = false; // completions: the prompt comes back before the completion (with logprobs:
                       // the prompt tokens' too)
    bool stream = false;
    bool include_usage = false; // stream_options.include_usage
    // Structured output (structured_output.cpp): the GBNF the output follows ("": none), from
    // `grammar`, `response_format`, `json_schema` or `tool_choice` (structured_fields: which
    // one), and logit_bias {token id, bias}.
    std::string grammar;
    std::shared_ptr<const grammar::Grammar> grammar_compiled;
    std::string grammar_field, structured_fields;
    std::vector<std::pair<int32_t, float>> logit_bias;

    // Whether the output is parsed into tool calls: tools given and tool_choice not none.
    bool parses_tool_calls() const { return chat && !tool_names.empty() && tool_choice != ToolChoice::None; }
    // Whether the grammar forces the output to be calls in the generic JSON form.
    bool forces_tool_call() const {
        return parses_tool_calls() && (tool_choice == ToolChoice::Required || tool_choice == ToolChoice::Function);
    }

    // Sequences the request decodes: one per choice.
    int64_t n_choices() const { return n * (chat ? 1 : (int64_t)prompts.size()); }
};

// Throws ApiError.
CompletionRequest parse_completion_request(std::string_view body, bool chat);

} // namespace rf::serve
