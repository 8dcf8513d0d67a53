// rocmforge imatrix: llama.cpp's importance matrix (tools/imatrix): the text is tokenized once
// (BOS added when the vocab wants it) and run in chunks of n_ctx tokens whose first token is
// replaced by BOS; for every MATMUL with a blk.* weight and at least 16 rows of input, the sums
// of x and x^2 of each input column are accumulated in float, row by row, and the row count
// (llama.cpp skips output.weight and small batches the same way); for every MATMUL_ID the
// same per expert, in llama.cpp's order (expert, then slot, then token). Written as the GGUF
// imatrix llama.cpp writes; `rocmforge quantize --imatrix` and llama-quantize read it.
#include "cmd_imatrix.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "common_args.h"
#include "text_file.h"
#include "rocmforge/error.h"
#include "rocmforge/imatrix.h"
#include "rocmforge/output_path.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge imatrix -m MODEL -f TEXT -o IMATRIX.gguf [-c N] [--chunks N] [options]\n\n"
    "The importance matrix of a model on a text, as llama.cpp's llama-imatrix computes it: the\n"
    "text runs in chunks of -c tokens (default 512) on the CPU or GPU backend, and for every\n"
    "blk.* weight the sums of squared activations entering it are collected. Written in the GGUF\n"
    "imatrix format (general.type = imatrix, <weight>.in_sum2 / .in_sum / .counts) that\n"
    "`rocmforge quantize --imatrix` and llama-quantize read; expert weights get one matrix\n"
    "per expert.\n\n"
    "  -f, --file FILE     calibration text\n"
    "  -o, --output FILE   output imatrix (appears only once complete)\n"
    "  --chunks N          process at most N chunks (default: all)\n";

// Per weight: float sums as llama.cpp's Stats accumulates them ([n_mat][n_cols]), and the
// rows each matrix saw.
struct Stats {
    std::vector<float> sum, sum2;
    std::vector<int64_t> rows;
};

void add_row(Stats &s, size_t at, const float *x, int64_t n_cols) {
    for (int64_t j = 0; j < n_cols; ++j) {
        s.sum[at + size_t(j)] += x[j];
        s.sum2[at + size_t(j)] += x[j] * x[j];
    }
}

} // namespace
} // namespace rf

