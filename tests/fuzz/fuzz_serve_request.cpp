// The server's request handling on untrusted bytes: a body is either a request or an ApiError
// (400 with a message); a parsed chat request's messages go through every chat template (a role
// the formats lack is a UsageError, nothing else); the prompt streams through the stop matcher,
// which never emits a stop string and emits exactly the text before the first one found.
#include <cstdint>
#include <string>
#include <vector>

#include "api_error.h"
#include "check.h"
#include "request_parse.h"
#include "rocmforge/chat_template.h"
#include "rocmforge/error.h"
#include "stop_matcher.h"
#include "stop_reference.h"

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
    std::string text;
    for (const auto &p : req.prompts) {
        RF_FUZZ_CHECK(p.is_tokens ? !p.tokens.empty() && p.text.empty() : p.tokens.empty());
        for (int64_t t : p.tokens) RF_FUZZ_CHECK(t >= 0 && t <= INT32_MAX);
        text += p.text;
    }
    RF_FUZZ_CHECK(req.n_choices() >= 1 && req.n_choices() <= rf::serve::kMaxChoices);
    RF_FUZZ_CHECK(!req.logprobs || (*req.logprobs >= 0 && *req.logprobs <= rf::serve::kMaxChatTopLogprobs));
    RF_FUZZ_CHECK(!req.echo || !chat);
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
    std::vector<std::string> pieces;
    for (size_t i = 0, step = 1; i < text.size(); i += step, step = step % 7 + 1) pieces.push_back(text.substr(i, step));
    for (size_t i = 0; i < pieces.size() && !m.stopped(); ++i) out += m.push(pieces[i]);
    if (!m.stopped()) out += m.flush();
    RF_FUZZ_CHECK(out == rf_test::stop_reference(pieces, req.stop));
    return 0;
}
