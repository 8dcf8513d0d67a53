// The structured-output fields of a request: response_format (json_object, json_schema),
// grammar (GBNF), json_schema (llama.cpp server's form) and logit_bias, parsed into a grammar
// and biases, and every bad one a 400 naming the field (and the schema keyword it cannot do).
#include <catch2/catch.hpp>

#include <string>

#include "../grammar/grammar_test_util.h"
#include "api_error.h"
#include "request_parse.h"
#include "sequence_prep.h"
#include "test_vocab.h"

using rf::serve::ApiError;
using rf::serve::parse_completion_request;

namespace {

const std::string kChat = R"({"messages":[{"role":"user","content":"hi"}],)";

ApiError refused_chat(const std::string &fields) {
    try {
        parse_completion_request(kChat + fields + "}", true);
    } catch (const ApiError &e) {
        return e;
    }
    FAIL("accepted: " << fields);
    return {};
}

} // namespace

TEST_CASE("response_format json_object and json_schema become grammars", "[serve][structured]") {
    const auto obj = parse_completion_request(kChat + R"("response_format":{"type":"json_object"}})", true);
    REQUIRE_FALSE(obj.grammar.empty());
    CHECK(obj.grammar_field == "response_format");
    CHECK(rf_test::matches(obj.grammar, R"({"a": [1, "b"]})"));
    CHECK_FALSE(rf_test::matches(obj.grammar, "[1]"));

    const auto schema = parse_completion_request(
        kChat + R"("response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,
        "schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}}}})",
        true);
    CHECK(schema.grammar_field == "response_format.json_schema.schema");
    CHECK(rf_test::matches(schema.grammar, R"({"n": 3})"));
    CHECK_FALSE(rf_test::matches(schema.grammar, R"({"n": "3"})"));

    const auto text = parse_completion_request(kChat + R"("response_format":{"type":"text"}})", true);
    CHECK(text.grammar.empty());
    const auto gbnf = parse_completion_request(R"({"prompt":"x","grammar":"root ::= \"yes\" | \"no\""})", false);
    CHECK(rf_test::matches(gbnf.grammar, "no"));
    const auto top = parse_completion_request(R"({"prompt":"x","json_schema":{"enum":[1,2]}})", false);
    CHECK(rf_test::matches(top.grammar, "2"));
}

TEST_CASE("bad structured-output fields are a 400 naming the field", "[serve][structured]") {
    struct Case {
        std::string fields, param, message;
    };
    const std::vector<Case> cases = {
        {R"("response_format":"json")", "response_format", "must be {\"type\""},
        {R"("response_format":{"type":"xml"})", "response_format.type", "text, json_object or json_schema"},
        {R"("response_format":{"type":"json_object","schema":{}})", "response_format.schema", "unsupported field"},
        {R"("response_format":{"type":"json_schema"})", "response_format.json_schema", "must be an object"},
        {R"("response_format":{"type":"json_schema","json_schema":{"schema":{}}})", "response_format.json_schema.name", "is required"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x"}})", "response_format.json_schema.schema", "is required"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{},"extra":1}})",
         "response_format.json_schema.extra", "unsupported field"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","strict":"yes","schema":{}}})",
         "response_format.json_schema.strict", "boolean"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"string","pattern":"a+"}}})",
         "response_format.json_schema.schema", "the keyword 'pattern' is not supported"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"properties":{"a":{"type":"number","minimum":1}}}}})",
         "response_format.json_schema.schema", "'minimum' on a number is not supported (only on an integer) (at /properties/a)"},
        {R"("response_format":{"type":"json_schema","json_schema":{"name":"x","schema":5}})",
         "response_format.json_schema.schema", "must be a JSON schema"},
        {R"("grammar":"root ::= foo")", "grammar", "line 1, column 10: undefined rule 'foo'"},
        {R"("grammar":7)", "grammar", "must be a string"},
        {R"("grammar":"root ::= \"a\"","response_format":{"type":"json_object"})", "response_format", "cannot both"},
        {R"("json_schema":{"type":"string","format":"email"})", "json_schema", "the format 'email' is not supported (date, time, date-time and uuid are)"},
        {R"("logit_bias":[1])", "logit_bias", "must be an object"},
        {R"("logit_bias":{"abc":1})", "logit_bias", "token ids"},
        {R"("logit_bias":{"-1":1})", "logit_bias", "token ids"},
        {R"("logit_bias":{"1":"x"})", "logit_bias", "must be a number"},
        {R"("logit_bias":{"1":101})", "logit_bias", "between -100 and 100"},
    };
    for (const Case &c : cases) {
        INFO(c.fields);
        const ApiError e = refused_chat(c.fields);
        CHECK(e.status == 400);
        CHECK(e.param == c.param);
        CHECK_THAT(e.message, Catch::Contains(c.message));
    }
}

TEST_CASE("logit_bias reaches every choice's sampler; ids beyond the vocabulary are a 400", "[serve][structured]") {
    const rf::Tokenizer &tok = rf_test::spm_vocab();
    const auto r = parse_completion_request(R"({"prompt":"x","n":2,"logit_bias":{"5":-100,"29":2.5}})", false);
    REQUIRE(r.logit_bias.size() == 2);
    const auto prep = rf::serve::prepare_sequences(r, {}, tok, 1, rf::serve::Clock::now());
    REQUIRE(prep.sequences.size() == 2);
    for (const auto &g : prep.sequences) CHECK(g.sampling.logit_bias == r.logit_bias);
    const auto big = parse_completion_request(R"({"prompt":"x","logit_bias":{"9999999":1}})", false);
    try {
        rf::serve::prepare_sequences(big, {}, tok, 1, rf::serve::Clock::now());
        FAIL("accepted");
    } catch (const ApiError &e) {
        CHECK(e.param == "logit_bias");
        CHECK_THAT(e.message, Catch::Contains("9999999"));
    }
}

TEST_CASE("bodies and schemas nested far deeper than a stack are a 400, not a crash", "[serve][structured]") {
    const std::string deep = std::string(300000, '[') + std::string(300000, ']');
    try {
        parse_completion_request(R"({"prompt":"x","user":)" + deep + "}", false);
        FAIL("accepted");
    } catch (const ApiError &e) {
        CHECK(e.param == "user");
    }
    const ApiError schema = refused_chat(R"("json_schema":{"enum":[)" + deep + "]}");
    CHECK(schema.param == "json_schema");
    CHECK_THAT(schema.message, Catch::Contains("nests deeper than 128 levels"));
    std::string nested = "{}";
    for (int i = 0; i < 100; ++i) nested = R"({"type":"array","items":)" + nested + "}";
    const ApiError items = refused_chat(R"("json_schema":)" + nested);
    CHECK_THAT(items.message, Catch::Contains("nests deeper than 64 levels"));
    const std::string groups = std::string(100000, '(') + "\\\"a\\\"" + std::string(100000, ')');
    const ApiError g = refused_chat(R"("grammar":"root ::= )" + groups + "\"");
    CHECK(g.param == "grammar");
    CHECK_THAT(g.message, Catch::Contains("groups nest deeper than 256 levels"));
}
