#include "tool_call_output.h"

#include <algorithm>
#include <mutex>
#include <random>

namespace rf::serve {
namespace {

// The marker that opens a call in each format's output.
std::string_view call_marker(ToolCallFormat f) {
    switch (f) {
    case ToolCallFormat::Hermes: return "<tool_call>";
    case ToolCallFormat::Mistral: return "[TOOL_CALLS]";
    case ToolCallFormat::Llama3: return "<|python_tag|>";
    case ToolCallFormat::Harmony: // read by harmony_output.cpp; here only forced calls (generic)
    case ToolCallFormat::Generic: break;
    }
    return "<tool_call>"; // the generic parser reads Hermes blocks too
}

// Whether output that opens with `c` may be a bare JSON call in this format (Llama 3's and
// Mistral's markers are control tokens the generated text leaves out).
bool opens_bare_call(ToolCallFormat f, char c) {
    switch (f) {
    case ToolCallFormat::Hermes: return false;
    case ToolCallFormat::Llama3: return c == '{';
    case ToolCallFormat::Mistral: return c == '[';
    case ToolCallFormat::Harmony:
    case ToolCallFormat::Generic: break;
    }
    return c == '{' || c == '[';
}

// The length of the longest end of `text` that is a beginning of `marker` (it may go on into one).
size_t partial_marker(std::string_view text, std::string_view marker) {
    for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
    return 0;
}

} // namespace

ToolCallOptions tool_call_options(const CompletionRequest &r, ToolCallFormat template_format) {
    ToolCallOptions o;
    o.forced = r.forces_tool_call();
    o.format = template_format;
    o.single = !r.parallel_tool_calls;
    o.names = r.tool_names;
    return o;
}

std::string new_tool_call_id() {
    static std::mutex mutex;
    static std::mt19937_64 rng{std::random_device{}()};
    static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    std::string id = "call_";
    std::lock_guard lock(mutex);
    for (int i = 0; i < 24; ++i) id += kAlnum[rng() % (sizeof(kAlnum) - 1)];
    return id;
}

ChoiceCalls parse_choice_output(std::string_view text, const ToolCallOptions &o) {
    // Forced calls are in the generic JSON form whatever the template's format.
    ParsedOutput p = parse_tool_calls(text, o.forced ? ToolCallFormat::Generic : o.format);
    const bool offered = std::all_of(p.calls.begin(), p.calls.end(), [&](const ParsedToolCall &c) {
        return std::find(o.names.begin(), o.names.end(), c.name) != o.names.end();
    });
    if (p.calls.empty() || !offered) return {std::string(text), {}};
    if (o.single) p.calls.resize(1);
    ChoiceCalls out{std::move(p.content), {}};
    for (size_t i = 0; i < p.calls.size(); ++i)
        out.calls.push_back({(int)i, new_tool_call_id(), std::move(p.calls[i].name), std::move(p.calls[i].arguments)});
    return out;
}

std::string tool_finish_reason(const std::string &reason, bool has_calls) {
    return has_calls && reason != "length" ? "tool_calls" : reason;
}

void apply_tool_calls(Choice &c, const ToolCallOptions &o) {
    ChoiceCalls cc = parse_choice_output(c.text, o);
    if (cc.calls.empty()) return;
    c.text = std::move(cc.content);
    c.tool_calls = std::move(cc.calls);
    if (c.finish_reason) c.finish_reason = tool_finish_reason(*c.finish_reason, true);
}

std::string ToolCallStream::push(std::string_view text) {
    held_ += text;
    if (options_.forced) hold_all_ = true; // the whole output is the calls
    if (hold_all_) return {};
    if (!opened_) {
        const size_t first = held_.find_first_not_of(" \t\r\n");
        if (first == std::string::npos) return {}; // only whitespace yet: a bare call may follow
        opened_ = true;
        if (opens_bare_call(options_.format, held_[first])) {
            hold_all_ = true;
            return {};
        }
    }
    const std::string_view marker = call_marker(options_.format);
    const size_t m = held_.find(marker);
    const size_t keep = m != std::string::npos ? held_.size() - m : partial_marker(held_, marker);
    hold_all_ = m != std::string::npos;
    std::string out = held_.substr(0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out;
}

ChoiceCalls ToolCallStream::finish() {
    ChoiceCalls out = parse_choice_output(held_, options_);
    held_.clear();
    return out;
}

} // namespace rf::serve
