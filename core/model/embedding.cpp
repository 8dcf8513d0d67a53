// One input through the forward graph with the hidden-state output, pooled and normalised.
#include "rocmforge/embedding.h"

#include <algorithm>
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

namespace {

// An encoder's tokens attend each other in both directions, so an input must run as one graph:
// a decode split at n_batch would hide the later tokens from the earlier ones.
void check_one_graph(const InferenceContext &ctx, int64_t n_tokens, const std::string &what) {
    if (ctx.model().hparams().encoder && n_tokens > ctx.params().n_batch)
        throw Error("embedding: " + what + " has " + std::to_string(n_tokens) + " tokens, more than the batch size of " +
                    std::to_string(ctx.params().n_batch) + " that an encoder (" + ctx.model().hparams().arch_name +
                    ") must run in one graph (-b)");
}

} // namespace

std::vector<float> embed_tokens(InferenceContext &ctx, const std::vector<int32_t> &tokens, int seq,
                                const EmbedOptions &options) {
    if (tokens.empty()) throw Error("embedding: the input has no tokens");
    const int64_t n = (int64_t)tokens.size();
    if (n > ctx.params().n_ctx)
        throw Error("embedding: the input has " + std::to_string(n) + " tokens, more than the context size of " +
                    std::to_string(ctx.params().n_ctx) + " (-c)");
    check_one_graph(ctx, n, "the input");
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

std::vector<std::vector<float>> embed_batch(InferenceContext &ctx, const std::vector<std::vector<int32_t>> &inputs,
                                            const EmbedOptions &options) {
    const ContextParams &cp = ctx.params();
    const int n_seq = cp.n_seq_max;
    const int64_t n_vocab = ctx.model().hparams().n_vocab;
    for (int s = 0; s < n_seq; ++s)
        if (ctx.seq_length(s) != 0)
            throw Error("embedding: sequence " + std::to_string(s) + " holds " + std::to_string(ctx.seq_length(s)) +
                        " tokens; a batch of embeddings runs on an empty context");
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].empty()) throw Error("embedding: input " + std::to_string(i) + " has no tokens");
        if ((int64_t)inputs[i].size() > cp.n_ctx)
            throw Error("embedding: input " + std::to_string(i) + " has " + std::to_string(inputs[i].size()) +
                        " tokens, more than the context size of " + std::to_string(cp.n_ctx) + " (-c)");
        check_one_graph(ctx, (int64_t)inputs[i].size(), "input " + std::to_string(i));
        for (size_t t = 0; t < inputs[i].size(); ++t)
            if (inputs[i][t] < 0 || inputs[i][t] >= n_vocab)
                throw Error("embedding: input " + std::to_string(i) + ": token id " + std::to_string(inputs[i][t]) +
                            " at index " + std::to_string(t) + " is outside the vocabulary (0.." +
                            std::to_string(n_vocab - 1) + ")");
    }
    const int64_t n_embd = ctx.model().hparams().n_embd;
    const KvPageTable &pages = ctx.cache().pages();
    auto pages_of = [&](size_t len) { return ((int64_t)len + pages.page_size() - 1) / pages.page_size(); };
    std::vector<std::vector<float>> out(inputs.size());
    ScopedOutputHidden hidden(ctx, true);
    Batch batch;
    for (size_t first = 0; first < inputs.size();) {
        // The group [first, last): one sequence each, within n_batch tokens (or one input), the
        // context's tokens and its free pages.
        size_t last = first;
        int64_t tokens = 0, n_pages = 0;
        while (last < inputs.size() && (int)(last - first) < n_seq) {
            const size_t len = inputs[last].size();
            const bool fits = tokens + (int64_t)len <= cp.n_batch && tokens + (int64_t)len <= cp.n_ctx &&
                              n_pages + pages_of(len) <= pages.free_pages();
            if (last > first && !fits) break;
            tokens += (int64_t)len, n_pages += pages_of(len), ++last;
        }
        batch.clear();
        std::vector<int64_t> rows(last - first);
        for (size_t i = first; i < last; ++i) {
            const int64_t n = (int64_t)inputs[i].size();
            for (int64_t t = 0; t < n; ++t) {
                const bool want = pooling_reads_row(options.pooling, t, n);
                batch.add(inputs[i][(size_t)t], (int)(i - first), want);
                rows[i - first] += want ? 1 : 0;
            }
        }
        try {
            const std::vector<float> &h = ctx.decode(batch);
            int64_t row = 0;
            for (size_t i = first; i < last; ++i) {
                out[i] = pool_rows(h.data() + row * n_embd, rows[i - first], n_embd, options.pooling);
                row += rows[i - first];
                if (options.normalize) l2_normalize(out[i]);
            }
        } catch (...) {
            for (int s = 0; s < n_seq; ++s) ctx.clear_sequence(s);
            throw;
        }
        for (int s = 0; s < (int)(last - first); ++s) ctx.clear_sequence(s);
        first = last;
    }
    return out;
}

} // namespace rf
