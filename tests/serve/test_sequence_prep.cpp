// From a parsed request to the scheduler's sequences: choice numbering (prompt i x n + j),
// seeds seed + choice, token prompts used as given and checked against the vocabulary, the
// per-request context limit, echo texts and the usage's prompt count.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>

#include "api_error.h"
#include "request_parse.h"
#include "rocmforge/tokenizer.h"
#include "test_vocab.h"
#include "sequence_prep.h"

using namespace rf::serve;

namespace {

const rf::Tokenizer &spm() { return rf_test::spm_vocab(); }

PreparedSequences prep(const std::string &body, bool chat = false, SequenceLimits limits = {}) {
    return prepare_sequences(parse_completion_request(body, chat), limits, spm(), 1000, Clock::now());
}

ApiError refused(const std::string &body, SequenceLimits limits = {}) {
    try {
        prep(body, false, limits);
    } catch (const ApiError &e) {
        return e;
    }
    FAIL("accepted: " << body);
    return {};
}

} // namespace

TEST_CASE("n choices per prompt, numbered prompt x n + j, seeded seed + choice", "[serve][prep]") {
    const auto p = prep(R"({"prompt":["Hello world","Bye"],"n":2,"max_tokens":4,"temperature":0.7,"stop":["x"]})");
    REQUIRE(p.sequences.size() == 4);
    const auto hello = spm().encode("Hello world", true, true), bye = spm().encode("Bye", true, true);
    for (int k = 0; k < 4; ++k) {
        INFO("choice " << k);
        const GenerationRequest &g = p.sequences[(size_t)k];
        CHECK(g.choice == k);
        CHECK(g.sampling.seed == 1000u + (uint32_t)k);
        CHECK(g.prompt == (k < 2 ? hello : bye));
        CHECK(g.max_tokens == 4);
        CHECK(g.sampling.temperature == 0.7f);
        CHECK(g.sampling.top_k == 0); // OpenAI's sampling: no top-k, min-p or penalty
        CHECK(g.sampling.min_p == 0);
        CHECK(g.stop == std::vector<std::string>{"x"});
        CHECK(g.top_logprobs == -1);
        CHECK(p.echo[(size_t)k].empty());
    }
    // Each prompt counted once in usage, whatever n is.
    CHECK(p.prompt_tokens == (int64_t)(hello.size() + bye.size()));
}

TEST_CASE("token prompts are used as given (no BOS) and echo as their text", "[serve][prep]") {
    const auto ids = spm().encode("the beginning", false, false);
    std::string list;
    for (int32_t id : ids) {
        if (!list.empty()) list += ',';
        list += std::to_string(id);
    }
    const auto p = prep(R"({"prompt":[)" + list + R"(],"echo":true,"max_tokens":2})");
    REQUIRE(p.sequences.size() == 1);
    CHECK(p.sequences[0].prompt == ids);
    CHECK(p.echo[0] == "the beginning");
    const auto s = prep(R"({"prompt":"In the beginning","echo":true,"max_tokens":2})");
    CHECK(s.echo[0] == "In the beginning");
}

TEST_CASE("echo with logprobs: the prompt's logprobs asked for, where each prompt token begins", "[serve][prep]") {
    const auto p = prep(R"({"prompt":["Hello world","Bye"],"n":2,"echo":true,"logprobs":1,"max_tokens":2})");
    REQUIRE(p.sequences.size() == 4);
    for (size_t k = 0; k < 4; ++k) {
        CHECK(p.sequences[k].prompt_logprobs);
        CHECK(p.prompt_offsets[k].size() == p.sequences[k].prompt.size());
    }
    // SentencePiece: [BOS, "▁Hello", "▁world"]: the first piece's space is not in the echo text.
    const auto hello = spm().encode("Hello world", true, true);
    REQUIRE(hello.size() == 3);
    CHECK(p.prompt_offsets[0] == std::vector<int64_t>{0, 0, 5});
    CHECK(p.echo[1] == "Hello world");
    CHECK_FALSE(prep(R"({"prompt":"x","logprobs":1})").sequences[0].prompt_logprobs);
    CHECK(prep(R"({"prompt":"x","logprobs":1})").prompt_offsets[0].empty());
}

TEST_CASE("prompt_text_offsets: pieces laid end to end, aligned at the end of the echo text", "[serve][prep]") {
    const rf::Tokenizer &tok = spm();
    const std::string text = "a b\xc3\xa9" "c"; // "a bé" "c": 5 characters, 6 bytes
    const auto ids = tok.encode(text, false, false); // " a", " b..." pieces: one space more than the text
    REQUIRE(tok.decode_token(ids[0]) == " a");
    const auto offsets = prompt_text_offsets(ids, text, tok);
    REQUIRE(offsets.size() == ids.size());
    CHECK(offsets[0] == 0); // the piece's extra space is clamped away
    CHECK(offsets[1] == 1); // " b..." begins at the space after "a"
    for (size_t i = 1; i < offsets.size(); ++i) CHECK(offsets[i] >= offsets[i - 1]);
    CHECK(offsets.back() == 5 - utf8_chars(tok.decode_token(ids.back()))); // characters, not bytes
    // Text that does not end the pieces: offsets from 0, clamped to the text.
    const auto other = prompt_text_offsets(ids, "zz", tok);
    CHECK(other[1] == 2);
    for (int64_t o : other) CHECK(o <= 2);
}

TEST_CASE("logprobs go to every sequence; the default max_tokens fits the context", "[serve][prep]") {
    const auto p = prep(R"({"prompt":"Hello","n":3,"logprobs":4})", false, {rf::ChatTemplate::builtin(rf::ChatFormat::ChatML), 64, 1000});
    REQUIRE(p.sequences.size() == 3);
    for (const auto &g : p.sequences) {
        CHECK(g.top_logprobs == 4);
        CHECK(g.max_tokens == 64 - (int64_t)g.prompt.size());
    }
    const auto c = prep(R"({"messages":[{"role":"user","content":"hi"}],"logprobs":true,"n":2})", true);
    REQUIRE(c.sequences.size() == 2);
    CHECK(c.sequences[1].top_logprobs == 0);
    CHECK(c.sequences[1].choice == 1);
    CHECK(c.prompt_tokens == (int64_t)c.sequences[0].prompt.size());
}

TEST_CASE("token ids beyond the vocabulary and prompts beyond the context are refused", "[serve][prep]") {
    const std::string n_vocab = std::to_string(spm().n_vocab());
    ApiError e = refused(R"({"prompt":[[1,2],[3,)" + n_vocab + "]]}");
    CHECK(e.param == "prompt[1]");
    CHECK_THAT(e.message, Catch::Contains("token id " + n_vocab) && Catch::Contains("vocabulary has " + n_vocab));
    e = refused(R"({"prompt":[)" + n_vocab + "]}");
    CHECK(e.param == "prompt");
    const SequenceLimits small{rf::ChatTemplate::builtin(rf::ChatFormat::ChatML), 8, 4};
    e = refused(R"({"prompt":["ok","one two three four five six seven eight"]})", small);
    CHECK(e.param == "prompt[1]");
    CHECK_THAT(e.message, Catch::Contains("a request may hold at most 8"));
    e = refused(R"({"prompt":"ok","max_tokens":8})", small);
    CHECK(e.param == "max_tokens");
    CHECK_THAT(e.message, Catch::Contains("exceed the 8 tokens"));
}
