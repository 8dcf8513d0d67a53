// The request parser of /v1/completions and /v1/chat/completions: accepted shapes and defaults,
// and for every kind of mistake (wrong type, unknown field, value out of range) a 400 that
// names the field, with the OpenAI error body.
#include <catch2/catch.hpp>

#include <string>

#include <rapidjson/document.h>

#include "api_error.h"
#include "request_parse.h"

using rf::serve::ApiError;
using rf::serve::CompletionRequest;
using rf::serve::parse_completion_request;

namespace {

CompletionRequest completion(const std::string &body) { return parse_completion_request(body, false); }
CompletionRequest chat(const std::string &body) { return parse_completion_request(body, true); }

// The ApiError of a body that must be refused (a test failure when it is accepted).
ApiError refused(const std::string &body, bool is_chat = false) {
    try {
        parse_completion_request(body, is_chat);
    } catch (const ApiError &e) {
        return e;
    }
    FAIL("accepted: " << body);
    return {};
}

const std::string kMsgs = R"("messages":[{"role":"user","content":"hi"}])";

// A body that must be refused: the field the error names and a part of its message.
struct Refusal {
    std::string body, param, message;
};

void check_refusals(const std::vector<Refusal> &cases, bool is_chat = false) {
    for (const Refusal &c : cases) {
        INFO(c.body);
        const ApiError e = refused(c.body, is_chat);
        CHECK(e.status == 400);
        CHECK(e.type == "invalid_request_error");
        CHECK(e.param == c.param);
        CHECK_THAT(e.message, Catch::Contains(c.message));
    }
}

} // namespace

TEST_CASE("a minimal completion request takes OpenAI's defaults", "[serve][parse]") {
    const auto r = completion(R"({"prompt":"Hello"})");
    REQUIRE(r.prompts.size() == 1);
    CHECK_FALSE(r.prompts[0].is_tokens);
    CHECK(r.prompts[0].text == "Hello");
    CHECK(r.temperature == 1.0f);
    CHECK(r.top_p == 1.0f);
    CHECK(r.n == 1);
    CHECK_FALSE(r.max_tokens);
    CHECK_FALSE(r.seed);
    CHECK_FALSE(r.logprobs);
    CHECK_FALSE(r.echo);
    CHECK_FALSE(r.stream);
    CHECK(r.stop.empty());
    CHECK(r.n_choices() == 1);
}

TEST_CASE("every field read, nulls meaning the default", "[serve][parse]") {
    const auto r = completion(R"({"model":"m","prompt":"x","max_tokens":7,"temperature":0.5,"top_p":0.9,"seed":42,
        "stop":["a","b"],"n":3,"logprobs":2,"echo":false,"stream":true,"stream_options":{"include_usage":true},"user":"u"})");
    CHECK(r.model == "m");
    CHECK(*r.max_tokens == 7);
    CHECK(*completion(R"({"prompt":"x","max_tokens":0,"echo":true,"logprobs":1})").max_tokens == 0); // scores the prompt
    CHECK(r.temperature == 0.5f);
    CHECK(r.top_p == Approx(0.9f));
    CHECK(*r.seed == 42u);
    CHECK(r.stop == std::vector<std::string>{"a", "b"});
    CHECK(r.n == 3);
    CHECK(*r.logprobs == 2);
    CHECK(r.stream);
    CHECK(r.include_usage);
    const auto d = completion(R"({"prompt":"x","max_tokens":null,"temperature":null,"top_p":null,"seed":null,"stop":null,
        "n":null,"logprobs":null,"echo":null,"stream":null,"stream_options":null,"user":null})");
    CHECK_FALSE(d.max_tokens);
    CHECK(d.n == 1);
    CHECK_FALSE(d.logprobs);
    CHECK(d.stop.empty());
    CHECK(completion(R"({"prompt":"x","stop":"END"})").stop == std::vector<std::string>{"END"});
}

