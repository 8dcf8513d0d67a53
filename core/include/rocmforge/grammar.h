// Constrained generation: a grammar in llama.cpp's GBNF (or one made from a JSON schema) decides
// which tokens may come next. The grammar is compiled to byte level (character classes become
// UTF-8 byte sequences), so a token that ends inside a character is checked like any other.
//
//   Grammar            parsed GBNF, immutable (core/grammar/gbnf_parser.cpp)
//   json_schema_to_gbnf / json_object_gbnf   a schema as GBNF (core/grammar/json_schema_grammar.cpp)
//   TokenTrie          the vocabulary's token bytes as a trie, built once per tokenizer
//   TokenGrammar       a grammar bound to a trie, with the cache of allowed-token masks per
//                      matcher state (shared by every sequence that uses the grammar)
//   GrammarMatcher     one sequence's position in the grammar: its mask, then accept(token)
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rocmforge/error.h"

namespace rf {

class Tokenizer;

namespace grammar {

// A GBNF text that does not parse (or is not a usable grammar: an undefined rule, no root, left
// recursion): the message names the line and column.
class GrammarError : public Error {
public:
    GrammarError(const std::string &msg, size_t line, size_t column)
        : Error("grammar: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + msg),
          line_(line), column_(column), reason_(msg) {}
    size_t line() const { return line_; }
    size_t column() const { return column_; }
    const std::string &reason() const { return reason_; }

private:
    size_t line_, column_;
    std::string reason_;
};

// A JSON schema that the converter cannot express as a grammar: keyword() names what it cannot
// do (e.g. "pattern", "minimum"), path() where in the schema ("/properties/age").
class SchemaError : public Error {
public:
    SchemaError(const std::string &msg, std::string keyword, std::string path)
        : Error("json schema: " + msg + (path.empty() ? "" : " (at " + path + ")")), keyword_(std::move(keyword)),
          path_(std::move(path)) {}
    const std::string &keyword() const { return keyword_; }
    const std::string &path() const { return path_; }

private:
    std::string keyword_, path_;
};

using ByteSet = std::array<uint64_t, 4>; // bit b: byte b matches

struct Grammar {
    enum class Op : uint8_t { End, Bytes, Rule };
    struct Element {
        Op op;
        uint32_t arg; // Bytes: index into byte_sets; Rule: rule id
    };
    // Every alternative of every rule is a run of elements ending in End.
    std::vector<Element> elements;
    std::vector<std::vector<uint32_t>> rule_alternatives; // rule id -> first element of each
    std::vector<std::string> rule_names;
    std::vector<ByteSet> byte_sets;
    uint32_t root = 0;

    // Throws GrammarError. The root rule is `root`.
    static std::shared_ptr<const Grammar> parse(std::string_view gbnf);
};

// GBNF for any JSON object (response_format json_object).
std::string json_object_gbnf();
// GBNF for the JSON values a schema (JSON text) accepts. Throws SchemaError; a schema that is not
// JSON is a SchemaError with keyword "".
std::string json_schema_to_gbnf(std::string_view schema_json);

// The bytes every token of a vocabulary prints (Tokenizer::decode_token), as a trie. Tokens that
// print nothing (control tokens) are not in it; end-of-generation tokens are kept aside.
class TokenTrie {
public:
    explicit TokenTrie(const Tokenizer &tok);
    // For tests: token i prints pieces[i]; `eog` ends generation.
    TokenTrie(const std::vector<std::string> &pieces, std::vector<int32_t> eog);

    struct Node {
        uint32_t child_begin = 0, child_end = 0; // into child_bytes / child_nodes
        uint32_t token_begin = 0, token_end = 0; // into tokens: those whose bytes end here
    };
    const std::vector<Node> &nodes() const { return nodes_; }
    const std::vector<uint8_t> &child_bytes() const { return child_bytes_; }
    const std::vector<uint32_t> &child_nodes() const { return child_nodes_; }
    const std::vector<int32_t> &tokens() const { return tokens_; }
    const std::vector<int32_t> &eog() const { return eog_; }
    const std::string &piece(int32_t token) const { return pieces_[(size_t)token]; }
    int32_t n_vocab() const { return (int32_t)pieces_.size(); }

private:
    void build();
    std::vector<std::string> pieces_;
    std::vector<int32_t> eog_;
    std::vector<Node> nodes_;
    std::vector<uint8_t> child_bytes_;
    std::vector<uint32_t> child_nodes_;
    std::vector<int32_t> tokens_;
};

// Bit i of word i / 64: token i may come next.
using TokenMask = std::vector<uint64_t>;
inline bool mask_allows(const TokenMask &m, int32_t token) { return (m[(size_t)token >> 6] >> (token & 63)) & 1; }

// Where a sequence is in the grammar: the stacks of element positions still possible (the top,
// the back, is always a Bytes element; an empty stack means the grammar may end here).
using GrammarStack = std::vector<uint32_t>;
using GrammarState = std::vector<GrammarStack>; // sorted, no duplicates

// A grammar bound to a vocabulary. allowed() computes a state's mask once, by walking the token
// trie with the state (a subtree is left as soon as no stack takes its byte), and keeps it:
// sequences of a grammar come back to the same states (inside a string, between values), so most
// tokens cost one hash lookup. Thread-safe.
class TokenGrammar {
public:
    TokenGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie);
    const Grammar &grammar() const { return *grammar_; }
    const TokenTrie &trie() const { return *trie_; }

    GrammarState initial() const;
    // The state after one byte; empty when no stack takes it.
    GrammarState advance(const GrammarState &s, uint8_t byte) const;
    static bool accepts(const GrammarState &s); // the grammar may end here
    // The tokens that may follow state s (end-of-generation tokens only where s accepts). Throws
    // rf::Error for a grammar too ambiguous to compute it in bounded work.
    std::shared_ptr<const TokenMask> allowed(const GrammarState &s) const;
    size_t cached_states() const;

private:
    void expand(GrammarStack &stack, GrammarState &out, int depth) const;
    void walk(uint32_t node, const GrammarState &s, TokenMask &mask, int64_t &budget) const;
    std::shared_ptr<const Grammar> grammar_;
    std::shared_ptr<const TokenTrie> trie_;
    mutable std::mutex mutex_;
    mutable std::unordered_map<std::string, std::shared_ptr<const TokenMask>> masks_;
};

// One sequence's progress through a TokenGrammar.
class GrammarMatcher {
public:
    explicit GrammarMatcher(std::shared_ptr<const TokenGrammar> g);
    // The tokens that may come next (never empty unless the vocabulary cannot continue).
    const TokenMask &allowed();
    // Moves past a token; false (state unchanged) when the grammar does not allow it.
    bool accept(int32_t token);
    // Moves past text (for tests and prompts that already hold part of the output).
    bool accept_text(std::string_view text);
    bool accepted() const { return TokenGrammar::accepts(state_); } // may end here
    bool finished() const; // accepted and nothing can follow
    const GrammarState &state() const { return state_; }

private:
    std::shared_ptr<const TokenGrammar> g_;
    GrammarState state_;
    std::shared_ptr<const TokenMask> mask_; // of state_, once asked
};

} // namespace grammar
} // namespace rf
