#include "harmony_output.h"

#include <algorithm>
#include <array>
#include <optional>

#include <rapidjson/document.h>

#include "../../core/src/json_nesting.h"
#include "json_text.h"
#include "tool_call_output.h"

namespace rf::serve {
namespace {

constexpr std::string_view kStart = "<|start|>", kChannel = "<|channel|>", kMessage = "<|message|>",
                           kConstrain = "<|constrain|>", kEnd = "<|end|>", kReturn = "<|return|>", kCall = "<|call|>";
constexpr std::string_view kFunctions = "functions.";
// A header is a few words; longer text before <|message|> is not one (and would be held forever).
constexpr size_t kMaxHeader = 512;
// A call's arguments nested deeper are not a call (the JSON writer recurses once per level).
constexpr size_t kMaxArgsNesting = 128;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view ltrim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    return s;
}

// Whether `s` begins with `word`, or is a beginning of it (more text may complete it).
bool may_begin_with(std::string_view s, std::string_view word) {
    return s.size() >= word.size() ? s.substr(0, word.size()) == word : word.substr(0, s.size()) == s;
}

// The length of the longest end of `text` that is a beginning of one of the markers.
size_t partial_marker(std::string_view text, std::initializer_list<std::string_view> markers) {
    size_t best = 0;
    for (std::string_view m : markers)
        for (size_t n = std::min(text.size(), m.size() - 1); n > best; --n)
            if (text.substr(text.size() - n) == m.substr(0, n)) {
                best = n;
                break;
            }
    return best;
}

struct Header {
    std::string channel, recipient;
};

// A header's word: up to whitespace or the next marker.
std::string_view word_at(std::string_view &s) {
    size_t n = 0;
    while (n < s.size() && !is_space(s[n]) && s.substr(n, 2) != "<|") ++n;
    std::string_view w = s.substr(0, n);
    s.remove_prefix(n);
    return w;
}

// `[assistant] <|channel|>NAME [to=RECIPIENT] [<|constrain|>TYPE | TYPE]`, the channel and the
// recipient in either order first; nullopt when it is not that (another role, a marker or text
// that has no place there).
std::optional<Header> parse_header(std::string_view h, bool needs_role) {
    h = ltrim(h);
    if (needs_role) {
        if (h.substr(0, 9) != "assistant") return std::nullopt;
        h.remove_prefix(9);
    }
    Header out;
    while (!(h = ltrim(h)).empty()) {
        if (h.substr(0, kChannel.size()) == kChannel) {
            h.remove_prefix(kChannel.size());
            out.channel = word_at(h);
            if (out.channel.empty()) return std::nullopt;
        } else if (h.substr(0, kConstrain.size()) == kConstrain) {
            h.remove_prefix(kConstrain.size());
            word_at(h); // the content type: arguments are read as JSON whatever it says
        } else if (h.substr(0, 3) == "to=") {
            h.remove_prefix(3);
            out.recipient = word_at(h);
            if (out.recipient.empty()) return std::nullopt;
        } else if (h.substr(0, 2) == "<|") {
            return std::nullopt; // another marker
        } else if (!out.channel.empty() || !out.recipient.empty()) {
            word_at(h); // a bare content type (` json`), after what it types
        } else {
            return std::nullopt; // text where the channel or the recipient belongs
        }
    }
    if (out.channel.empty() && out.recipient.empty()) return std::nullopt;
    return out;
}

// A call's arguments as compact JSON text; nullopt when they are not a JSON object.
std::optional<std::string> arguments_of(std::string_view s) {
    s = ltrim(s);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    if (s.empty()) return "{}"; // a call without arguments
    if (json_nesting_depth(s) > kMaxArgsNesting) return std::nullopt;
    rapidjson::Document d;
    d.Parse(s.data(), s.size());
    if (d.HasParseError() || !d.IsObject()) return std::nullopt;
    return json_text(d);
}

} // namespace

HarmonyDelta HarmonyStream::push(std::string_view text) {
    HarmonyDelta out;
    pending_ += text;
    step(out, false);
    return out;
}

HarmonyMessage HarmonyStream::finish() {
    HarmonyDelta out;
    step(out, true);
    HarmonyMessage m{std::move(out.reasoning), std::move(out.content), std::move(calls_), malformed_};
    calls_.clear();
    return m;
}

// Places as much of the pending text as can be placed now (all of it at the end).
void HarmonyStream::step(HarmonyDelta &out, bool at_end) {
    for (;;) {
        bool moved = false;
        switch (state_) {
        case State::Header: moved = header_done(out, at_end); break;
        case State::Body: moved = body_done(out, at_end); break;
        case State::Between: moved = between_done(out, at_end); break;
        case State::Raw:
            out.content += pending_;
            pending_.clear();
            return;
        }
        if (!moved) return;
    }
}

void HarmonyStream::go_raw(HarmonyDelta &out) {
    malformed_ = true;
    state_ = State::Raw;
    out.content += message_raw_;
    message_raw_.clear();
}

