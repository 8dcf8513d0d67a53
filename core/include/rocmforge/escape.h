// Text taken from a file (metadata keys, tensor names, token text, architecture names) made safe
// to put in a one-line message: a hostile or corrupt file must not cut the message short with a
// NUL, move the cursor with control bytes or flood the terminal.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace rf {

// 's' in single quotes: printable ASCII as is; every other byte (NUL, control bytes, DEL,
// bytes >= 0x80) and the quote and backslash as \xNN. Longer than max_bytes: the first
// max_bytes bytes, then "... (N bytes)" after the closing quote.
std::string quote_name(std::string_view s, size_t max_bytes = 64);

} // namespace rf
