#include "lexer.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "rocmforge/jinja.h"

namespace rf::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// \r\n and \r -> \n; one trailing \n dropped.
std::string normalise(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\r') {
            out += '\n';
            if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
        } else
            out += s[i];
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

class Lexer {
public:
    explicit Lexer(std::string src) : s_(std::move(src)) {}

    std::vector<Token> run() {
        bool line_starting = true;
        while (pos_ < s_.size()) {
            size_t p = find_tag(pos_);
            std::string text = s_.substr(pos_, (p == std::string::npos ? s_.size() : p) - pos_);
            if (p == std::string::npos) {
                emit_text(text, pos_);
                pos_ = s_.size();
                break;
            }
            const char kind = s_[p + 1]; // '{', '%' or '#'
            const char sign = p + 2 < s_.size() ? s_[p + 2] : 0;
            if (sign == '-') {
                size_t e = text.size();
                while (e > 0 && is_space(text[e - 1])) --e;
                text.resize(e);
            } else if (sign != '+' && kind != '{') {
                const size_t nl = text.rfind('\n');
                const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
                if (l_pos > 0 || line_starting) {
                    bool only_ws = l_pos < text.size();
                    for (size_t i = l_pos; i < text.size() && only_ws; ++i) only_ws = is_space(text[i]);
                    if (only_ws) text.resize(l_pos);
                }
            }
            emit_text(text, pos_);
            pos_ = p;
            if (kind == '#') line_starting = comment();
            else if (kind == '%' && raw_block(line_starting)) {
            } else
                line_starting = tag(kind == '{');
        }
        Token end{Token::Type::End, "", 0, 0, line_of(s_.size()), col_of(s_.size())};
        out_.push_back(end);
        return std::move(out_);
    }

private:
    std::string s_;
    size_t pos_ = 0;
    std::vector<Token> out_;
    // Line starts, for positions.
    std::vector<size_t> lines_;

    int line_of(size_t p) {
        if (lines_.empty()) {
            lines_.push_back(0);
            for (size_t i = 0; i < s_.size(); ++i)
                if (s_[i] == '\n') lines_.push_back(i + 1);
        }
        size_t lo = 0, hi = lines_.size();
        while (hi - lo > 1) {
            const size_t mid = (lo + hi) / 2;
            (lines_[mid] <= p ? lo : hi) = mid;
        }
        return (int)lo + 1;
    }
    int col_of(size_t p) {
        const int l = line_of(p);
        return (int)(p - lines_[l - 1]) + 1;
    }
    [[noreturn]] void fail(const std::string &msg, size_t p) {
        throw TemplateError(TemplateError::Kind::Syntax, msg, line_of(p), col_of(p));
    }

    size_t find_tag(size_t from) const {
        for (size_t p = s_.find('{', from); p != std::string::npos; p = s_.find('{', p + 1))
            if (p + 1 < s_.size() && (s_[p + 1] == '{' || s_[p + 1] == '%' || s_[p + 1] == '#')) return p;
        return std::string::npos;
    }

    void emit_text(const std::string &text, size_t at) {
        if (text.empty()) return;
        out_.push_back(Token{Token::Type::Text, text, 0, 0, line_of(at), col_of(at)});
    }

    void push(Token::Type t, std::string text, size_t at) { out_.push_back(Token{t, std::move(text), 0, 0, line_of(at), col_of(at)}); }

    // After a tag's end: `-` strips all whitespace that follows, a plain end (of a block or
    // comment) one newline. Returns whether what was consumed ended with a newline.
    bool after_end(bool strip_all, bool trim_newline) {
        bool nl = false;
        if (strip_all) {
            while (pos_ < s_.size() && is_space(s_[pos_])) nl = s_[pos_++] == '\n';
        } else if (trim_newline && pos_ < s_.size() && s_[pos_] == '\n') {
            ++pos_;
            nl = true;
        }
        return nl;
    }

    bool comment() {
        const size_t start = pos_;
        const size_t e = s_.find("#}", pos_ + 2);
        if (e == std::string::npos) fail("unterminated comment (missing '#}')", start);
        const bool minus = e > start + 2 && s_[e - 1] == '-';
        const bool plus = e > start + 2 && s_[e - 1] == '+';
        pos_ = e + 2;
        return after_end(minus, !plus);
    }

