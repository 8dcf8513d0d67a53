#include "draft_args.h"

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"

namespace rf {

bool DraftArgs::parse(int argc, char **argv, int &i) {
    const std::string a = argv[i];
    if (a == "--draft-model") model_path = take_value(argc, argv, i);
    else if (a == "--draft-ngram") ngram = (int)parse_int_arg(a, take_value(argc, argv, i), 1, 16);
    else if (a == "--draft-max") draft_max = (int)parse_int_arg(a, take_value(argc, argv, i), 1, 64);
    else return false;
    if (!model_path.empty() && ngram > 0) throw UsageError("give one of --draft-model and --draft-ngram");
    if (a == "--draft-model" && model_path.empty()) throw UsageError("--draft-model: empty path");
    return true;
}

const char *DraftArgs::help() {
    return "  --draft-model M    speculative decoding with M, a smaller model of the same vocabulary, as\n"
           "                     the drafter (greedy output as without it; sampling keeps the distribution)\n"
           "  --draft-ngram N    speculative decoding with prompt lookup: drafts the tokens that followed\n"
           "                     the latest earlier occurrence of the last N..1 tokens (1..16)\n"
           "  --draft-max N      most tokens drafted per step (1..64, default 8); the length adapts\n"
           "                     to the acceptance rate\n";
}

LoadedDraft load_draft(const DraftArgs &args, const LoadedModel &target, const ContextParams &params) {
    LoadedDraft d;
    // Rejected drafts are cut off the cache, which a recurrent layer's state cannot undo.
    if (args.enabled() && target.model->hparams().hybrid())
        throw UsageError("speculative decoding is not supported for " + target.model->hparams().arch_name +
                         ": rejected drafts cannot be rolled back out of its recurrent state");
    if (args.model_path.empty()) return d;
    d.model = Model::load(args.model_path, *target.runtime);
    d.tokenizer = Tokenizer::from_gguf(d.model->file());
    check_same_vocabulary(*target.tokenizer, *d.tokenizer, args.model_path);
    if (d.model->hparams().n_vocab != target.model->hparams().n_vocab)
        throw UsageError("draft model " + args.model_path + ": its embedding has " + std::to_string(d.model->hparams().n_vocab) +
                         " rows, the target's " + std::to_string(target.model->hparams().n_vocab));
    if (d.model->hparams().encoder) throw UsageError("draft model " + args.model_path + " is an encoder; it needs a causal model");
    if (d.model->hparams().hybrid())
        throw UsageError("draft model " + args.model_path + ": " + d.model->hparams().arch_name + " cannot draft (its recurrent state cannot be rolled back)");
    ContextParams p = params;
    p.prefix_cache = false; // its pages are rewritten at every rejection
    d.ctx = std::make_unique<InferenceContext>(*d.model, *target.runtime, p);
    std::fprintf(stderr, "draft model: %s (%s), %.2f M params, %lld layers\n", args.model_path.c_str(), d.model->description().c_str(),
                 (double)d.model->n_params() / 1e6, (long long)d.model->hparams().n_layer);
    return d;
}

SpeculativeParams speculative_params(const DraftArgs &args, LoadedDraft &draft) {
    SpeculativeParams sp;
    sp.draft_max = args.draft_max;
    if (args.ngram > 0) {
        sp.drafter = SpeculativeParams::Drafter::ngram;
        sp.ngram = args.ngram;
    } else if (draft.ctx) {
        sp.drafter = SpeculativeParams::Drafter::model;
        sp.draft_context = draft.ctx.get();
    }
    return sp;
}

std::string draft_summary(const DraftArgs &args) {
    const std::string upto = ", up to " + std::to_string(args.draft_max) + " tokens a step (adaptive)";
    if (args.ngram > 0) return "draft: prompt lookup (n-gram " + std::to_string(args.ngram) + "..1)" + upto;
    if (!args.model_path.empty()) return "draft: model " + args.model_path + upto;
    return "draft: none";
}

} // namespace rf
