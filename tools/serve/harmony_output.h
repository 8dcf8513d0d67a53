// gpt-oss's output in OpenAI's harmony format -> a chat message: the analysis channel as
// reasoning_content, the final channel (and commentary without a recipient, the model's
// preambles) as content, commentary to functions.NAME as tool calls. The prompt opens the turn
// with <|start|>assistant, so the output is
//   <|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>final<|message|>...
// with a message's header (between its start and <|message|>) holding <|channel|>NAME, an
// optional ` to=RECIPIENT` (before or after the channel) and an optional `<|constrain|>json` or
// ` json`. <|return|> and <|call|> end generation, so the text usually ends without them; they
// are read as a message's end when present.
//
// Output that is not such messages (no header, a header without <|message|>, an unknown channel
// or recipient, a call whose arguments are not a JSON object, a call of a function the request
// did not offer) is not guessed at: from there on the raw text is content. Whole, the raw text
// of all the output is then the content (parse_harmony_output); streamed, what already went out
// stays and the rest goes out raw.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "openai_json.h"
#include "request_parse.h"

namespace rf::serve {

struct HarmonyOptions {
    std::vector<std::string> names; // the functions a call may name (none: no calls are read)
    bool single = false;            // parallel_tool_calls false: the first call only
};

// Text released by a push: each part goes to its field of a delta.
struct HarmonyDelta {
    std::string reasoning, content;
};

struct HarmonyMessage {
    std::string reasoning, content;
    std::vector<ToolCallOut> calls; // with new ids, index = their place
    bool malformed = false;         // the raw text took over somewhere (see above)
};

// One choice's output, streamed: markup never goes out as text, and text that may be the start
// of a marker split across pushes is held until the next push shows what it is.
class HarmonyStream {
public:
    explicit HarmonyStream(HarmonyOptions o) : options_(std::move(o)) {}
    HarmonyDelta push(std::string_view text);
    // At the end of the output: the held text, and the calls.
    HarmonyMessage finish();

private:
    enum class State { Header, Body, Between, Raw };
    enum class Kind { Reasoning, Content, Call };

    void step(HarmonyDelta &out, bool at_end);
    bool header_done(HarmonyDelta &out, bool at_end);
    bool body_done(HarmonyDelta &out, bool at_end);
    bool between_done(HarmonyDelta &out, bool at_end);
    bool end_call(); // false: the call is not one (then raw)
    void go_raw(HarmonyDelta &out);

    HarmonyOptions options_;
    State state_ = State::Header;
    Kind kind_ = Kind::Content;
    bool first_ = true;       // the first header: the prompt gave its <|start|>assistant
    std::string pending_;     // text not yet placed
    std::string message_raw_; // the current message's raw text (for the fallback)
    std::string call_name_, call_args_;
    std::vector<ToolCallOut> calls_;
    bool malformed_ = false;
};

// The whole output at once; malformed output is all content, raw.
HarmonyMessage parse_harmony_output(std::string_view text, const HarmonyOptions &o);

// A chat request's options: its tools' names when it parses calls (tools given, tool_choice not
// none), else none.
HarmonyOptions harmony_options(const CompletionRequest &r);

// A whole (non-streamed) choice: text the content, its reasoning and calls (finish reason
// tool_calls when it made calls and was not cut at max_tokens).
void apply_harmony(Choice &c, const HarmonyOptions &o);

} // namespace rf::serve
