// llama.cpp's GBNF (grammars/README.md there): `name ::= alternatives`, "literals" with escapes,
// [character classes] (^ negates, a-z ranges), `.` (any character), ( groups ), and the postfix
// * + ? {n} {n,} {n,m} {,m}; `#` comments. A rule ends at the end of its line unless inside
// parentheses or when the next line begins with `|`. Repetitions and groups become helper rules
// (`name-1`, ...), character classes UTF-8 byte ranges, so the compiled grammar is byte level.
#include <algorithm>
#include <map>

#include "rocmforge/grammar.h"
#include "utf8_ranges.h"

namespace rf::grammar {
namespace {

constexpr int kMaxRepetition = 10000; // larger {n,m} bounds would build too many rules
constexpr int kMaxGroupNesting = 256; // the parser recurses per group

struct Sym {
    bool rule;
    uint32_t arg; // rule id or byte-set index
};
using Sequence = std::vector<Sym>;
using Alternatives = std::vector<Sequence>;

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
public:
    explicit Parser(std::string_view src) : src_(src) {}

    std::shared_ptr<const Grammar> run() {
        skip_space(true);
        while (pos_ < src_.size()) parse_rule();
        for (size_t r = 0; r < names_.size(); ++r)
            if (!defined_[r]) fail("undefined rule '" + names_[r] + "'", first_use_[r]);
        const auto root = ids_.find("root");
        if (root == ids_.end()) fail("the grammar has no 'root' rule", src_.size());
        check_left_recursion();
        return flatten(root->second);
    }

private:
    [[noreturn]] void fail(const std::string &msg, size_t at) const {
        size_t line = 1, col = 1;
        for (size_t i = 0; i < at && i < src_.size(); ++i) {
            if (src_[i] == '\n') ++line, col = 1;
            else ++col;
        }
        throw GrammarError(msg, line, col);
    }
    bool eof() const { return pos_ >= src_.size(); }
    char peek(size_t ahead = 0) const { return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0'; }

    // Spaces and comments; newlines too when `newlines`.
    void skip_space(bool newlines) {
        while (!eof()) {
            const char c = peek();
            if (c == '#') {
                while (!eof() && peek() != '\n') ++pos_;
            } else if (c == ' ' || c == '\t' || ((c == '\n' || c == '\r') && newlines))
                ++pos_;
            else
                break;
        }
    }

    uint32_t rule_id(const std::string &name, size_t at) {
        auto [it, fresh] = ids_.emplace(name, (uint32_t)names_.size());
        if (fresh) {
            names_.push_back(name);
            defined_.push_back(false);
            first_use_.push_back(at);
            rules_.emplace_back();
        }
        return it->second;
    }
    // Helper rules have no name a grammar could refer to (or collide with): they are not in ids_.
    uint32_t helper_rule(const std::string &base, Alternatives alts) {
        const uint32_t id = (uint32_t)names_.size();
        names_.push_back(base + "-" + std::to_string(++helper_count_));
        defined_.push_back(true);
        first_use_.push_back(pos_);
        rules_.push_back(std::move(alts));
        return id;
    }
    uint32_t byte_set(const ByteSet &s) {
        auto [it, fresh] = byte_set_ids_.emplace(s, (uint32_t)byte_sets_.size());
        if (fresh) byte_sets_.push_back(s);
        return it->second;
    }
    Sym byte_range(uint8_t lo, uint8_t hi) {
        ByteSet s{};
        for (unsigned b = lo; b <= hi; ++b) s[b >> 6] |= 1ull << (b & 63);
        return {false, byte_set(s)};
    }

    std::string parse_name() {
        const size_t start = pos_;
        while (!eof() && is_name_char(peek())) ++pos_;
        if (pos_ == start) fail(std::string("expected a rule name, got ") + describe(start), start);
        return std::string(src_.substr(start, pos_ - start));
    }
    std::string describe(size_t at) const {
        if (at >= src_.size()) return "the end of the grammar";
        const char c = src_[at];
        if (c == '\n' || c == '\r') return "the end of the line";
        return "'" + std::string(1, c) + "'";
    }

    void parse_rule() {
        const size_t start = pos_;
        const std::string name = parse_name();
        skip_space(false);
        if (src_.substr(pos_, 3) != "::=") fail("expected '::=' after rule name '" + name + "'", pos_);
        pos_ += 3;
        skip_space(true);
        const uint32_t id = rule_id(name, start);
        if (defined_[id]) fail("rule '" + name + "' is defined twice", start);
        defined_[id] = true;
        first_use_[id] = start; // from now on: where it is defined
        current_ = name;
        Alternatives alts = parse_alternatives(false);
        rules_[id] = std::move(alts);
        if (!eof() && peek() != '\n' && peek() != '\r') fail("expected the end of the line, got " + describe(pos_), pos_);
        skip_space(true);
    }

    // A top-level rule goes on past a newline when the next line begins with '|'.
    bool continues_on_next_line() {
        size_t p = pos_;
        while (p < src_.size()) {
            const char c = src_[p];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') ++p;
            else if (c == '#')
                while (p < src_.size() && src_[p] != '\n') ++p;
            else
                break;
        }
        if (p < src_.size() && src_[p] == '|') {
            pos_ = p;
            return true;
        }
        return false;
    }

    Alternatives parse_alternatives(bool nested) {
        Alternatives alts;
        alts.push_back(parse_sequence(nested));
        while (peek() == '|' || (!nested && (peek() == '\n' || peek() == '\r') && continues_on_next_line())) {
            ++pos_;
            skip_space(true);
            alts.push_back(parse_sequence(nested));
        }
        return alts;
    }

    // One character of a literal or class: an escape or a UTF-8 character.
    uint32_t parse_char(const char *where) {
        if (eof()) fail(std::string("unterminated ") + where, pos_);
        const size_t start = pos_;
        const unsigned char c = (unsigned char)peek();
        if (c == '\\') {
            ++pos_;
            const char e = peek();
            ++pos_;
            switch (e) {
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            case '0': return 0;
            case '\\': case '"': case '[': case ']': case '-': case '^': case '/': case '\'': return (uint32_t)e;
            case 'x': return parse_hex(2, start);
            case 'u': return parse_hex(4, start);
            case 'U': return parse_hex(8, start);
            default: fail("unknown escape '\\" + std::string(1, e ? e : ' ') + "'", start);
            }
        }
        if (c == '\n' || c == '\r') fail(std::string("unterminated ") + where, start);
        // UTF-8: the lead byte says how many continuation bytes follow.
        const int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0) fail("invalid UTF-8 in the grammar", start);
        uint32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
        ++pos_;
        for (int i = 0; i < n; ++i, ++pos_) {
            if (eof() || ((unsigned char)peek() & 0xC0) != 0x80) fail("invalid UTF-8 in the grammar", start);
            cp = cp << 6 | ((unsigned char)peek() & 0x3F);
        }
        return cp;
    }
    uint32_t parse_hex(int digits, size_t start) {
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i, ++pos_) {
            const char h = peek();
            int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            if (d < 0) fail("expected " + std::to_string(digits) + " hex digits in the escape", start);
            v = v << 4 | (uint32_t)d;
        }
        if (v > 0x10FFFF) fail("escape beyond U+10FFFF", start);
        return v;
    }

