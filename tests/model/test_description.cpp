// The model label of generate/bench ("llama 1M Q4_K_M"): general.file_type when the file has a
// known one, else the type holding most of the matrix bytes.
#include <catch2/catch.hpp>

#include <string>

#include "rocmforge/model.h"
#include "rocmforge/quant_mix.h"
#include "rocmforge/types.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

std::string label_of(int64_t file_type) {
    TinySpec spec;
    spec.matrix_type = RF_TYPE_F16; // the bytes say F16 whatever file_type claims
    spec.file_type = file_type;
    const std::string path = temp_path("label.gguf");
    write_tiny_model(path, spec);
    auto rt = cpu_runtime();
    return Model::load(path, *rt)->format_label();
}

} // namespace

TEST_CASE("format label: general.file_type names the mix", "[model]") {
    CHECK(label_of(15) == "Q4_K_M"); // a Q4_K_M file whose Q6_K tensors may hold the most bytes
    CHECK(label_of(2) == "Q4_0");
    CHECK(label_of(7) == "Q8_0");
    CHECK(label_of(17) == "Q5_K_M");
    CHECK(label_of(18) == "Q6_K");
    CHECK(label_of(1024 + 15) == "Q4_K_M"); // LLAMA_FTYPE_GUESSED flag
    CHECK(label_of(30) == "IQ4_XS");        // a llama.cpp type without a ROCmForge mix
}

TEST_CASE("format label: no or unknown general.file_type falls back to the largest type", "[model]") {
    CHECK(label_of(-1) == "F16");
    CHECK(label_of(999) == "F16");
}

TEST_CASE("llama_ftype_name follows llama.cpp's numbering", "[model]") {
    CHECK(llama_ftype_name(0) == "F32");
    CHECK(llama_ftype_name(1) == "F16");
    CHECK(llama_ftype_name(32) == "BF16");
    CHECK(llama_ftype_name(10) == "Q2_K");
    CHECK(llama_ftype_name(14) == "Q4_K_S");
    CHECK(llama_ftype_name(21) == "Q2_K_S");
    CHECK(llama_ftype_name(5).empty()); // removed from llama.cpp (Q4_2)
    CHECK(llama_ftype_name(-3).empty());
}