TEST_CASE("prompt: a string, strings, token ids or token arrays", "[serve][parse]") {
    auto r = completion(R"({"prompt":["a","b","c"],"n":2})");
    REQUIRE(r.prompts.size() == 3);
    CHECK(r.prompts[2].text == "c");
    CHECK(r.n_choices() == 6);
    r = completion(R"({"prompt":[1,2,3]})");
    REQUIRE(r.prompts.size() == 1);
    CHECK(r.prompts[0].is_tokens);
    CHECK(r.prompts[0].tokens == std::vector<int64_t>{1, 2, 3});
    r = completion(R"({"prompt":[[5],[6,7]]})");
    REQUIRE(r.prompts.size() == 2);
    CHECK(r.prompts[1].tokens == std::vector<int64_t>{6, 7});
    CHECK(completion(R"({"prompt":[2147483647]})").prompts[0].tokens[0] == 2147483647);
}

TEST_CASE("bad prompts are refused naming the element", "[serve][parse]") {
    check_refusals({
        {R"({"prompt":[]})", "prompt", "at least one prompt"},
        {R"({"prompt":[[]]})", "prompt[0]", "at least one token"},
        {R"({"prompt":["a",1]})", "prompt[1]", "must be a string"},
        {R"({"prompt":[[1],"a"]})", "prompt[1]", "array of token ids"},
        {R"({"prompt":[1,"a"]})", "prompt[1]", "integer token id"},
        {R"({"prompt":[1.5]})", "prompt[0]", "integer token id"},
        {R"({"prompt":[-1]})", "prompt[0]", "not a token id"},
        {R"({"prompt":[2147483648]})", "prompt[0]", "not a token id"},
        {R"({"prompt":[[1,[2]]]})", "prompt[0][1]", "integer token id"},
        {R"({"prompt":{"text":"x"}})", "prompt", "must be a string, an array"},
        {R"({"prompt":null})", "prompt", "must be a string, an array"},
        {R"({"max_tokens":3})", "prompt", "'prompt' is required"},
    });
}

TEST_CASE("wrong types are refused naming the field and the type", "[serve][parse]") {
    check_refusals({
        {R"({"prompt":"x","max_tokens":"ten"})", "max_tokens", "'max_tokens' must be an integer, got a string"},
        {R"({"prompt":"x","max_tokens":1.5})", "max_tokens", "must be an integer, got a number"},
        {R"({"prompt":"x","temperature":"hot"})", "temperature", "must be a number, got a string"},
        {R"({"prompt":"x","seed":true})", "seed", "must be an integer, got a boolean"},
        {R"({"prompt":"x","stop":5})", "stop", "a string or an array of strings"},
        {R"({"prompt":"x","stop":["a",1]})", "stop[1]", "must be a string"},
        {R"({"prompt":"x","stream":"yes"})", "stream", "must be a boolean"},
        {R"({"prompt":"x","stream_options":[]})", "stream_options", "must be an object"},
        {R"({"prompt":"x","stream_options":{"include_usage":1}})", "stream_options.include_usage", "boolean"},
        {R"({"prompt":"x","n":"2"})", "n", "must be an integer"},
        {R"({"prompt":"x","logprobs":true})", "logprobs", "must be an integer, got a boolean"},
        {R"({"prompt":"x","echo":1})", "echo", "must be a boolean"},
        {R"({"prompt":"x","model":7})", "model", "must be a string"},
        {R"({"prompt":"x","user":{}})", "user", "must be a string, got an object"},
    });
}