    void append_literal(Sequence &seq) {
        ++pos_; // opening quote
        while (peek() != '"') {
            std::vector<uint8_t> bytes;
            append_utf8(bytes, parse_char("string literal"));
            for (uint8_t b : bytes) seq.push_back(byte_range(b, b));
        }
        ++pos_;
    }

    // A class as one byte set when it is ASCII only, else a helper rule of UTF-8 sequences
    // (classes written the same way share it).
    void append_class(Sequence &seq, std::vector<CodepointRange> ranges, bool negated, const std::string &key) {
        ranges = normalize_ranges(std::move(ranges));
        if (negated) ranges = complement_ranges(ranges);
        if (ranges.empty()) fail("the character class matches nothing", pos_);
        const auto seqs = utf8_sequences(ranges);
        ByteSet ascii{};
        bool any_ascii = false;
        Alternatives alts;
        for (const ByteRangeSeq &s : seqs) {
            if (s.size() == 1) {
                for (unsigned b = s[0].first; b <= s[0].second; ++b) ascii[b >> 6] |= 1ull << (b & 63);
                any_ascii = true;
                continue;
            }
            Sequence alt;
            for (auto [lo, hi] : s) alt.push_back(byte_range(lo, hi));
            alts.push_back(std::move(alt));
        }
        if (alts.empty()) return seq.push_back({false, byte_set(ascii)});
        if (any_ascii) alts.insert(alts.begin(), Sequence{Sym{false, byte_set(ascii)}});
        auto it = class_rules_.find(key);
        if (it == class_rules_.end()) it = class_rules_.emplace(key, helper_rule("char", std::move(alts))).first;
        seq.push_back({true, it->second});
    }

