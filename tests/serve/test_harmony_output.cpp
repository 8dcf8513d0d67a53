// gpt-oss's harmony output as a chat message: analysis -> reasoning, final -> content,
// commentary to=functions.NAME -> calls; whole and streamed in every chunk size (markup split
// across chunks never goes out as text, the same message either way); malformed or truncated
// output falls back to the raw text as content; the response JSON's reasoning_content.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "harmony_output.h"
#include "openai_json.h"
#include "tool_calls.h"

using namespace rf::serve;

namespace {

HarmonyOptions tools(bool single = false) { return {{"get_weather", "get_time"}, single}; }

// The text streamed in pieces of `step` bytes: every delta joined, then the end's.
HarmonyMessage stream(const std::string &text, const HarmonyOptions &o, size_t step) {
    HarmonyStream s(o);
    HarmonyMessage out;
    for (size_t i = 0; i < text.size(); i += step) {
        HarmonyDelta d = s.push(std::string_view(text).substr(i, step));
        out.reasoning += d.reasoning;
        out.content += d.content;
    }
    HarmonyMessage end = s.finish();
    out.reasoning += end.reasoning;
    out.content += end.content;
    out.calls = end.calls;
    out.malformed = end.malformed;
    return out;
}

bool has_markup(const std::string &s) { return s.find("<|") != std::string::npos; }
bool has(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

const std::string kAnswer = "<|channel|>analysis<|message|>The user greets. Reply.<|end|>"
                            "<|start|>assistant<|channel|>final<|message|>Hello! How can I help?";

} // namespace

TEST_CASE("harmony: analysis is reasoning, final is content", "[serve][harmony]") {
    const HarmonyMessage whole = parse_harmony_output(kAnswer, {});
    CHECK_FALSE(whole.malformed);
    CHECK(whole.reasoning == "The user greets. Reply.");
    CHECK(whole.content == "Hello! How can I help?");
    CHECK(whole.calls.empty());
    // A turn the model opened itself, and <|return|> (when the text shows it) ending the final message.
    const HarmonyMessage opened = parse_harmony_output("<|start|>assistant" + kAnswer + "<|return|>", {});
    CHECK(opened.reasoning == whole.reasoning);
    CHECK(opened.content == whole.content);
    for (size_t step : {1, 4}) CHECK(stream("<|start|>assistant" + kAnswer, {}, step).content == whole.content);
    // A message the next one's <|start|> ends (no <|end|> between them).
    const std::string unended = "<|channel|>analysis<|message|>a<|start|>assistant<|channel|>final<|message|>b";
    for (size_t step : {1, 2, 1000}) {
        const HarmonyMessage st = stream(unended, {}, step);
        CHECK_FALSE(st.malformed);
        CHECK(st.reasoning == "a");
        CHECK(st.content == "b");
    }
    CHECK(parse_harmony_output(kAnswer + "<|return|>", {}).content == "Hello! How can I help?");
    for (size_t step : {1, 2, 3, 5, 7, 11, 64, 1000}) {
        INFO("step " << step);
        const HarmonyMessage st = stream(kAnswer, {}, step);
        CHECK_FALSE(st.malformed);
        CHECK(st.reasoning == whole.reasoning);
        CHECK(st.content == whole.content);
    }
}

TEST_CASE("harmony: streamed text goes out as it comes, a marker's beginning waits", "[serve][harmony]") {
    HarmonyStream s({});
    CHECK(s.push("<|chan").reasoning.empty());
    CHECK(s.push("nel|>analysis<|mess").reasoning.empty());
    CHECK(s.push("age|>Think a <b> bit").reasoning == "Think a <b> bit");
    HarmonyDelta d = s.push(" more<|e");
    CHECK(d.reasoning == " more"); // "<|e" may be <|end|>
    CHECK(s.push("nd|><|start|>assi").reasoning.empty());
    d = s.push("stant<|channel|>final<|message|>Hi <|");
    CHECK(d.content == "Hi ");
    CHECK(d.reasoning.empty());
    const HarmonyMessage end = s.finish();
    CHECK(end.content == "<|"); // the output ended: not a marker after all
    CHECK_FALSE(end.malformed);
}

TEST_CASE("harmony: a commentary call to a function is a tool call", "[serve][harmony]") {
    const std::string call_after = "<|channel|>analysis<|message|>Need the weather.<|end|>"
                                   "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
                                   "<|message|>{\"city\": \"Paris\"}";
    // The recipient may come before the channel, the content type bare; <|call|> may show.
    const std::string call_before = "<|channel|>analysis<|message|>Need the weather.<|end|>"
                                    "<|start|>assistant to=functions.get_weather<|channel|>commentary json"
                                    "<|message|>{\"city\": \"Paris\"}<|call|>";
    for (const std::string &text : {call_after, call_before}) {
        const HarmonyMessage whole = parse_harmony_output(text, tools());
        CHECK_FALSE(whole.malformed);
        CHECK(whole.reasoning == "Need the weather.");
        CHECK(whole.content.empty());
        REQUIRE(whole.calls.size() == 1);
        CHECK(whole.calls[0].index == 0);
        CHECK(whole.calls[0].name == "get_weather");
        CHECK(whole.calls[0].arguments == R"({"city":"Paris"})");
        CHECK(whole.calls[0].id.rfind("call_", 0) == 0);
        for (size_t step : {1, 2, 3, 4, 9, 100}) {
            INFO("step " << step);
            const HarmonyMessage st = stream(text, tools(), step);
            CHECK(st.reasoning == "Need the weather.");
            CHECK(st.content.empty()); // nothing of the call as content
            REQUIRE(st.calls.size() == 1);
            CHECK(st.calls[0].arguments == R"({"city":"Paris"})");
        }
    }
    // A call without arguments, and one right away (no analysis first).
    const HarmonyMessage bare = parse_harmony_output("<|channel|>commentary to=functions.get_time<|message|>", tools());
    REQUIRE(bare.calls.size() == 1);
    CHECK(bare.calls[0].arguments == "{}");
}

TEST_CASE("harmony: a preamble, then calls; parallel_tool_calls false keeps the first", "[serve][harmony]") {
    const std::string text = "<|channel|>commentary<|message|>Checking both.<|end|>"
                             "<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>{\"city\":\"Oslo\"}<|call|>"
                             "<|start|>assistant<|channel|>commentary to=functions.get_time<|message|>{}";
    const HarmonyMessage many = parse_harmony_output(text, tools());
    CHECK(many.content == "Checking both.");
    REQUIRE(many.calls.size() == 2);
    CHECK(many.calls[1].index == 1);
    CHECK(many.calls[1].name == "get_time");
    const HarmonyMessage one = parse_harmony_output(text, tools(/*single=*/true));
    REQUIRE(one.calls.size() == 1);
    CHECK(one.calls[0].name == "get_weather");
}

TEST_CASE("harmony: max_tokens mid-channel keeps what came", "[serve][harmony]") {
    const HarmonyMessage cut = parse_harmony_output("<|channel|>analysis<|message|>Let me th", {});
    CHECK_FALSE(cut.malformed);
    CHECK(cut.reasoning == "Let me th");
    CHECK(cut.content.empty());
    const HarmonyMessage cut_final = parse_harmony_output(kAnswer.substr(0, kAnswer.size() - 5), {});
    CHECK(cut_final.content == "Hello! How can I ");
    CHECK(parse_harmony_output("", {}).content.empty());
    CHECK_FALSE(parse_harmony_output("", {}).malformed);
}

TEST_CASE("harmony: malformed output is the raw text, as content", "[serve][harmony]") {
    const std::vector<std::string> bad = {
        "Just plain text, no channel.",                                                   // no header
        "<|channel|>analysis and no message marker",                                      // missing <|message|>
        "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>fin",          // cut in a header
        "<|channel|>musings<|message|>what channel is this",                              // unknown channel
        "<|channel|>analysis<|message|>a<|end|><|start|>user<|message|>b",                // another role
        "<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"Par",      // cut in the call
        "<|channel|>commentary to=functions.get_weather<|message|>[1, 2]",                // not an object
        "<|channel|>commentary to=functions.delete_all<|message|>{}",                     // not offered
        "<|channel|>analysis to=browser.search<|message|>{\"q\": \"x\"}",                  // a built-in tool
        "<|channel|>analysis<|message|>a<|channel|>final<|message|>b",                    // a header in a body
        "<|channel|>final<|message|>done<|end|>trailing words",                           // text between messages
        "<|channel|>commentary to=functions.get_weather<|message|>" + std::string(200, '[') + std::string(200, ']'),
    };
    for (const std::string &text : bad) {
        INFO(text);
        const HarmonyMessage whole = parse_harmony_output(text, tools());
        CHECK(whole.malformed);
        CHECK(whole.content == text);
        CHECK(whole.reasoning.empty());
        CHECK(whole.calls.empty());
        for (size_t step : {1, 3, 8, 1000}) {
            INFO("step " << step);
            const HarmonyMessage st = stream(text, tools(), step);
            CHECK(st.malformed);
            CHECK(st.calls.empty());
            // Streamed, what was understood went out; the rest went out raw, nothing lost.
            CHECK(st.reasoning.size() + st.content.size() <= text.size());
            CHECK(st.content.size() > 0);
        }
    }
    // Without tools in the request a call is not read either.
    const std::string call = "<|channel|>commentary to=functions.get_time<|message|>{}";
    CHECK(parse_harmony_output(call, {}).content == call);
}

TEST_CASE("harmony: streamed plain text is not held to the end", "[serve][harmony]") {
    HarmonyStream s({});
    CHECK(s.push("Hel").content == "Hel"); // cannot begin a header: raw at once
    CHECK(s.push("lo").content == "lo");
    CHECK(s.finish().malformed);
}

TEST_CASE("harmony: the chat template's markers pick the format", "[serve][harmony]") {
    CHECK(detect_tool_call_format("{{- '<|start|>assistant<|channel|>final<|message|>' }}") == ToolCallFormat::Harmony);
    CHECK(std::string(tool_call_format_name(ToolCallFormat::Harmony)) == "harmony");
}

TEST_CASE("harmony: the message and the deltas carry reasoning_content", "[serve][harmony]") {
    Choice c{0, kAnswer};
    c.finish_reason = "stop";
    apply_harmony(c, {});
    const std::string body = completion_body({true, "chatcmpl-1", 0, "m"}, {c}, {});
    rapidjson::Document d;
    d.Parse(body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    const auto &msg = d["choices"][0]["message"];
    CHECK(std::string(msg["content"].GetString()) == "Hello! How can I help?");
    CHECK(std::string(msg["reasoning_content"].GetString()) == "The user greets. Reply.");
    CHECK(std::string(d["choices"][0]["finish_reason"].GetString()) == "stop");

    Choice called{0, "<|channel|>analysis<|message|>Weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_time<|message|>{}"};
    called.finish_reason = "stop";
    apply_harmony(called, tools());
    d.Parse(completion_body({true, "chatcmpl-2", 0, "m"}, {called}, {}).c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(d["choices"][0]["message"]["content"].IsNull());
    CHECK(std::string(d["choices"][0]["message"]["tool_calls"][0]["function"]["name"].GetString()) == "get_time");
    CHECK(std::string(d["choices"][0]["finish_reason"].GetString()) == "tool_calls");

    // Reasoning alone (cut by max_tokens in the analysis): content "", as llama-server's.
    Choice thinking{0, "<|channel|>analysis<|message|>Hmm"};
    thinking.finish_reason = "length";
    apply_harmony(thinking, {});
    d.Parse(completion_body({true, "chatcmpl-4", 0, "m"}, {thinking}, {}).c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(std::string(d["choices"][0]["message"]["content"].GetString()).empty());
    CHECK(std::string(d["choices"][0]["message"]["reasoning_content"].GetString()) == "Hmm");
    CHECK(std::string(d["choices"][0]["finish_reason"].GetString()) == "length");

    Choice delta{0, ""};
    delta.reasoning = "Thinking";
    d.Parse(chunk_body({true, "chatcmpl-3", 0, "m"}, delta, false).c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(std::string(d["choices"][0]["delta"]["reasoning_content"].GetString()) == "Thinking");
    CHECK_FALSE(d["choices"][0]["delta"].HasMember("content"));
    CHECK_FALSE(has_markup(c.text + c.reasoning));
}

TEST_CASE("harmony: random markup soups never crash, streamed = whole", "[serve][harmony]") {
    const std::vector<std::string> parts = {"<|channel|>", "analysis", "final", "commentary", "<|message|>", "<|end|>",
                                            "<|start|>", "assistant", " to=functions.get_time", "to=functions.get_weather",
                                            " json", "<|constrain|>", "<|call|>", "<|return|>", "{\"city\": \"Oslo\"}", "{}",
                                            "text ", "<|", "|>", " ", "\n", "user", "{", "}"};
    const std::vector<std::string> headers = {"<|channel|>analysis", "<|channel|>final", "<|channel|>commentary",
                                              "<|channel|>commentary to=functions.get_time <|constrain|>json",
                                              " to=functions.get_weather<|channel|>commentary json"};
    const std::vector<std::string> bodies = {"", "Some words.", "{\"city\": \"Oslo\"}", "{}", "a < b |> c"};
    const std::vector<std::string> markers = {"<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|constrain|>",
                                              "<|call|>", "<|return|>"};
    uint64_t state = 12345;
    auto next = [&](uint64_t n) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return (state >> 33) % n;
    };
    int well_formed = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string text;
        if (round % 2) { // soup
            for (uint64_t n = next(12) + 1; n > 0; --n) text += parts[next(parts.size())];
        } else { // messages, now and then with a piece of soup in them
            for (uint64_t n = next(4) + 1; n > 0; --n) {
                if (!text.empty()) text += "<|start|>assistant";
                text += headers[next(headers.size())] + "<|message|>" + bodies[next(bodies.size())];
                if (next(4) == 0) text += parts[next(parts.size())];
                text += next(2) ? "<|end|>" : next(2) ? "<|call|>" : "";
            }
        }
        INFO(text);
        const HarmonyMessage whole = parse_harmony_output(text, tools());
        if (whole.malformed) {
            CHECK(whole.content == text);
            continue;
        }
        ++well_formed;
        for (const std::string &m : markers) {
            CHECK_FALSE(has(whole.content, m));
            CHECK_FALSE(has(whole.reasoning, m));
        }
        const HarmonyMessage st = stream(text, tools(), next(6) + 1);
        CHECK_FALSE(st.malformed);
        CHECK(st.reasoning == whole.reasoning);
        CHECK(st.content == whole.content);
        CHECK(st.calls.size() == whole.calls.size());
    }
    CHECK(well_formed > 50); // the soup is not all malformed
}
