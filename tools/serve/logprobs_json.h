// The `logprobs` member of a choice in OpenAI's two shapes:
//   completions: {"tokens": [...], "token_logprobs": [...], "top_logprobs": [{token: logprob}],
//                 "text_offset": [...]} (each top_logprobs object also holds the sampled token,
//                 so it has up to N + 1 members);
//   chat:        {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob",
//                 "bytes"}]}], "refusal": null}.
// A token that is not whole UTF-8 (part of a character) is written "bytes:\xe2\x80" as OpenAI
// does; `bytes` always has its exact bytes. -inf (an impossible token) is written -9999.0.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "token_logprobs.h"

namespace rf::serve {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Writes the value (the caller wrote the "logprobs" key); text_offset as the entries hold it.
// An entry with no_logprob (the echoed prompt's first token) has null logprob and top_logprobs.
void write_logprobs(JsonWriter &w, bool chat, const std::vector<TokenLogprob> &tokens);

// The token as JSON text: itself when valid UTF-8, else "bytes:" and \xNN per byte.
std::string token_display(const std::string &bytes);

} // namespace rf::serve
