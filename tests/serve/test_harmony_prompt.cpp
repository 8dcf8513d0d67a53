// Requests to gpt-oss in the built-in harmony format: tools as the developer message's
// TypeScript namespace, an assistant's calls and the tools' results for the next turn, the
// reasoning of past turns dropped but while calls are still being worked on; bad input a
// UsageError, never a crash.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rocmforge/chat_template.h"

using rf::ChatMessage;

namespace {

const std::string kTools = R"([{"type": "function", "function": {"name": "get_weather", "description": "The weather now.",
  "parameters": {"type": "object", "properties": {
    "city": {"type": "string", "description": "A city name"},
    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
    "days": {"type": "array", "items": {"type": "integer"}}}, "required": ["city"]}}},
  {"type": "function", "function": {"name": "get_time"}}])";

std::string render(const std::vector<ChatMessage> &m, const std::string &tools = "", bool add_assistant = true) {
    rf::ChatTemplateInput in{m, tools, add_assistant, ""};
    return rf::ChatTemplate::builtin(rf::ChatFormat::Harmony).apply(in);
}

ChatMessage msg(const char *role, const char *content) {
    ChatMessage m;
    m.role = role;
    m.content = content;
    return m;
}

bool has(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("harmony prompt: tools in the developer message", "[serve][harmony]") {
    const std::string p = render({msg("system", "Be brief."), msg("user", "Weather in Paris?")}, kTools);
    CHECK(p.rfind("<|start|>system<|message|>You are ChatGPT", 0) == 0);
    CHECK(has(p, "Calls to these tools must go to the commentary channel: 'functions'.<|end|>"));
    CHECK(has(p, "<|start|>developer<|message|># Instructions\n\nBe brief.\n\n# Tools\n\n## functions\n\nnamespace functions {\n\n"
                 "// The weather now.\ntype get_weather = (_: {\n// A city name\ncity: string,\n"
                 "unit?: \"celsius\" | \"fahrenheit\", // default: celsius\ndays?: number[],\n}) => any;\n\n"
                 "type get_time = () => any;\n\n} // namespace functions<|end|>"));
    CHECK(has(p, "<|start|>user<|message|>Weather in Paris?<|end|><|start|>assistant"));
    CHECK_FALSE(has(p, "<|start|>system<|message|>Be brief."));
    // Without tools the conversation is as before.
    CHECK(render({msg("system", "Be brief."), msg("user", "Hi")}) ==
          "<|start|>system<|message|>Be brief.<|end|><|start|>user<|message|>Hi<|end|><|start|>assistant");
}

TEST_CASE("harmony prompt: calls and results for the next turn", "[serve][harmony]") {
    ChatMessage call = msg("assistant", "Let me check.");
    call.reasoning_content = "Need the weather tool.";
    call.tool_calls_json = R"([{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}])";
    ChatMessage result = msg("tool", "{\"temp\": 21}");
    result.tool_call_id = "call_1";
    const std::vector<ChatMessage> turn = {msg("user", "Weather in Paris?"), call, result};
    const std::string p = render(turn, kTools);
    CHECK(has(p, "<|start|>user<|message|>Weather in Paris?<|end|>"
                 "<|start|>assistant<|channel|>analysis<|message|>Need the weather tool.<|end|>"
                 "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
                 "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\":\"Paris\"}<|call|>"
                 "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{\"temp\": 21}<|end|>"
                 "<|start|>assistant"));
    // Once a final answer follows, the calls' reasoning is dropped (and every past final's).
    ChatMessage answer = msg("assistant", "21 degrees.");
    answer.reasoning_content = "The tool said 21.";
    std::vector<ChatMessage> later = turn;
    later.push_back(answer);
    later.push_back(msg("user", "Thanks"));
    const std::string q = render(later, kTools);
    CHECK_FALSE(has(q, "Need the weather tool."));
    CHECK_FALSE(has(q, "The tool said 21."));
    CHECK(has(q, "<|start|>assistant<|channel|>final<|message|>21 degrees.<|end|><|start|>user<|message|>Thanks<|end|>"));
    // An assistant turn left open keeps its reasoning: the model continues it.
    const std::string open = render({msg("user", "Hi"), answer}, "", false);
    CHECK(has(open, "<|channel|>analysis<|message|>The tool said 21.<|end|><|start|>assistant<|channel|>final"));
}

TEST_CASE("harmony prompt: arguments as an object, a result named by its message", "[serve][harmony]") {
    ChatMessage call = msg("assistant", "");
    call.content_null = true;
    call.tool_calls_json = R"([{"function": {"name": "get_time", "arguments": {"tz": "UTC"}}}])";
    ChatMessage result = msg("tool", "12:00");
    result.name = "get_time";
    const std::string p = render({msg("user", "Time?"), call, result}, kTools);
    CHECK(has(p, "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{\"tz\":\"UTC\"}<|call|>"
                 "<|start|>functions.get_time to=assistant<|channel|>commentary<|message|>12:00<|end|>"));
}

TEST_CASE("harmony prompt: bad input is a UsageError", "[serve][harmony]") {
    ChatMessage bad_calls = msg("assistant", "");
    bad_calls.tool_calls_json = "{\"not\": \"an array\"}";
    CHECK_THROWS_AS(render({msg("user", "x"), bad_calls}), rf::UsageError);
    bad_calls.tool_calls_json = "[{\"function\": {}}]";
    CHECK_THROWS_AS(render({msg("user", "x"), bad_calls}), rf::UsageError);
    CHECK_THROWS_AS(render({msg("user", "x"), msg("tool", "orphan result")}), rf::UsageError);
    CHECK_THROWS_AS(render({msg("narrator", "x")}), rf::UsageError);
    CHECK_THROWS_AS(render({msg("user", "x")}, "{\"tools\": 1}"), rf::UsageError);
    CHECK_THROWS_AS(render({msg("user", "x")}, "[{\"function\": {\"description\": \"no name\"}}]"), rf::UsageError);
    CHECK_THROWS_AS(render({msg("user", "x")}, std::string(100, '[') + std::string(100, ']')), rf::UsageError);
}

TEST_CASE("harmony prompt: a gpt-oss Jinja template gets reasoning as thinking", "[serve][harmony]") {
    // A fragment in the shape of gpt-oss's own template (which reads message.thinking).
    const std::string src = "{%- for m in messages %}{%- if m.thinking is defined %}<|start|>assistant<|channel|>analysis"
                            "<|message|>{{ m.thinking }}<|end|>{%- endif %}<|start|>{{ m.role }}<|message|>"
                            "{{ m.content if m.content else '' }}<|end|>{%- endfor %}";
    const rf::ChatTemplate t = rf::ChatTemplate::jinja(src, "test", "", "");
    ChatMessage call = msg("assistant", "");
    call.content_null = true;
    call.reasoning_content = "Need a tool.";
    call.tool_calls_json = R"([{"function": {"name": "get_time", "arguments": "{}"}}])";
    CHECK(has(t.apply({{msg("user", "Time?"), call}, "", false, ""}),
              "<|start|>assistant<|channel|>analysis<|message|>Need a tool.<|end|><|start|>assistant<|message|><|end|>"));
    // With a preamble beside the calls the template would raise on both: the preamble is kept.
    call.content_null = false;
    call.content = "Checking.";
    CHECK_FALSE(has(t.apply({{msg("user", "Time?"), call}, "", false, ""}), "Need a tool."));
    // Another template gets no `thinking`.
    const std::string other = "{%- for m in messages %}{{ m.thinking is defined }}{%- endfor %}";
    CHECK(rf::ChatTemplate::jinja(other, "test", "", "").apply({{call}, "", false, ""}) == "False");
}
