// The committed default model (models/trained/kjv-*.gguf): its shape, its tokenizer against the
// ids tools/train/train_tokenizer.py produced, and its held-out perplexity against the PyTorch
// model it was exported from (reference values computed by tools/train/train.py's
// llamacpp_perplexity on the F16-rounded weights).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "rocmforge/abi.h"
#include "rocmforge/gguf.h"
#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "rocmforge/perplexity.h"
#include "rocmforge/runtime.h"
#include "rocmforge/tokenizer.h"

namespace {

std::string trained(const std::string &name) {
    const char *dir = std::getenv("RF_TRAINED_MODELS");
    return std::string(dir ? dir : "models/trained") + "/" + name;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::unique_ptr<rf::Runtime> cpu_runtime() {
    rf::Config c;
    c.backends = {"cpu"};
    c.backends_explicit = true;
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
    c.n_threads = 2;
    return rf::Runtime::create(c);
}

double heldout_ppl(const std::string &model_path, int64_t n_chunks) {
    auto rt = cpu_runtime();
    auto model = rf::Model::load(model_path, *rt);
    auto tok = rf::Tokenizer::from_gguf(model->file());
    const std::vector<int32_t> tokens = tok->encode(read_file(trained("heldout.txt")), true, false);
    rf::ContextParams cp;
    cp.n_ctx = 128;
    cp.n_batch = 128;
    rf::InferenceContext ctx(*model, *rt, cp);
    rf::PerplexityAccumulator acc;
    for (int64_t c = 0; c < n_chunks; ++c) rf::score_perplexity_chunk(ctx, tokens, c, 128, tok->bos(), acc);
    return acc.ppl();
}

} // namespace

TEST_CASE("default model files: llama 3.1M, F16 and Q8_0, under 10 MB together", "[train][model]") {
    uint64_t total = 0;
    for (const char *name : {"kjv-f16.gguf", "kjv-q8_0.gguf"}) {
        INFO(name);
        auto f = rf::gguf::File::open(trained(name));
        total += f->file_size();
        CHECK(f->get_string("general.architecture") == "llama");
        CHECK(f->get_int("llama.block_count", 0) == 4);
        CHECK(f->get_int("llama.embedding_length", 0) == 256);
        CHECK(f->get_int("llama.feed_forward_length", 0) == 448);
        CHECK(f->get_int("llama.attention.head_count", 0) == 8);
        CHECK(f->get_int("llama.attention.head_count_kv", 0) == 2);
        CHECK(f->get_int("llama.context_length", 0) == 512);
        CHECK(f->find_tensor("output.weight") == nullptr); // tied to token_embd
        const int matrix_type = std::string(name) == "kjv-f16.gguf" ? RF_TYPE_F16 : RF_TYPE_Q8_0;
        int64_t n_params = 0;
        for (const auto &t : f->tensors()) {
            INFO(t.name);
            CHECK(t.type == (t.n_dims == 2 ? matrix_type : RF_TYPE_F32));
            n_params += t.n_elements();
        }
        CHECK(n_params == 3082496);
    }
    CHECK(total < 10000000);
}

TEST_CASE("default model tokenizer: the ids the training data was made of", "[train][tokenizer]") {
    auto f = rf::gguf::File::open(trained("kjv-q8_0.gguf"));
    auto tok = rf::Tokenizer::from_gguf(*f);
    CHECK(tok->n_vocab() == 4096);
    CHECK(tok->bos() == 4094);
    CHECK(tok->eos() == 4095);
    CHECK(tok->encode("In the beginning God created the heaven and the earth.\n", true, false) ==
          std::vector<int32_t>{4094, 1138, 258, 2240, 388, 3468, 258, 761, 267, 258, 635, 46, 10});
    CHECK(tok->encode("Abraham's seed, 42 times; (Selah)\n\nqzx", false, false) ==
          std::vector<int32_t>{65, 98, 328, 881, 496, 1180, 44, 2049, 50, 1740, 59, 1700, 83, 2044, 41, 10, 10,
                               113, 122, 120});

    // The whole held-out text: count, ends and checksum of .train_data/heldout.bin.
    const std::string text = read_file(trained("heldout.txt"));
    const std::vector<int32_t> ids = tok->encode(text, false, false);
    REQUIRE(ids.size() == 20849);
    CHECK(std::vector<int32_t>(ids.begin(), ids.begin() + 10) ==
          std::vector<int32_t>{49, 1924, 979, 10, 10, 1255, 381, 369, 401, 258});
    CHECK(std::vector<int32_t>(ids.end() - 5, ids.end()) == std::vector<int32_t>{46, 2672, 46, 10, 10});
    CHECK(std::accumulate(ids.begin(), ids.end(), int64_t(0)) == 14520527);
    std::string back;
    for (int32_t id : ids) back += tok->token_to_piece(id, false);
    CHECK(back == text);
}

TEST_CASE("default model: held-out perplexity matches the PyTorch model", "[train][model][perplexity]") {
    // 24 chunks of 128 (llama.cpp's definition); PyTorch (float32 math, F16-rounded weights)
    // gives 24.6367. The KV cache here is F16, hence the tolerance.
    const double f16 = heldout_ppl(trained("kjv-f16.gguf"), 24);
    CHECK(f16 == Approx(24.6367).epsilon(0.002));
    const double q8 = heldout_ppl(trained("kjv-q8_0.gguf"), 24);
    CHECK(q8 == Approx(24.6367).epsilon(0.01));
}
