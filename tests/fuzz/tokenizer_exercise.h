// What both tokenizer targets do with a tokenizer and a text: encode, decode (whole and
// streamed) and check the results against the tokenizer's own promises.
#pragma once
#include <cstdint>
#include <string_view>

#include "rocmforge/tokenizer.h"

namespace rf_fuzz {

// flags bit 0: add_special, bit 1: parse_special (as in Tokenizer::encode).
void exercise_tokenizer(const rf::Tokenizer &tok, std::string_view text, uint8_t flags);

} // namespace rf_fuzz
