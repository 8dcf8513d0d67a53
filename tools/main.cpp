// rocmforge: thin command dispatcher. Each subcommand lives in its own cmd_*.cpp.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/log.h"

#include "cmd_info.h"
#if __has_include("cmd_inspect.h")
#include "cmd_inspect.h"
#define RF_HAVE_INSPECT 1
#endif
#if __has_include("cmd_dump_tensor.h")
#include "cmd_dump_tensor.h"
#define RF_HAVE_DUMP 1
#endif
#if __has_include("cmd_quantize.h")
#include "cmd_quantize.h"
#define RF_HAVE_QUANTIZE 1
#endif
#if __has_include("cmd_mkmodel.h")
#include "cmd_mkmodel.h"
#define RF_HAVE_MKMODEL 1
#endif
#if __has_include("cmd_tokenize.h")
#include "cmd_tokenize.h"
#define RF_HAVE_TOKENIZE 1
#endif
#if __has_include("cmd_generate.h")
#include "cmd_generate.h"
#define RF_HAVE_GENERATE 1
#endif
#if __has_include("cmd_perplexity.h")
#include "cmd_perplexity.h"
#define RF_HAVE_PERPLEXITY 1
#endif
#if __has_include("cmd_bench.h")
#include "cmd_bench.h"
#define RF_HAVE_BENCH 1
#endif
#if __has_include("cmd_import.h")
#include "cmd_import.h"
#define RF_HAVE_IMPORT 1
#endif
#if __has_include("cmd_ab.h")
#include "cmd_ab.h"
#define RF_HAVE_AB 1
#endif

namespace {

struct Command {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
};

const Command kCommands[] = {
#ifdef RF_HAVE_GENERATE
    {"generate", cmd_generate, "generate text (default model when no -m)"},
#endif
#ifdef RF_HAVE_TOKENIZE
    {"tokenize", cmd_tokenize, "print the token ids of a text"},
#endif
#ifdef RF_HAVE_PERPLEXITY
    {"perplexity", cmd_perplexity, "perplexity of a text file (llama.cpp's definition)"},
#endif
#ifdef RF_HAVE_BENCH
    {"bench", cmd_bench, "prompt and generation speed (llama-bench style)"},
#endif
#ifdef RF_HAVE_AB
    {"ab", cmd_ab, "A/B comparison of two backends or configs"},
#endif
    {"info", cmd_info, "plugins, devices and archs, config in force"},
#ifdef RF_HAVE_INSPECT
    {"inspect", cmd_inspect, "GGUF metadata and tensor table"},
#endif
#ifdef RF_HAVE_DUMP
    {"dump-tensor", cmd_dump_tensor, "write a tensor dequantized to raw little-endian float32"},
#endif
#ifdef RF_HAVE_QUANTIZE
    {"quantize", cmd_quantize, "quantize a GGUF model (Q4_K_M, Q8_0, ...)"},
#endif
#ifdef RF_HAVE_IMPORT
    {"import", cmd_import, "GGUF from a model trained by tools/train"},
#endif
#ifdef RF_HAVE_MKMODEL
    {"mkmodel", cmd_mkmodel, "write a seeded random-weight model of a real shape"},
#endif
};

void usage(FILE *out) {
    std::fprintf(out, "usage: rocmforge [-v|-vv] COMMAND [options]   (COMMAND --help for its options)\n\ncommands:\n");
    for (const auto &c : kCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
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