    // {% raw %} ... {% endraw %}: the text between, untouched. False when this is not a raw tag.
    bool raw_block(bool &line_starting) {
        size_t p = pos_ + 2;
        if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) ++p;
        while (p < s_.size() && is_space(s_[p])) ++p;
        if (s_.compare(p, 3, "raw") != 0 || (p + 3 < s_.size() && (is_name_start(s_[p + 3]) || is_digit(s_[p + 3])))) return false;
        p += 3;
        while (p < s_.size() && is_space(s_[p])) ++p;
        bool minus = false;
        if (p < s_.size() && (s_[p] == '-' || s_[p] == '+')) minus = s_[p++] == '-';
        if (s_.compare(p, 2, "%}") != 0) fail("expected '%}' after 'raw'", p);
        const size_t start = pos_;
        pos_ = p + 2;
        after_end(minus, true);
        // Find {%[-+]? endraw [-+]?%}
        for (size_t q = s_.find("{%", pos_); q != std::string::npos; q = s_.find("{%", q + 2)) {
            size_t r = q + 2;
            const bool lminus = r < s_.size() && s_[r] == '-';
            if (r < s_.size() && (s_[r] == '-' || s_[r] == '+')) ++r;
            while (r < s_.size() && is_space(s_[r])) ++r;
            if (s_.compare(r, 6, "endraw") != 0) continue;
            r += 6;
            while (r < s_.size() && is_space(s_[r])) ++r;
            bool rminus = false;
            if (r < s_.size() && (s_[r] == '-' || s_[r] == '+')) rminus = s_[r++] == '-';
            if (s_.compare(r, 2, "%}") != 0) continue;
            std::string text = s_.substr(pos_, q - pos_);
            if (lminus) {
                size_t e = text.size();
                while (e > 0 && is_space(text[e - 1])) --e;
                text.resize(e);
            }
            emit_text(text, pos_);
            pos_ = r + 2;
            line_starting = after_end(rminus, true);
            return true;
        }
        fail("unterminated raw block (missing '{% endraw %}')", start);
    }

    // One {{ ... }} or {% ... %}: its tokens. Returns whether its end consumed a newline.
    bool tag(bool variable) {
        const size_t start = pos_;
        push(variable ? Token::Type::VarBegin : Token::Type::BlockBegin, "", start);
        pos_ += 2;
        if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
        const char close = variable ? '}' : '%';
        int balance = 0;
        for (;;) {
            while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
            if (pos_ >= s_.size()) fail(variable ? "unexpected end of template (missing '}}')" : "unexpected end of template (missing '%}')", start);
            const char c = s_[pos_];
            if (balance == 0) {
                // End markers: "-}}" / "}}" (or "-%}" / "+%}" / "%}").
                auto end_at = [&](size_t q) { return q + 1 < s_.size() && s_[q] == close && s_[q + 1] == '}'; };
                char mark = 0;
                size_t q = pos_;
                if ((c == '-' || c == '+') && end_at(pos_ + 1)) {
                    mark = c;
                    q = pos_ + 1;
                }
                if (end_at(q)) {
                    push(variable ? Token::Type::VarEnd : Token::Type::BlockEnd, "", pos_);
                    pos_ = q + 2;
                    return after_end(mark == '-', !variable && mark != '+');
                }
            }
            if (is_name_start(c)) {
                const size_t b = pos_;
                while (pos_ < s_.size() && (is_name_start(s_[pos_]) || is_digit(s_[pos_]))) ++pos_;
                push(Token::Type::Name, s_.substr(b, pos_ - b), b);
            } else if (is_digit(c)) {
                number();
            } else if (c == '\'' || c == '"') {
                string_literal();
            } else {
                op(balance);
            }
        }
    }

    void number() {
        const size_t b = pos_;
        while (pos_ < s_.size() && (is_digit(s_[pos_]) || s_[pos_] == '_')) ++pos_;
        bool is_float = false;
        if (pos_ + 1 < s_.size() && s_[pos_] == '.' && is_digit(s_[pos_ + 1])) {
            is_float = true;
            ++pos_;
            while (pos_ < s_.size() && (is_digit(s_[pos_]) || s_[pos_] == '_')) ++pos_;
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            size_t q = pos_ + 1;
            if (q < s_.size() && (s_[q] == '+' || s_[q] == '-')) ++q;
            if (q < s_.size() && is_digit(s_[q])) {
                is_float = true;
                pos_ = q;
                while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
            }
        }
        std::string digits;
        for (size_t i = b; i < pos_; ++i)
            if (s_[i] != '_') digits += s_[i];
        Token t{is_float ? Token::Type::Float : Token::Type::Int, digits, 0, 0, line_of(b), col_of(b)};
        if (is_float) t.float_value = std::strtod(digits.c_str(), nullptr);
        else {
            errno = 0;
            char *end = nullptr;
            t.int_value = std::strtoll(digits.c_str(), &end, 10);
            if (errno == ERANGE) fail("integer literal out of range: " + digits, b);
        }
        out_.push_back(t);
    }

    void string_literal() {
        const size_t b = pos_;
        const char q = s_[pos_++];
        const size_t body = pos_;
        while (pos_ < s_.size() && s_[pos_] != q) {
            if (s_[pos_] == '\\') ++pos_;
            ++pos_;
        }
        if (pos_ >= s_.size()) fail("unterminated string literal", b);
        Token t{Token::Type::String, decode_string_escapes(std::string_view(s_).substr(body, pos_ - body), line_of(b), col_of(b)), 0, 0,
                line_of(b), col_of(b)};
        ++pos_;
        out_.push_back(t);
    }

    void op(int &balance) {
        static const char *two[] = {"//", "**", "==", "!=", "<=", ">="};
        for (const char *t : two)
            if (s_.compare(pos_, 2, t) == 0) {
                push(Token::Type::Op, t, pos_);
                pos_ += 2;
                return;
            }
        const char c = s_[pos_];
        if (!std::strchr("+-*/%~()[]{},.:|=<>;", c)) fail(std::string("unexpected character '") + c + "'", pos_);
        if (c == '(' || c == '[' || c == '{') ++balance;
        if (c == ')' || c == ']' || c == '}') {
            if (balance == 0) fail(std::string("unexpected '") + c + "'", pos_);
            --balance;
        }
        push(Token::Type::Op, std::string(1, c), pos_);
        ++pos_;
    }
};

} // namespace

