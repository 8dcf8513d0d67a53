#include "cmd_mkmodel.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/model_shapes.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/quant_mix.h"

namespace {

const char *kUsageLine =
    "usage: rocmforge mkmodel --shape NAME --type TYPE --vocab VOCAB.gguf -o OUT.gguf --seed S\n"
    "                         [-t N] [--ctx N]\n";

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

std::string usage_text() {
    return std::string(kUsageLine) +
           "\n"
           "Writes a model with random weights and the exact tensor names, shapes and metadata\n"
           "llama.cpp's converter writes for the real model; tokenizer.* metadata is copied from\n"
           "VOCAB.gguf (its size replaces the shape's vocab size when they differ). Weights are\n"
           "generated per row and quantized straight to the per-tensor types of the mix, so the\n"
           "whole model is never in memory. The same options give identical bytes.\n"
           "Mixes that need an importance matrix (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ3_XXS)\n"
           "use a synthetic one with every weight 1 (random weights have no activations to measure)\n"
           "and llama-quantize's with-imatrix type rules.\n"
           "\n"
           "  --shape NAME      " + join(rf::model_shape_names()) + "\n"
           "  --type TYPE       quantization mix: " + join(rf::mix_names()) + "\n"
           "  --vocab FILE      GGUF with tokenizer metadata (e.g. tests/data/vocab/*.gguf)\n"
           "  -o, --output FILE output GGUF (appears only once complete)\n"
           "  --seed S          random seed (unsigned 64-bit integer)\n"
           "  -t, --threads N   worker threads (default: all hardware threads)\n"
           "  --ctx N           context_length to record (default: the shape's)\n"
           "  -h, --help        show this help\n";
}

int usage_error(const std::string &msg) {
    std::fprintf(stderr, "mkmodel: %s\n%s(run `rocmforge mkmodel --help` for details)\n",
                 msg.c_str(), kUsageLine);
    return rf::kExitUsage;
}

// Whole-string unsigned parse; false for signs, junk or overflow.
bool parse_u64(std::string_view s, uint64_t *out) {
    if (s.empty() || s.size() > 20) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        if (__builtin_mul_overflow(v, uint64_t(10), &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v))
            return false;
    }
    *out = v;
    return true;
}

} // namespace

int cmd_mkmodel(int argc, char **argv) {
    rf::MakeModelOptions opt;
    std::string type_name;
    bool have_seed = false;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "-h" || arg == "--help") {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        }
        const bool takes_value = arg == "--shape" || arg == "--type" || arg == "--vocab" ||
                                 arg == "-o" || arg == "--output" || arg == "--seed" ||
                                 arg == "-t" || arg == "--threads" || arg == "--ctx";
        if (!takes_value) {
            if (arg.size() > 1 && arg[0] == '-') return usage_error("unknown option '" + std::string(arg) + "'");
            return usage_error("unexpected argument '" + std::string(arg) + "'");
        }
        if (k + 1 >= argc) return usage_error(std::string(arg) + " needs a value");
        const std::string value = argv[++k];
        uint64_t number = 0;
        if (arg == "--shape") {
            opt.shape = value;
        } else if (arg == "--type") {
            type_name = value;
        } else if (arg == "--vocab") {
            opt.vocab_path = value;
        } else if (arg == "-o" || arg == "--output") {
            opt.output_path = value;
        } else if (arg == "--seed") {
            if (!parse_u64(value, &opt.seed)) return usage_error("bad seed '" + value + "'");
            have_seed = true;
        } else if (arg == "-t" || arg == "--threads") {
            if (!parse_u64(value, &number) || number == 0 || number > 1024)
                return usage_error("bad thread count '" + value + "'");
            opt.n_threads = int(number);
        } else { // --ctx
            if (!parse_u64(value, &number) || number == 0 || number > UINT32_MAX)
                return usage_error("bad context length '" + value + "'");
            opt.n_ctx = int64_t(number);
        }
    }
    if (opt.shape.empty()) return usage_error("missing --shape (valid: " + join(rf::model_shape_names()) + ")");
    if (!rf::find_model_shape(opt.shape))
        return usage_error("unknown shape '" + opt.shape + "' (valid: " + join(rf::model_shape_names()) + ")");
    if (type_name.empty()) return usage_error("missing --type");
    if (!rf::mix_from_name(type_name, &opt.mix))
        return usage_error("unknown quantization type '" + type_name + "' (valid: " + join(rf::mix_names()) + ")");
    if (opt.vocab_path.empty()) return usage_error("missing --vocab");
    if (opt.output_path.empty()) return usage_error("missing -o OUT.gguf");
    if (!have_seed) return usage_error("missing --seed");

    std::printf("mkmodel: %s %s seed %llu -> %s\n", opt.shape.c_str(), rf::mix_name(opt.mix),
                static_cast<unsigned long long>(opt.seed), opt.output_path.c_str());
    opt.on_note = [](const std::string &note) { std::printf("mkmodel: note: %s\n", note.c_str()); };
    opt.on_tensor = [](const rf::TensorWriteEvent &ev) {
        std::printf("%s\n", rf::describe_tensor_event(ev).c_str());
        std::fflush(stdout);
    };
    const auto start = std::chrono::steady_clock::now();
    const rf::ModelWriteTotals totals = rf::make_model(opt);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double bpw = totals.n_params ? double(totals.dst_bytes) * 8.0 / double(totals.n_params) : 0;
    std::printf("mkmodel: %zu tensors, %lld parameters, %s (%.2f bits per weight), %.1f s\n",
                totals.n_tensors, static_cast<long long>(totals.n_params),
                rf::format_mib(totals.dst_bytes).c_str(), bpw, seconds);
    return 0;
}
