// The SentencePiece test vocabulary (tests/data/vocab, llama.cpp's) as a Tokenizer, loaded once.
#pragma once
#include <cstdlib>
#include <memory>
#include <string>

#include "rocmforge/gguf.h"
#include "rocmforge/tokenizer.h"

namespace rf_test {

inline const rf::Tokenizer &spm_vocab() {
    static const auto tok = [] {
        const char *root = std::getenv("RF_TEST_DATA");
        const auto file = rf::gguf::File::open(std::string(root ? root : "tests/data") + "/vocab/ggml-vocab-llama-spm.gguf");
        return rf::Tokenizer::from_gguf(*file);
    }();
    return *tok;
}

} // namespace rf_test
