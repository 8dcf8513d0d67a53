// The response of POST /v1/embeddings in OpenAI's shape: {"object": "list", "data": [{"object":
// "embedding", "index": i, "embedding": [...] or "<base64>"}], "model", "usage"}. Floats with 9
// significant digits (they read back as the same float32); base64: the little-endian float32
// bytes, as OpenAI sends them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rf::serve {

// Standard base64 (RFC 4648, with padding) of the floats' little-endian IEEE-754 bytes.
std::string float32_base64(const std::vector<float> &v);

std::string embeddings_body(const std::vector<std::vector<float>> &vectors, bool base64, const std::string &model,
                            int64_t prompt_tokens);

} // namespace rf::serve
