// Template source -> tokens, with jinja2's whitespace rules under transformers' settings:
// trim_blocks (the newline after a block or comment tag goes), lstrip_blocks (spaces and tabs
// before a block or comment tag on its line go), `-` / `+` markers on tags, comments, raw
// blocks, newlines normalised to \n and one trailing newline dropped (keep_trailing_newline off).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace rf::jinja {

struct Token {
    enum class Type { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, End };
    Type type;
    std::string text; // Text: the text; Name; String: the decoded value; Op: the operator
    int64_t int_value = 0;
    double float_value = 0;
    int line = 1, column = 1;
};

// Throws TemplateError (Syntax) with line and column.
std::vector<Token> tokenize(std::string_view source);

// Python's escape sequences in a string literal (jinja2 decodes them as "unicode-escape").
std::string decode_string_escapes(std::string_view body, int line, int column);

// UTF-8 of one code point.
void append_utf8(std::string &out, uint32_t cp);

} // namespace rf::jinja
