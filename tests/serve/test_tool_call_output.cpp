// A chat choice's output as tool calls: whole and streamed (nothing of a call leaks out as
// content, text before it streams at once, the same calls either way), calls of tools not
// offered and output nested too deep stay content, and the response JSON in OpenAI's shapes
// (message.tool_calls with content null, tool-call deltas).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "openai_json.h"
#include "tool_call_output.h"

using namespace rf::serve;

namespace {

ToolCallOptions options(ToolCallFormat f, bool forced = false, bool single = false) {
    return {f, forced, single, {"get_weather", "get_time"}};
}

// The text streamed piece by piece (every `step` bytes): the content sent on the way, then the
// end's parse.
struct Streamed {
    std::string early, late;
    std::vector<ToolCallOut> calls;
};
Streamed stream(const std::string &text, const ToolCallOptions &o, size_t step) {
    ToolCallStream s(o);
    Streamed out;
    for (size_t i = 0; i < text.size(); i += step) out.early += s.push(std::string_view(text).substr(i, step));
    ChoiceCalls end = s.finish();
    out.late = end.content;
    out.calls = end.calls;
    return out;
}

rapidjson::Document json(const std::string &text) {
    rapidjson::Document d;
    d.Parse(text.c_str(), text.size());
    REQUIRE_FALSE(d.HasParseError());
    return d;
}

std::string s(const rapidjson::Value &v) { return {v.GetString(), v.GetStringLength()}; }

} // namespace

TEST_CASE("a Hermes call: content before it, the call with an id", "[serve][tools]") {
    const std::string text = "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    const ChoiceCalls whole = parse_choice_output(text, options(ToolCallFormat::Hermes));
    CHECK(whole.content == "Let me look.");
    REQUIRE(whole.calls.size() == 1);
    CHECK(whole.calls[0].name == "get_weather");
    CHECK(whole.calls[0].arguments == R"({"city":"Paris"})");
    CHECK(whole.calls[0].id.rfind("call_", 0) == 0);
    CHECK(whole.calls[0].id.size() == 5 + 24);
    for (size_t step : {1, 2, 5, 64}) {
        INFO("step " << step);
        const Streamed st = stream(text, options(ToolCallFormat::Hermes), step);
        CHECK(st.early == "Let me look.\n"); // streamed as it came, the marker never
        CHECK(st.late.empty());
        REQUIRE(st.calls.size() == 1);
        CHECK(st.calls[0].arguments == whole.calls[0].arguments);
    }
}

TEST_CASE("streamed text that only looks like a marker's start goes out", "[serve][tools]") {
    const Streamed st = stream("a <b> <tool and <tool_cal", options(ToolCallFormat::Hermes), 1);
    CHECK(st.early == "a <b> <tool and ");
    CHECK(st.late == "<tool_cal"); // held to the end: it could have gone on into a marker
    CHECK(st.calls.empty());
    const Streamed unterminated = stream("x <tool_call>{\"name\":\"get_time\"", options(ToolCallFormat::Hermes), 3);
    CHECK(unterminated.early == "x ");
    CHECK(unterminated.late == "<tool_call>{\"name\":\"get_time\"");
    CHECK(unterminated.calls.empty());
}

TEST_CASE("bare JSON calls (generic, Llama 3) are held from the first character", "[serve][tools]") {
    const std::string two = R"( [{"name":"get_time","arguments":{}},{"name":"get_weather","arguments":{"city":"Ur"}}])";
    const Streamed st = stream(two, options(ToolCallFormat::Generic), 4);
    CHECK(st.early.empty());
    REQUIRE(st.calls.size() == 2);
    CHECK(st.calls[1].index == 1);
    CHECK(st.calls[0].id != st.calls[1].id);
    const ChoiceCalls single = parse_choice_output(two, options(ToolCallFormat::Generic, false, true));
    CHECK(single.calls.size() == 1); // parallel_tool_calls false: the first only
    // Llama 3's {"name", "parameters"}; plain text streams at once.
    const Streamed l3 = stream(R"({"name": "get_time", "parameters": {}})", options(ToolCallFormat::Llama3), 2);
    REQUIRE(l3.calls.size() == 1);
    CHECK(l3.calls[0].arguments == "{}");
    const Streamed text = stream("In the beginning", options(ToolCallFormat::Llama3), 3);
    CHECK(text.early == "In the beginning");
    CHECK(text.calls.empty());
    // Forced (required): all of it is the call, held whatever it opens with.
    const Streamed forced = stream(R"({"name":"get_time","arguments":{}})", options(ToolCallFormat::Hermes, true), 1);
    CHECK(forced.early.empty());
    CHECK(forced.calls.size() == 1);
}

