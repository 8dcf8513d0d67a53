// Response bodies in OpenAI's shapes (several choices, chunks, the chat role and empty deltas)
// and UTF-8 in them: whatever bytes a model or a token prompt's echo gives, the JSON is valid.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "openai_json.h"
#include "utf8_text.h"

using namespace rf::serve;

namespace {

rapidjson::Document strict(const std::string &json) {
    rapidjson::Document d;
    d.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
    REQUIRE_FALSE(d.HasParseError());
    return d;
}

std::string s(const rapidjson::Value &v) { return {v.GetString(), v.GetStringLength()}; }

} // namespace

TEST_CASE("utf8_text: valid, characters, U+FFFD for stray bytes", "[serve][json]") {
    CHECK(valid_utf8(""));
    CHECK(valid_utf8("a\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK_FALSE(valid_utf8("\x80"));
    CHECK_FALSE(valid_utf8("\xc3"));
    CHECK_FALSE(valid_utf8("\xc0\xaf"));         // overlong
    CHECK_FALSE(valid_utf8("\xed\xa0\x80"));     // a surrogate
    CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80")); // beyond U+10FFFF
    CHECK(utf8_chars("a\xc3\xa9") == 2);
    CHECK(utf8_chars("\xf0\x9f\x98\x80!") == 2);
    CHECK(utf8_chars("\xe2\x80") == 1); // a character's first bytes count where they begin
    CHECK(sanitize_utf8("ok \xc3\xa9") == "ok \xc3\xa9");
    CHECK(sanitize_utf8("a\xc8" "b") == "a\xef\xbf\xbd" "b");
    CHECK(sanitize_utf8("\x80\x80") == "\xef\xbf\xbd\xef\xbf\xbd");
    CHECK(sanitize_utf8("\xe2\x80") == "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST_CASE("completion_body: every choice with its index, text, logprobs and finish_reason; usage", "[serve][json]") {
    std::vector<Choice> choices{{0, "one", "length", std::nullopt}, {1, "two", "stop", std::vector<TokenLogprob>{}}};
    const auto d = strict(completion_body({false, "cmpl-1", 5, "m"}, choices, {3, 4}));
    CHECK(s(d["object"]) == "text_completion");
    CHECK(s(d["id"]) == "cmpl-1");
    REQUIRE(d["choices"].Size() == 2);
    CHECK(d["choices"][1]["index"].GetInt() == 1);
    CHECK(s(d["choices"][1]["text"]) == "two");
    CHECK(s(d["choices"][1]["finish_reason"]) == "stop");
    CHECK(d["choices"][0]["logprobs"].IsNull());
    CHECK(d["choices"][1]["logprobs"]["tokens"].IsArray());
    CHECK(d["usage"]["total_tokens"].GetInt() == 7);

    const auto c = strict(completion_body({true, "chatcmpl-1", 5, "m"}, choices, {3, 4}));
    CHECK(s(c["object"]) == "chat.completion");
    CHECK(s(c["choices"][0]["message"]["role"]) == "assistant");
    CHECK(s(c["choices"][1]["message"]["content"]) == "two");
    CHECK(c["choices"][1]["logprobs"]["content"].IsArray());
}

TEST_CASE("chunk_body: one choice; chat's role chunk, an empty delta has no content", "[serve][json]") {
    const ResponseMeta chat{true, "c", 1, "m"};
    auto d = strict(chunk_body(chat, Choice{2, ""}, /*with_role=*/true));
    CHECK(s(d["object"]) == "chat.completion.chunk");
    CHECK(d["choices"][0]["index"].GetInt() == 2);
    CHECK(s(d["choices"][0]["delta"]["role"]) == "assistant");
    CHECK(d["choices"][0]["finish_reason"].IsNull());
    Choice end{2, ""};
    end.finish_reason = "length";
    d = strict(chunk_body(chat, end, false));
    CHECK(d["choices"][0]["delta"].MemberCount() == 0);
    CHECK(s(d["choices"][0]["finish_reason"]) == "length");
    d = strict(chunk_body({false, "x", 1, "m"}, Choice{0, "tok"}, false));
    CHECK(s(d["choices"][0]["text"]) == "tok");
    d = strict(usage_chunk_body({false, "x", 1, "m"}, {2, 5}));
    CHECK(d["choices"].Size() == 0);
    CHECK(d["usage"]["completion_tokens"].GetInt() == 5);
}

TEST_CASE("timings: draft_n and draft_n_accepted only for speculative responses", "[serve][json]") {
    const std::vector<Choice> choices{{0, "one", "length", std::nullopt}};
    CHECK_FALSE(strict(completion_body({false, "x", 1, "m"}, choices, {3, 4})).HasMember("timings"));
    Usage u{3, 4};
    u.speculative = true;
    u.draft_n = 9;
    u.draft_n_accepted = 6;
    auto d = strict(completion_body({false, "x", 1, "m"}, choices, u));
    CHECK(d["timings"]["draft_n"].GetInt() == 9);
    CHECK(d["timings"]["draft_n_accepted"].GetInt() == 6);
    Choice end{0, ""};
    end.finish_reason = "stop";
    CHECK_FALSE(strict(chunk_body({true, "c", 1, "m"}, end, false)).HasMember("timings"));
    d = strict(chunk_body({true, "c", 1, "m"}, end, false, &u));
    CHECK(d["timings"]["draft_n"].GetInt() == 9);
    d = strict(usage_chunk_body({false, "x", 1, "m"}, u));
    CHECK(d["timings"]["draft_n_accepted"].GetInt() == 6);
}

TEST_CASE("text that is not UTF-8 (byte tokens, a token prompt's echo) is written with U+FFFD", "[serve][json]") {
    std::vector<Choice> choices{{0, "a\xc8\xc9z", "stop", std::nullopt}};
    for (bool chat : {false, true}) {
        const auto d = strict(completion_body({chat, "x", 1, "m"}, choices, {}));
        const auto &c = d["choices"][0];
        CHECK(s(chat ? c["message"]["content"] : c["text"]) == "a\xef\xbf\xbd\xef\xbf\xbdz");
        strict(chunk_body({chat, "x", 1, "m"}, Choice{0, "\xff"}, false));
    }
}
