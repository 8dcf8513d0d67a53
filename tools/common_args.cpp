#include "common_args.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"

namespace fs = std::filesystem;

namespace rf {

int64_t parse_int_arg(const std::string &opt, const std::string &value, int64_t lo, int64_t hi) {
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || errno == ERANGE)
        throw UsageError("option " + opt + " needs an integer, got '" + value + "'");
    if (v < lo || v > hi)
        throw UsageError("option " + opt + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                         ", got " + value);
    return v;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

void print_model_command_help(const char *usage, const char *extra) {
    std::printf("%s%s\nmodel and context:\n%s\nruntime:\n%s", usage, extra, ModelArgs::help(), RuntimeArgs::help());
}

std::string backend_list(const Runtime &rt) {
    std::string out;
    for (const Backend *b : rt.backends()) out += (out.empty() ? "" : ",") + b->name();
    return out;
}

int cpu_threads(const Runtime &rt) {
    return rt.config().n_threads > 0 ? rt.config().n_threads : int(std::thread::hardware_concurrency());
}

std::vector<int64_t> parse_int_list_arg(const std::string &opt, const std::string &value, int64_t lo, int64_t hi) {
    std::vector<int64_t> out;
    size_t start = 0;
    for (;;) {
        const size_t comma = value.find(',', start);
        const std::string item = value.substr(start, comma == std::string::npos ? comma : comma - start);
        // "1,,2" and "1,": say which list is malformed rather than "needs an integer, got ''".
        if (item.empty())
            throw UsageError("option " + opt + " has an empty item in '" + value + "' (a list is N or N,N,...)");
        out.push_back(parse_int_arg(opt, item, lo, hi));
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

double parse_float_arg(const std::string &opt, const std::string &value) {
    char *end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end || !std::isfinite(v))
        throw UsageError("option " + opt + " needs a number, got '" + value + "'");
    return v;
}

bool parse_on_off_arg(const std::string &opt, const std::string &value) {
    if (value == "on") return true;
    if (value == "off") return false;
    throw UsageError("option " + opt + " needs on or off, got '" + value + "'");
}

std::string take_value(int argc, char **argv, int &i) {
    if (i + 1 >= argc) throw UsageError(std::string("option ") + argv[i] + " needs a value");
    return argv[++i];
}

bool ModelArgs::parse(int argc, char **argv, int &i) {
    const std::string a = argv[i];
    if (a == "-m" || a == "--model") model_path = take_value(argc, argv, i);
    else if (a == "-c" || a == "--ctx-size") {
        n_ctx = parse_int_arg(a, take_value(argc, argv, i), 1, 1 << 24);
        ctx_given = true;
    }
    else if (a == "-b" || a == "--batch-size") n_batch = parse_int_arg(a, take_value(argc, argv, i), 1, 1 << 20);
    else if (a == "-ctk" || a == "--cache-type-k") {
        cache_type_k = take_value(argc, argv, i);
        kv_cache_type_from_name(cache_type_k); // reject before loading anything
    } else if (a == "-ctv" || a == "--cache-type-v") {
        cache_type_v = take_value(argc, argv, i);
        kv_cache_type_from_name(cache_type_v);
    }
    else if (a == "--kv-page-size") page_size = parse_int_arg(a, take_value(argc, argv, i), 1, 4096);
    else return runtime.parse(argc, argv, i);
    return true;
}

const char *ModelArgs::help() {
    return "  -m, --model FILE   GGUF model (llama, mistral, qwen2, qwen3, gemma2, gemma3, phi3,\n"
           "                     qwen3moe; llama files with experts: Mixtral; for embed and\n"
           "                     /v1/embeddings also the encoders bert and nomic-bert);\n"
           "                     default: models/default.gguf, the shipped KJV-trained model\n"
           "                     (docs/DEFAULT_MODEL.md)\n"
           "  -c, --ctx-size N   KV cache size in tokens, shared by all sequences (generate and\n"
           "                     perplexity: default the model's trained context, at most 4096/512)\n"
           "  -b, --batch-size N most tokens per forward graph (default 512)\n"
           "  -ctk, --cache-type-k T  K cache type: f16 (default), q8_0, f32\n"
           "  -ctv, --cache-type-v T  V cache type: f16 (default), q8_0, f32\n"
           "  --kv-page-size N   tokens per KV cache page (default 16)\n";
}

void ModelArgs::fit_context(const ModelHparams &hp) {
    if (!ctx_given) {
        n_ctx = std::min(n_ctx, hp.n_ctx_train);
    } else if (n_ctx > hp.n_ctx_train) {
        std::fprintf(stderr,
                     "warning: -c %lld is more than the %lld tokens this model was trained on (%s.context_length); "
                     "output past position %lld degrades\n",
                     (long long)n_ctx, (long long)hp.n_ctx_train, hp.arch_name.c_str(), (long long)hp.n_ctx_train);
    }
}

ContextParams ModelArgs::context_params(int n_seq) const {
    ContextParams p;
    p.n_ctx = n_ctx;
    p.n_batch = n_batch;
    p.n_seq_max = n_seq;
    p.page_size = page_size;
    p.type_k = kv_cache_type_from_name(cache_type_k);
    p.type_v = kv_cache_type_from_name(cache_type_v);
    return p;
}

bool SamplingArgs::parse(int argc, char **argv, int &i) {
    const std::string a = argv[i];
    // Each value in the range the sampler gives a meaning (sampler.h); outside it, a usage error.
    auto number = [&](bool ok_if(double), const char *range) {
        const double v = parse_float_arg(a, take_value(argc, argv, i));
        if (!ok_if(v)) throw UsageError("option " + a + " must be " + range + ", got " + argv[i]);
        return (float)v;
    };
    if (a == "--temp") params.temperature = number([](double v) { return v >= 0; }, ">= 0 (0 = greedy)");
    else if (a == "--top-k") params.top_k = (int32_t)parse_int_arg(a, take_value(argc, argv, i), 0, INT32_MAX);
    else if (a == "--top-p") params.top_p = number([](double v) { return v > 0 && v <= 1; }, "in (0, 1] (1 = off)");
    else if (a == "--min-p") params.min_p = number([](double v) { return v >= 0 && v <= 1; }, "in [0, 1] (0 = off)");
    else if (a == "--repeat-penalty")
        params.repeat_penalty = number([](double v) { return v > 0; }, "> 0 (1 = off)");
    else if (a == "--frequency-penalty")
        params.frequency_penalty = number([](double v) { return v >= -2 && v <= 2; }, "in [-2, 2] (0 = off)");
    else if (a == "--presence-penalty")
        params.presence_penalty = number([](double v) { return v >= -2 && v <= 2; }, "in [-2, 2] (0 = off)");
    else if (a == "--repeat-last-n") params.repeat_last_n = (int32_t)parse_int_arg(a, take_value(argc, argv, i), -1, INT32_MAX);
    else if (a == "-s" || a == "--seed") {
        params.seed = (uint32_t)parse_int_arg(a, take_value(argc, argv, i), 0, UINT32_MAX);
        seed_given = true;
    } else return false;
    return true;
}

const char *SamplingArgs::help() {
    return "  --temp T           temperature (default 0.8; 0 = greedy)\n"
           "  --top-k N          keep the N most likely tokens (default 40; 0 = off)\n"
           "  --top-p P          nucleus: smallest set with probability >= P (default 0.95; 1 = off)\n"
           "  --min-p P          drop tokens below P * p(most likely) (default 0.05; 0 = off)\n"
           "  --repeat-penalty X penalize recent tokens (default 1.0 = off)\n"
           "  --frequency-penalty X  subtract X per occurrence of a recent token (default 0 = off)\n"
           "  --presence-penalty X   subtract X once from every recent token (default 0 = off)\n"
           "  --repeat-last-n N  tokens the penalties look back (default 64; -1 = all)\n"
           "  -s, --seed N       sampling seed (default: random, printed)\n";
}

SamplerParams SamplingArgs::resolved() {
    if (!seed_given) {
        params.seed = random_seed();
        seed_given = true;
    }
    return params;
}

LoadedModel load_model(const ModelArgs &args, bool load_tokenizer) {
    LoadedModel lm = Session::load(model_path_or_default(args.model_path), args.runtime.make_config(), {}, load_tokenizer);

    const ModelHparams &hp = lm.model->hparams();
    const double mib = lm.model->weight_bytes() / (1024.0 * 1024.0), params = (double)lm.model->n_params();
    std::fprintf(stderr, "model: %s (%s%s), %.2f %s, %.2f %s params, %lld layers, %lld/%lld heads, vocab %lld, "
                         "trained context %lld\n",
                 lm.path.c_str(), lm.model->description().c_str(), args.model_path.empty() ? ", default model" : "",
                 mib >= 1024 ? mib / 1024 : mib, mib >= 1024 ? "GiB" : "MiB",
                 params >= 1e9 ? params / 1e9 : params / 1e6, params >= 1e9 ? "B" : "M",
                 (long long)hp.n_layer, (long long)hp.n_head, (long long)hp.n_head_kv, (long long)hp.n_vocab,
                 (long long)hp.n_ctx_train);
    std::string backends;
    for (const Backend *b : lm.runtime->backends()) backends += (backends.empty() ? "" : ", ") + b->name() + " (" + b->info().name + ")";
    std::fprintf(stderr, "backends: %s; weights on %s\n", backends.c_str(), lm.model->backend().name().c_str());
    return lm;
}

} // namespace rf
