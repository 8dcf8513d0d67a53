// One input through the forward graph with the hidden-state output, pooled and normalised.
#include "rocmforge/embedding.h"

#include <string>

#include "rocmforge/error.h"

namespace rf {

std::optional<Pooling> model_pooling(const Model &model) {
    const int64_t t = model.file().get_int(model.hparams().arch_name + ".pooling_type", -1);
    switch (t) {
    case 1: return Pooling::Mean;
    case 2: return Pooling::Cls;
    case 3: return Pooling::Last;
    default: return std::nullopt;
    }
}

Pooling default_pooling(const Model &model) { return model_pooling(model).value_or(Pooling::Mean); }

std::vector<float> embed_tokens(InferenceContext &ctx, const std::vector<int32_t> &tokens, int seq,
                                const EmbedOptions &options) {
    if (tokens.empty()) throw Error("embedding: the input has no tokens");
    const int64_t n = (int64_t)tokens.size();
    if (n > ctx.params().n_ctx)
        throw Error("embedding: the input has " + std::to_string(n) + " tokens, more than the context size of " +
                    std::to_string(ctx.params().n_ctx) + " (-c)");
    if (seq < 0 || seq >= ctx.params().n_seq_max)
        throw Error("embedding: sequence id " + std::to_string(seq) + " is outside 0.." +
                    std::to_string(ctx.params().n_seq_max - 1));
    if (ctx.seq_length(seq) != 0)
        throw Error("embedding: sequence " + std::to_string(seq) + " holds " + std::to_string(ctx.seq_length(seq)) +
                    " tokens; an embedding runs on an empty sequence");
    Batch batch;
    int64_t n_rows = 0;
    for (int64_t i = 0; i < n; ++i) {
        const bool out = pooling_reads_row(options.pooling, i, n);
        batch.add(tokens[(size_t)i], seq, out);
        n_rows += out ? 1 : 0;
    }
    std::vector<float> v;
    try {
        ScopedOutputHidden hidden(ctx, true);
        const std::vector<float> &rows = ctx.decode(batch);
        v = pool_rows(rows.data(), n_rows, ctx.model().hparams().n_embd, options.pooling);
    } catch (...) {
        ctx.clear_sequence(seq);
        throw;
    }
    ctx.clear_sequence(seq);
    if (options.normalize) l2_normalize(v);
    return v;
}

} // namespace rf
