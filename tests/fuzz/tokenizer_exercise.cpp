#include "tokenizer_exercise.h"

#include <string>
#include <vector>

#include "check.h"

namespace rf_fuzz {

void exercise_tokenizer(const rf::Tokenizer &tok, std::string_view text, uint8_t flags) {
    const bool add_special = flags & 1, parse_special = flags & 2;
    const std::vector<int32_t> ids = tok.encode(text, add_special, parse_special);
    std::string pieces;
    for (int32_t id : ids) {
        RF_FUZZ_CHECK(id >= 0 && id < tok.n_vocab());
        pieces += tok.decode_token(id);
    }
    (void)tok.decode(ids, add_special, parse_special);
    // Streaming never drops or invents bytes: it only holds back incomplete characters.
    rf::StreamDecoder stream(tok);
    std::string streamed;
    for (int32_t id : ids) streamed += stream.push(id);
    streamed += stream.flush();
    RF_FUZZ_CHECK(streamed == pieces);
}

} // namespace rf_fuzz
