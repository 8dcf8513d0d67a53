// A tiny random bert / nomic-bert file (with a WordPiece vocabulary, so the CLI can embed text
// with it) and an independent float64 reference of llama.cpp's llm_build_bert to check the
// encoder graph against.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rf_test {

struct TinyEncoderSpec {
    std::string arch = "bert"; // "bert" or "nomic-bert" (fused QKV, NeoX RoPE, SwiGLU, no biases)
    int64_t n_embd = 64, n_layer = 2, n_head = 4, n_ff = 96, n_vocab = 60, n_ctx_train = 64;
    float norm_eps = 1e-12f;
    float rope_base = 1000.0f;
    int64_t pooling_type = 2;  // <arch>.pooling_type: 1 mean, 2 cls
    int matrix_type = 0;       // RF_TYPE_F32 or RF_TYPE_F16 for the 2-D weights
    uint32_t seed = 4321;
};

struct TinyEncoderWeights {
    TinyEncoderSpec spec;
    std::map<std::string, std::vector<float>> t; // by GGUF name (nomic: attn_q/k/v parts of attn_qkv)
};

// The vocabulary's words: token 5 + i is U+2581 + kEncoderWords[i]; the rest are fillers.
extern const char *const kEncoderWords[];
extern const int kEncoderWordCount;

TinyEncoderWeights write_tiny_encoder(const std::string &path, const TinyEncoderSpec &spec);

// Float64 hidden states [T][n_embd] of one sequence (every token attends every token).
std::vector<std::vector<double>> reference_encoder(const TinyEncoderWeights &w, const std::vector<int32_t> &tokens);

} // namespace rf_test
