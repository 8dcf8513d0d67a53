// Sampling chain with llama.cpp's semantics for each step (llama-sampling.cpp), in its default
// order: penalties, top-k, top-p, min-p, temperature, dist.
#include "rocmforge/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "rocmforge/error.h"
#include "isa_clones.h"
#include "softmax_draw.h"

namespace rf {

// Descending logit, ties by ascending id: a total order, so the result equals a stable sort of
// candidates listed by id, without the stable sort's cost.
bool higher_logit(const TokenProb &a, const TokenProb &b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

void sort_by_logit(std::vector<TokenProb> &c) {
    if (!std::is_sorted(c.begin(), c.end(), higher_logit)) std::sort(c.begin(), c.end(), higher_logit);
}

void softmax_candidates(std::vector<TokenProb> &c) {
    if (c.empty()) return;
    sort_by_logit(c);
    const float max_logit = c.front().logit;
    double sum = 0;
    for (auto &t : c) {
        t.p = std::exp(t.logit - max_logit);
        sum += t.p;
    }
    for (auto &t : c) t.p = (float)(t.p / sum);
}

void top_k_filter(std::vector<TokenProb> &c, int32_t k) {
    if (k <= 0 || (size_t)k >= c.size()) return;
    // Only the k best need ordering: O(n log k) instead of sorting the whole vocabulary.
    std::partial_sort(c.begin(), c.begin() + k, c.end(), higher_logit);
    c.resize((size_t)k);
}

// Keeps the smallest prefix (by probability) whose cumulative probability reaches p.
void top_p_filter(std::vector<TokenProb> &c, float p) {
    if (p >= 1.0f || c.empty()) return;
    softmax_candidates(c);
    double cum = 0;
    size_t keep = c.size();
    for (size_t i = 0; i < c.size(); ++i) {
        cum += c[i].p;
        if (cum >= p) {
            keep = i + 1;
            break;
        }
    }
    c.resize(keep);
}

// Keeps tokens whose probability is at least min_p times the most likely one's; on logits that
// is logit >= max_logit + log(min_p), as llama.cpp computes it.
void min_p_filter(std::vector<TokenProb> &c, float min_p) {
    if (min_p <= 0.0f || c.empty()) return;
    sort_by_logit(c);
    const float min_logit = c.front().logit + std::log(min_p);
    size_t keep = 1;
    while (keep < c.size() && c[keep].logit >= min_logit) ++keep;
    c.resize(keep);
}

uint32_t random_seed() {
    std::random_device rd;
    return rd();
}

Sampler::Sampler(const SamplerParams &params) : params_(params), rng_(params.seed) {}

void Sampler::reset() {
    history_.clear();
    rng_.seed(params_.seed);
}

void Sampler::accept(int32_t token) {
    if (params_.repeat_last_n == 0) return;
    history_.push_back(token);
    if (params_.repeat_last_n > 0 && history_.size() > (size_t)params_.repeat_last_n) history_.pop_front();
}

// Whether the parameters set a penalty that looks back at some tokens.
static bool penalties_set(const SamplerParams &p) {
    const bool any = p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f;
    return any && p.repeat_last_n != 0;
}

bool Sampler::penalizes() const {
    return (penalties_set(params_) && !history_.empty()) || !params_.logit_bias.empty() || allowed_;
}

// llama.cpp's penalties: each distinct token of the recent history once, seen c times there;
// the repetition penalty divides a positive logit and multiplies a negative one (both make the
// token less likely), then c * frequency + presence is subtracted.
const float *Sampler::penalized(const float *logits, int64_t n_vocab) {
    if (!penalizes()) return logits;
    penalty_ids_.clear();
    if (penalties_set(params_)) penalty_ids_.assign(history_.begin(), history_.end());
    std::sort(penalty_ids_.begin(), penalty_ids_.end());
    scratch_.assign(logits, logits + n_vocab);
    for (size_t i = 0; i < penalty_ids_.size();) {
        const int32_t id = penalty_ids_[i];
        size_t c = 1;
        while (i + c < penalty_ids_.size() && penalty_ids_[i + c] == id) ++c;
        i += c;
        if (id < 0 || id >= n_vocab) continue; // not a candidate
        float &l = scratch_[(size_t)id];
        if (l <= 0) l *= params_.repeat_penalty;
        else l /= params_.repeat_penalty;
        l -= (float)c * params_.frequency_penalty + params_.presence_penalty;
    }
    for (const auto &[id, bias] : params_.logit_bias)
        if (id >= 0 && id < n_vocab) scratch_[(size_t)id] = bias <= -100.0f ? -INFINITY : scratch_[(size_t)id] + bias;
    if (allowed_) // word by word: a grammar allows most tokens or few, so whole words are common
        for (int64_t w = 0; w * 64 < n_vocab; ++w) {
            const uint64_t bits = allowed_[w];
            if (bits == ~0ull) continue;
            const int64_t end = std::min<int64_t>(n_vocab, (w + 1) * 64);
            if (bits == 0) {
                std::fill(scratch_.begin() + w * 64, scratch_.begin() + end, -INFINITY);
                continue;
            }
            for (int64_t i = w * 64; i < end; ++i)
                if (!((bits >> (i - w * 64)) & 1)) scratch_[(size_t)i] = -INFINITY;
        }
    return scratch_.data();
}

namespace {

// The scans below run over the whole vocabulary every token; they are written so the compiler
// vectorises them (bit tests, independent lanes), with results equal to plain scalar loops, and
// are also compiled for AVX2 and AVX-512 (isa_clones.h).

RF_ISA_CLONES bool any_nan(const float *l, int64_t n) {
    uint32_t nan = 0;
    for (int64_t i = 0; i < n; ++i) {
        uint32_t b;
        std::memcpy(&b, l + i, 4);
        nan |= (b & 0x7fffffffu) > 0x7f800000u;
    }
    return nan != 0;
}

constexpr int64_t kBlock = 32;

// Whether some l[j] > w for j < kBlock (false for NaNs, like the scalar test).
inline bool any_greater(const float *l, float w) {
    int any = 0;
    for (int64_t j = 0; j < kBlock; ++j) any |= l[j] > w;
    return any != 0;
}

// First index of the largest value: the scalar loop "if (l[i] > l[best]) best = i" of
// llama.cpp's greedy sampler, which skips whole blocks that hold no greater value.
RF_ISA_CLONES int64_t argmax_first(const float *l, int64_t n) {
    int64_t best = 0;
    float m = l[0];
    auto consider = [&](int64_t i) {
        if (l[i] > m) m = l[i], best = i;
    };
    int64_t i = 1;
    for (; i < n && i % kBlock != 0; ++i) consider(i);
    for (; i + kBlock <= n; i += kBlock)
        if (any_greater(l + i, m))
            for (int64_t j = i; j < i + kBlock; ++j) consider(j);
    for (; i < n; ++i) consider(i);
    return best;
}

// Top-k's groups: a chunk of kRows x kLanes logits holds kLanes groups, group j the logits at
// j, j + kLanes, ... of the chunk (a column of the chunk seen as kRows rows of kLanes).
constexpr int64_t kLanes = 16, kRows = 32, kChunk = kLanes * kRows;

// The maximum of every group of the first `chunks` chunks (m[c * kLanes + j]): lane-wise maxima
// of a chunk's rows, which the compiler keeps in vector registers (`a > b ? a : b` is the x86 max
// instruction's own rule; no NaNs here).
RF_ISA_CLONES void group_maxima(const float *l, int64_t chunks, float *m) {
    for (int64_t c = 0; c < chunks; ++c) {
        const float *p = l + c * kChunk;
        // Four rows at a time into four accumulators: independent chains (max is exact, so the
        // order does not matter).
        float v[4][kLanes];
        for (int64_t a = 0; a < 4; ++a)
            for (int64_t j = 0; j < kLanes; ++j) v[a][j] = p[a * kLanes + j];
        for (int64_t r = 4; r < kRows; r += 4)
            for (int64_t a = 0; a < 4; ++a)
                for (int64_t j = 0; j < kLanes; ++j) {
                    const float x = p[(r + a) * kLanes + j];
                    v[a][j] = x > v[a][j] ? x : v[a][j];
                }
        for (int64_t j = 0; j < kLanes; ++j) {
            const float x = v[0][j] > v[1][j] ? v[0][j] : v[1][j], y = v[2][j] > v[3][j] ? v[2][j] : v[3][j];
            m[c * kLanes + j] = x > y ? x : y;
        }
    }
}

// The k best candidates (k > 0, no NaN logits) by higher_logit, best first, into c: what
// partial_sort of the whole candidate list gives (the order is total, so the result is unique).
// The k-th largest group maximum, t, is a floor for the k best: k logits (those maxima) are >= t,
// so the k-th best logit is too. Only logits >= t are collected (usually a few dozen, from the
// groups whose maximum reaches t, and the chunks' tail) and sorted: one vectorised pass over the
// vocabulary instead of a heap update for every new leader of a scan (slow on a random-weight
// Llama's logits, whose leader changes often). False (c untouched) when the vocabulary has
// fewer than k groups: the caller's sort of every logit is as good there.
bool top_k_of(const float *l, int64_t n, int32_t k, std::vector<float> &maxima, std::vector<TokenProb> &c) {
    const int64_t chunks = n / kChunk, groups = chunks * kLanes;
    if (groups < k) return false;
    c.clear();
    maxima.resize((size_t)groups * 2);
    group_maxima(l, chunks, maxima.data());
    float *sel = maxima.data() + groups; // selected in a copy: the maxima stay for the scan
    std::copy(maxima.data(), maxima.data() + groups, sel);
    std::nth_element(sel, sel + (k - 1), sel + groups, [](float a, float b) { return a > b; });
    const float t = sel[k - 1];
    for (int64_t g = 0; g < groups; ++g) {
        if (!(maxima[(size_t)g] >= t)) continue;
        const int64_t first = g / kLanes * kChunk + g % kLanes;
        for (int64_t i = first; i < first + kChunk; i += kLanes)
            if (l[i] >= t) c.push_back({(int32_t)i, l[i], 0.0f});
    }
    for (int64_t i = chunks * kChunk; i < n; ++i)
        if (l[i] >= t) c.push_back({(int32_t)i, l[i], 0.0f});
    std::partial_sort(c.begin(), c.begin() + k, c.end(), higher_logit);
    c.resize((size_t)k);
    return true;
}

} // namespace

std::vector<TokenProb> Sampler::filtered(const float *logits, int64_t n_vocab) {
    if (n_vocab <= 0) throw Error("sampler: empty logits row");
    const float *l = penalized(logits, n_vocab);
    if (params_.temperature <= 0.0f) {
        // Greedy: only the argmax survives (first index on ties, as llama.cpp's greedy).
        const int64_t best = argmax_first(l, n_vocab);
        return {TokenProb{(int32_t)best, l[best], 1.0f}};
    }
    std::vector<TokenProb> c;
    if (!(params_.top_k > 0 && params_.top_k < n_vocab && !any_nan(l, n_vocab) && top_k_of(l, n_vocab, params_.top_k, maxima_, c))) {
        c.resize((size_t)n_vocab);
        for (int64_t i = 0; i < n_vocab; ++i) c[(size_t)i] = {(int32_t)i, l[i], 0.0f};
        top_k_filter(c, params_.top_k);
    }
    filter_top_k_survivors(c);
    return c;
}

void Sampler::filter_top_k_survivors(std::vector<TokenProb> &c) const {
    top_p_filter(c, params_.top_p);
    min_p_filter(c, params_.min_p);
    for (auto &t : c) t.logit /= params_.temperature;
    softmax_candidates(c);
}

// A draw over the whole vocabulary at temperature t (no top-k, top-p or min-p): the inverse CDF
// walked in token-id order, as llama.cpp's dist sampler walks its candidates, in O(n)
// (softmax_draw.h). Sorting the vocabulary first (what filtered() returns) was the largest host
// cost of a many-sequence server step (OpenAI requests have no top-k). -1: NaN logits (the sorted
// path handles them).
int32_t Sampler::sample_whole_vocabulary(const float *l, int64_t n, float t) {
    SoftmaxWeights w{weights_, blocks_};
    if (!softmax_weigh(l, n, t, w)) return -1;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    return (int32_t)softmax_pick(w, uniform(rng_));
}

int32_t Sampler::sample(const float *logits, int64_t n_vocab) {
    const bool truncated = (params_.top_k > 0 && params_.top_k < n_vocab) || params_.top_p < 1.0f || params_.min_p > 0.0f;
    int32_t t = -1;
    if (params_.temperature > 0.0f && !truncated && n_vocab > 0) t = sample_whole_vocabulary(penalized(logits, n_vocab), n_vocab, params_.temperature);
    if (t < 0) t = draw(filtered(logits, n_vocab));
    // A draw's rounding can land on a token of probability 0: the best allowed one instead.
    if (!is_allowed(t)) {
        const float *l = penalized(logits, n_vocab);
        t = (int32_t)argmax_first(l, n_vocab);
    }
    return t;
}

// Inverse-CDF draw over the survivors' probabilities (one survivor: no random number used).
int32_t draw_token(const std::vector<TokenProb> &dist, std::mt19937 &rng) {
    if (dist.size() == 1) return dist.front().id;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double u = uniform(rng);
    double cum = 0;
    for (const TokenProb &t : dist) {
        cum += t.p;
        if (u < cum) return t.id;
    }
    for (size_t i = dist.size(); i-- > 0;) // past the sum by rounding: the last possible one
        if (dist[i].p > 0) return dist[i].id;
    return dist.back().id;
}

int32_t Sampler::draw(const std::vector<TokenProb> &c) { return draw_token(c, rng_); }

int64_t candidates_needed(const SamplerParams &p, int64_t n_vocab) {
    if (penalties_set(p) || !p.logit_bias.empty()) return 0;
    if (p.temperature <= 0.0f) return 1;
    return p.top_k > 0 && p.top_k < n_vocab ? p.top_k : 0;
}

// The same steps as sample() after its top-k: the candidates are top_k_of's list already.
int32_t Sampler::sample_candidates(const int32_t *ids, const float *logits, int64_t k) {
    if (k < 1) throw Error("sampler: no candidates");
    if (params_.temperature <= 0.0f) return ids[0];
    const int64_t n = std::min<int64_t>(k, params_.top_k);
    candidates_.resize((size_t)n);
    for (int64_t i = 0; i < n; ++i) candidates_[(size_t)i] = {ids[i], logits[i], 0.0f};
    filter_top_k_survivors(candidates_);
    return draw(candidates_);
}

int32_t Sampler::sample_row(const std::vector<float> &logits, const Candidates &c, size_t row, int64_t n_vocab) {
    if (logits.empty() && c.k > 0 && allowed_) throw Error("sampler: a token mask needs whole logits rows, not candidates");
    if (logits.empty() && c.k > 0) return sample_candidates(c.ids.data() + row * (size_t)c.k, c.logits.data() + row * (size_t)c.k, c.k);
    return sample(logits.data() + row * (size_t)n_vocab, n_vocab);
}

} // namespace rf
