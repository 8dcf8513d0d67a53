// Sampling chain with llama.cpp's semantics for each step (llama-sampling.cpp), in its default
// order: penalties, top-k, top-p, min-p, temperature, dist.
#include "rocmforge/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "rocmforge/error.h"

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

// llama.cpp's repetition penalty: each distinct token of the recent history once; positive
// logits are divided, negative ones multiplied (both make the token less likely).
void Sampler::apply_penalties(std::vector<TokenProb> &c) const {
    if (params_.repeat_penalty == 1.0f || history_.empty()) return;
    std::unordered_set<int32_t> seen(history_.begin(), history_.end());
    for (auto &t : c) {
        if (!seen.count(t.id)) continue;
        if (t.logit <= 0) t.logit *= params_.repeat_penalty;
        else t.logit /= params_.repeat_penalty;
    }
}

std::vector<TokenProb> Sampler::filtered(const float *logits, int64_t n_vocab) {
    if (n_vocab <= 0) throw Error("sampler: empty logits row");
    std::vector<TokenProb> c((size_t)n_vocab);
    for (int64_t i = 0; i < n_vocab; ++i) c[(size_t)i] = {(int32_t)i, logits[i], 0.0f};
    apply_penalties(c);
    if (params_.temperature <= 0.0f) {
        // Greedy: only the argmax survives (first index on ties, as llama.cpp's greedy).
        size_t best = 0;
        for (size_t i = 1; i < c.size(); ++i)
            if (c[i].logit > c[best].logit) best = i;
        TokenProb only = c[best];
        only.p = 1.0f;
        return {only};
    }
    top_k_filter(c, params_.top_k);
    top_p_filter(c, params_.top_p);
    min_p_filter(c, params_.min_p);
    for (auto &t : c) t.logit /= params_.temperature;
    softmax_candidates(c);
    return c;
}

int32_t Sampler::sample(const float *logits, int64_t n_vocab) {
    std::vector<TokenProb> c = filtered(logits, n_vocab);
    if (c.size() == 1) return c.front().id;
    // Inverse-CDF draw over the survivors' probabilities.
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const double u = uniform(rng_);
    double cum = 0;
    for (const auto &t : c) {
        cum += t.p;
        if (u < cum) return t.id;
    }
    return c.back().id;
}

} // namespace rf
