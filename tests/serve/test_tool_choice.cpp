// tool_choice and parallel_tool_calls of a chat request: parsed and checked against tools (every
// mistake a 400 naming the field), and required / a named function as the grammar of the calls
// it allows (checked on text: valid calls in, anything else out).
#include <catch2/catch.hpp>

#include <string>

#include "../grammar/grammar_test_util.h"
#include "api_error.h"
#include "request_parse.h"

using rf::serve::ApiError;
using rf::serve::CompletionRequest;
using rf::serve::parse_completion_request;
using rf::serve::ToolChoice;

namespace {

const std::string kChat = R"({"messages":[{"role":"user","content":"hi"}],)";
const std::string kTools =
    R"("tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",)"
    R"("properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}},)"
    R"({"type":"function","function":{"name":"get_time"}}])";

CompletionRequest chat(const std::string &fields) { return parse_completion_request(kChat + fields + "}", true); }

ApiError refused(const std::string &fields) {
    try {
        chat(fields);
    } catch (const ApiError &e) {
        return e;
    }
    FAIL("accepted: " << fields);
    return {};
}

} // namespace

TEST_CASE("tool_choice: auto by default with tools, none, and what each parses", "[serve][tools]") {
    const auto plain = chat(R"("max_tokens":3)");
    CHECK_FALSE(plain.parses_tool_calls());
    const auto def = chat(kTools);
    CHECK(def.tool_choice == ToolChoice::Auto);
    CHECK(def.parallel_tool_calls);
    CHECK(def.tool_names == std::vector<std::string>{"get_weather", "get_time"});
    CHECK(def.parses_tool_calls());
    CHECK_FALSE(def.forces_tool_call());
    CHECK(def.grammar.empty()); // auto leaves the output free
    const auto none = chat(kTools + R"(,"tool_choice":"none","parallel_tool_calls":false)");
    CHECK(none.tool_choice == ToolChoice::None);
    CHECK_FALSE(none.parallel_tool_calls);
    CHECK_FALSE(none.parses_tool_calls());
    CHECK_FALSE(none.tools_json.empty()); // the template still shows the tools
    CHECK(chat(kTools + R"(,"tool_choice":null,"parallel_tool_calls":null)").tool_choice == ToolChoice::Auto);
    // Auto beside a grammar of the client's: the grammar holds, calls are still parsed.
    const auto g = chat(kTools + R"(,"tool_choice":"auto","grammar":"root ::= \"x\"")");
    CHECK(g.parses_tool_calls());
    CHECK(g.grammar_field == "grammar");
}

TEST_CASE("tool_choice required: the output is one or more calls of the offered tools", "[serve][tools]") {
    const auto r = chat(kTools + R"(,"tool_choice":"required")");
    CHECK(r.forces_tool_call());
    CHECK(r.grammar_field == "tool_choice");
    REQUIRE(r.grammar_compiled);
    const auto g = rf_test::text_grammar(r.grammar);
    CHECK(rf_test::matches(g, R"([{"name":"get_weather","arguments":{"city":"Paris","days":3}}])"));
    CHECK(rf_test::matches(g, R"([{"name": "get_time", "arguments": {}}, {"name":"get_weather","arguments":{"city":"x"}}])"));
    CHECK_FALSE(rf_test::matches(g, R"([])"));                                              // at least one
    CHECK_FALSE(rf_test::matches(g, R"([{"name":"other","arguments":{}}])"));               // a tool not offered
    CHECK_FALSE(rf_test::matches(g, R"([{"name":"get_weather","arguments":{"days":3}}])"));  // its required city
    CHECK_FALSE(rf_test::matches(g, R"([{"name":"get_weather","arguments":{"city":1}}])")); // its types
    CHECK_FALSE(rf_test::matches(g, R"([{"name":"get_time","arguments":{"a":1}}])"));       // no parameters: {}
    CHECK_FALSE(rf_test::matches(g, "[{\"name\":\"get_time\",\n  \"arguments\":{}}]"));    // compact whitespace
    CHECK_FALSE(rf_test::matches(g, R"(Sure. [{"name":"get_time","arguments":{}}])"));

    const auto one = chat(kTools + R"(,"tool_choice":"required","parallel_tool_calls":false)");
    const auto g1 = rf_test::text_grammar(one.grammar);
    CHECK(rf_test::matches(g1, R"({"name":"get_time","arguments":{}})"));
    CHECK_FALSE(rf_test::matches(g1, R"([{"name":"get_time","arguments":{}}])"));
}

TEST_CASE("tool_choice naming a function: calls of that function only", "[serve][tools]") {
    const auto r = chat(kTools + R"(,"tool_choice":{"type":"function","function":{"name":"get_weather"}},"parallel_tool_calls":false)");
    CHECK(r.tool_choice == ToolChoice::Function);
    CHECK(r.tool_choice_function == "get_weather");
    const auto g = rf_test::text_grammar(r.grammar);
    CHECK(rf_test::matches(g, R"({"name":"get_weather","arguments":{"city":"Ur"}})"));
    CHECK_FALSE(rf_test::matches(g, R"({"name":"get_time","arguments":{}})"));
    // parameters {} is any object; a schema without a type an object one.
    const auto any = chat(R"("tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"tool_choice":"required","parallel_tool_calls":false)");
    CHECK(rf_test::matches(any.grammar, R"({"name":"f","arguments":{"x":[1,{"y":null}]}})"));
    CHECK_FALSE(rf_test::matches(any.grammar, R"({"name":"f","arguments":[1]})"));
    const auto untyped = chat(R"("tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"a":{"type":"integer"}},"required":["a"]}}}],"tool_choice":"required","parallel_tool_calls":false)");
    CHECK(rf_test::matches(untyped.grammar, R"({"name":"f","arguments":{"a":2}})"));
}

