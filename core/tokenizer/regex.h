// A small backtracking regex engine over code points with ECMAScript (std::regex) semantics, for
// the pre-tokenizer patterns llama.cpp runs through std::regex / std::wregex: alternation in
// priority order, greedy quantifiers with backtracking, (?:...), (?=...), (?!...), character
// classes, \s \S \d \D \w \W, $ and ^. \p{...} is supported only in "collapsed" mode, where the
// text holds llama.cpp's one-byte category stand-ins (see pretokenize.cpp) and \p{X} means
// "the stand-in for X or an ASCII member of X", exactly as llama.cpp rewrites it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rf::tok {

class Regex {
public:
    enum class Mode { Codepoints, Collapsed };
    // Throws rf::Error naming the pattern and the offending position for unsupported syntax.
    Regex(std::string_view pattern, Mode mode);

    // Leftmost match starting at or after `from` within text[begin, end); anchors ($, ^) refer to
    // begin/end. Returns false when there is none.
    bool search(const uint32_t *text, size_t begin, size_t end, size_t from, size_t &match_begin,
                size_t &match_end) const;

private:
    struct CharClass {
        bool negated = false;
        bool space = false, not_space = false, digit = false, not_digit = false, word = false,
             not_word = false;
        std::vector<std::pair<uint32_t, uint32_t>> ranges;
        bool matches(uint32_t c) const;
    };
    struct Item {
        enum Kind { Class, Group, LookAhead, NegLookAhead, Begin, End } kind = Class;
        int index = 0; // class index or group index
        int min = 1, max = 1;
    };
    struct Seq {
        std::vector<Item> items;
    };
    struct Group {
        std::vector<Seq> alts;
    };
    struct Frame;
    struct Ctx {
        const uint32_t *text;
        size_t begin, end;
    };

    class Parser;

    long match_seq(const Ctx &c, const Seq &s, size_t i, size_t pos, const Frame *k) const;
    long match_rep(const Ctx &c, const Seq &s, size_t i, int count, size_t pos,
                   const Frame *k) const;
    long match_group(const Ctx &c, int group, size_t pos, const Frame *k) const;
    long resume(const Ctx &c, size_t pos, const Frame *k) const;

    std::string pattern_;
    std::vector<CharClass> classes_;
    std::vector<Group> groups_; // groups_[0] is the whole pattern
};

} // namespace rf::tok
