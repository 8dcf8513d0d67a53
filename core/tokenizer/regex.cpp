#include "regex.h"

#include "rocmforge/error.h"
#include "unicode.h"

#include <limits>

namespace rf::tok {

namespace {
constexpr int kUnbounded = std::numeric_limits<int>::max();

// ECMAScript \s for the code units std::regex sees: ASCII whitespace. (llama.cpp maps every
// non-ASCII whitespace to U+000B before matching, so this covers Unicode White_Space too.)
bool is_regex_space(uint32_t c) { return (c >= 0x09 && c <= 0x0D) || c == 0x20; }
bool is_regex_digit(uint32_t c) { return c >= '0' && c <= '9'; }
bool is_regex_word(uint32_t c) {
    return is_regex_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
} // namespace

bool Regex::CharClass::matches(uint32_t c) const {
    bool in = (space && is_regex_space(c)) || (not_space && !is_regex_space(c)) ||
              (digit && is_regex_digit(c)) || (not_digit && !is_regex_digit(c)) ||
              (word && is_regex_word(c)) || (not_word && !is_regex_word(c));
    for (size_t i = 0; !in && i < ranges.size(); ++i) {
        in = c >= ranges[i].first && c <= ranges[i].second;
    }
    return in != negated;
}

// Recursive-descent parser over the pattern's code points.
class Regex::Parser {
public:
    Parser(Regex &re, Mode mode) : re_(re), mode_(mode), p_(utf8_to_cpts(re.pattern_)) {}

    void parse() {
        re_.groups_.emplace_back();
        parse_alt(0);
        if (at_ < p_.size()) fail("unbalanced ')'");
    }

private:
    [[noreturn]] void fail(const std::string &what) const {
        throw rf::Error("tokenizer regex '" + re_.pattern_ + "': " + what + " at character " +
                        std::to_string(at_));
    }
    bool more() const { return at_ < p_.size(); }
    uint32_t peek(size_t ahead = 0) const { return at_ + ahead < p_.size() ? p_[at_ + ahead] : 0; }

    void parse_alt(int group) {
        re_.groups_[group].alts.emplace_back();
        while (more() && peek() != ')') {
            if (peek() == '|') {
                ++at_;
                re_.groups_[group].alts.emplace_back();
                continue;
            }
            Item item = parse_atom();
            parse_quantifier(item);
            re_.groups_[group].alts.back().items.push_back(item);
        }
    }

    int new_class(CharClass cls) {
        re_.classes_.push_back(std::move(cls));
        return static_cast<int>(re_.classes_.size()) - 1;
    }

    Item parse_atom() {
        Item item;
        const uint32_t c = p_[at_++];
        switch (c) {
        case '(': {
            item.kind = Item::Group;
            if (peek() == '?') {
                const uint32_t k = peek(1);
                if (k == ':') item.kind = Item::Group;
                else if (k == '=') item.kind = Item::LookAhead;
                else if (k == '!') item.kind = Item::NegLookAhead;
                else fail("unsupported group syntax '(?'");
                at_ += 2;
            }
            const int g = static_cast<int>(re_.groups_.size());
            re_.groups_.emplace_back();
            parse_alt(g);
            if (peek() != ')') fail("missing ')'");
            ++at_;
            item.index = g;
            return item;
        }
        case '[':
            item.index = new_class(parse_class());
            return item;
        case '.': {
            CharClass cls;
            cls.negated = true;
            cls.ranges = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};
            item.index = new_class(cls);
            return item;
        }
        case '^': item.kind = Item::Begin; return item;
        case '$': item.kind = Item::End; return item;
        case '\\': {
            CharClass cls;
            parse_escape(cls);
            item.index = new_class(cls);
            return item;
        }
        case ')': case '|': case '*': case '+': case '?': case '{':
            --at_;
            fail("unexpected '" + cpt_to_utf8(c) + "'");
        default: {
            CharClass cls;
            cls.ranges.push_back({c, c});
            item.index = new_class(cls);
            return item;
        }
        }
    }

    // Adds the meaning of the escape after a backslash to `cls` (inside or outside brackets).
    void parse_escape(CharClass &cls) {
        if (!more()) fail("trailing backslash");
        const uint32_t e = p_[at_++];
        switch (e) {
        case 's': cls.space = true; return;
        case 'S': cls.not_space = true; return;
        case 'd': cls.digit = true; return;
        case 'D': cls.not_digit = true; return;
        case 'w': cls.word = true; return;
        case 'W': cls.not_word = true; return;
        case 'r': cls.ranges.push_back({'\r', '\r'}); return;
        case 'n': cls.ranges.push_back({'\n', '\n'}); return;
        case 't': cls.ranges.push_back({'\t', '\t'}); return;
        case 'f': cls.ranges.push_back({'\f', '\f'}); return;
        case 'v': cls.ranges.push_back({'\v', '\v'}); return;
        case 'p': parse_property(cls); return;
        default:
            if (is_regex_word(e)) fail("unsupported escape '\\" + cpt_to_utf8(e) + "'");
            cls.ranges.push_back({e, e}); // escaped punctuation is literal
            return;
        }
    }

