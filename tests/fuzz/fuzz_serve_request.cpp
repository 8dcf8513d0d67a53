// The server's request handling on untrusted bytes: a body is either a request or an ApiError
// (400 with a message); a parsed chat request's messages go through every chat template (a role
// the formats lack is a UsageError, nothing else); the request becomes its sequences with the
// SentencePiece test vocabulary (or an ApiError: token ids beyond the vocabulary, the context
// limit), one per choice, within the limit; the prompt streams through the stop matcher, which
// never emits a stop string and emits exactly the text before the first one found; the
// request's grammar walked on the vocabulary (every token a mask allows is accepted); and the
// response JSON written from the request's texts (echo, tokens cut anywhere as logprobs) and
// from bytes that are not UTF-8 as a choice's text is valid JSON in valid UTF-8. Input: u8 flags (bit 0 chat, bit 1 a small context), the body.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "api_error.h"
#include "check.h"
#include "openai_json.h"
#include "request_parse.h"
#include "rocmforge/chat_template.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/grammar.h"
#include "rocmforge/log.h"
#include "rocmforge/tokenizer.h"
#include "sequence_prep.h"
#include "stop_matcher.h"
#include "stop_reference.h"
#include "token_logprobs.h"

namespace {

const rf::Tokenizer &vocab() {
    static const std::unique_ptr<rf::Tokenizer> tok = [] {
        const auto file = rf::gguf::File::open(std::string(RF_FUZZ_VOCAB_DIR) + "/ggml-vocab-llama-spm.gguf");
        return rf::Tokenizer::from_gguf(*file);
    }();
    return *tok;
}

void check_sequences(const rf::serve::CompletionRequest &req, bool small) {
    const rf::serve::SequenceLimits limits{rf::ChatTemplate::builtin(rf::ChatFormat::Gemma), small ? 24 : 4096, 16};
    rf::serve::PreparedSequences p;
    try {
        p = rf::serve::prepare_sequences(req, limits, vocab(), 7, rf::serve::Clock::now());
    } catch (const rf::serve::ApiError &e) {
        RF_FUZZ_CHECK(e.status == 400 && !e.message.empty());
        return;
    }
    RF_FUZZ_CHECK((int64_t)p.sequences.size() == req.n_choices());
    RF_FUZZ_CHECK(p.echo.size() == p.sequences.size() && p.prompt_offsets.size() == p.sequences.size());
    for (size_t k = 0; k < p.sequences.size(); ++k) {
        const rf::serve::GenerationRequest &g = p.sequences[k];
        RF_FUZZ_CHECK(g.choice == (int)k && g.sampling.seed == 7u + (uint32_t)k);
        // max_tokens 0 only where the request asked for it, which the parser allows with echo on
        // completions alone (the prompt scored without generating).
        const bool score_only = req.max_tokens && *req.max_tokens == 0;
        RF_FUZZ_CHECK(!score_only || (req.echo && !req.chat));
        RF_FUZZ_CHECK(!g.prompt.empty() && g.max_tokens >= (score_only ? 0 : 1) &&
                      (int64_t)g.prompt.size() + g.max_tokens <= limits.n_ctx_request);
        for (int32_t t : g.prompt) RF_FUZZ_CHECK(t >= 0 && t < vocab().n_vocab());
        const auto &offsets = p.prompt_offsets[k];
        RF_FUZZ_CHECK(offsets.empty() || offsets.size() == g.prompt.size());
        for (size_t i = 0; i < offsets.size(); ++i)
            RF_FUZZ_CHECK(offsets[i] >= (i ? offsets[i - 1] : 0) && offsets[i] <= rf::serve::utf8_chars(p.echo[k]));
    }
}

// A response built from `text` (valid UTF-8, as the parser requires) and its pieces as tokens
// must parse back, strictly, with every choice.
// `raw` (any bytes: what a model or a token prompt's echo may give) is written as U+FFFD where
// it is not UTF-8.
void check_response_json(bool chat, const std::string &text, const std::vector<std::string> &pieces, const std::string &raw) {
    std::vector<rf::serve::TokenLogprob> lps;
    for (size_t i = 0; i < pieces.size(); ++i) {
        rf::serve::TokenLogprob t{pieces[i], -(float)i, {{pieces[i], -1.0f}, {pieces[(i + 1) % pieces.size()], -2.0f}}, (int64_t)i};
        t.no_logprob = i == 0;
        lps.push_back(std::move(t));
    }
    const rf::serve::ResponseMeta meta{chat, "id", 1, text};
    std::vector<rf::serve::Choice> choices{{0, text, "stop", lps}, {1, raw, std::nullopt, std::nullopt}};
    for (const std::string &json : {rf::serve::completion_body(meta, choices, {1, 2}), rf::serve::chunk_body(meta, choices[0], true)}) {
        rapidjson::Document d;
        d.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
        RF_FUZZ_CHECK(!d.HasParseError() && d.IsObject() && d["choices"].IsArray());
        const auto &c0 = d["choices"][0];
        const auto &t0 = chat ? (c0.HasMember("message") ? c0["message"]["content"] : c0["delta"]["content"]) : c0["text"];
        RF_FUZZ_CHECK(std::string(t0.GetString(), t0.GetStringLength()) == text);
    }
}

// Structured output: the request's grammar (json_schema, json_object, GBNF) on the test
// vocabulary. Every token a mask allows, the matcher accepts; a few steps along the first
// allowed token of each mask. A grammar too ambiguous to go on is an rf::Error, nothing else.
void check_grammar(const rf::serve::CompletionRequest &req) {
    if (req.grammar.empty()) return;
    RF_FUZZ_CHECK(req.grammar_compiled != nullptr && !req.grammar_field.empty());
    static const auto trie = std::make_shared<rf::grammar::TokenTrie>(vocab());
    try {
        auto g = std::make_shared<rf::grammar::TokenGrammar>(req.grammar_compiled, trie);
        rf::grammar::GrammarMatcher m(g);
        for (int step = 0; step < 8 && !m.finished(); ++step) {
            const rf::grammar::TokenMask mask = m.allowed();
            int32_t first = -1;
            for (int32_t id = 0; id < vocab().n_vocab() && first < 0; ++id)
                if (rf::grammar::mask_allows(mask, id) && !vocab().is_eog(id)) first = id;
            if (first < 0) break;
            RF_FUZZ_CHECK(m.accept(first));
        }
    } catch (const rf::Error &) {
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    spdlog::set_level(spdlog::level::off);
    vocab();
    return 0;
}

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
                                 rf::ChatFormat::Gemma, rf::ChatFormat::Phi3, rf::ChatFormat::Harmony}) {
            try {
                text = rf::apply_chat_template(f, req.messages, true);
            } catch (const rf::UsageError &) {
            }
        }
    }
    check_sequences(req, data[0] & 2);
    check_grammar(req);
    // Stream the text in pieces of 1..7 bytes through the stop matcher.
    rf::serve::StopMatcher m(req.stop);
    std::string out;
    std::vector<std::string> pieces;
    for (size_t i = 0, step = 1; i < text.size(); i += step, step = step % 7 + 1) pieces.push_back(text.substr(i, step));
    for (size_t i = 0; i < pieces.size() && !m.stopped(); ++i) out += m.push(pieces[i]);
    if (!m.stopped()) out += m.flush();
    RF_FUZZ_CHECK(out == rf_test::stop_reference(pieces, req.stop));
    // Raw bytes for the sanitizer: the body (valid UTF-8 once parsed) with every third byte's
    // top bit flipped, which makes stray lead and continuation bytes.
    std::string raw(body);
    for (size_t i = 0; i < raw.size(); i += 3) raw[i] = (char)(raw[i] ^ 0x80);
    if (!pieces.empty()) check_response_json(chat, text, pieces, raw);
    return 0;
}
