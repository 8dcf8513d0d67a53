// The request fields that constrain what is sampled: `response_format` (json_object,
// json_schema), `grammar` (llama.cpp server's GBNF), `json_schema` (llama.cpp server's
// top-level form) and `logit_bias`, parsed into the request (400 naming the field for anything
// the grammar cannot express); and the server's cache of grammars bound to its vocabulary, so
// requests with the same schema share their token masks.
#pragma once
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <rapidjson/document.h>

#include "request_parse.h"
#include "rocmforge/grammar.h"
#include "rocmforge/tokenizer.h"

namespace rf::serve {

// True when `key` is one of these fields (then parsed into r). Throws ApiError.
bool parse_structured_field(const std::string &key, const rapidjson::Value &v, CompletionRequest &r);

class GrammarCache {
public:
    explicit GrammarCache(const Tokenizer &tok) : trie_(std::make_shared<grammar::TokenTrie>(tok)) {}
    // The grammar of a request (its GBNF text), compiled once for all requests that send it.
    std::shared_ptr<const grammar::TokenGrammar> get(const CompletionRequest &r);

private:
    static constexpr size_t kMaxGrammars = 16;
    std::shared_ptr<const grammar::TokenTrie> trie_;
    std::mutex mutex_;
    std::list<std::pair<std::string, std::shared_ptr<const grammar::TokenGrammar>>> lru_; // most recent first
};

} // namespace rf::serve
