// The built-in formats: each as llama.cpp's llm_chat_apply_template writes it (src/llama-chat.cpp).
#include "rocmforge/chat_template.h"

#include "chat_harmony.h"

#include "rocmforge/error.h"

namespace rf {
namespace {

struct Named {
    const char *name;
    ChatFormat format;
};
const Named kFormats[] = {{"chatml", ChatFormat::ChatML}, {"llama2", ChatFormat::Llama2},  {"llama3", ChatFormat::Llama3},
                          {"mistral", ChatFormat::Mistral}, {"gemma", ChatFormat::Gemma}, {"phi3", ChatFormat::Phi3},
                          {"gpt-oss", ChatFormat::Harmony}};

std::string trim(const std::string &s) {
    const size_t b = s.find_first_not_of(" \t\n\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

std::string format_list() {
    std::string s;
    for (const auto &f : kFormats) s += std::string(s.empty() ? "" : ", ") + f.name;
    return s;
}

// [INST] formats: llama2 has <<SYS>> blocks and a BOS before each later turn; mistral (v1)
// writes the system text at the start of the first turn.
std::string inst_format(const std::vector<ChatMessage> &messages, bool llama2) {
    std::string out = "[INST] ";
    bool inside_turn = true;
    for (const auto &m : messages) {
        if (!inside_turn) {
            inside_turn = true;
            out += llama2 ? "<s>[INST] " : "[INST] ";
        }
        if (m.role == "system") out += llama2 ? "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n" : m.content + "\n";
        else if (m.role == "user") out += m.content + " [/INST]";
        else {
            out += m.content + "</s>";
            inside_turn = false;
        }
    }
    return out;
}

} // namespace

ChatFormat family_chat_format(const std::string &arch) { return arch == "gpt-oss" ? ChatFormat::Harmony : ChatFormat::ChatML; }

ChatFormat chat_format_from(const std::string &t) {
    for (const auto &f : kFormats)
        if (t == f.name) return f.format;
    if (t == "harmony") return ChatFormat::Harmony;
    auto has = [&](const char *marker) { return t.find(marker) != std::string::npos; };
    if (has("<|start|>") && has("<|message|>")) return ChatFormat::Harmony;
    if (has("<|im_start|>")) return ChatFormat::ChatML;
    if (has("[INST]")) return has("<<SYS>>") ? ChatFormat::Llama2 : ChatFormat::Mistral;
    if (has("<|start_header_id|>") && has("<|end_header_id|>")) return ChatFormat::Llama3;
    if (has("<start_of_turn>")) return ChatFormat::Gemma;
    if (has("<|assistant|>") && has("<|end|>")) return ChatFormat::Phi3;
    throw UsageError("chat template not recognised: '" + t.substr(0, 60) + (t.size() > 60 ? "...'" : "'") +
                     " is neither a format name nor a template of a known format (" + format_list() + ")");
}

const char *chat_format_name(ChatFormat format) {
    for (const auto &f : kFormats)
        if (f.format == format) return f.name;
    return "?";
}

std::string apply_chat_template(ChatFormat format, const std::vector<ChatMessage> &messages, bool add_assistant) {
    for (size_t i = 0; i < messages.size(); ++i)
        if (messages[i].role != "system" && messages[i].role != "user" && messages[i].role != "assistant")
            throw UsageError("chat message " + std::to_string(i) + " has role '" + messages[i].role +
                             "' (use system, user or assistant)");
    std::string out;
    switch (format) {
    case ChatFormat::ChatML:
        for (const auto &m : messages) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
        if (add_assistant) out += "<|im_start|>assistant\n";
        break;
    case ChatFormat::Llama2:
    case ChatFormat::Mistral:
        out = inst_format(messages, format == ChatFormat::Llama2);
        break;
    case ChatFormat::Llama3:
        for (const auto &m : messages)
            out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
        if (add_assistant) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
        break;
    case ChatFormat::Gemma: {
        // No system role: its text opens the next user turn.
        std::string system;
        for (const auto &m : messages) {
            if (m.role == "system") {
                system += m.content + "\n\n";
                continue;
            }
            const bool user = m.role == "user";
            out += std::string("<start_of_turn>") + (user ? "user" : "model") + "\n" + (user ? system : "") +
                   trim(m.content) + "<end_of_turn>\n";
            if (user) system.clear();
        }
        if (add_assistant) out += "<start_of_turn>model\n";
        break;
    }
    case ChatFormat::Phi3:
        for (const auto &m : messages) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
        if (add_assistant) out += "<|assistant|>\n";
        break;
    case ChatFormat::Harmony:
        out = harmony_prompt(messages, "", add_assistant);
        break;
    }
    return out;
}

} // namespace rf
