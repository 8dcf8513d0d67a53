// Speculative decoding options shared by generate, bench and serve: --draft-model M (a smaller
// model of the same vocabulary) or --draft-ngram N (prompt lookup), and --draft-max N; and
// loading the draft model onto the target's runtime with a context of its own.
#pragma once
#include <memory>
#include <string>

#include "common_args.h"
#include "rocmforge/speculative.h"

namespace rf {

struct DraftArgs {
    std::string model_path; // --draft-model; "" = none
    int ngram = 0;          // --draft-ngram N; 0 = none
    int draft_max = 8;      // --draft-max N
    bool enabled() const { return !model_path.empty() || ngram > 0; }
    // Consumes argv[i] (and its value) when it is one of these options. Throws UsageError for a
    // bad value, or both drafters given.
    bool parse(int argc, char **argv, int &i);
    static const char *help();
};

// The draft model with its tokenizer and context, on the target's runtime.
struct LoadedDraft {
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    std::unique_ptr<InferenceContext> ctx;
};

// Loads --draft-model (when given) and makes its context like the target's (`params`); throws
// UsageError when its vocabulary is not the target's. Prints "draft model: ..." on stderr.
LoadedDraft load_draft(const DraftArgs &args, const LoadedModel &target, const ContextParams &params);

// The SpeculativeParams of the options (disabled when no drafter was given).
SpeculativeParams speculative_params(const DraftArgs &args, LoadedDraft &draft);

// "draft: prompt lookup (n-gram 3), up to 8 tokens" / "draft: model X, up to 8 tokens"
std::string draft_summary(const DraftArgs &args);

} // namespace rf
