// POST /apply-template (as llama-server's): a chat completion body -> {"prompt": TEXT}, the
// text the chat template makes of its messages and tools, without generating anything.
#pragma once
#include "http_server.h"
#include "rocmforge/chat_template.h"

namespace rf::serve {

void apply_template(const HttpRequest &req, Exchange &ex, const ChatTemplate &tmpl);

} // namespace rf::serve
