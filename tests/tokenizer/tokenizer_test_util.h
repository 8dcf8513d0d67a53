// Shared helpers for the tokenizer tests: test data paths and llama.cpp's .inp/.out format.
#pragma once
#include "rocmforge/gguf.h"
#include "rocmforge/tokenizer.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace rf_test {

inline std::string data_path(const std::string &rel) {
    const char *root = std::getenv("RF_TEST_DATA");
    return std::string(root ? root : "tests/data") + "/" + rel;
}

inline std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct VocabCase {
    std::string text;
    std::vector<int32_t> ids;
};

// Like llama.cpp's test-tokenizer-0: strings are separated by "\n__ggml_vocab_test__\n" (so the
// newline before a separator is not part of the string); line i of .out holds string i's ids.
inline std::vector<VocabCase> read_vocab_cases(const std::string &gguf_path) {
    const std::string inp = read_file(gguf_path + ".inp");
    const std::string out = read_file(gguf_path + ".out");
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> texts;
    for (size_t pos = 0; pos < inp.size();) {
        const size_t next = inp.find(sep, pos);
        if (next == std::string::npos) {
            texts.push_back(inp.substr(pos));
            break;
        }
        texts.push_back(inp.substr(pos, next - pos));
        pos = next + sep.size();
    }
    std::vector<VocabCase> cases;
    std::istringstream lines(out);
    std::string line;
    for (const std::string &t : texts) {
        if (!std::getline(lines, line)) throw std::runtime_error("fewer .out lines than strings");
        VocabCase c{t, {}};
        std::istringstream ids(line);
        int32_t id;
        while (ids >> id) c.ids.push_back(id);
        cases.push_back(std::move(c));
    }
    return cases;
}

inline std::unique_ptr<rf::Tokenizer> load_tokenizer(const std::string &gguf_path) {
    auto file = rf::gguf::File::open(gguf_path);
    return rf::Tokenizer::from_gguf(*file);
}

} // namespace rf_test
