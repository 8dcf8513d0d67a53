// rocmforge embed: the embedding of one text (core/model/embedding.cpp) as one JSON object on
// stdout, {"model", "pooling", "normalized", "n_tokens", "n_embd", "embedding": [...]}; the
// floats are printed with 9 significant digits, which reads back as the same float32.
#include "cmd_embed.h"

#include <cstdio>
#include <string>
#include <vector>

#include "common_args.h"
#include "text_file.h"
#include "rocmforge/embedding.h"
#include "rocmforge/error.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge embed [-m MODEL] (-p TEXT | -f FILE) [--pooling mean|cls|last] [--no-normalize] [options]\n\n"
    "The embedding of TEXT (or FILE): the hidden states after the model's final norm of every\n"
    "token (BOS added when the vocabulary asks for it), pooled and L2-normalised, printed as JSON.\n\n"
    "  -p, --prompt TEXT  text to embed (taken literally)\n"
    "  -f, --file FILE    file to embed\n"
    "  --pooling P        mean (the mean of all tokens), cls (the first token), last (the last);\n"
    "                     default: the GGUF's <arch>.pooling_type, else mean\n"
    "  --no-normalize     print the pooled vector as it is instead of scaled to length 1\n";

std::string json_string(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') out += '\\', out += (char)c;
        else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            out += b;
        } else
            out += (char)c;
    }
    return out + "\"";
}

} // namespace
} // namespace rf

int cmd_embed(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    std::string prompt, file, pooling_arg;
    bool have_prompt = false, normalize = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage);
            return 0;
        }
        if (margs.parse(argc, argv, i)) continue;
        if (a == "-p" || a == "--prompt") prompt = take_value(argc, argv, i), have_prompt = true;
        else if (a == "-f" || a == "--file") file = take_value(argc, argv, i);
        else if (a == "--pooling") pooling_arg = take_value(argc, argv, i);
        else if (a == "--no-normalize") normalize = false;
        else throw UsageError("embed: unknown option '" + a + "' (see rocmforge embed --help)");
    }
    if (have_prompt == !file.empty()) throw UsageError("embed: give exactly one of -p TEXT and -f FILE");
    EmbedOptions opts;
    opts.normalize = normalize;
    if (!pooling_arg.empty()) opts.pooling = parse_pooling(pooling_arg); // before loading: a typo fails fast
    if (!file.empty()) prompt = read_text_file(file, "embed -f");

    LoadedModel lm = load_model(margs);
    const ModelHparams &hp = lm.model->hparams();
    if (pooling_arg.empty()) opts.pooling = default_pooling(*lm.model);
    const std::vector<int32_t> tokens = lm.tokenizer->encode(prompt, /*add_special=*/true, /*parse_special=*/false);
    if (tokens.empty()) throw UsageError("embed: the text has no tokens (an empty text with a vocabulary that adds no BOS)");
    const int64_t n = (int64_t)tokens.size();
    if (margs.ctx_given && n > margs.n_ctx)
        throw UsageError("embed: the text has " + std::to_string(n) + " tokens, more than the context of " +
                         std::to_string(margs.n_ctx) + " (-c)");
    // Without -c the cache holds just this text, up to the trained context (the positions the
    // model has seen; -c N goes beyond it on purpose).
    if (!margs.ctx_given) {
        if (hp.n_ctx_train > 0 && n > hp.n_ctx_train)
            throw UsageError("embed: the text has " + std::to_string(n) + " tokens, more than the model's trained context of " +
                             std::to_string(hp.n_ctx_train) + " (-c N to run it anyway)");
        margs.n_ctx = n;
    }
    InferenceContext ctx(*lm.model, *lm.runtime, margs.context_params(1));
    lm.runtime->phase("embed");
    const std::vector<float> v = embed_tokens(ctx, tokens, 0, opts);

    std::string out = "{\"model\":" + json_string(lm.path) + ",\"pooling\":\"" + pooling_name(opts.pooling) +
                      "\",\"normalized\":" + (normalize ? "true" : "false") + ",\"n_tokens\":" +
                      std::to_string(tokens.size()) + ",\"n_embd\":" + std::to_string(v.size()) + ",\"embedding\":[";
    char b[32];
    for (size_t i = 0; i < v.size(); ++i) {
        std::snprintf(b, sizeof b, "%s%.9g", i ? "," : "", (double)v[i]);
        out += b;
    }
    out += "]}\n";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    return 0;
}