    // \p{X} the way llama.cpp rewrites it for its collapsed text: the category's stand-in byte
    // plus the category's ASCII members (its k_ucat_map; note \p{S} there lacks '~').
    void parse_property(CharClass &cls) {
        if (mode_ != Mode::Collapsed) fail("\\p{...} needs collapsed mode");
        if (peek() != '{') fail("expected '{' after \\p");
        std::string name;
        size_t j = at_ + 1;
        while (j < p_.size() && p_[j] != '}') name += static_cast<char>(p_[j++]);
        if (j >= p_.size()) fail("missing '}'");
        at_ = j + 1;
        using R = std::pair<uint32_t, uint32_t>;
        if (name == "N") {
            cls.ranges.insert(cls.ranges.end(), {R{0xD1, 0xD1}, R{'0', '9'}});
        } else if (name == "L" || name == "Lu" || name == "Ll" || name == "Lt" || name == "Lm" ||
                   name == "Lo") {
            cls.ranges.insert(cls.ranges.end(), {R{0xD2, 0xD2}, R{'A', 'Z'}, R{'a', 'z'}});
        } else if (name == "P") {
            cls.ranges.insert(cls.ranges.end(),
                              {R{0xD3, 0xD3}, R{0x21, 0x23}, R{0x25, 0x2A}, R{0x2C, 0x2F},
                               R{0x3A, 0x3B}, R{0x3F, 0x40}, R{0x5B, 0x5D}, R{0x5F, 0x5F},
                               R{0x7B, 0x7B}, R{0x7D, 0x7D}});
        } else if (name == "M") {
            cls.ranges.push_back(R{0xD4, 0xD4});
        } else if (name == "S") {
            cls.ranges.insert(cls.ranges.end(),
                              {R{0xD5, 0xD5}, R{0x24, 0x24}, R{0x2B, 0x2B}, R{0x3C, 0x3E},
                               R{0x5E, 0x5E}, R{0x60, 0x60}, R{0x7C, 0x7C}});
        } else {
            fail("unsupported property \\p{" + name + "}");
        }
    }

    CharClass parse_class() {
        CharClass cls;
        if (peek() == '^') {
            cls.negated = true;
            ++at_;
        }
        while (true) {
            if (!more()) fail("missing ']'");
            uint32_t c = p_[at_];
            if (c == ']') {
                ++at_;
                return cls;
            }
            uint32_t lo;
            if (c == '\\') {
                ++at_;
                const uint32_t e = peek();
                // Escapes that stand for one character may start a range; class escapes may not.
                if (e == 'r' || e == 'n' || e == 't' || e == 'f' || e == 'v' ||
                    (!is_regex_word(e) && e != 0)) {
                    CharClass single;
                    parse_escape(single);
                    lo = single.ranges[0].first;
                } else {
                    parse_escape(cls);
                    continue;
                }
            } else {
                lo = c;
                ++at_;
            }
            if (peek() == '-' && peek(1) != ']' && at_ + 1 < p_.size()) {
                ++at_;
                uint32_t hi = p_[at_++];
                if (hi == '\\') {
                    CharClass single;
                    parse_escape(single);
                    if (single.ranges.size() != 1) fail("bad range end");
                    hi = single.ranges[0].first;
                }
                if (hi < lo) fail("range out of order");
                cls.ranges.push_back({lo, hi});
            } else {
                cls.ranges.push_back({lo, lo});
            }
        }
    }

    int parse_number() {
        if (!is_regex_digit(peek())) fail("expected a number");
        int v = 0;
        while (is_regex_digit(peek())) v = v * 10 + static_cast<int>(p_[at_++] - '0');
        return v;
    }