TEST_CASE("chat: messages, roles, content parts and the chat-only fields", "[serve][parse]") {
    const auto r = chat(R"({"messages":[{"role":"developer","content":"be brief"},
        {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"name":"me"}],
        "max_completion_tokens":5})");
    REQUIRE(r.messages.size() == 2);
    CHECK(r.messages[0].role == "system");
    CHECK(r.messages[1].content == "ab");
    CHECK(*r.max_tokens == 5);
    CHECK(r.n_choices() == 1);
    CHECK(*chat("{" + kMsgs + R"(,"logprobs":true})").logprobs == 0);
    CHECK(*chat("{" + kMsgs + R"(,"logprobs":true,"top_logprobs":20})").logprobs == 20);
    CHECK_FALSE(chat("{" + kMsgs + R"(,"logprobs":false})").logprobs);
    CHECK(chat("{" + kMsgs + R"(,"n":4})").n_choices() == 4);
    CHECK_THROWS_AS(chat("{" + kMsgs + R"(,"max_tokens":0})"), ApiError); // scoring is echo's, a completions field

    // Tool use: calls in the history, their results, the tools offered.
    const auto t = chat(R"({"messages":[{"role":"user","content":"weather?"},
        {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"w","arguments":"{\"city\":\"Oslo\"}"}}]},
        {"role":"tool","tool_call_id":"c1","name":"w","content":"rain"}],
        "tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}]})");
    REQUIRE(t.messages.size() == 3);
    CHECK(t.messages[1].content_null);
    CHECK(t.messages[1].tool_calls_json.find("\"name\":\"w\"") != std::string::npos);
    CHECK(t.messages[2].role == "tool");
    CHECK(t.messages[2].tool_call_id == "c1");
    CHECK(t.messages[2].name == "w");
    CHECK(chat(R"({"messages":[{"role":"assistant","content":"a","reasoning_content":"because"}]})").messages[0].reasoning_content ==
          "because");
    CHECK(t.tools_json == R"([{"type":"function","function":{"name":"w","parameters":{"type":"object"}}}])");
    CHECK(chat("{" + kMsgs + R"(,"chat_template_kwargs":{"enable_thinking":false}})").template_kwargs_json == R"({"enable_thinking":false})");

    check_refusals({
        {R"({"messages":[]})", "messages", "at least one message"},
        {R"({"messages":"hi"})", "messages", "must be an array"},
        {R"({"messages":[5]})", "messages[0]", "must be an object"},
        {R"({"messages":[{"role":"wizard","content":"x"}]})", "messages[0].role", "system, user, assistant or tool"},
        {R"({"messages":[{"role":"user"}]})", "messages[0].content", "is required"},
        {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content[0]", "only text"},
        {R"({"messages":[{"role":"user","content":"x","tool_calls":[]}]})", "messages[0].tool_calls", "only an assistant message"},
        {R"({"messages":[{"role":"user","content":null}]})", "messages[0].content", "null only in an assistant message"},
        {R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}"}}]}]})",
         "messages[0].tool_calls[0].function.name", "is required"},
        {R"({"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":5}}]}]})",
         "messages[0].tool_calls[0].function.arguments", "a JSON string or an object"},
        {R"({"messages":[{"role":"tool","content":"x","tool_call_id":7}]})", "messages[0].tool_call_id", "must be a string"},
        {R"({"messages":[{"role":"user","content":"x","reasoning":"y"}]})", "messages[0].reasoning", "unsupported field"},
        {R"({"messages":[{"role":"user","content":"x","reasoning_content":"y"}]})", "messages[0].reasoning_content",
         "only an assistant message"},
        {"{" + kMsgs + R"(,"tools":{}})", "tools", "must be an array"},
        {"{" + kMsgs + R"(,"chat_template_kwargs":[1]})", "chat_template_kwargs", "must be an object"},
        {"{" + kMsgs + R"(,"tools":[{"type":"function","function":{"description":"no name"}}]})", "tools[0].function.name",
         "a tool needs a name"},
        {"{" + kMsgs + R"(,"tools":[{"type":"retrieval"}]})", "tools[0].type", "must be \"function\""},
        {"{" + kMsgs + R"(,"top_logprobs":2})", "top_logprobs", "needs 'logprobs': true"},
        {"{" + kMsgs + R"(,"logprobs":false,"top_logprobs":2})", "top_logprobs", "needs 'logprobs': true"},
        {"{" + kMsgs + R"(,"logprobs":true,"top_logprobs":21})", "top_logprobs", "between 0 and 20"},
        {"{" + kMsgs + R"(,"logprobs":3})", "logprobs", "must be a boolean"},
        {"{" + kMsgs + R"(,"echo":true})", "echo", "unsupported field 'echo'"},
        {"{" + kMsgs + R"(,"prompt":"x"})", "prompt", "unsupported field 'prompt'"},
        {R"({"prompt":"x"})", "messages", "'messages' is required"},
    }, true);
}

