// Response bodies in OpenAI's shapes: whole completions, streamed chunks, the model list.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace rf::serve {

struct ResponseMeta {
    bool chat = false;
    std::string id; // "chatcmpl-..." / "cmpl-..."
    int64_t created = 0;
    std::string model;
};

struct Usage {
    int64_t prompt_tokens = 0, completion_tokens = 0;
};

// chat.completion / text_completion.
std::string completion_body(const ResponseMeta &m, const std::string &text, const std::string &finish_reason,
                            const Usage &usage);
// chat.completion.chunk / text_completion chunk: one choice with `text` (chat: the assistant
// role on the first chunk) and finish_reason (null while absent).
std::string chunk_body(const ResponseMeta &m, const std::string &text, bool with_role,
                       const std::optional<std::string> &finish_reason);
// The final chunk of stream_options.include_usage: no choices, the usage.
std::string usage_chunk_body(const ResponseMeta &m, const Usage &usage);
std::string models_body(const std::string &model, int64_t created);

} // namespace rf::serve
