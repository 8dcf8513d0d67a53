// rocmforge_chat_apply_template: a named format, a template text, or the model's own template.
#include "api_objects.h"
#include "api_status.h"
#include "rocmforge/chat_template.h"

extern "C" {

rocmforge_status rocmforge_chat_apply_template(const rocmforge_model *model, const char *tmpl,
                                               const rocmforge_chat_message *messages, size_t n_messages, bool add_assistant,
                                               char *buf, size_t buf_size, size_t *out_len) {
    if (!tmpl) RF_API_REQUIRE(model);
    if (n_messages > 0) RF_API_REQUIRE(messages);
    return rf::api::api_call([&] {
        std::string text = tmpl ? tmpl : model->session.model->file().get_string("tokenizer.chat_template", "");
        // A family with a format of its own (gpt-oss: harmony) uses it when the file has no template.
        if (text.empty() && model) {
            const rf::ChatFormat family = rf::family_chat_format(model->session.model->hparams().arch_name);
            if (family != rf::ChatFormat::ChatML) text = rf::chat_format_name(family);
        }
        if (text.empty())
            return rf::api::fail(ROCMFORGE_ERR_UNSUPPORTED, "rocmforge_chat_apply_template: the model has no "
                                                            "tokenizer.chat_template; name a format (chatml, llama2, llama3, "
                                                            "mistral, gemma, phi3, gpt-oss)");
        std::vector<rf::ChatMessage> chat;
        for (size_t i = 0; i < n_messages; ++i) {
            if (!messages[i].role || !messages[i].content)
                return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_chat_apply_template: message " + std::to_string(i) +
                                                                         " has a NULL role or content");
            chat.push_back({messages[i].role, messages[i].content});
        }
        return rf::api::copy_out(rf::apply_chat_template(rf::chat_format_from(text), chat, add_assistant), buf, buf_size, out_len);
    });
}

} // extern "C"
