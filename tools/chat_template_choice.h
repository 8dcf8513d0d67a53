// Which chat template a command renders conversations with (serve, template): --chat-template
// NAME (a built-in format), else --chat-template-file FILE, else the GGUF's
// tokenizer.chat_template rendered as Jinja (refused at load, with line and column, when it does
// not parse), else chatml for a file without one.
#pragma once
#include <string>

#include "rocmforge/chat_template.h"
#include "rocmforge/gguf.h"
#include "rocmforge/tokenizer.h"

namespace rf {

struct ChatTemplateOptions {
    std::string name; // --chat-template
    std::string file; // --chat-template-file
};

// Throws UsageError. `notes` gets a line for a fallback the user should know about.
ChatTemplate pick_chat_template(const ChatTemplateOptions &o, const gguf::File &file, const Tokenizer &tok, std::string &notes);

} // namespace rf
