// /v1/embeddings request parsing and response JSON without a model (the test vocabulary).
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <rapidjson/document.h>

#include "api_error.h"
#include "embedding_request.h"
#include "embedding_response.h"
#include "test_vocab.h"

using namespace rf;
using namespace rf::serve;

namespace {

const EmbeddingLimits kLimits{/*n_embd=*/8, /*n_vocab=*/32000, /*max_tokens=*/16, /*max_inputs=*/4};

EmbeddingRequest parse(const std::string &body) { return parse_embedding_request(body, rf_test::spm_vocab(), kLimits); }

// The field a bad body is refused for ("" when none is named).
std::string refused_param(const std::string &body) {
    try {
        parse(body);
    } catch (const ApiError &e) {
        CHECK(e.status == 400);
        return e.param;
    }
    return "(accepted)";
}

} // namespace

TEST_CASE("embedding input shapes become token lists", "[serve][embed]") {
    const auto &tok = rf_test::spm_vocab();
    auto r = parse(R"({"input":"Hello world"})");
    REQUIRE(r.inputs.size() == 1);
    CHECK(r.inputs[0] == tok.encode("Hello world", true, false));
    CHECK(r.prompt_tokens == (int64_t)r.inputs[0].size());
    CHECK_FALSE(r.base64);
    CHECK_FALSE(r.pooling);

    r = parse(R"({"input":["Hello","world"],"model":"m","encoding_format":"base64","pooling":"cls","dimensions":8,"user":"u"})");
    REQUIRE(r.inputs.size() == 2);
    CHECK(r.inputs[1] == tok.encode("world", true, false));
    CHECK(r.model == "m");
    CHECK(r.base64);
    CHECK(r.pooling == Pooling::Cls);

    r = parse(R"({"input":[5,6,7]})"); // one token array, used as given (no BOS)
    REQUIRE(r.inputs.size() == 1);
    CHECK(r.inputs[0] == std::vector<int32_t>{5, 6, 7});
    r = parse(R"({"input":[[5],[6,7]],"encoding_format":null,"dimensions":null})");
    CHECK(r.inputs == std::vector<std::vector<int32_t>>{{5}, {6, 7}});
    CHECK(r.prompt_tokens == 3);
}

TEST_CASE("bad embedding requests are 400s naming the field", "[serve][embed]") {
    CHECK(refused_param("{") == "");
    CHECK(refused_param("[1]") == "");
    CHECK(refused_param(R"({"model":"m"})") == "input");
    CHECK(refused_param(R"({"input":""})") == "input");
    CHECK(refused_param(R"({"input":[]})") == "input");
    CHECK(refused_param(R"({"input":[[]]})") == "input");
    CHECK(refused_param(R"({"input":null})") == "input");
    CHECK(refused_param(R"({"input":true})") == "input");
    CHECK(refused_param(R"({"input":["a",1]})") == "input");
    CHECK(refused_param(R"({"input":[[1],"a"]})") == "input");
    CHECK(refused_param(R"({"input":[1,[2]]})") == "input");
    CHECK(refused_param(R"({"input":[1,32000]})") == "input");
    CHECK(refused_param(R"({"input":[-1]})") == "input");
    CHECK(refused_param(R"({"input":[1.5]})") == "input");
    CHECK(refused_param(R"({"input":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]})") == "input"); // > max_tokens
    CHECK(refused_param(R"({"input":["a","b","c","d","e"]})") == "input");                       // > max_inputs
    CHECK(refused_param(R"({"input":"a","encoding_format":"binary"})") == "encoding_format");
    CHECK(refused_param(R"({"input":"a","encoding_format":1})") == "encoding_format");
    CHECK(refused_param(R"({"input":"a","dimensions":4})") == "dimensions");
    CHECK(refused_param(R"({"input":"a","dimensions":8.0})") == "dimensions");
    CHECK(refused_param(R"({"input":"a","model":[]})") == "model");
    CHECK(refused_param(R"({"input":"a","user":1})") == "user");
    CHECK(refused_param(R"({"input":"a","pooling":"max"})") == "pooling");
    CHECK(refused_param(R"({"input":"a","pooling":2})") == "pooling");
    CHECK(refused_param(R"({"input":"a","temperature":1})") == "temperature");
    // The message says which element is wrong.
    try {
        parse(R"({"input":[[1],[2,99999]]})");
        FAIL("accepted");
    } catch (const ApiError &e) {
        CHECK(e.message.find("'input'[1][1] = 99999") != std::string::npos);
    }
}

TEST_CASE("base64 of float32: little-endian bytes, RFC 4648 padding", "[serve][embed]") {
    CHECK(float32_base64({}) == "");
    CHECK(float32_base64({1.0f}) == "AACAPw=="); // 00 00 80 3f
    CHECK(float32_base64({1.0f, -2.0f}) == "AACAPwAAAMA=");
    CHECK(float32_base64({0.0f, 0.0f, 0.0f}) == "AAAAAAAAAAAAAAAA");
}

TEST_CASE("embeddings body: OpenAI's shape, floats that read back exactly", "[serve][embed]") {
    const std::vector<std::vector<float>> v = {{0.1f, -1.5f, 3.0e-8f}, {1.0f, 2.0f, 3.0f}};
    rapidjson::Document d;
    const std::string body = embeddings_body(v, false, "m", 7);
    d.Parse(body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(std::string(d["object"].GetString()) == "list");
    CHECK(std::string(d["model"].GetString()) == "m");
    CHECK(d["usage"]["prompt_tokens"].GetInt() == 7);
    CHECK(d["usage"]["total_tokens"].GetInt() == 7);
    REQUIRE(d["data"].Size() == 2);
    for (rapidjson::SizeType i = 0; i < 2; ++i) {
        const auto &e = d["data"][i];
        CHECK(std::string(e["object"].GetString()) == "embedding");
        CHECK(e["index"].GetInt() == (int)i);
        REQUIRE(e["embedding"].Size() == 3);
        for (rapidjson::SizeType k = 0; k < 3; ++k) CHECK((float)e["embedding"][k].GetDouble() == v[i][k]);
    }
    d.Parse(embeddings_body(v, true, "m", 7).c_str());
    CHECK(std::string(d["data"][1]["embedding"].GetString()) == float32_base64(v[1]));
}