TEST_CASE("tool parameters with $defs: references still resolve inside the calls' schema", "[serve][tools]") {
    const std::string tools =
        R"("tools":[{"type":"function","function":{"name":"move","parameters":{"type":"object","properties":{"to":{"$ref":"#/$defs/Point"}},)"
        R"("required":["to"],"$defs":{"Point":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}}},)"
        R"({"type":"function","function":{"name":"look","parameters":{"type":"object","properties":{"at":{"$ref":"#/$defs/Point"}},)"
        R"("$defs":{"Point":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}}}])";
    const auto r = chat(tools + R"(,"tool_choice":"required")");
    CHECK(rf_test::matches(r.grammar, R"([{"name":"move","arguments":{"to":{"x":3}}},{"name":"look","arguments":{}}])"));
    CHECK_FALSE(rf_test::matches(r.grammar, R"([{"name":"move","arguments":{"to":{"x":"3"}}}])"));
    const auto one = chat(tools + R"(,"tool_choice":"required","parallel_tool_calls":false)"); // anyOf at the root
    CHECK(rf_test::matches(one.grammar, R"({"name":"look","arguments":{"at":{"x":1}}})"));
    std::string clash = tools;
    clash.replace(clash.rfind(R"("type":"integer")"), 16, R"("type":"string")");
    const ApiError e = refused(clash + R"(,"tool_choice":"required")");
    CHECK(e.param == "tools[1].function.parameters.$defs.Point");
}

TEST_CASE("bad tool_choice and parallel_tool_calls: 400 naming the field", "[serve][tools]") {
    struct Case {
        std::string fields, param, says;
    };
    const std::vector<Case> cases = {
        {R"("tool_choice":"required")", "tool_choice", "needs 'tools'"},
        {R"("tools":[],"tool_choice":"auto")", "tool_choice", "needs 'tools'"},
        {kTools + R"(,"tool_choice":"any")", "tool_choice", "got 'any'"},
        {kTools + R"(,"tool_choice":true)", "tool_choice", "got a boolean"},
        {kTools + R"(,"tool_choice":{"type":"tool","function":{"name":"get_time"}})", "tool_choice.type", "\"function\""},
        {kTools + R"(,"tool_choice":{"type":"function"})", "tool_choice.function", "must be an object"},
        {kTools + R"(,"tool_choice":{"type":"function","function":{"name":""}})", "tool_choice.function.name", "non-empty"},
        {kTools + R"(,"tool_choice":{"type":"function","function":{"name":"get_date"}})", "tool_choice.function.name",
         "'get_date', which is not a function in 'tools'"},
        {kTools + R"(,"tool_choice":{"type":"function","function":{"name":"get_time"},"x":1})", "tool_choice.x", "unsupported"},
        {kTools + R"(,"parallel_tool_calls":1)", "parallel_tool_calls", "must be a boolean, got a number"},
        {R"("tools":[{"type":"function","function":{"description":"no name"}}],"tool_choice":"required")",
         "tools[0].function.name", "a tool needs a name"},
        {R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"array"}}}],"tool_choice":"required")",
         "tools[0].function.parameters.type", "must be \"object\""},
        {R"("tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"a":{"type":"string","pattern":"x"}}}}}],"tool_choice":"required")",
         "tools[0].function.parameters", "keyword 'pattern' is not supported"},
        {kTools + R"(,"tool_choice":"required","response_format":{"type":"json_object"})", "tool_choice", "cannot both"},
    };
    for (const Case &c : cases) {
        INFO(c.fields);
        const ApiError e = refused(c.fields);
        CHECK(e.status == 400);
        CHECK(e.param == c.param);
        CHECK_THAT(e.message, Catch::Contains(c.says));
    }
    // A schema the grammar cannot express is no error while the output is free (auto).
    CHECK_NOTHROW(chat(R"("tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"a":{"pattern":"x"}}}}}])"));
    // Completions have no tools.
    try {
        parse_completion_request(R"({"prompt":"x","tool_choice":"auto"})", false);
        FAIL("accepted");
    } catch (const ApiError &e) {
        CHECK(e.param == "tool_choice");
    }
}

TEST_CASE("tools and tool calls nested far deeper than a stack are a 400, not a crash", "[serve][tools]") {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    const ApiError t = refused(R"("tools":[{"type":"function","function":{"name":"f","parameters":{"a":)" + deep + "}}}]");
    CHECK(t.param == "tools");
    CHECK_THAT(t.message, Catch::Contains("nests deeper than 128 levels"));
    try {
        parse_completion_request(R"({"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function",)"
                                 R"("function":{"name":"f","arguments":{"a":)" + deep + "}}}]}]}",
                                 true);
        FAIL("accepted");
    } catch (const ApiError &e) {
        CHECK(e.param == "messages[0].tool_calls");
    }
}
