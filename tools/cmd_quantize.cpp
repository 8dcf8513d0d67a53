#include "cmd_quantize.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/quant_mix.h"
#include "rocmforge/types.h"

namespace {

const char *kUsageLine =
    "usage: rocmforge quantize IN.gguf OUT.gguf TYPE [--imatrix FILE] [--pure] [-t N] [--allow-requantize]\n"
    "                          [--output-tensor-type T] [--token-embedding-type T] [--overwrite-input]\n";

std::string mix_list() {
    std::string s;
    for (const auto &n : rf::mix_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
}

std::string usage_text() {
    return std::string(kUsageLine) +
           "\n"
           "Re-encodes the weights of a GGUF model. TYPE is a llama.cpp file type (mix) such as\n"
           "Q4_K_M: most tensors get its base type, some (output.weight, attn_v, ffn_down on\n"
           "selected layers) get more bits, exactly as llama-quantize picks them. 1-D tensors\n"
           "(norms, biases) are copied unchanged. Metadata is copied; general.file_type and\n"
           "general.quantization_version are set. OUT appears only once complete.\n"
           "\n"
           "TYPE (case-insensitive): " + mix_list() + "\n"
           "IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M and IQ3_XXS need --imatrix (llama-quantize refuses\n"
           "them without one too).\n"
           "\n"
           "  --imatrix FILE            importance matrix (rocmforge imatrix or llama-imatrix; GGUF or .dat):\n"
           "                            llama.cpp's with-imatrix mix rules, and every i-quant, k-quant and\n"
           "                            Q4_0/Q4_1/Q5_0/Q5_1 tensor found in it is quantized with its\n"
           "                            importance weights, as ggml does (Q8_0 and TQ* ignore them)\n"
           "  --pure                    base type for every quantizable tensor (no mix rules)\n"
           "  -t, --threads N           worker threads (default: all hardware threads)\n"
           "  --allow-requantize        accept already-quantized input tensors\n"
           "  --output-tensor-type T    element type for output.weight (q8_0, q6_K, f16, ...)\n"
           "  --token-embedding-type T  element type for token_embd.weight\n"
           "  --overwrite-input         allow OUT to be IN (or a link to it): replaces the original\n"
           "  -h, --help                show this help\n";
}

int usage_error(const std::string &msg) {
    std::fprintf(stderr, "quantize: %s\n%s(run `rocmforge quantize --help` for details)\n",
                 msg.c_str(), kUsageLine);
    return rf::kExitUsage;
}

// Element type names for the override options: every type a row can be quantized to.
std::string element_type_list() {
    std::string s;
    for (int id = 0; id < 256; ++id)
        if (rf::type_is_known(id) && rf::can_quantize(id) && id != RF_TYPE_Q8_K)
            s += (s.empty() ? "" : ", ") + std::string(rf::type_name(id));
    return s;
}

bool parse_element_type(std::string_view name, int *out) {
    const int id = rf::type_from_name(name);
    if (id < 0 || !rf::can_quantize(id) || id == RF_TYPE_Q8_K) return false;
    *out = id;
    return true;
}

bool parse_threads(std::string_view s, int *out) {
    try {
        size_t used = 0;
        const int v = std::stoi(std::string(s), &used);
        if (used != s.size() || v <= 0) return false;
        *out = v;
        return true;
    } catch (const std::exception &) {
        return false;
    }
}

} // namespace

int cmd_quantize(int argc, char **argv) {
    rf::QuantizeOptions opt;
    std::vector<std::string> positional;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        const bool has_value = k + 1 < argc;
        if (arg == "-h" || arg == "--help") {
            std::fputs(usage_text().c_str(), stdout);
            return 0;
        } else if (arg == "--pure") {
            opt.pure = true;
        } else if (arg == "--allow-requantize") {
            opt.allow_requantize = true;
        } else if (arg == "--overwrite-input") {
            opt.overwrite_input = true;
        } else if (arg == "--imatrix") {
            if (!has_value) return usage_error("--imatrix needs a file");
            opt.imatrix_path = argv[++k];
            if (opt.imatrix_path.empty()) return usage_error("--imatrix needs a file");
        } else if (arg == "-t" || arg == "--threads") {
            if (!has_value) return usage_error(std::string(arg) + " needs a value");
            if (!parse_threads(argv[++k], &opt.n_threads))
                return usage_error("bad thread count '" + std::string(argv[k]) + "'");
        } else if (arg == "--output-tensor-type" || arg == "--token-embedding-type") {
            if (!has_value) return usage_error(std::string(arg) + " needs a value");
            int *dst = arg == "--output-tensor-type" ? &opt.output_tensor_type
                                                     : &opt.token_embedding_type;
            if (!parse_element_type(argv[++k], dst))
                return usage_error("unknown element type '" + std::string(argv[k]) + "' for " +
                                   std::string(arg) + " (valid: " + element_type_list() + ")");
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option '" + std::string(arg) + "'");
        } else {
            positional.emplace_back(arg);
        }
    }
    if (positional.size() != 3)
        return usage_error(positional.size() < 3 ? "expected IN OUT TYPE"
                                                 : "unexpected argument '" + positional[3] + "'");
    opt.input_path = positional[0];
    opt.output_path = positional[1];
    if (!rf::mix_from_name(positional[2], &opt.mix))
        return usage_error("unknown quantization type '" + positional[2] + "' (valid: " +
                           mix_list() + ")");
    if (rf::mix_needs_imatrix(positional[2]) && opt.imatrix_path.empty())
        return usage_error("quantization type '" + positional[2] +
                           "' needs an importance matrix: pass --imatrix FILE (rocmforge imatrix -m MODEL -f TEXT -o FILE "
                           "makes one)");

    std::printf("quantize: %s -> %s as %s\n", opt.input_path.c_str(), opt.output_path.c_str(),
                rf::mix_name(opt.mix));
    if (!opt.imatrix_path.empty()) std::printf("quantize: importance matrix %s\n", opt.imatrix_path.c_str());
    opt.on_note = [](const std::string &note) { std::printf("quantize: note: %s\n", note.c_str()); };
    opt.on_tensor = [](const rf::TensorWriteEvent &ev) {
        std::printf("%s\n", rf::describe_tensor_event(ev).c_str());
        std::fflush(stdout);
    };
    const auto start = std::chrono::steady_clock::now();
    const rf::ModelWriteTotals totals = rf::quantize_model(opt);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double bpw = totals.n_params ? double(totals.dst_bytes) * 8.0 / double(totals.n_params) : 0;
    std::printf("quantize: %zu tensors, %lld parameters, %s -> %s (%.2f bits per weight), %.1f s\n",
                totals.n_tensors, static_cast<long long>(totals.n_params),
                rf::format_mib(totals.src_bytes).c_str(), rf::format_mib(totals.dst_bytes).c_str(),
                bpw, seconds);
    return 0;
}