    void append_char_class(Sequence &seq) {
        const size_t start = pos_;
        ++pos_;
        const bool negated = peek() == '^';
        if (negated) ++pos_;
        std::vector<CodepointRange> ranges;
        while (peek() != ']') {
            const uint32_t lo = parse_char("character class");
            uint32_t hi = lo;
            if (peek() == '-' && peek(1) != ']' && pos_ + 1 < src_.size()) {
                ++pos_;
                hi = parse_char("character class");
                if (hi < lo) fail("character range out of order", start);
            }
            ranges.push_back({lo, hi});
        }
        ++pos_;
        append_class(seq, ranges, negated, std::string(src_.substr(start, pos_ - start)));
    }

    // {n}, {n,}, {n,m}, {,m}
    std::pair<int, int> parse_braces() {
        const size_t start = pos_;
        ++pos_;
        skip_space(false);
        auto number = [&]() -> int {
            if (!(peek() >= '0' && peek() <= '9')) return -1;
            long v = 0;
            while (peek() >= '0' && peek() <= '9') {
                v = v * 10 + (peek() - '0');
                if (v > kMaxRepetition) fail("repetition count above " + std::to_string(kMaxRepetition), start);
                ++pos_;
            }
            return (int)v;
        };
        int lo = number(), hi;
        skip_space(false);
        if (peek() == ',') {
            ++pos_;
            skip_space(false);
            hi = number();
            if (lo < 0 && hi < 0) fail("expected a count in '{...}'", start);
            if (lo < 0) lo = 0;
        } else {
            if (lo < 0) fail("expected a count in '{...}'", start);
            hi = lo;
        }
        skip_space(false);
        if (peek() != '}') fail("expected '}' to close the repetition", pos_);
        ++pos_;
        if (hi >= 0 && hi < lo) fail("repetition {" + std::to_string(lo) + "," + std::to_string(hi) + "} has max < min", start);
        return {lo, hi};
    }

    // seq[from..] repeated lo to hi times (hi -1: no limit), as right-recursive helper rules.
    void repeat(Sequence &seq, size_t from, int lo, int hi) {
        Sequence item(seq.begin() + (long)from, seq.end());
        seq.resize(from);
        if (item.empty()) return; // "" repeated is still ""
        if (item.size() > 1) item = {Sym{true, helper_rule(current_, {item})}};
        for (int i = 0; i < lo; ++i) seq.push_back(item[0]);
        if (hi < 0) {
            const uint32_t star = helper_rule(current_, {});
            rules_[star] = {Sequence{item[0], Sym{true, star}}, Sequence{}};
            seq.push_back({true, star});
            return;
        }
        // opt_k ::= item opt_(k-1) | empty, so at most hi - lo more.
        uint32_t next = 0;
        bool have = false;
        for (int k = 0; k < hi - lo; ++k) {
            Sequence more{item[0]};
            if (have) more.push_back({true, next});
            next = helper_rule(current_, {more, Sequence{}});
            have = true;
        }
        if (have) seq.push_back({true, next});
    }

