// The model's output -> tool calls, for each template family's format; output that is not a
// well-formed call (unterminated markup, invalid JSON, no name) stays content.
#include <catch2/catch.hpp>

#include "tool_calls.h"

using namespace rf::serve;

TEST_CASE("tool call format from the template's markers", "[serve][tools]") {
    CHECK(detect_tool_call_format("{% if tools %}<tool_call>{{ x }}</tool_call>{% endif %}") == ToolCallFormat::Hermes);
    CHECK(detect_tool_call_format("{{ '[TOOL_CALLS]' }}") == ToolCallFormat::Mistral);
    CHECK(detect_tool_call_format("<|start_header_id|>ipython {% if tools %}") == ToolCallFormat::Llama3);
    CHECK(detect_tool_call_format("{{ '<|im_start|>' }}") == ToolCallFormat::Generic);
}

TEST_CASE("Hermes / Qwen <tool_call> blocks", "[serve][tools]") {
    auto p = parse_tool_calls("Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                              "</tool_call>\n<tool_call>{\"name\":\"t\",\"arguments\":\"{\\\"a\\\":1}\"}</tool_call>",
                              ToolCallFormat::Hermes);
    REQUIRE(p.calls.size() == 2);
    CHECK(p.calls[0].name == "get_weather");
    CHECK(p.calls[0].arguments == R"({"city":"Paris"})");
    CHECK(p.calls[1].arguments == R"({"a":1})"); // arguments written as a JSON string
    CHECK(p.content == "Let me look.");
}

TEST_CASE("malformed Hermes output stays content", "[serve][tools]") {
    for (const char *t : {"<tool_call>{\"name\": \"f\", \"arguments\": {}", // unterminated
                          "<tool_call>{\"name\": \"f\", \"arguments\": {</tool_call>", // invalid JSON
                          "<tool_call>{\"arguments\": {}}</tool_call>",                 // no name
                          "<tool_call>{\"name\": \"f\", \"arguments\": 3}</tool_call>"}) {
        auto p = parse_tool_calls(t, ToolCallFormat::Hermes);
        CHECK(p.calls.empty());
        CHECK(p.content == t);
    }
}

TEST_CASE("Llama 3.x JSON calls", "[serve][tools]") {
    auto p = parse_tool_calls(" {\"name\": \"f\", \"parameters\": {\"x\": [1, 2]}} ", ToolCallFormat::Llama3);
    REQUIRE(p.calls.size() == 1);
    CHECK(p.calls[0].name == "f");
    CHECK(p.calls[0].arguments == R"({"x":[1,2]})");
    CHECK(p.content.empty());
    auto t = parse_tool_calls("<|python_tag|>{\"name\": \"g\", \"parameters\": {}}", ToolCallFormat::Llama3);
    REQUIRE(t.calls.size() == 1);
    CHECK(t.calls[0].name == "g");
    auto bad = parse_tool_calls("The answer is {\"name\": 1}", ToolCallFormat::Llama3);
    CHECK(bad.calls.empty());
    CHECK(bad.content == "The answer is {\"name\": 1}");
}

TEST_CASE("Mistral [TOOL_CALLS]", "[serve][tools]") {
    auto p = parse_tool_calls("[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"k\": \"v\"}}]",
                              ToolCallFormat::Mistral);
    REQUIRE(p.calls.size() == 2);
    CHECK(p.calls[1].name == "b");
    CHECK(p.calls[1].arguments == R"({"k":"v"})");
    // The marker is a control token, absent from generated text: the bare array is the calls.
    auto bare = parse_tool_calls(" [{\"name\": \"a\", \"arguments\": {}}]", ToolCallFormat::Mistral);
    REQUIRE(bare.calls.size() == 1);
    CHECK(bare.content.empty());
    CHECK(parse_tool_calls("[1, 2]", ToolCallFormat::Mistral).calls.empty());
    auto bad = parse_tool_calls("[TOOL_CALLS][{\"name\": \"a\"", ToolCallFormat::Mistral);
    CHECK(bad.calls.empty());
    CHECK(bad.content == "[TOOL_CALLS][{\"name\": \"a\"");
}

TEST_CASE("generic fallback", "[serve][tools]") {
    auto p = parse_tool_calls(R"({"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"q": 1}}}]})",
                              ToolCallFormat::Generic);
    REQUIRE(p.calls.size() == 1);
    CHECK(p.calls[0].arguments == R"({"q":1})");
    CHECK(parse_tool_calls("<tool_call>{\"name\":\"h\"}</tool_call>", ToolCallFormat::Generic).calls.at(0).arguments == "{}");
    auto plain = parse_tool_calls("just text", ToolCallFormat::Generic);
    CHECK(plain.calls.empty());
    CHECK(plain.content == "just text");
}
