// Tokenizer built from a fuzzed GGUF vocabulary, then run on fuzzed text. Input layout:
//   u8 flags (see exercise_tokenizer), u16 little-endian text length, the text, the GGUF file.
// Bad metadata must be refused with an rf::Error; a vocabulary that loads must tokenize any text.
#include <algorithm>
#include <memory>
#include <string_view>

#include "input_file.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/log.h"
#include "rocmforge/tokenizer.h"
#include "tokenizer_exercise.h"

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    spdlog::set_level(spdlog::level::off);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    const uint8_t flags = data[0];
    const size_t text_len = std::min<size_t>(size - 3, size_t(data[1]) | size_t(data[2]) << 8);
    const std::string_view text(reinterpret_cast<const char *>(data + 3), text_len);
    const size_t gguf_at = 3 + text_len;
    std::unique_ptr<rf::Tokenizer> tok;
    try {
        const auto file = rf::gguf::File::open(rf_fuzz::input_file(data + gguf_at, size - gguf_at));
        tok = rf::Tokenizer::from_gguf(*file);
    } catch (const rf::Error &) {
        return 0;
    }
    rf_fuzz::exercise_tokenizer(*tok, text, flags);
    return 0;
}
