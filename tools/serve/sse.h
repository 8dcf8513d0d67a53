// Server-sent events framing as the OpenAI streaming API uses it: one `data:` line per JSON
// chunk, a blank line after each, and `data: [DONE]` at the end.
#pragma once
#include <string>

namespace rf::serve {

inline std::string sse_event(const std::string &json) { return "data: " + json + "\n\n"; }
inline const char *sse_done() { return "data: [DONE]\n\n"; }

} // namespace rf::serve
