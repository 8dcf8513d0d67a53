// Grammars checked on text, without a vocabulary: whether a whole string is in the language.
#pragma once
#include <memory>
#include <string>

#include "rocmforge/grammar.h"

namespace rf_test {

inline std::shared_ptr<const rf::grammar::TokenGrammar> text_grammar(const std::string &gbnf) {
    static const auto no_tokens = std::make_shared<rf::grammar::TokenTrie>(std::vector<std::string>{}, std::vector<int32_t>{});
    return std::make_shared<rf::grammar::TokenGrammar>(rf::grammar::Grammar::parse(gbnf), no_tokens);
}

// The whole text is a sentence of the grammar.
inline bool matches(const std::shared_ptr<const rf::grammar::TokenGrammar> &g, const std::string &text) {
    rf::grammar::GrammarMatcher m(g);
    return m.accept_text(text) && m.accepted();
}
inline bool matches(const std::string &gbnf, const std::string &text) { return matches(text_grammar(gbnf), text); }

} // namespace rf_test
