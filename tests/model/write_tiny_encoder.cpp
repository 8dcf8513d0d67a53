// Writes the tiny bert / nomic-bert test file (tiny_encoder.h) to argv[2]: the end-to-end CLI and
// server checks embed with it. Usage: write_tiny_encoder bert|nomic-bert OUT.gguf
#include <cstdio>
#include <string>

#include "tiny_encoder.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: write_tiny_encoder bert|nomic-bert OUT.gguf\n");
        return 2;
    }
    rf_test::TinyEncoderSpec spec;
    spec.arch = argv[1];
    if (spec.arch != "bert" && spec.arch != "nomic-bert") {
        std::fprintf(stderr, "write_tiny_encoder: unknown architecture '%s'\n", argv[1]);
        return 2;
    }
    if (spec.arch == "nomic-bert") spec.pooling_type = 1;
    rf_test::write_tiny_encoder(argv[2], spec);
    return 0;
}
