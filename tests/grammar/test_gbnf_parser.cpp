// GBNF parsing: llama.cpp's syntax, and every malformed grammar refused with its line and column.
#include <catch2/catch.hpp>

#include "grammar_test_util.h"

using rf::grammar::Grammar;
using rf::grammar::GrammarError;
using rf_test::matches;

namespace {

// The error a grammar gets: "line:column reason".
std::string error_of(const std::string &gbnf) {
    try {
        Grammar::parse(gbnf);
    } catch (const GrammarError &e) {
        return std::to_string(e.line()) + ":" + std::to_string(e.column()) + " " + e.reason();
    }
    return "no error";
}

} // namespace

TEST_CASE("gbnf: literals, alternatives, references and comments", "[grammar]") {
    const std::string g = "# a comment\nroot ::= greeting \" \" name  # trailing\n"
                          "greeting ::= \"hello\" | \"hi\"\nname ::= \"world\"\n";
    CHECK(matches(g, "hello world"));
    CHECK(matches(g, "hi world"));
    CHECK_FALSE(matches(g, "hey world"));
    CHECK_FALSE(matches(g, "hello"));
    CHECK_FALSE(matches(g, "hello world!"));
}

TEST_CASE("gbnf: escapes in literals and classes", "[grammar]") {
    CHECK(matches(R"(root ::= "a\"b\\c\n\t\x41\u00e9")", "a\"b\\c\n\tA\xC3\xA9"));
    CHECK(matches(R"(root ::= [\]\[\-]+)", "]-["));
    CHECK(matches(R"(root ::= [\x00-\x1f])", std::string(1, '\x01')));
}

TEST_CASE("gbnf: character classes, negation, ranges, any character and UTF-8", "[grammar]") {
    CHECK(matches("root ::= [a-c0-9_]+", "ab0_c9"));
    CHECK_FALSE(matches("root ::= [a-c]+", "abd"));
    CHECK(matches("root ::= [^\"]+", "any \xE2\x82\xAC text"));
    CHECK_FALSE(matches("root ::= [^\"]+", "a\"b"));
    CHECK(matches("root ::= [α-ω]+", "αβω"));
    CHECK_FALSE(matches("root ::= [α-ω]+", "αa"));
    CHECK_FALSE(matches("root ::= [α-ω]", "\xCE")); // half a character
    CHECK(matches("root ::= . . .", "a\xC3\xA9\xF0\x9F\x98\x80")); // 1-, 2- and 4-byte characters
    CHECK_FALSE(matches("root ::= .", "\xED\xA0\x80")); // a surrogate is no character
    CHECK_FALSE(matches("root ::= .", "\xC0\x80"));     // overlong encoding
}

TEST_CASE("gbnf: repetitions * + ? {n} {n,} {n,m} {,m}", "[grammar]") {
    CHECK(matches("root ::= \"a\"*", ""));
    CHECK(matches("root ::= \"a\"*", "aaaa"));
    CHECK_FALSE(matches("root ::= \"a\"+", ""));
    CHECK(matches("root ::= \"ab\"+", "ababab"));
    CHECK_FALSE(matches("root ::= \"ab\"+", "aba"));
    CHECK(matches("root ::= \"a\"? \"b\"", "b"));
    CHECK(matches("root ::= \"a\"? \"b\"", "ab"));
    CHECK(matches("root ::= [0-9]{3}", "123"));
    CHECK_FALSE(matches("root ::= [0-9]{3}", "12"));
    CHECK_FALSE(matches("root ::= [0-9]{3}", "1234"));
    CHECK(matches("root ::= [0-9]{2,}", "12345"));
    CHECK_FALSE(matches("root ::= [0-9]{2,}", "1"));
    CHECK(matches("root ::= [0-9]{1,3}", "12"));
    CHECK_FALSE(matches("root ::= [0-9]{1,3}", "1234"));
    CHECK(matches("root ::= \"x\"{,2}", ""));
    CHECK_FALSE(matches("root ::= \"x\"{,2}", "xxx"));
    CHECK(matches("root ::= (\"a\" | \"bc\"){2} \"!\"", "bca!"));
}

TEST_CASE("gbnf: groups, nesting, recursion and multi-line rules", "[grammar]") {
    const std::string parens = "root ::= item*\nitem ::= \"(\" item* \")\"\n";
    CHECK(matches(parens, "(()(()))()"));
    CHECK_FALSE(matches(parens, "(()"));
    const std::string lines = "root ::= (\n  \"a\" |\n  \"b\"\n) \"c\"\n";
    CHECK(matches(lines, "bc"));
    // A top-level rule goes on when the next line begins with '|'.
    const std::string cont = "root ::= \"a\"\n  | \"b\"\nother ::= \"z\"\n";
    CHECK(matches(cont, "b"));
    CHECK(matches(cont, "a"));
    CHECK(matches("root ::= \"\" | \"x\"", ""));
}

TEST_CASE("gbnf: errors name the line and column", "[grammar]") {
    CHECK(error_of("root ::= \"abc") == "1:14 unterminated string literal");
    CHECK(error_of("root ::= foo") == "1:10 undefined rule 'foo'");
    CHECK(error_of("a ::= \"x\"") == "1:10 the grammar has no 'root' rule");
    CHECK(error_of("root ::= \"a\"\nroot ::= \"b\"") == "2:1 rule 'root' is defined twice");
    CHECK(error_of("root = \"a\"") == "1:6 expected '::=' after rule name 'root'");
    CHECK(error_of("root ::= *") == "1:10 '*' has nothing before it to repeat");
    CHECK(error_of("root ::= [z-a]") == "1:10 character range out of order");
    CHECK(error_of("root ::= \"a\"{3,1}") == "1:13 repetition {3,1} has max < min");
    CHECK(error_of("root ::= \"\\q\"") == "1:11 unknown escape '\\q'");
    CHECK(error_of("root ::= (\"a\"") == "1:14 expected ')' to close the group, got the end of the grammar");
    CHECK(error_of("root ::= [abc") == "1:14 unterminated character class");
    CHECK(error_of("root ::= \"a\" )") == "1:14 expected the end of the line, got ')'");
    CHECK(error_of("root ::= \"a\"{99999}") == "1:13 repetition count above 10000");
    CHECK(error_of("root ::= x\nx ::= x \"a\" | \"b\"") == "2:1 rule 'x' is left-recursive (it can begin with itself)");
    CHECK(error_of("root ::= e root \"a\"\ne ::= \"\"") .find("left-recursive") != std::string::npos);
    CHECK(error_of("") == "1:1 the grammar has no 'root' rule");
}
