// Prints the prompt the model's chat template (or a template file) makes of a conversation,
// exactly as the server would send it to the tokenizer, so a template can be checked by eye
// or against transformers' apply_chat_template.
#include "cmd_template.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cstdio>
#include <string>

#include "chat_messages_json.h"
#include "chat_template_choice.h"
#include "rocmforge/default_model.h"
#include "rocmforge/error.h"
#include "text_file.h"

namespace {

constexpr const char *kUsageLine =
    "usage: rocmforge template [-m MODEL] --messages FILE [--tools FILE] [--chat-template-file FILE | --chat-template NAME]\n"
    "                          [--no-generation-prompt]\n";
const std::string kUsage = std::string(kUsageLine) +
    "\n"
    "Prints the prompt the chat template makes of a conversation (no newline added).\n"
    "\n"
    "  -m, --model MODEL        GGUF file (only its metadata and vocabulary are read); default: the\n"
    "                           default model\n"
    "  --messages FILE          the conversation: a JSON array of OpenAI chat messages, or an object\n"
    "                           {\"messages\": [...], \"tools\": [...], \"chat_template_kwargs\": {...}}\n"
    "  --tools FILE             a JSON array of OpenAI tools (function definitions)\n"
    "  --chat-template-file F   a Jinja template instead of the model's tokenizer.chat_template\n"
    "  --chat-template NAME     a built-in format: chatml, llama2, llama3, mistral, gemma, phi3, gpt-oss\n"
    "  --no-generation-prompt   do not open the assistant's turn (add_generation_prompt false)\n"
    "  -h, --help               show this help\n";

rapidjson::Document parse_json(const std::string &text, const std::string &what) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (doc.HasParseError())
        throw rf::UsageError(what + ": malformed JSON at offset " + std::to_string(doc.GetErrorOffset()) + ": " +
                             rapidjson::GetParseError_En(doc.GetParseError()));
    return doc;
}

} // namespace

int cmd_template(int argc, char **argv) {
    std::string model, messages_file, tools_file;
    rf::ChatTemplateOptions choice;
    bool generation_prompt = true;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) throw rf::UsageError("option '" + arg + "' needs a value\n" + kUsageLine);
            return argv[++k];
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage.c_str(), stdout);
            return 0;
        } else if (arg == "-m" || arg == "--model") model = value();
        else if (arg == "--messages") messages_file = value();
        else if (arg == "--tools") tools_file = value();
        else if (arg == "--chat-template-file") choice.file = value();
        else if (arg == "--chat-template") choice.name = value();
        else if (arg == "--no-generation-prompt") generation_prompt = false;
        else throw rf::UsageError("unknown option '" + arg + "'\n" + kUsageLine);
    }
    if (messages_file.empty()) throw rf::UsageError(std::string("--messages FILE is required\n") + kUsageLine);

    rf::ChatTemplateInput input;
    input.add_generation_prompt = generation_prompt;
    try {
        const rapidjson::Document conv = parse_json(rf::read_text_file(messages_file, "--messages"), "--messages " + messages_file);
        if (conv.IsObject()) {
            if (!conv.HasMember("messages")) throw rf::UsageError("--messages " + messages_file + ": the object has no 'messages'");
            for (auto it = conv.MemberBegin(); it != conv.MemberEnd(); ++it) {
                const std::string key(it->name.GetString(), it->name.GetStringLength());
                if (key == "messages") input.messages = rf::chat_messages_from_json(it->value);
                else if (key == "tools") input.tools_json = rf::chat_tools_from_json(it->value);
                else if (key == "chat_template_kwargs") input.extra_json = rf::chat_template_kwargs_from_json(it->value);
                else
                    throw rf::UsageError("--messages " + messages_file + ": unsupported field '" + key +
                                         "' (messages, tools, chat_template_kwargs)");
            }
        } else
            input.messages = rf::chat_messages_from_json(conv);
        if (!tools_file.empty()) {
            const rapidjson::Document tools = parse_json(rf::read_text_file(tools_file, "--tools"), "--tools " + tools_file);
            input.tools_json = rf::chat_tools_from_json(tools);
        }
    } catch (const rf::ChatFieldError &e) {
        throw rf::UsageError(std::string("--messages / --tools: ") + e.what());
    }

    const auto file = rf::gguf::File::open(rf::model_path_or_default(model));
    const auto tokenizer = rf::Tokenizer::from_gguf(*file);
    std::string notes;
    const rf::ChatTemplate tmpl = rf::pick_chat_template(choice, *file, *tokenizer, notes);
    if (!notes.empty()) std::fprintf(stderr, "%s\n", notes.c_str());
    const std::string prompt = tmpl.apply(input);
    std::fwrite(prompt.data(), 1, prompt.size(), stdout);
    return 0;
}