TEST_CASE("penalties, and llama.cpp server's top_k / min_p / repeat_penalty / repeat_last_n", "[serve][parse]") {
    const auto d = completion(R"({"prompt":"x"})");
    CHECK(d.frequency_penalty == 0.0f);
    CHECK(d.presence_penalty == 0.0f);
    CHECK(d.top_k == 0);
    CHECK(d.min_p == 0.0f);
    CHECK(d.repeat_penalty == 1.0f);
    CHECK(d.repeat_last_n == 64);
    const auto r = completion(R"({"prompt":"x","frequency_penalty":0.5,"presence_penalty":-1.5,"top_k":40,"min_p":0.05,
        "repeat_penalty":1.1,"repeat_last_n":-1})");
    CHECK(r.frequency_penalty == 0.5f);
    CHECK(r.presence_penalty == -1.5f);
    CHECK(r.top_k == 40);
    CHECK(r.min_p == Approx(0.05f));
    CHECK(r.repeat_penalty == Approx(1.1f));
    CHECK(r.repeat_last_n == -1);
    const auto n = completion(R"({"prompt":"x","frequency_penalty":null,"presence_penalty":null,"top_k":null,"min_p":null,
        "repeat_penalty":null,"repeat_last_n":null})");
    CHECK((n.frequency_penalty == 0.0f && n.top_k == 0 && n.repeat_penalty == 1.0f && n.repeat_last_n == 64));
    CHECK(chat(R"({"messages":[{"role":"user","content":"hi"}],"presence_penalty":2,"top_k":1})").top_k == 1);
    check_refusals({
        {R"({"prompt":"x","frequency_penalty":2.5})", "frequency_penalty", "between"},
        {R"({"prompt":"x","presence_penalty":-3})", "presence_penalty", "between"},
        {R"({"prompt":"x","top_k":-1})", "top_k", "between 0"},
        {R"({"prompt":"x","top_k":1.5})", "top_k", "an integer"},
        {R"({"prompt":"x","min_p":1.5})", "min_p", "between"},
        {R"({"prompt":"x","repeat_penalty":0})", "repeat_penalty", "greater than 0"},
        {R"({"prompt":"x","repeat_last_n":-2})", "repeat_last_n", "between -1"},
    });
}