int cmd_imatrix(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    margs.n_ctx = 512;
    std::string file, out;
    int64_t max_chunks = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage);
            return 0;
        }
        if (margs.parse(argc, argv, i)) continue;
        if (a == "-f" || a == "--file") file = take_value(argc, argv, i);
        else if (a == "-o" || a == "--output") out = take_value(argc, argv, i);
        else if (a == "--chunks") max_chunks = parse_int_arg(a, take_value(argc, argv, i), 1, INT32_MAX);
        else throw UsageError("imatrix: unknown option '" + a + "' (see rocmforge imatrix --help)");
    }
    if (file.empty()) throw UsageError("imatrix: -f TEXT is required");
    if (out.empty()) throw UsageError("imatrix: -o IMATRIX is required");
    if (margs.ctx_given && margs.n_ctx < 16)
        throw UsageError("imatrix: -c " + std::to_string(margs.n_ctx) +
                         " is too small: llama.cpp collects only products of at least 16 tokens");
    check_output_path(out, "imatrix -o");
    const std::string text = read_text_file(file, "imatrix -f");

    LoadedModel lm = load_model(margs);
    margs.fit_context(lm.model->hparams());
    const Tokenizer &tok = *lm.tokenizer;
    const int64_t n_ctx = margs.n_ctx;
    const bool add_bos = tok.add_bos_default();
    if (add_bos && tok.bos() == Tokenizer::kNoToken) throw Error(lm.path + ": the vocabulary asks for BOS but has none");

    std::vector<int32_t> tokens = tok.encode(text, /*add_special=*/true, /*parse_special=*/false);
    std::fprintf(stderr, "imatrix: %zu tokens\n", tokens.size());
    if ((int64_t)tokens.size() < n_ctx)
        throw Error("imatrix: the text has " + std::to_string(tokens.size()) + " tokens, fewer than one chunk of -c " +
                    std::to_string(n_ctx));
    int64_t n_chunk = (int64_t)tokens.size() / n_ctx;
    if (max_chunks > 0) n_chunk = std::min(n_chunk, max_chunks);

    ContextParams cp = margs.context_params(1);
    cp.n_batch = n_ctx; // one graph per chunk, as llama-imatrix's n_batch = min(n_batch, n_ctx)
    InferenceContext ctx(*lm.model, *lm.runtime, cp);

    std::unordered_map<std::string, Stats> stats;
    ctx.set_matmul_input_observer([&](const std::string &w, const InferenceContext::MatmulInput &in) {
        if (!in.ids && (w.compare(0, 4, "blk.") != 0 || in.n_rows < 16)) return;
        const int64_t n_mat = in.ids ? in.n_expert : 1;
        Stats &s = stats[w];
        if (s.sum2.empty()) {
            s.sum.assign(size_t(in.n_cols * n_mat), 0.0f);
            s.sum2.assign(size_t(in.n_cols * n_mat), 0.0f);
            s.rows.assign(size_t(n_mat), 0);
        } else if (s.sum2.size() != size_t(in.n_cols * n_mat)) {
            throw Error("imatrix: " + w + " saw inputs of " + std::to_string(s.sum2.size()) + " and " +
                        std::to_string(in.n_cols * n_mat) + " values");
        }
        if (!in.ids) {
            for (int64_t r = 0; r < in.n_rows; ++r) add_row(s, 0, in.x + r * in.n_cols, in.n_cols);
            s.rows[0] += in.n_rows;
            return;
        }
        for (int64_t ex = 0; ex < in.n_expert; ++ex)
            for (int64_t k = 0; k < in.n_ids; ++k)
                for (int64_t t = 0; t < in.n_tokens; ++t) {
                    if (in.ids[k + in.n_ids * t] != ex) continue;
                    add_row(s, size_t(ex * in.n_cols), in.x + (t * in.x_per_token + k % in.x_per_token) * in.n_cols,
                            in.n_cols);
                    ++s.rows[size_t(ex)];
                }
    });

    std::fprintf(stderr, "imatrix: %lld chunks of %lld tokens\n", (long long)n_chunk, (long long)n_ctx);
    const auto t_start = std::chrono::steady_clock::now();
    for (int64_t c = 0; c < n_chunk; ++c) {
        ctx.clear_sequence(0);
        Batch batch;
        for (int64_t i = 0; i < n_ctx; ++i) {
            int32_t t = tokens[size_t(c * n_ctx + i)];
            if (i == 0 && add_bos) t = tok.bos();
            // Every row an output, as llama-imatrix asks for all logits: otherwise the last
            // layer's attention output and FFN would see only the output rows.
            batch.add(t, 0, true);
        }
        ctx.decode(batch);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
        std::fprintf(stderr, "imatrix: chunk %lld/%lld, %.1f s\n", (long long)(c + 1), (long long)n_chunk, s);
    }
    ctx.set_matmul_input_observer({});
    if (stats.empty()) throw Error("imatrix: no blk.* weight products were observed");

    Imatrix m;
    m.datasets.push_back(file);
    m.chunk_count = uint32_t(n_chunk);
    m.chunk_size = uint32_t(n_ctx);
    for (auto &[name, s] : stats) {
        ImatrixEntry e;
        e.n_cols = int64_t(s.sum2.size() / s.rows.size());
        e.sum = std::move(s.sum);
        e.sum2 = std::move(s.sum2);
        for (int64_t r : s.rows) e.counts.push_back(float(r));
        m.entries.emplace(name, std::move(e));
    }
    write_imatrix(m, out);
    std::printf("imatrix: %zu entries from %lld chunks -> %s\n", m.entries.size(), (long long)n_chunk, out.c_str());
    return 0;
}
