// The body of POST /v1/completions and /v1/chat/completions, checked field by field: every
// mistake (bad JSON, a wrong type, an unknown or unsupported field, a value out of range) is an
// ApiError 400 naming the field, so a client learns what to fix instead of getting a guess.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/chat_template.h"

namespace rf::serve {

struct CompletionRequest {
    bool chat = false;
    std::string model;
    std::string prompt;                // /v1/completions
    std::vector<ChatMessage> messages; // /v1/chat/completions
    std::optional<int64_t> max_tokens;
    float temperature = 1.0f; // OpenAI's defaults
    float top_p = 1.0f;
    std::optional<uint32_t> seed;
    std::vector<std::string> stop;
    bool stream = false;
    bool include_usage = false; // stream_options.include_usage
};

// Throws ApiError.
CompletionRequest parse_completion_request(std::string_view body, bool chat);

} // namespace rf::serve
