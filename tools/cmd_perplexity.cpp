// rocmforge perplexity: llama.cpp's perplexity (tools/perplexity/perplexity.cpp) exactly:
// the text is tokenized once (BOS added when the vocab wants it), cut into chunks of n_ctx
// tokens whose first token is replaced by BOS, and only the second half of each chunk is
// scored: token first+i+1 from the logits at position first+i, first = n_ctx/2. Logits are
// float, the log-softmax sums exp() in double, as llama.cpp's log_softmax().
#include "cmd_perplexity.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common_args.h"
#include "rocmforge/error.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge perplexity -m MODEL -f FILE [-c N] [-b N] [--chunks N] [options]\n\n"
    "Perplexity of a text file with llama.cpp's definition: chunks of -c tokens (default 512),\n"
    "the second half of each chunk scored. Prints [1]ppl,[2]ppl,... then\n"
    "`Final estimate: PPL = X +/- Y`.\n\n"
    "  -f, --file FILE    text to evaluate\n"
    "  --chunks N         evaluate at most N chunks (default: all)\n";

// -log p(token) from one row of logits.
double nll_of(const float *logits, int64_t n_vocab, int32_t token) {
    float max_logit = logits[0];
    for (int64_t i = 1; i < n_vocab; ++i) max_logit = std::max(max_logit, logits[i]);
    double sum_exp = 0.0;
    for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit);
    return -(logits[token] - max_logit - std::log(sum_exp));
}

} // namespace
} // namespace rf

int cmd_perplexity(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    margs.n_ctx = 512;
    std::string file;
    int64_t max_chunks = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf("%s\nmodel and context:\n%s\nruntime:\n%s", kUsage, ModelArgs::help(), RuntimeArgs::help());
            return 0;
        }
        if (margs.parse(argc, argv, i)) continue;
        if (a == "-f" || a == "--file") file = take_value(argc, argv, i);
        else if (a == "--chunks") max_chunks = parse_int_arg(a, take_value(argc, argv, i), 1, INT32_MAX);
        else throw UsageError("perplexity: unknown option '" + a + "' (see rocmforge perplexity --help)");
    }
    if (file.empty()) throw UsageError("perplexity: -f FILE is required");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UsageError("perplexity: cannot read '" + file + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();

    LoadedModel lm = load_model(margs);
    const Tokenizer &tok = *lm.tokenizer;
    const int64_t n_ctx = margs.n_ctx;
    const int64_t n_vocab = lm.model->hparams().n_vocab;
    const bool add_bos = tok.add_bos_default();
    if (add_bos && tok.bos() == Tokenizer::kNoToken) throw Error(lm.path + ": the vocabulary asks for BOS but has none");

    std::fprintf(stderr, "perplexity: tokenizing the input ..\n");
    std::vector<int32_t> tokens = tok.encode(text, /*add_special=*/true, /*parse_special=*/false);
    std::fprintf(stderr, "perplexity: %zu tokens\n", tokens.size());
    if ((int64_t)tokens.size() < 2 * n_ctx)
        throw Error("perplexity: you need at least " + std::to_string(2 * n_ctx) +
                    " tokens to evaluate perplexity with a context of " + std::to_string(n_ctx) + " (the file has " +
                    std::to_string(tokens.size()) + ")");
    int64_t n_chunk = (int64_t)tokens.size() / n_ctx;
    if (max_chunks > 0) n_chunk = std::min(n_chunk, max_chunks);

    ContextParams cp = margs.context_params(1);
    cp.n_batch = std::min(cp.n_batch, n_ctx);
    InferenceContext ctx(*lm.model, *lm.runtime, cp);
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    std::fprintf(stderr, "perplexity: calculating perplexity over %lld chunks, n_ctx=%lld, batch_size=%lld\n",
                 (long long)n_chunk, (long long)n_ctx, (long long)cp.n_batch);

    const int64_t first = n_ctx / 2;
    double nll = 0.0, nll2 = 0.0;
    int64_t count = 0;
    lm.runtime->phase("perplexity");
    const auto t_start = std::chrono::steady_clock::now();
    for (int64_t c = 0; c < n_chunk; ++c) {
        const int64_t start = c * n_ctx;
        ctx.clear_sequence(0);
        Batch batch;
        for (int64_t j = 0; j < n_ctx; ++j) {
            int32_t t = tokens[(size_t)(start + j)];
            if (j == 0 && add_bos) t = tok.bos();
            // Rows first .. n_ctx-2 predict the scored tokens first+1 .. n_ctx-1.
            batch.add(t, 0, j >= first && j < n_ctx - 1);
        }
        const std::vector<float> &logits = ctx.decode(batch);
        for (int64_t i = 0; i < n_ctx - 1 - first; ++i) {
            const double v = nll_of(logits.data() + (size_t)i * (size_t)n_vocab, n_vocab,
                                    tokens[(size_t)(start + first + i + 1)]);
            nll += v;
            nll2 += v * v;
        }
        count += n_ctx - 1 - first;
        if (c == 0) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
            std::fprintf(stderr, "perplexity: %.2f seconds per pass - ETA %.2f minutes\n", s, s * (double)n_chunk / 60.0);
        }
        std::printf("[%lld]%.4lf,", (long long)(c + 1), std::exp(nll / (double)count));
        std::fflush(stdout);
    }
    std::printf("\n");

    nll2 /= (double)count;
    nll /= (double)count;
    const double ppl = std::exp(nll);
    nll2 -= nll * nll;
    if (nll2 > 0) {
        nll2 = std::sqrt(nll2 / (double)(count - 1));
        std::printf("Final estimate: PPL = %.4lf +/- %.5lf\n", ppl, nll2 * ppl);
    } else {
        std::printf("Unexpected negative standard deviation of log(prob)\n");
    }
    std::fflush(stdout);
    return 0;
}