    void parse_quantifier(Item &item) {
        if (!more()) return;
        const uint32_t q = peek();
        int mn, mx;
        if (q == '?') { mn = 0; mx = 1; ++at_; }
        else if (q == '*') { mn = 0; mx = kUnbounded; ++at_; }
        else if (q == '+') { mn = 1; mx = kUnbounded; ++at_; }
        else if (q == '{') {
            ++at_;
            mn = parse_number();
            mx = mn;
            if (peek() == ',') {
                ++at_;
                mx = peek() == '}' ? kUnbounded : parse_number();
            }
            if (peek() != '}') fail("missing '}'");
            ++at_;
            if (mx < mn) fail("bad repeat range");
        } else {
            return;
        }
        if (item.kind != Item::Class && item.kind != Item::Group) fail("nothing to repeat");
        if (peek() == '?') fail("lazy quantifiers are not supported");
        item.min = mn;
        item.max = mx;
    }

    Regex &re_;
    Mode mode_;
    std::vector<uint32_t> p_;
    size_t at_ = 0;
};

Regex::Regex(std::string_view pattern, Mode mode) : pattern_(pattern) {
    Parser(*this, mode).parse();
}

// Continuation: what to match after the current sub-sequence ends.
struct Regex::Frame {
    bool repeat = false;  // true: one more iteration of a quantified group ended
    const Seq *seq = nullptr;
    size_t idx = 0;       // repeat ? the group item : the next item
    int count = 0;        // iterations so far (repeat frames)
    size_t start = 0;     // where this iteration began (repeat frames)
    const Frame *next = nullptr;
};

long Regex::resume(const Ctx &c, size_t pos, const Frame *k) const {
    if (!k) return static_cast<long>(pos);
    if (k->repeat) {
        // ECMAScript: an iteration that matched nothing, past the minimum, fails.
        if (pos == k->start && k->count > k->seq->items[k->idx].min) return -1;
        return match_rep(c, *k->seq, k->idx, k->count, pos, k->next);
    }
    return match_seq(c, *k->seq, k->idx, pos, k->next);
}

long Regex::match_group(const Ctx &c, int group, size_t pos, const Frame *k) const {
    for (const Seq &alt : groups_[group].alts) {
        const long r = match_seq(c, alt, 0, pos, k);
        if (r >= 0) return r;
    }
    return -1;
}

long Regex::match_rep(const Ctx &c, const Seq &s, size_t i, int count, size_t pos,
                      const Frame *k) const {
    const Item &item = s.items[i];
    if (count < item.max) {
        Frame f;
        f.repeat = true;
        f.seq = &s;
        f.idx = i;
        f.count = count + 1;
        f.start = pos;
        f.next = k;
        const long r = match_group(c, item.index, pos, &f);
        if (r >= 0) return r;
    }
    if (count >= item.min) return match_seq(c, s, i + 1, pos, k);
    return -1;
}

long Regex::match_seq(const Ctx &c, const Seq &s, size_t i, size_t pos, const Frame *k) const {
    if (i == s.items.size()) return resume(c, pos, k);
    const Item &item = s.items[i];
    switch (item.kind) {
    case Item::Class: {
        const CharClass &cls = classes_[item.index];
        size_t n = 0;
        const size_t avail = c.end - pos;
        const size_t limit = item.max == kUnbounded ? avail
                                                    : std::min(avail, static_cast<size_t>(item.max));
        while (n < limit && cls.matches(c.text[pos + n])) ++n;
        if (n < static_cast<size_t>(item.min)) return -1;
        for (size_t m = n + 1; m-- > static_cast<size_t>(item.min);) {
            const long r = match_seq(c, s, i + 1, pos + m, k);
            if (r >= 0) return r;
        }
        return -1;
    }
    case Item::Group: {
        if (item.min == 1 && item.max == 1) {
            Frame f;
            f.seq = &s;
            f.idx = i + 1;
            f.next = k;
            return match_group(c, item.index, pos, &f);
        }
        return match_rep(c, s, i, 0, pos, k);
    }
    case Item::LookAhead:
    case Item::NegLookAhead: {
        const bool found = match_group(c, item.index, pos, nullptr) >= 0;
        if (found != (item.kind == Item::LookAhead)) return -1;
        return match_seq(c, s, i + 1, pos, k);
    }
    case Item::Begin:
        return pos == c.begin ? match_seq(c, s, i + 1, pos, k) : -1;
    case Item::End:
        return pos == c.end ? match_seq(c, s, i + 1, pos, k) : -1;
    }
    return -1;
}

bool Regex::search(const uint32_t *text, size_t begin, size_t end, size_t from,
                   size_t &match_begin, size_t &match_end) const {
    const Ctx c{text, begin, end};
    for (size_t start = from; start <= end; ++start) {
        const long r = match_group(c, 0, start, nullptr);
        if (r >= 0) {
            match_begin = start;
            match_end = static_cast<size_t>(r);
            return true;
        }
    }
    return false;
}

} // namespace rf::tok