TEST_CASE("streamed Mistral [TOOL_CALLS]: the text before it streams", "[serve][tools]") {
    const Streamed st = stream(R"(ok [TOOL_CALLS][{"name":"get_time","arguments":{}}])", options(ToolCallFormat::Mistral), 2);
    CHECK(st.early == "ok ");
    REQUIRE(st.calls.size() == 1);
    CHECK(st.calls[0].name == "get_time");
    const Streamed bare = stream(R"([{"name":"get_time","arguments":{}}])", options(ToolCallFormat::Mistral), 3);
    CHECK(bare.early.empty()); // held from its first "[": the marker may have been a control token
    CHECK(bare.calls.size() == 1);
}

TEST_CASE("not calls: tools not offered, JSON nested too deep", "[serve][tools]") {
    const std::string other = R"({"name":"John","arguments":{"age":3}})";
    const ChoiceCalls p = parse_choice_output(other, options(ToolCallFormat::Generic));
    CHECK(p.calls.empty());
    CHECK(p.content == other);
    const std::string deep = "<tool_call>{\"name\":\"get_time\",\"arguments\":{\"a\":" + std::string(100000, '[') +
                             std::string(100000, ']') + "}}</tool_call>";
    const ChoiceCalls d = parse_choice_output(deep, options(ToolCallFormat::Hermes));
    CHECK(d.calls.empty());
    CHECK(d.content == deep);
    const ChoiceCalls d2 = parse_choice_output(std::string(500000, '['), options(ToolCallFormat::Generic, true));
    CHECK(d2.calls.empty());
}

TEST_CASE("finish reasons and a whole choice with its calls", "[serve][tools]") {
    CHECK(tool_finish_reason("stop", true) == "tool_calls");
    CHECK(tool_finish_reason("length", true) == "length");
    CHECK(tool_finish_reason("stop", false) == "stop");
    Choice c{0, R"({"name":"get_time","arguments":{}})", "stop", std::nullopt};
    apply_tool_calls(c, options(ToolCallFormat::Generic));
    CHECK(c.text.empty());
    CHECK(*c.finish_reason == "tool_calls");
    REQUIRE(c.tool_calls.size() == 1);
    Choice plain{0, "Amen.", "stop", std::nullopt};
    apply_tool_calls(plain, options(ToolCallFormat::Generic));
    CHECK(plain.tool_calls.empty());
    CHECK(*plain.finish_reason == "stop");
}

TEST_CASE("response JSON: message.tool_calls with content null, tool-call deltas", "[serve][tools][json]") {
    Choice c{0, "", "tool_calls", std::nullopt};
    c.tool_calls = {{0, "call_a", "get_weather", R"({"city":"Ur"})"}, {1, "call_b", "get_time", "{}"}};
    const auto d = json(completion_body({true, "chatcmpl-1", 5, "m"}, {c}, {3, 4}));
    const auto &m = d["choices"][0]["message"];
    CHECK(m["content"].IsNull());
    REQUIRE(m["tool_calls"].Size() == 2);
    CHECK(s(m["tool_calls"][0]["id"]) == "call_a");
    CHECK(s(m["tool_calls"][0]["type"]) == "function");
    CHECK(s(m["tool_calls"][0]["function"]["name"]) == "get_weather");
    CHECK(s(m["tool_calls"][0]["function"]["arguments"]) == R"({"city":"Ur"})"); // a string, as OpenAI
    CHECK_FALSE(m["tool_calls"][0].HasMember("index"));
    CHECK(s(d["choices"][0]["finish_reason"]) == "tool_calls");
    c.text = "Looking.";
    CHECK(s(json(completion_body({true, "chatcmpl-1", 5, "m"}, {c}, {3, 4}))["choices"][0]["message"]["content"]) == "Looking.");

    Choice head{0, ""}, args{0, ""};
    head.tool_calls = {{1, "call_b", "get_time", ""}};
    args.tool_calls = {{1, "", "", "{}"}};
    const auto h = json(chunk_body({true, "chatcmpl-1", 5, "m"}, head, false));
    const auto &hd = h["choices"][0]["delta"];
    CHECK_FALSE(hd.HasMember("content"));
    CHECK(hd["tool_calls"][0]["index"].GetInt() == 1);
    CHECK(s(hd["tool_calls"][0]["id"]) == "call_b");
    CHECK(s(hd["tool_calls"][0]["function"]["name"]) == "get_time");
    CHECK(s(hd["tool_calls"][0]["function"]["arguments"]).empty());
    const auto a = json(chunk_body({true, "chatcmpl-1", 5, "m"}, args, false));
    const auto &ad = a["choices"][0]["delta"]["tool_calls"][0];
    CHECK(ad["index"].GetInt() == 1);
    CHECK_FALSE(ad.HasMember("id"));
    CHECK_FALSE(ad.HasMember("type"));
    CHECK_FALSE(ad["function"].HasMember("name"));
    CHECK(s(ad["function"]["arguments"]) == "{}");
}