TEST_CASE("unknown and unsupported fields are refused, never ignored", "[serve][parse]") {
    for (const char *field : {"suffix", "best_of", "mirostat", "tools", "top_logprobs", "Prompt"}) {
        INFO(field);
        const ApiError e = refused(std::string(R"({"prompt":"x",")") + field + R"(":1})");
        CHECK(e.param == field);
        CHECK_THAT(e.message, Catch::Contains(std::string("unsupported field '") + field + "'"));
    }
    // A NUL inside a name does not end it.
    const ApiError nul = refused(R"({"prompt":"x","prompt\u0000x":1})");
    CHECK(nul.param == std::string("prompt\0x", 8));
    CHECK_THAT(refused(R"({"prompt\u0000":"x"})").message, Catch::Contains("'prompt' is required"));
    const ApiError e = refused(R"({"prompt":"x","stream_options":{"include_usage":true,"chunk":1}})");
    CHECK_THAT(e.message, Catch::Contains("stream_options.chunk"));
}

TEST_CASE("values out of range are refused", "[serve][parse]") {
    const std::string five_stops = R"(["a","b","c","d","e"])";
    check_refusals({
        {R"({"prompt":"x","max_tokens":0})", "max_tokens", "0 only with 'echo': true"},
        {R"({"prompt":"x","max_tokens":0,"echo":false})", "max_tokens", "0 only with 'echo': true"},
        {R"({"prompt":"x","max_tokens":-5})", "max_tokens", "at least 1"},
        {R"({"prompt":"x","temperature":2.5})", "temperature", "between"},
        {R"({"prompt":"x","temperature":-0.1})", "temperature", "between"},
        {R"({"prompt":"x","top_p":0})", "top_p", "greater than 0"},
        {R"({"prompt":"x","top_p":1.5})", "top_p", "between"},
        {R"({"prompt":"x","stop":)" + five_stops + "}", "stop", "at most 4"},
        {R"({"prompt":"x","stop":""})", "stop", "must not be empty"},
        {R"({"prompt":"x","n":0})", "n", "between 1 and 128"},
        {R"({"prompt":"x","n":129})", "n", "between 1 and 128"},
        {R"({"prompt":["a","b","c"],"n":50})", "n", "150 choices, at most 128"},
        {R"({"prompt":"x","logprobs":6})", "logprobs", "between 0 and 5"},
        {R"({"prompt":"x","logprobs":-1})", "logprobs", "between 0 and 5"},
    });
    // At the limits: accepted.
    CHECK(completion(R"({"prompt":"x","temperature":2,"top_p":1,"n":128,"logprobs":5})").n == 128);
    CHECK(completion(R"({"prompt":"x","echo":true,"logprobs":null})").echo);
    const auto both = completion(R"({"prompt":"x","echo":true,"logprobs":0})");
    CHECK((both.echo && *both.logprobs == 0));
    std::string many = R"({"prompt":[)";
    for (int i = 0; i < 129; ++i) many += std::string(i ? "," : "") + "\"p\"";
    CHECK_THAT(refused(many + "]}").message, Catch::Contains("129 prompts, at most 128"));
}

TEST_CASE("malformed bodies get a 400 saying where", "[serve][parse]") {
    CHECK_THAT(refused(R"({"prompt": "x",)").message, Catch::Contains("malformed JSON at offset"));
    CHECK_THAT(refused("").message, Catch::Contains("malformed JSON"));
    CHECK_THAT(refused(std::string("{\"prompt\":\"a\0b\"}", 16)).message, Catch::Contains("malformed JSON"));
    CHECK_THAT(refused("{\"prompt\":\"a\xff\"}").message, Catch::Contains("malformed JSON") && Catch::Contains("encoding"));
    CHECK_THAT(refused("{\"prompt\":\"\xe2\x80\"}").message, Catch::Contains("encoding")); // a cut character
    CHECK(completion("{\"prompt\":\"\xc3\xa9\"}").prompts[0].text == "\xc3\xa9");
    CHECK_THAT(refused("[1,2]").message, Catch::Contains("must be a JSON object"));
    CHECK_THAT(refused("\"prompt\"").message, Catch::Contains("must be a JSON object"));
    CHECK_THAT(refused(R"({"prompt":"x"} trailing)").message, Catch::Contains("malformed JSON"));
}

TEST_CASE("the error body has OpenAI's shape", "[serve][parse]") {
    const ApiError e = refused(R"({"prompt":"x","n":0})");
    rapidjson::Document d;
    d.Parse(rf::serve::error_body(e).c_str());
    REQUIRE(d.IsObject());
    const auto &err = d["error"];
    CHECK(std::string(err["message"].GetString()) == e.message);
    CHECK(std::string(err["type"].GetString()) == "invalid_request_error");
    CHECK(std::string(err["param"].GetString()) == "n");
    CHECK(err["code"].IsNull());
    rapidjson::Document none;
    none.Parse(rf::serve::error_body(refused("[]")).c_str());
    CHECK(none["error"]["param"].IsNull());
}
