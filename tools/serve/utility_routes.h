// llama.cpp server's helper endpoints: POST /tokenize and /detokenize (the server's own
// vocabulary) and GET /props (the settings a client can build on: context per request, slots,
// model, chat template, default sampling).
#pragma once
#include <cstdint>
#include <string>

#include "http_server.h"
#include "rocmforge/tokenizer.h"

namespace rf::serve {

struct ServerProps {
    std::string model_path;
    std::string chat_template; // the template text in use (or the format's name)
    int64_t n_ctx = 0;         // prompt + max_tokens of one request at most
    int total_slots = 0;       // sequences decoded together (--parallel)
    int64_t default_max_tokens = 256;
};

bool is_utility_endpoint(const std::string &path);
// Answers the request when `path` is one of them (true); false: not one of them.
bool utility_route(const HttpRequest &req, Exchange &ex, const std::string &path, const Tokenizer &tok,
                   const ServerProps &props);

} // namespace rf::serve
