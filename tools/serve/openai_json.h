// Response bodies in OpenAI's shapes: whole completions, streamed chunks, the model list.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "token_logprobs.h"

namespace rf::serve {

struct ResponseMeta {
    bool chat = false;
    std::string id; // "chatcmpl-..." / "cmpl-..."
    int64_t created = 0;
    std::string model;
};

struct Usage {
    int64_t prompt_tokens = 0, completion_tokens = 0;
    // Speculative decoding: "timings" (as llama-server's) with the drafted and accepted tokens
    // of all choices, written when a choice decoded speculatively.
    bool speculative = false;
    int64_t draft_n = 0, draft_n_accepted = 0;
};

// One tool call of a chat choice. In a streamed delta, a call's first piece has its id and name,
// the pieces after it only more of its arguments (id and name "").
struct ToolCallOut {
    int index = 0; // the call's place among the choice's calls (deltas only)
    std::string id, name;
    std::string arguments; // JSON text, as OpenAI sends it (a string)
};

// One entry of "choices".
struct Choice {
    int index = 0;
    std::string text;
    std::optional<std::string> finish_reason;             // null while absent
    std::optional<std::vector<TokenLogprob>> logprobs;     // "logprobs": null when absent
    std::vector<ToolCallOut> tool_calls; // chat; a message with calls and no text has content null
    std::string reasoning; // chat: "reasoning_content" (llama-server's name) when not empty
};

// chat.completion / text_completion with every choice.
std::string completion_body(const ResponseMeta &m, const std::vector<Choice> &choices, const Usage &usage);
// chat.completion.chunk / text_completion chunk: one choice (chat: the assistant role when
// with_role, no content key in an empty delta). timings: the last chunk's (Usage::speculative).
std::string chunk_body(const ResponseMeta &m, const Choice &choice, bool with_role, const Usage *timings = nullptr);
// The final chunk of stream_options.include_usage: no choices, the usage.
std::string usage_chunk_body(const ResponseMeta &m, const Usage &usage);
std::string models_body(const std::string &model, int64_t created);

} // namespace rf::serve
