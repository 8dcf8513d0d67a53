#include "chat_template_choice.h"

#include "text_file.h"

namespace rf {
namespace {

std::string token_text(const Tokenizer &tok, int32_t id) { return id == Tokenizer::kNoToken ? "" : tok.token_text(id); }

} // namespace

ChatTemplate pick_chat_template(const ChatTemplateOptions &o, const gguf::File &file, const Tokenizer &tok, std::string &notes) {
    if (!o.name.empty() && !o.file.empty()) throw UsageError("give --chat-template NAME or --chat-template-file FILE, not both");
    const std::string bos = token_text(tok, tok.bos()), eos = token_text(tok, tok.eos());
    if (!o.name.empty()) return ChatTemplate::builtin(chat_format_from(o.name));
    if (!o.file.empty()) return ChatTemplate::jinja(read_text_file(o.file, "--chat-template-file"), o.file, bos, eos);
    const std::string tmpl = file.get_string("tokenizer.chat_template");
    if (tmpl.empty()) { // the family's own format (gpt-oss: harmony), else chatml
        const ChatFormat family = family_chat_format(file.get_string("general.architecture"));
        notes = std::string("chat template: the model has none; using ") + chat_format_name(family) +
                (family == ChatFormat::ChatML ? "" : ", its family's format") +
                " (--chat-template NAME or --chat-template-file FILE to choose)";
        return ChatTemplate::builtin(family);
    }
    try {
        return ChatTemplate::jinja(tmpl, "the model's tokenizer.chat_template", bos, eos);
    } catch (const UsageError &e) {
        throw UsageError(std::string(e.what()) + " (--chat-template NAME or --chat-template-file FILE to use another)");
    }
}

} // namespace rf
