// Fuzzed text through the two real vocabularies in tests/data/vocab (SentencePiece llama and
// byte-level gpt-2). Input: u8 flags (bit 2 picks the vocabulary, the rest as in
// exercise_tokenizer), then the text. Any text must tokenize: encode never throws.
#include <memory>
#include <string_view>

#include "rocmforge/gguf.h"
#include "rocmforge/log.h"
#include "rocmforge/tokenizer.h"
#include "tokenizer_exercise.h"

namespace {

std::unique_ptr<rf::Tokenizer> load(const char *name) {
    const auto file = rf::gguf::File::open(std::string(RF_FUZZ_VOCAB_DIR) + "/" + name);
    return rf::Tokenizer::from_gguf(*file);
}

const rf::Tokenizer &vocab(bool gpt2) {
    static const std::unique_ptr<rf::Tokenizer> spm = load("ggml-vocab-llama-spm.gguf");
    static const std::unique_ptr<rf::Tokenizer> bpe = load("ggml-vocab-gpt-2.gguf");
    return gpt2 ? *bpe : *spm;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    spdlog::set_level(spdlog::level::off);
    vocab(false);
    vocab(true);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);
    rf_fuzz::exercise_tokenizer(vocab(data[0] & 4), text, data[0]);
    return 0;
}
