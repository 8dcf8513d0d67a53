// UTF-8 in responses: JSON must be valid UTF-8, but a model's text (byte tokens) or a token
// prompt's decoded echo can hold any bytes. Checking, counting characters (what text_offset
// counts) and writing invalid bytes as U+FFFD, as OpenAI and vLLM do.
#pragma once
#include <cstdint>
#include <string>

namespace rf::serve {

// Well-formed UTF-8: no stray or missing continuation bytes, overlong forms, surrogates or
// code points beyond U+10FFFF.
bool valid_utf8(const std::string &s);

// Characters: every byte but continuation bytes (a character split over two tokens counts once,
// where its first byte is).
int64_t utf8_chars(const std::string &s);

// `s` with each byte that does not belong to a well-formed character replaced by U+FFFD.
std::string sanitize_utf8(const std::string &s);

} // namespace rf::serve
