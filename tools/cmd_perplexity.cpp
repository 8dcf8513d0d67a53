// rocmforge perplexity: llama.cpp's perplexity (tools/perplexity/perplexity.cpp) exactly:
// the text is tokenized once (BOS added when the vocab wants it), cut into chunks of n_ctx
// tokens whose first token is replaced by BOS, and only the second half of each chunk is
// scored: token first+i+1 from the logits at position first+i, first = n_ctx/2. Logits are
// float, the log-softmax sums exp() in double, as llama.cpp's log_softmax().
#include "cmd_perplexity.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common_args.h"
#include "text_file.h"
#include "rocmforge/error.h"
#include "rocmforge/perplexity.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge perplexity -m MODEL -f FILE [-c N] [-b N] [--chunks N] [options]\n\n"
    "Perplexity of a text file with llama.cpp's definition: chunks of -c tokens (default 512),\n"
    "the second half of each chunk scored. Prints [1]ppl,[2]ppl,... then\n"
    "`Final estimate: PPL = X +/- Y`.\n\n"
    "  -f, --file FILE    text to evaluate\n"
    "  --chunks N         evaluate at most N chunks (default: all)\n";

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
            print_model_command_help(kUsage);
            return 0;
        }
        if (margs.parse(argc, argv, i)) continue;
        if (a == "-f" || a == "--file") file = take_value(argc, argv, i);
        else if (a == "--chunks") max_chunks = parse_int_arg(a, take_value(argc, argv, i), 1, INT32_MAX);
        else throw UsageError("perplexity: unknown option '" + a + "' (see rocmforge perplexity --help)");
    }
    if (file.empty()) throw UsageError("perplexity: -f FILE is required");
    // Each chunk's second half is scored: with fewer than 3 tokens there is nothing to score.
    if (margs.ctx_given && margs.n_ctx < 3)
        throw UsageError("perplexity: -c " + std::to_string(margs.n_ctx) +
                         " is too small: the second half of each chunk of -c tokens is scored, so -c must be at "
                         "least 3 (llama.cpp's default is 512)");
    const std::string text = read_text_file(file, "perplexity -f");

    LoadedModel lm = load_model(margs);
    margs.fit_context(lm.model->hparams());
    const Tokenizer &tok = *lm.tokenizer;
    const int64_t n_ctx = margs.n_ctx;
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

    PerplexityAccumulator acc;
    const int32_t bos = add_bos ? tok.bos() : -1;
    lm.runtime->phase("perplexity");
    const auto t_start = std::chrono::steady_clock::now();
    for (int64_t c = 0; c < n_chunk; ++c) {
        score_perplexity_chunk(ctx, tokens, c, n_ctx, bos, acc);
        if (c == 0) {
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
            std::fprintf(stderr, "perplexity: %.2f seconds per pass - ETA %.2f minutes\n", s, s * (double)n_chunk / 60.0);
        }
        std::printf("[%lld]%.4lf,", (long long)(c + 1), acc.ppl());
        std::fflush(stdout);
    }
    std::printf("\n");
    const double err = acc.ppl_error();
    if (err >= 0) std::printf("Final estimate: PPL = %.4lf +/- %.5lf\n", acc.ppl(), err);
    else std::printf("Unexpected negative standard deviation of log(prob)\n");
    std::fflush(stdout);
    return 0;
}
