// rocmforge: thin command dispatcher. Each subcommand lives in its own cmd_*.cpp.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/log.h"

#include "cmd_info.h"
#include "cmd_inspect.h"
#include "cmd_dump_tensor.h"
#include "cmd_quantize.h"
#include "cmd_mkmodel.h"
#include "cmd_tokenize.h"
#include "cmd_template.h"
#include "cmd_generate.h"
#include "cmd_imatrix.h"
#include "cmd_perplexity.h"
#include "cmd_embed.h"
#include "cmd_bench.h"
#include "cmd_bench_inference.h"
#include "cmd_bench_memory.h"
#include "cmd_import.h"
#include "cmd_ab.h"
#include "serve/cmd_serve.h"

namespace {

struct Command {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
};

const Command kCommands[] = {
    {"generate", cmd_generate, "generate text (default model when no -m)"},
    {"tokenize", cmd_tokenize, "print the token ids of a text"},
    {"template", cmd_template, "print the prompt the chat template makes of a conversation"},
    {"imatrix", cmd_imatrix, "importance matrix of a model on a text (llama.cpp's imatrix)"},
    {"perplexity", cmd_perplexity, "perplexity of a text file (llama.cpp's definition)"},
    {"embed", cmd_embed, "the embedding of a text as JSON (pooled final hidden states)"},
    {"bench", cmd_bench, "prompt and generation speed (llama-bench style)"},
    {"bench-inference", cmd_bench_inference, "time to first token; generation speed with 1/4/8 sequences"},
    {"bench-memory", cmd_bench_memory, "KV bytes per token, memory per backend, KV page-pool fragmentation"},
    {"serve", cmd_serve, "OpenAI-compatible HTTP server with continuous batching"},
    {"ab", cmd_ab, "A/B comparison of two backends or configs"},
    {"info", cmd_info, "plugins, devices and archs, config in force"},
    {"inspect", cmd_inspect, "GGUF metadata and tensor table"},
    {"dump-tensor", cmd_dump_tensor, "write a tensor dequantized to raw little-endian float32"},
    {"quantize", cmd_quantize, "quantize a GGUF model (Q4_K_M, Q8_0, ...)"},
    {"import", cmd_import, "GGUF from a model trained by tools/train"},
    {"mkmodel", cmd_mkmodel, "write a seeded random-weight model of a real shape"},
};

void usage(FILE *out) {
    std::fprintf(out, "usage: rocmforge [-v|-vv] COMMAND [options]   (COMMAND --help for its options)\n\ncommands:\n");
    for (const auto &c : kCommands) std::fprintf(out, "  %-16s %s\n", c.name, c.summary);
    std::fprintf(out, "\nenvironment: ROCMFORGE_LOG=debug, ROCMFORGE_CONFIG=FILE, ROCMFORGE_PLUGIN_PATH=DIR:DIR\n");
}

} // namespace

int main(int argc, char **argv) {
    // -v / -vv may appear anywhere; strip them before the command sees its options.
    int verbosity = 0;
    std::vector<char *> args;
    for (int i = 0; i < argc; ++i) {
        if (i > 0 && (!std::strcmp(argv[i], "-v") || !std::strcmp(argv[i], "--verbose"))) verbosity += 1;
        else if (i > 0 && !std::strcmp(argv[i], "-vv")) verbosity += 2;
        else args.push_back(argv[i]);
    }
    args.push_back(nullptr);
    const int n = static_cast<int>(args.size()) - 1;
    try {
        rf::init_logging(verbosity);
        if (n < 2) {
            usage(stderr);
            return rf::kExitUsage;
        }
        std::string cmd = args[1];
        if (cmd == "-h" || cmd == "--help" || cmd == "help") {
            usage(stdout);
            return 0;
        }
        for (const auto &c : kCommands)
            if (cmd == c.name) return c.fn(n - 1, args.data() + 1);
        std::fprintf(stderr, "error: unknown command '%s'\n\n", cmd.c_str());
        usage(stderr);
        return rf::kExitUsage;
    } catch (const rf::Error &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", e.what());
        return e.exit_code();
    } catch (const std::bad_alloc &) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: out of host memory\n");
        return rf::kExitData;
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", e.what());
        return rf::kExitData;
    }
}
