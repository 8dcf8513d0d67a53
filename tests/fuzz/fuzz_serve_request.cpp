// The server's request handling on untrusted bytes: a body is either a request or an ApiError
// (400 with a message); a parsed chat request's messages go through every chat template (a role
// the formats lack is a UsageError, nothing else); the prompt streams through the stop matcher,
// which never emits a stop string and emits exactly the text before the first one.
#include <string>

#include "api_error.h"
#include "check.h"
#include "request_parse.h"
#include "rocmforge/chat_template.h"
#include "rocmforge/error.h"
#include "stop_matcher.h"

namespace {

// The text before the first occurrence of any stop string (all of it when none occurs).
std::string before_first_stop(const std::string &text, const std::vector<std::string> &stops) {
    size_t cut = text.size();
    for (const auto &s : stops)
        if (!s.empty())
            if (size_t at = text.find(s); at != std::string::npos && at < cut) cut = at;
    return text.substr(0, cut);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    const bool chat = data[0] & 1;
    const std::string_view body(reinterpret_cast<const char *>(data) + 1, size - 1);
    rf::serve::CompletionRequest req;
    try {
        req = rf::serve::parse_completion_request(body, chat);
    } catch (const rf::serve::ApiError &e) {
        RF_FUZZ_CHECK(!rf::serve::error_body(e).empty());
        return 0;
    }
    std::string text = req.prompt;
    if (chat) {
        for (rf::ChatFormat f : {rf::ChatFormat::ChatML, rf::ChatFormat::Llama2, rf::ChatFormat::Llama3, rf::ChatFormat::Mistral,
                                 rf::ChatFormat::Gemma, rf::ChatFormat::Phi3}) {
            try {
                text = rf::apply_chat_template(f, req.messages, true);
            } catch (const rf::UsageError &) {
            }
        }
    }
    // Stream the text in pieces of 1..7 bytes through the stop matcher.
    rf::serve::StopMatcher m(req.stop);
    std::string out;
    for (size_t i = 0, step = 1; i < text.size() && !m.stopped(); i += step, step = step % 7 + 1)
        out += m.push(text.substr(i, step));
    if (!m.stopped()) out += m.flush();
    RF_FUZZ_CHECK(out == before_first_stop(text, req.stop));
    return 0;
}
