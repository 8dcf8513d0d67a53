#include "cmd_dump_tensor.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/atomic_file.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace {

static_assert(std::endian::native == std::endian::little,
              "dump-tensor writes the host's float32 bytes as little-endian");

constexpr const char *kUsageLine = "usage: rocmforge dump-tensor MODEL TENSOR -o FILE\n";
const std::string kUsage = std::string(kUsageLine) +
    "\n"
    "Writes tensor TENSOR of the GGUF file MODEL to FILE, dequantized to raw little-endian\n"
    "float32, row-major in GGUF order (ne[0] varies fastest). No header. FILE is written\n"
    "atomically (FILE.tmp, then renamed).\n"
    "\n"
    "  -o, --output FILE  output file (required)\n"
    "  -h, --help         show this help\n";

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}

// Up to five tensor names that contain `wanted` or are within a few edits of it.
std::vector<std::string> close_names(const rf::gguf::File &f, const std::string &wanted) {
    std::vector<std::pair<size_t, std::string>> scored;
    const size_t max_edits = std::max<size_t>(3, wanted.size() / 3);
    for (const auto &t : f.tensors()) {
        const bool contains = !wanted.empty() && (t.name.find(wanted) != std::string::npos ||
                                                  wanted.find(t.name) != std::string::npos);
        const size_t d = edit_distance(wanted, t.name);
        if (contains || d <= max_edits) scored.emplace_back(contains ? 0 : d, t.name);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (size_t k = 0; k < scored.size() && k < 5; ++k) out.push_back(scored[k].second);
    return out;
}

[[noreturn]] void unknown_tensor(const rf::gguf::File &f, const std::string &name) {
    std::string msg = f.path() + ": no tensor named '" + name + "'";
    const auto close = close_names(f, name);
    if (!close.empty()) {
        msg += "; close names:";
        for (const auto &c : close) msg += " '" + c + "'";
    } else {
        msg += " (the file has " + std::to_string(f.tensors().size()) +
               " tensors; `rocmforge inspect` lists them)";
    }
    throw rf::Error(msg);
}

// Usage errors print the message and the one-line synopsis to stderr; exit code 2.
int usage_error(const std::string &msg) {
    std::fprintf(stderr, "dump-tensor: %s\n%s(run `rocmforge dump-tensor --help` for details)\n",
                 msg.c_str(), kUsageLine);
    return 2;
}

} // namespace

int cmd_dump_tensor(int argc, char **argv) {
    std::vector<std::string> positional;
    std::string output;
    for (int k = 1; k < argc; ++k) {
        const std::string_view arg = argv[k];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage.c_str(), stdout);
            return 0;
        }
        if (arg == "-o" || arg == "--output") {
            if (k + 1 >= argc) return usage_error(std::string(arg) + " needs a file name");
            output = argv[++k];
        } else if (arg.rfind("--output=", 0) == 0) {
            output = arg.substr(9);
        } else if (arg.size() > 1 && arg[0] == '-') {
            return usage_error("unknown option '" + std::string(arg) + "'");
        } else {
            positional.emplace_back(arg);
        }
    }
    if (positional.size() != 2) return usage_error("expected MODEL and TENSOR");
    if (output.empty()) return usage_error("missing -o FILE");

    const auto file = rf::gguf::File::open(positional[0]);
    const rf::gguf::TensorInfo *t = file->find_tensor(positional[1]);
    if (!t) unknown_tensor(*file, positional[1]);

    // Row by row, so memory stays at one row however large the tensor is.
    const int64_t row_elems = t->ne[0];
    const int64_t rows = t->ne[1] * t->ne[2] * t->ne[3];
    const size_t row_bytes = rf::row_size(t->type, row_elems);
    const uint8_t *src = file->tensor_data(*t);
    std::vector<float> row(static_cast<size_t>(row_elems));
    rf::AtomicFile out(output);
    for (int64_t r = 0; r < rows; ++r) {
        rf::dequantize_row(t->type, src + size_t(r) * row_bytes, row.data(), row_elems);
        out.write(row.data(), row.size() * sizeof(float));
    }
    out.commit();

    std::string shape;
    for (int d = 0; d < t->n_dims; ++d) shape += (d ? ", " : "") + std::to_string(t->ne[d]);
    std::printf("wrote %s (%s, shape [%s]): %lld float32 values, %llu bytes to %s\n",
                t->name.c_str(), rf::type_name(t->type), shape.c_str(),
                (long long)t->n_elements(), (unsigned long long)out.bytes_written(),
                output.c_str());
    return 0;
}
