// Options shared by generate / perplexity / bench: the model and context flags (llama.cpp names),
// the sampling flags, the runtime flags (RuntimeArgs), and loading model + tokenizer + runtime.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "rocmforge/runtime.h"
#include "rocmforge/sampler.h"
#include "rocmforge/session.h"
#include "rocmforge/tokenizer.h"
#include "rocmforge/default_model.h"
#include "runtime_args.h"

namespace rf {

// Number parsing for option values: throws UsageError naming the option.
int64_t parse_int_arg(const std::string &opt, const std::string &value, int64_t lo, int64_t hi);
double parse_float_arg(const std::string &opt, const std::string &value);
// "on" or "off".
bool parse_on_off_arg(const std::string &opt, const std::string &value);
// "128,512,2048": each item as parse_int_arg checks it; at least one item.
std::vector<int64_t> parse_int_list_arg(const std::string &opt, const std::string &value, int64_t lo, int64_t hi);
// Milliseconds of the steady clock since t0 (the timings the commands print).
double ms_since(std::chrono::steady_clock::time_point t0);
// Value of the option at argv[i] (advances i); throws UsageError when it is missing.
std::string take_value(int argc, char **argv, int &i);

struct ModelArgs {
    std::string model_path;   // -m; "" = default model
    int64_t n_ctx = 4096;     // -c (before fit_context: the command's default unless ctx_given)
    bool ctx_given = false;   // -c was on the command line
    int64_t n_batch = 512;    // -b
    std::string cache_type_k = "f16";
    std::string cache_type_v = "f16";
    int64_t page_size = 16;   // --kv-page-size
    RuntimeArgs runtime;      // --config --backend -t --profile

    // Consumes argv[i] (and its value) when it is one of these options.
    bool parse(int argc, char **argv, int &i);
    static const char *help();
    ContextParams context_params(int n_seq) const;
    // For commands whose output is the model's text or its quality (generate, perplexity):
    // without -c, n_ctx is capped at the model's trained context (<arch>.context_length);
    // a -c beyond it is kept with a warning on stderr, since the model never saw those positions.
    void fit_context(const ModelHparams &hp);
};

struct SamplingArgs {
    SamplerParams params;
    bool seed_given = false;
    bool parse(int argc, char **argv, int &i);
    static const char *help();
    // The params with the seed filled in (random unless --seed was given).
    SamplerParams resolved();
};

using LoadedModel = Session;

// --help of a command that loads a model: its usage text, `extra` (more options), then the
// model and context options and the runtime options.
void print_model_command_help(const char *usage, const char *extra = "");

// "hip,cpu": the runtime's backends in priority order (benchmark tables and baselines).
std::string backend_list(const Runtime &rt);
// CPU threads in force: the config's n_threads, else every hardware thread.
int cpu_threads(const Runtime &rt);

// Creates the runtime from the args, loads the model (default model when no -m) and its
// tokenizer; prints "model: ..." and "backend: ..." lines to stderr.
LoadedModel load_model(const ModelArgs &args, bool load_tokenizer = true);

} // namespace rf
