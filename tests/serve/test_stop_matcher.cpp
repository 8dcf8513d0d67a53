// The stop-string matcher on streamed text: what a client receives, piece by piece, when stop
// strings begin in one token and end in another, several stops compete, or one starts the text.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "stop_matcher.h"
#include "stop_reference.h"

using rf::serve::StopMatcher;

namespace {

// Pushes each piece; returns what came out after each push (and "|flush:..." at the end when
// the matcher did not stop).
std::vector<std::string> feed(StopMatcher &m, const std::vector<std::string> &pieces) {
    std::vector<std::string> out;
    for (const auto &p : pieces) out.push_back(m.push(p));
    if (!m.stopped()) out.push_back("|flush:" + m.flush());
    return out;
}

} // namespace

TEST_CASE("no stop strings: text passes through at once", "[serve][stop]") {
    StopMatcher m({});
    CHECK(feed(m, {"Hello", " world"}) == std::vector<std::string>{"Hello", " world", "|flush:"});
    CHECK_FALSE(m.stopped());
}

TEST_CASE("a stop string inside one piece cuts the text before it", "[serve][stop]") {
    StopMatcher m({"\n\n"});
    CHECK(m.push("one\n\ntwo") == "one");
    CHECK(m.stopped());
    CHECK(m.push("more") == "");
    CHECK(m.flush() == "");
}

TEST_CASE("a stop string split across token boundaries is held back, never sent in part", "[serve][stop]") {
    StopMatcher m({"world"});
    CHECK(m.push("Hello wo") == "Hello "); // "wo" may begin "world"
    CHECK(m.push("r") == "");
    CHECK(m.push("ld!") == "");
    CHECK(m.stopped());
}

TEST_CASE("a held-back prefix that does not become the stop string is released", "[serve][stop]") {
    StopMatcher m({"world"});
    CHECK(m.push("Hello wo") == "Hello ");
    CHECK(m.push("rm") == "worm");
    CHECK_FALSE(m.stopped());
    // Held until the end of generation, then flushed.
    CHECK(m.push(" wor") == " ");
    CHECK(m.flush() == "wor");
}

TEST_CASE("a stop string fed one byte at a time", "[serve][stop]") {
    StopMatcher m({"<|end|>"});
    std::string out;
    for (char c : std::string("ok<|en<|end|>tail")) out += m.push(std::string(1, c));
    CHECK(m.stopped());
    CHECK(out == "ok<|en");
}

TEST_CASE("a stop string at the very start gives empty text", "[serve][stop]") {
    StopMatcher m({"STOP"});
    CHECK(m.push("STOP and more") == "");
    CHECK(m.stopped());
    StopMatcher split({"STOP"});
    CHECK(split.push("ST") == "");
    CHECK(split.push("OP") == "");
    CHECK(split.stopped());
}

TEST_CASE("several stops: the earliest occurrence wins", "[serve][stop]") {
    StopMatcher m({"end", "b"});
    CHECK(m.push("a b end") == "a ");
    StopMatcher later({"zzz", "end"});
    CHECK(later.push("one end zzz") == "one ");
    // One stop string a prefix of another: the shorter one is found first.
    StopMatcher prefix({"abc", "ab"});
    CHECK(prefix.push("xabc") == "x");
}

TEST_CASE("several stops: the longest possible beginning is held back", "[serve][stop]") {
    // "yz" may begin "yzzz" even though only "z"... begins nothing of "xyz": two bytes held.
    StopMatcher m({"xyz", "yzzz"});
    CHECK(m.push("ayz") == "a");
    CHECK(m.push("q") == "yzq");
    CHECK_FALSE(m.stopped());
}

TEST_CASE("incremental matching: a stop found now is not overtaken by a longer one that began earlier",
          "[serve][stop]") {
    // "c" completes after "abc" while "abcd" is still incomplete: generation ends there.
    StopMatcher m({"abcd", "c"});
    CHECK(m.push("abc") == "ab");
    CHECK(m.stopped());
    // Had "abcd" arrived in one piece, it begins earlier and wins.
    StopMatcher whole({"abcd", "c"});
    CHECK(whole.push("abcd") == "");
}

TEST_CASE("empty stop strings are ignored", "[serve][stop]") {
    StopMatcher m({"", "zz"});
    CHECK(m.push("abc") == "abc");
    CHECK_FALSE(m.stopped());
}

TEST_CASE("random texts, stops and token boundaries agree with the reference", "[serve][stop]") {
    std::mt19937 rng(1234);
    const std::string alphabet = "ab\xc3\xa9 ";
    auto word = [&](size_t lo, size_t hi) {
        std::string s;
        for (size_t n = std::uniform_int_distribution<size_t>(lo, hi)(rng); n > 0; --n)
            s += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
        return s;
    };
    int stopped = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<std::string> stops;
        for (int k = std::uniform_int_distribution<int>(1, 4)(rng); k > 0; --k) stops.push_back(word(1, 4));
        std::vector<std::string> pieces;
        for (int k = std::uniform_int_distribution<int>(1, 12)(rng); k > 0; --k) pieces.push_back(word(0, 4));
        StopMatcher m(stops);
        std::string out;
        for (const auto &p : pieces) {
            const std::string got = m.push(p);
            out += got;
            // Nothing sent may ever contain a stop string.
            for (const auto &s : stops) REQUIRE(out.find(s) == std::string::npos);
        }
        if (m.stopped()) ++stopped;
        else out += m.flush();
        INFO("iteration " << iter);
        REQUIRE(out == rf_test::stop_reference(pieces, stops));
    }
    // Both outcomes were exercised.
    CHECK(stopped > 300);
    CHECK(stopped < 2700);
}
