// A chat choice's output as OpenAI tool calls, for requests that parse them (tools given,
// tool_choice not none): the whole text at once, or streamed. Streamed, text that may begin a
// call (a marker of the template's format, or output that opens with JSON where a bare JSON call
// is the format) is held back until the output ends and parsed then, so no call markup ever
// reaches the client as content; the text before it streams as content at once.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "openai_json.h"
#include "request_parse.h"
#include "tool_calls.h"

namespace rf::serve {

struct ToolCallOptions {
    ToolCallFormat format = ToolCallFormat::Generic;
    bool forced = false; // the grammar made the whole output calls in the generic JSON form
    bool single = false; // parallel_tool_calls false: the first call only
    std::vector<std::string> names; // the request's tools: a call naming another is not one
};

// `template_format`: what the chat template's markers say (detect_tool_call_format).
ToolCallOptions tool_call_options(const CompletionRequest &r, ToolCallFormat template_format);

struct ChoiceCalls {
    std::string content;              // the text that is not a call
    std::vector<ToolCallOut> calls;   // with new ids, index = their place
};

// The output's calls; none (and all of it content) when it holds no well-formed call or a call
// of a function the request did not offer.
ChoiceCalls parse_choice_output(std::string_view text, const ToolCallOptions &o);

// "call_" and 24 random letters and digits.
std::string new_tool_call_id();

// The finish reason of a choice: "tool_calls" when it made calls and was not cut at max_tokens.
std::string tool_finish_reason(const std::string &reason, bool has_calls);

// A whole (non-streamed) choice with its calls: text the rest, finish reason tool_calls.
void apply_tool_calls(Choice &c, const ToolCallOptions &o);

// One streamed choice.
class ToolCallStream {
public:
    explicit ToolCallStream(ToolCallOptions o) : options_(std::move(o)) {}
    // The part of the text so far that can go out as content now.
    std::string push(std::string_view text);
    // At the end of the output: the held text parsed (its content still to send, and the calls).
    ChoiceCalls finish();

private:
    ToolCallOptions options_;
    std::string held_;
    bool hold_all_ = false;   // a call may have begun: everything from here waits for the end
    bool opened_ = false;     // a character other than whitespace has been seen
};

} // namespace rf::serve
