// The matcher's token masks: each one equal to checking every token's bytes on their own (the
// brute-force rule the trie walk must reproduce), on llama's SentencePiece test vocabulary and
// on a vocabulary of tokens that split UTF-8 characters; masks come from the cache when a state
// comes back; end-of-generation only where the grammar may end.
#include <catch2/catch.hpp>

#include "../serve/test_vocab.h"
#include "grammar_test_util.h"
#include "rocmforge/tokenizer.h"

using namespace rf::grammar;

namespace {

// What allowed() must give: a token is allowed when its bytes move the state on (EOG: when the
// state accepts).
TokenMask brute_force_mask(const TokenGrammar &g, const GrammarState &s) {
    const TokenTrie &trie = g.trie();
    TokenMask m(((size_t)trie.n_vocab() + 63) / 64, 0);
    for (int32_t id = 0; id < trie.n_vocab(); ++id) {
        const std::string &piece = trie.piece(id);
        bool ok = false;
        if (std::find(trie.eog().begin(), trie.eog().end(), id) != trie.eog().end()) ok = TokenGrammar::accepts(s);
        else if (!piece.empty()) {
            GrammarState t = s;
            ok = true;
            for (char c : piece)
                if ((t = g.advance(t, (uint8_t)c)).empty()) {
                    ok = false;
                    break;
                }
        }
        if (ok) m[(size_t)id >> 6] |= 1ull << (id & 63);
    }
    return m;
}

size_t popcount(const TokenMask &m) {
    size_t n = 0;
    for (uint64_t w : m) n += (size_t)__builtin_popcountll(w);
    return n;
}

const std::string kJson = rf::grammar::json_object_gbnf();

} // namespace

TEST_CASE("matcher: masks equal the per-token check along a JSON object", "[grammar]") {
    const rf::Tokenizer &tok = rf_test::spm_vocab();
    auto g = std::make_shared<TokenGrammar>(Grammar::parse(kJson), std::make_shared<TokenTrie>(tok));
    GrammarMatcher m(g);
    const std::string text = "{\"name\": \"caf\xC3\xA9 \\\"x\\\"\", \"n\": [1, -2.5e3, true, null], \"o\": {}}";
    for (size_t i = 0; i <= text.size(); ++i) {
        INFO("after " << i << " bytes: " << text.substr(0, i));
        const TokenMask &mask = m.allowed();
        CHECK(mask == brute_force_mask(*g, m.state()));
        CHECK(popcount(mask) > 0);
        if (i < text.size()) REQUIRE(m.accept_text(text.substr(i, 1)));
    }
    CHECK(m.accepted());
    CHECK(m.finished()); // the object is closed: nothing can follow
    const TokenMask &end = m.allowed();
    CHECK(popcount(end) == tok.eog_ids().size());
    for (int32_t id : tok.eog_ids()) CHECK(mask_allows(end, id));
}

TEST_CASE("matcher: end of generation only where the grammar may end", "[grammar]") {
    const rf::Tokenizer &tok = rf_test::spm_vocab();
    auto g = std::make_shared<TokenGrammar>(Grammar::parse("root ::= [0-9]+"), std::make_shared<TokenTrie>(tok));
    GrammarMatcher m(g);
    CHECK_FALSE(mask_allows(m.allowed(), tok.eos()));
    CHECK_FALSE(m.accept(tok.eos()));
    const int32_t seven = tok.find_token("7");
    REQUIRE(seven >= 0);
    REQUIRE(m.accept(seven));
    CHECK(mask_allows(m.allowed(), tok.eos()));
    CHECK_FALSE(m.finished()); // more digits may follow
    CHECK_FALSE(m.accept(tok.find_token("a")));
    CHECK(m.accept(tok.eos()));
}

TEST_CASE("matcher: tokens that split a UTF-8 character", "[grammar]") {
    // 0 "\xCE" (first byte of alpha), 1 "\xB1" (its second), 2 "α", 3 "a", 4 "αβ", 5 EOS.
    const std::vector<std::string> pieces = {"\xCE", "\xB1", "\xCE\xB1", "a", "\xCE\xB1\xCE\xB2", "</s>"};
    auto trie = std::make_shared<TokenTrie>(pieces, std::vector<int32_t>{5});
    auto g = std::make_shared<TokenGrammar>(Grammar::parse("root ::= [α-ω]+"), trie);
    GrammarMatcher m(g);
    const TokenMask &first = m.allowed();
    CHECK(first == brute_force_mask(*g, m.state()));
    CHECK(mask_allows(first, 0));
    CHECK_FALSE(mask_allows(first, 1)); // a continuation byte cannot begin a character
    CHECK(mask_allows(first, 2));
    CHECK_FALSE(mask_allows(first, 3));
    CHECK(mask_allows(first, 4));
    CHECK_FALSE(mask_allows(first, 5));
    REQUIRE(m.accept(0));
    const TokenMask &mid = m.allowed();
    CHECK(mask_allows(mid, 1));
    CHECK_FALSE(mask_allows(mid, 0));
    CHECK_FALSE(mask_allows(mid, 5)); // half a character is not an end
    REQUIRE(m.accept(1));
    CHECK(mask_allows(m.allowed(), 5));
}

TEST_CASE("matcher: masks are cached per state and shared between matchers", "[grammar]") {
    const rf::Tokenizer &tok = rf_test::spm_vocab();
    auto g = std::make_shared<TokenGrammar>(Grammar::parse(kJson), std::make_shared<TokenTrie>(tok));
    GrammarMatcher a(g);
    REQUIRE(a.accept_text("{\"k\": \"abc"));
    a.allowed();
    const size_t after_first = g->cached_states();
    REQUIRE(a.accept_text("def")); // inside the string the state is the same
    const TokenMask *same = &a.allowed();
    CHECK(g->cached_states() == after_first);
    GrammarMatcher b(g);
    REQUIRE(b.accept_text("{\"k\": \"xyz"));
    CHECK(&b.allowed() == same); // the very mask, not a copy
    CHECK(g->cached_states() == after_first);
}

TEST_CASE("matcher: refused tokens leave the state as it was", "[grammar]") {
    const rf::Tokenizer &tok = rf_test::spm_vocab();
    auto g = std::make_shared<TokenGrammar>(Grammar::parse("root ::= \"ab\" \"c\""), std::make_shared<TokenTrie>(tok));
    GrammarMatcher m(g);
    CHECK_FALSE(m.accept_text("ax"));
    CHECK(m.accept_text("abc"));
    CHECK(m.finished());
    CHECK_FALSE(m.accept(-1));
    CHECK_FALSE(m.accept(tok.n_vocab()));
}