    Sequence parse_sequence(bool nested) {
        Sequence seq;
        size_t last = 0; // where the last item begins (what a postfix repeats)
        bool have_item = false;
        skip_space(nested);
        while (!eof()) {
            const char c = peek();
            const size_t at = pos_;
            if (c == '"') {
                last = seq.size();
                append_literal(seq);
            } else if (c == '[') {
                last = seq.size();
                append_char_class(seq);
            } else if (c == '.') {
                last = seq.size();
                ++pos_;
                append_class(seq, {{0, 0x10FFFF}}, false, ".");
            } else if (is_name_char(c)) {
                last = seq.size();
                const std::string name = parse_name();
                seq.push_back({true, rule_id(name, at)});
            } else if (c == '(') {
                if (++group_depth_ > kMaxGroupNesting)
                    fail("groups nest deeper than " + std::to_string(kMaxGroupNesting) + " levels", at);
                ++pos_;
                last = seq.size();
                Alternatives alts = parse_alternatives(true);
                if (peek() != ')') fail("expected ')' to close the group, got " + describe(pos_), pos_);
                ++pos_;
                --group_depth_;
                seq.push_back({true, helper_rule(current_, std::move(alts))});
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (!have_item) fail(std::string("'") + c + "' has nothing before it to repeat", at);
                if (c == '{') {
                    const auto [lo, hi] = parse_braces();
                    repeat(seq, last, lo, hi);
                } else {
                    ++pos_;
                    repeat(seq, last, c == '+' ? 1 : 0, c == '?' ? 1 : -1);
                }
                skip_space(nested);
                continue;
            } else
                break;
            have_item = true;
            skip_space(nested);
        }
        return seq;
    }

    // Left recursion would expand forever: a rule reaching itself through first symbols that
    // can all be empty.
    void check_left_recursion() const {
        const size_t n = rules_.size();
        std::vector<char> nullable(n, 0);
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t r = 0; r < n; ++r) {
                if (nullable[r]) continue;
                for (const Sequence &alt : rules_[r])
                    if (std::all_of(alt.begin(), alt.end(), [&](Sym s) { return s.rule && nullable[s.arg]; })) {
                        nullable[r] = 1, changed = true;
                        break;
                    }
            }
        }
        std::vector<std::vector<uint32_t>> first(n);
        for (size_t r = 0; r < n; ++r)
            for (const Sequence &alt : rules_[r])
                for (Sym s : alt) {
                    if (!s.rule) break;
                    first[r].push_back(s.arg);
                    if (!nullable[s.arg]) break;
                }
        std::vector<int> mark(n, 0); // 0 new, 1 on the path, 2 done
        std::vector<std::pair<uint32_t, size_t>> path;
        for (uint32_t start = 0; start < n; ++start) {
            if (mark[start]) continue;
            path.push_back({start, 0});
            mark[start] = 1;
            while (!path.empty()) {
                auto &[r, i] = path.back();
                if (i == first[r].size()) {
                    mark[r] = 2;
                    path.pop_back();
                    continue;
                }
                const uint32_t s = first[r][i++];
                if (mark[s] == 1) fail("rule '" + names_[s] + "' is left-recursive (it can begin with itself)", first_use_[s]);
                if (mark[s] == 0) {
                    mark[s] = 1;
                    path.push_back({s, 0});
                }
            }
        }
    }

    std::shared_ptr<const Grammar> flatten(uint32_t root) {
        auto g = std::make_shared<Grammar>();
        g->byte_sets = byte_sets_;
        g->rule_names = names_;
        g->root = root;
        g->rule_alternatives.resize(rules_.size());
        for (size_t r = 0; r < rules_.size(); ++r)
            for (const Sequence &alt : rules_[r]) {
                g->rule_alternatives[r].push_back((uint32_t)g->elements.size());
                for (Sym s : alt) g->elements.push_back({s.rule ? Grammar::Op::Rule : Grammar::Op::Bytes, s.arg});
                g->elements.push_back({Grammar::Op::End, 0});
            }
        return g;
    }

    std::string_view src_;
    size_t pos_ = 0;
    std::map<std::string, uint32_t> ids_;
    std::vector<std::string> names_;
    std::vector<char> defined_;
    std::vector<size_t> first_use_; // where a rule is defined, or first used until then
    std::vector<Alternatives> rules_;
    std::vector<ByteSet> byte_sets_;
    std::map<ByteSet, uint32_t> byte_set_ids_;
    std::map<std::string, uint32_t> class_rules_;
    std::string current_ = "root";
    int helper_count_ = 0;
    int group_depth_ = 0;
};

} // namespace

std::shared_ptr<const Grammar> Grammar::parse(std::string_view gbnf) { return Parser(gbnf).run(); }

} // namespace rf::grammar