bool HarmonyStream::header_done(HarmonyDelta &out, bool at_end) {
    if (first_) { // a prompt without the open turn: the model writes <|start|>assistant itself
        const std::string_view head = ltrim(pending_);
        if (head.substr(0, kStart.size()) == kStart) {
            message_raw_ += pending_.substr(0, pending_.size() - head.size() + kStart.size());
            pending_.erase(0, pending_.size() - head.size() + kStart.size());
            first_ = false;
        } else if (!at_end && !head.empty() && may_begin_with(head, kStart)) {
            return false;
        }
    }
    const size_t m = pending_.find(kMessage);
    if (m == std::string::npos) {
        const std::string_view head = ltrim(pending_);
        // The first header opens with its channel or recipient, the later ones with the role:
        // anything else is not harmony, and need not wait for the end to be known as such.
        const bool may_be_header = first_ ? may_begin_with(head, kChannel) || may_begin_with(head, "to=")
                                          : may_begin_with(head, "assistant");
        if (at_end && head.empty() && message_raw_.empty()) { // nothing more came: no message
            pending_.clear();
            return false;
        }
        if (!at_end && may_be_header && pending_.size() <= kMaxHeader) return false;
        go_raw(out); // a header without <|message|>: its raw text is content
        return true;
    }
    const std::optional<Header> h = parse_header(std::string_view(pending_).substr(0, m), !first_);
    message_raw_ += pending_.substr(0, m + kMessage.size());
    pending_.erase(0, m + kMessage.size());
    if (!h) {
        go_raw(out);
        return true;
    }
    first_ = false;
    if (!h->recipient.empty()) {
        if (h->recipient.rfind(kFunctions, 0) != 0 || h->recipient.size() == kFunctions.size()) {
            go_raw(out); // a built-in tool (browser, python) the server does not run
            return true;
        }
        kind_ = Kind::Call;
        call_name_ = h->recipient.substr(kFunctions.size());
        call_args_.clear();
    } else if (h->channel == "analysis") {
        kind_ = Kind::Reasoning;
    } else if (h->channel == "final" || h->channel == "commentary") { // commentary: a preamble to the user
        kind_ = Kind::Content;
    } else {
        go_raw(out); // an unknown channel
        return true;
    }
    if (kind_ != Kind::Call) message_raw_.clear(); // the header is understood; the body goes out as it comes
    state_ = State::Body;
    return true;
}

bool HarmonyStream::body_done(HarmonyDelta &out, bool at_end) {
    static constexpr std::array<std::string_view, 4> kEnds = {kEnd, kReturn, kCall, kStart};
    static constexpr std::array<std::string_view, 3> kMisplaced = {kChannel, kMessage, kConstrain};
    size_t at = std::string::npos, len = 0;
    bool misplaced = false;
    for (std::string_view e : kEnds)
        if (const size_t p = pending_.find(e); p < at) at = p, len = e.size(), misplaced = false;
    for (std::string_view e : kMisplaced)
        if (const size_t p = pending_.find(e); p < at) at = p, len = e.size(), misplaced = true;
    // Without an end yet, the text goes out but for an end that may be a marker's beginning.
    const size_t n = at != std::string::npos ? at
                     : at_end              ? pending_.size()
                                           : pending_.size() - partial_marker(pending_, {kEnd, kReturn, kCall, kStart, kChannel, kMessage, kConstrain});
    std::string body = pending_.substr(0, n);
    if (kind_ == Kind::Call) {
        call_args_ += body;
        message_raw_ += body;
    } else {
        (kind_ == Kind::Reasoning ? out.reasoning : out.content) += body;
    }
    pending_.erase(0, n);
    if (misplaced) { // a header's marker inside a body: not harmony from here on
        go_raw(out);
        return true;
    }
    if (at == std::string::npos && !at_end) return false;
    const std::string end = pending_.substr(0, len); // a copy: pending_ changes below
    message_raw_ += end;
    pending_.erase(0, len);
    if (kind_ == Kind::Call && !end_call()) {
        go_raw(out); // the call's raw text is content
        return true;
    }
    message_raw_.clear();
    if (end == kStart) {
        message_raw_ = kStart; // the next message's header, raw until understood
        state_ = State::Header;
    } else {
        state_ = State::Between;
    }
    return !at_end || !pending_.empty();
}

bool HarmonyStream::between_done(HarmonyDelta &out, bool at_end) {
    const std::string_view rest = ltrim(pending_);
    if (rest.substr(0, kStart.size()) == kStart) {
        pending_.erase(0, pending_.size() - rest.size() + kStart.size());
        message_raw_ = kStart;
        state_ = State::Header;
        return true;
    }
    if (at_end && rest.empty()) {
        pending_.clear();
        return false;
    }
    if (!at_end && may_begin_with(rest, kStart)) return false;
    go_raw(out); // text after a message that does not start another
    return true;
}

bool HarmonyStream::end_call() {
    if (std::find(options_.names.begin(), options_.names.end(), call_name_) == options_.names.end()) return false;
    std::optional<std::string> args = arguments_of(call_args_);
    if (!args) return false;
    if (options_.single && !calls_.empty()) return true; // parallel_tool_calls false: the first call only
    calls_.push_back({(int)calls_.size(), new_tool_call_id(), call_name_, std::move(*args)});
    return true;
}

HarmonyMessage parse_harmony_output(std::string_view text, const HarmonyOptions &o) {
    HarmonyStream s(o);
    HarmonyDelta first = s.push(text);
    HarmonyMessage m = s.finish();
    if (m.malformed) return {"", std::string(text), {}, true}; // not harmony: the raw text is the answer
    m.reasoning = first.reasoning + m.reasoning;
    m.content = first.content + m.content;
    return m;
}

HarmonyOptions harmony_options(const CompletionRequest &r) {
    HarmonyOptions o;
    if (r.parses_tool_calls()) o.names = r.tool_names;
    o.single = !r.parallel_tool_calls;
    return o;
}

void apply_harmony(Choice &c, const HarmonyOptions &o) {
    HarmonyMessage m = parse_harmony_output(c.text, o);
    c.text = std::move(m.content);
    c.reasoning = std::move(m.reasoning);
    c.tool_calls = std::move(m.calls);
    if (c.finish_reason) c.finish_reason = tool_finish_reason(*c.finish_reason, !c.tool_calls.empty());
}

} // namespace rf::serve
