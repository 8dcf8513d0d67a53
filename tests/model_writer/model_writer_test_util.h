// Helpers shared by the model-writer tests: scratch directory, file bytes, vocab path and
// dequantizing a tensor of a GGUF file.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace mw_test {

struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("rf-mw-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    std::string file(const std::string &name) const { return (path / name).string(); }
};

inline std::vector<uint8_t> read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline std::string read_text(const std::string &path) {
    const auto b = read_bytes(path);
    return std::string(b.begin(), b.end());
}

inline void write_text(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

inline std::string test_data_dir() {
    const char *d = std::getenv("RF_TEST_DATA");
    return d ? d : "tests/data";
}

inline std::string llama_vocab() { return test_data_dir() + "/vocab/ggml-vocab-llama-spm.gguf"; }
inline std::string gpt2_vocab() { return test_data_dir() + "/vocab/ggml-vocab-gpt-2.gguf"; }

inline std::vector<float> dequantize_tensor(const rf::gguf::File &f, const std::string &name) {
    const rf::gguf::TensorInfo *t = f.find_tensor(name);
    if (!t) throw std::runtime_error("test: no tensor " + name);
    std::vector<float> out(size_t(t->n_elements()));
    const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
    const size_t row_bytes = rf::row_size(t->type, t->ne[0]);
    for (int64_t r = 0; r < rows; ++r)
        rf::dequantize_row(t->type, f.tensor_data(*t) + size_t(r) * row_bytes,
                           out.data() + size_t(r * t->ne[0]), t->ne[0]);
    return out;
}

} // namespace mw_test