void append_utf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) out += (char)cp;
    else if (cp < 0x800) {
        out += (char)(0xC0 | (cp >> 6));
        out += (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += (char)(0xE0 | (cp >> 12));
        out += (char)(0x80 | ((cp >> 6) & 0x3F));
        out += (char)(0x80 | (cp & 0x3F));
    } else {
        out += (char)(0xF0 | (cp >> 18));
        out += (char)(0x80 | ((cp >> 12) & 0x3F));
        out += (char)(0x80 | ((cp >> 6) & 0x3F));
        out += (char)(0x80 | (cp & 0x3F));
    }
}

std::string decode_string_escapes(std::string_view b, int line, int column) {
    std::string out;
    for (size_t i = 0; i < b.size(); ++i) {
        if (b[i] != '\\' || i + 1 >= b.size()) {
            out += b[i];
            continue;
        }
        const char c = b[++i];
        switch (c) {
        case '\n': break; // a line continuation
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'x':
        case 'u':
        case 'U': {
            const int n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int k = 0; k < n; ++k) {
                const int h = i + 1 < b.size() ? hex_digit(b[i + 1]) : -1;
                if (h < 0) throw TemplateError(TemplateError::Kind::Syntax, std::string("truncated \\") + c + " escape in a string literal", line, column);
                cp = cp * 16 + (uint32_t)h;
                ++i;
            }
            if (cp > 0x10FFFF) throw TemplateError(TemplateError::Kind::Syntax, "escape out of the Unicode range in a string literal", line, column);
            append_utf8(out, cp);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                uint32_t cp = (uint32_t)(c - '0');
                for (int k = 0; k < 2 && i + 1 < b.size() && b[i + 1] >= '0' && b[i + 1] <= '7'; ++k) cp = cp * 8 + (uint32_t)(b[++i] - '0');
                append_utf8(out, cp);
            } else {
                out += '\\'; // an unknown escape stays as written, as in Python
                out += c;
            }
        }
    }
    return out;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalise(source)).run(); }

} // namespace rf::jinja
