// The pushdown matcher: a state is the set of stacks the grammar may be in (as llama.cpp's
// llama_grammar stacks, here over bytes). Rule references on top are expanded at once, so every
// stack's top is a byte set (or the stack is empty: the grammar may end).
#include <algorithm>

#include "rocmforge/grammar.h"

namespace rf::grammar {
namespace {

// Bounds that turn a runaway grammar (very ambiguous, or nested without end) into an error
// instead of memory exhaustion.
constexpr size_t kMaxStacks = 8192;
constexpr int kMaxExpandDepth = 4096;
constexpr size_t kMaskCacheBytes = size_t(32) << 20; // per grammar (the server keeps 16)
// Stack moves one mask may cost: a grammar whose every byte keeps thousands of stacks alive
// would otherwise hold a sequence (and the server's step) for minutes.
constexpr int64_t kMaskWorkBudget = int64_t(1) << 24;

bool has_byte(const ByteSet &s, uint8_t b) { return (s[b >> 6] >> (b & 63)) & 1; }

std::string state_key(const GrammarState &s) {
    std::string key;
    for (const GrammarStack &st : s) {
        key.append(reinterpret_cast<const char *>(st.data()), st.size() * sizeof(uint32_t));
        const uint32_t sep = UINT32_MAX;
        key.append(reinterpret_cast<const char *>(&sep), sizeof sep);
    }
    return key;
}

void canonical(GrammarState &s) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
}

} // namespace

TokenGrammar::TokenGrammar(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> trie)
    : grammar_(std::move(grammar)), trie_(std::move(trie)) {}

void TokenGrammar::expand(GrammarStack &stack, GrammarState &out, int depth) const {
    if (depth > kMaxExpandDepth) throw Error("grammar: rules nest deeper than " + std::to_string(kMaxExpandDepth));
    if (out.size() > kMaxStacks)
        throw Error("grammar: more than " + std::to_string(kMaxStacks) + " ways to continue (the grammar is too ambiguous)");
    const auto &el = grammar_->elements;
    if (stack.empty() || el[stack.back()].op == Grammar::Op::Bytes) return out.push_back(stack);
    const uint32_t pos = stack.back();
    const uint32_t rule = el[pos].arg;
    stack.pop_back();
    if (el[pos + 1].op != Grammar::Op::End) stack.push_back(pos + 1); // what follows the reference
    for (uint32_t alt : grammar_->rule_alternatives[rule]) {
        GrammarStack branch = stack; // each alternative on its own copy: expansion pops
        if (el[alt].op != Grammar::Op::End) branch.push_back(alt);
        expand(branch, out, depth + 1);
    }
}

GrammarState TokenGrammar::initial() const {
    GrammarState out;
    for (uint32_t alt : grammar_->rule_alternatives[grammar_->root]) {
        GrammarStack s;
        if (grammar_->elements[alt].op != Grammar::Op::End) s.push_back(alt);
        expand(s, out, 0);
    }
    canonical(out);
    return out;
}

GrammarState TokenGrammar::advance(const GrammarState &s, uint8_t byte) const {
    const auto &el = grammar_->elements;
    GrammarState out;
    GrammarStack next;
    for (const GrammarStack &st : s) {
        if (st.empty()) continue;
        const uint32_t pos = st.back();
        if (!has_byte(grammar_->byte_sets[el[pos].arg], byte)) continue;
        next.assign(st.begin(), st.end() - 1);
        if (el[pos + 1].op != Grammar::Op::End) next.push_back(pos + 1);
        expand(next, out, 0);
    }
    canonical(out);
    return out;
}

bool TokenGrammar::accepts(const GrammarState &s) {
    return std::any_of(s.begin(), s.end(), [](const GrammarStack &st) { return st.empty(); });
}

void TokenGrammar::walk(uint32_t node, const GrammarState &s, TokenMask &mask, int64_t &budget) const {
    ByteSet tops{}; // the bytes some stack takes: children outside it are skipped unexpanded
    for (const GrammarStack &st : s)
        if (!st.empty()) {
            const ByteSet &b = grammar_->byte_sets[grammar_->elements[st.back()].arg];
            for (int w = 0; w < 4; ++w) tops[w] |= b[w];
        }
    const TokenTrie::Node &n = trie_->nodes()[node];
    for (uint32_t c = n.child_begin; c < n.child_end; ++c) {
        const uint8_t b = trie_->child_bytes()[c];
        if (!has_byte(tops, b)) continue;
        if ((budget -= (int64_t)s.size()) < 0)
            throw Error("grammar: too many ways to continue at one token (the grammar is too ambiguous)");
        const GrammarState next = advance(s, b);
        if (next.empty()) continue;
        const uint32_t child = trie_->child_nodes()[c];
        const TokenTrie::Node &cn = trie_->nodes()[child];
        for (uint32_t t = cn.token_begin; t < cn.token_end; ++t) {
            const int32_t id = trie_->tokens()[t];
            mask[(size_t)id >> 6] |= 1ull << (id & 63);
        }
        if (cn.child_begin < cn.child_end) walk(child, next, mask, budget);
    }
}

std::shared_ptr<const TokenMask> TokenGrammar::allowed(const GrammarState &s) const {
    std::string key = state_key(s);
    {
        std::lock_guard lock(mutex_);
        if (auto it = masks_.find(key); it != masks_.end()) return it->second;
    }
    auto mask = std::make_shared<TokenMask>(((size_t)trie_->n_vocab() + 63) / 64, 0);
    int64_t budget = kMaskWorkBudget;
    walk(0, s, *mask, budget);
    if (accepts(s))
        for (int32_t id : trie_->eog()) (*mask)[(size_t)id >> 6] |= 1ull << (id & 63);
    std::lock_guard lock(mutex_);
    // A bounded cache: a grammar that keeps reaching new states starts over rather than grow.
    if ((masks_.size() + 1) * mask->size() * sizeof(uint64_t) > kMaskCacheBytes) masks_.clear();
    return masks_.emplace(std::move(key), std::move(mask)).first->second;
}

size_t TokenGrammar::cached_states() const {
    std::lock_guard lock(mutex_);
    return masks_.size();
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const TokenGrammar> g) : g_(std::move(g)), state_(g_->initial()) {}

const TokenMask &GrammarMatcher::allowed() {
    if (!mask_) mask_ = g_->allowed(state_);
    return *mask_;
}

bool GrammarMatcher::accept(int32_t token) {
    const TokenTrie &trie = g_->trie();
    if (token < 0 || token >= trie.n_vocab()) return false;
    if (std::find(trie.eog().begin(), trie.eog().end(), token) != trie.eog().end()) return accepted();
    const std::string &piece = trie.piece(token);
    if (piece.empty()) return false;
    return accept_text(piece);
}

bool GrammarMatcher::accept_text(std::string_view text) {
    GrammarState s = state_;
    for (char c : text) {
        s = g_->advance(s, (uint8_t)c);
        if (s.empty()) return false;
    }
    state_ = std::move(s);
    mask_.reset();
    return true;
}

bool GrammarMatcher::finished() const { return state_.size() == 1 && state_[0].empty(); }

} // namespace rf::grammar
