// Log probabilities of sampled tokens (the log-softmax of a logits row, the top N) and their
// JSON in OpenAI's completions and chat shapes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "logprobs_json.h"
#include "rocmforge/tokenizer.h"
#include "test_vocab.h"
#include "token_logprobs.h"

using namespace rf::serve;

namespace {

const rf::Tokenizer &spm() { return rf_test::spm_vocab(); }

rapidjson::Document as_json(bool chat, const std::vector<TokenLogprob> &t) {
    rapidjson::StringBuffer sb;
    JsonWriter w(sb);
    write_logprobs(w, chat, t);
    rapidjson::Document d;
    d.Parse(sb.GetString());
    REQUIRE_FALSE(d.HasParseError());
    return d;
}

} // namespace

TEST_CASE("token_logprob: log-softmax of the row, the top N most likely first", "[serve][logprobs]") {
    const rf::Tokenizer &tok = spm();
    const int64_t n = tok.n_vocab();
    std::vector<float> logits((size_t)n, 0.0f);
    logits[100] = 5;
    logits[200] = 3;
    logits[300] = 3; // ties 200: the lower id first
    logits[400] = 4;
    const TokenLogprob lp = token_logprob(logits.data(), n, 200, 3, tok);
    const double lse = std::log(std::exp(5.0) + std::exp(4.0) + 2 * std::exp(3.0) + (double)(n - 4));
    CHECK(lp.logprob == Approx(3.0 - lse).epsilon(1e-5));
    REQUIRE(lp.top.size() == 3);
    CHECK(lp.top[0].first == tok.token_to_piece(100, true));
    CHECK(lp.top[0].second == Approx(5.0 - lse).epsilon(1e-5));
    CHECK(lp.top[1].first == tok.token_to_piece(400, true));
    CHECK(lp.top[2].first == tok.token_to_piece(200, true));
    CHECK(lp.token == tok.token_to_piece(200, true));
    // The probabilities of the whole row sum to 1.
    double sum = 0;
    for (int64_t i = 0; i < n; i += 1) sum += std::exp((double)logits[(size_t)i] - lse);
    CHECK(sum == Approx(1.0));
    CHECK(token_logprob(logits.data(), n, 100, 0, tok).top.empty());
}

TEST_CASE("token_logprob: non-finite logits are impossible tokens, never NaN", "[serve][logprobs]") {
    const rf::Tokenizer &tok = spm();
    const int64_t n = tok.n_vocab();
    std::vector<float> logits((size_t)n, -std::numeric_limits<float>::infinity());
    logits[7] = std::numeric_limits<float>::quiet_NaN();
    logits[9] = 1.0f;
    logits[11] = 1.0f;
    const TokenLogprob lp = token_logprob(logits.data(), n, 9, 5, tok);
    CHECK(lp.logprob == Approx(std::log(0.5)));
    REQUIRE(lp.top.size() == 2); // only the finite ones
    CHECK(std::isinf(token_logprob(logits.data(), n, 7, 1, tok).logprob));
}

TEST_CASE("token_display: whole UTF-8 as it is, a part of a character as bytes:\\xNN", "[serve][logprobs]") {
    CHECK(token_display(" the") == " the");
    CHECK(token_display("\xc3\xa9") == "\xc3\xa9");
    CHECK(token_display("\xe2\x80") == "bytes:\\xe2\\x80");
    CHECK(token_display("\xff") == "bytes:\\xff");
    CHECK(token_display("\xc0\xaf") == "bytes:\\xc0\\xaf"); // overlong
    CHECK(token_display("\xed\xa0\x80") == "bytes:\\xed\\xa0\\x80"); // a surrogate
    CHECK(token_display("") == "");
}

TEST_CASE("completions logprobs shape: tokens, token_logprobs, top_logprobs with the sampled token, text_offset",
          "[serve][logprobs]") {
    std::vector<TokenLogprob> t(2);
    t[0] = {" a", -0.5f, {{" b", -0.25f}, {" a", -0.5f}}, 10};
    t[1] = {"\xe2\x80", -1.0f, {{" c", -0.1f}}, 12}; // sampled, not among the top: added
    const auto d = as_json(false, t);
    REQUIRE(d["tokens"].Size() == 2);
    CHECK(std::string(d["tokens"][0].GetString()) == " a");
    CHECK(std::string(d["tokens"][1].GetString()) == "bytes:\\xe2\\x80");
    CHECK(d["token_logprobs"][0].GetDouble() == -0.5);
    CHECK(d["top_logprobs"][0].MemberCount() == 2);
    CHECK(d["top_logprobs"][0][" b"].GetDouble() == -0.25);
    CHECK(d["top_logprobs"][1].MemberCount() == 2);
    CHECK(d["top_logprobs"][1]["bytes:\\xe2\\x80"].GetDouble() == -1.0);
    CHECK(d["text_offset"][0].GetInt64() == 10);
    CHECK(d["text_offset"][1].GetInt64() == 12);
}

TEST_CASE("completions logprobs: two tokens with one text keep one key, -inf written -9999", "[serve][logprobs]") {
    std::vector<TokenLogprob> t(1);
    t[0] = {"x", -std::numeric_limits<float>::infinity(), {{"", -0.1f}, {"", -0.2f}}, 0};
    const auto d = as_json(false, t);
    CHECK(d["top_logprobs"][0].MemberCount() == 2);
    CHECK(d["top_logprobs"][0][""].GetDouble() == Approx(-0.1));
    CHECK(d["token_logprobs"][0].GetDouble() == -9999.0);
}

TEST_CASE("completions logprobs: the echoed prompt's first token has null logprob and top_logprobs", "[serve][logprobs]") {
    std::vector<TokenLogprob> t(2);
    t[0] = {"<s>", 0, {}, 0, /*no_logprob=*/true};
    t[1] = {"In", -8.0f, {{" the", -2.0f}}, 0};
    const auto d = as_json(false, t);
    CHECK(d["token_logprobs"][0].IsNull());
    CHECK(d["top_logprobs"][0].IsNull());
    CHECK(d["token_logprobs"][1].GetDouble() == -8.0);
    CHECK(d["top_logprobs"][1].MemberCount() == 2);
}

TEST_CASE("chat logprobs shape: content entries with bytes and top_logprobs, refusal null", "[serve][logprobs]") {
    std::vector<TokenLogprob> t(1);
    t[0] = {"\xc3", -0.75f, {{"Hi", -0.5f}}, 0};
    const auto d = as_json(true, t);
    CHECK(d["refusal"].IsNull());
    const auto &c = d["content"][0];
    CHECK(std::string(c["token"].GetString()) == "bytes:\\xc3");
    CHECK(c["logprob"].GetDouble() == -0.75);
    REQUIRE(c["bytes"].Size() == 1);
    CHECK(c["bytes"][0].GetInt() == 0xc3);
    REQUIRE(c["top_logprobs"].Size() == 1);
    CHECK(std::string(c["top_logprobs"][0]["token"].GetString()) == "Hi");
    CHECK(c["top_logprobs"][0]["bytes"].Size() == 2);
    CHECK(as_json(true, {})["content"].Size() == 0);
}
