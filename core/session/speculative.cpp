// The speculative-sampling acceptance rule (Leviathan et al. 2023, Chen et al. 2023) and the
// adaptive draft length. Greedy distributions (one candidate) decide without a random number,
// so greedy speculative decoding gives the tokens of plain greedy decoding.
#include "rocmforge/speculative.h"

#include <algorithm>

namespace rf {

AdaptiveDraftLength::AdaptiveDraftLength(int max_length) : length_(std::max(1, max_length / 2)), max_(std::max(1, max_length)) {}

void AdaptiveDraftLength::update(int drafted, int accepted) {
    if (drafted <= 0) return;
    if (accepted >= drafted && drafted >= length_) length_ = std::min(max_, length_ + 1);
    else if (2 * accepted < drafted) length_ = std::max(1, length_ - 1);
}

namespace {

double prob_of(const std::vector<TokenProb> &dist, int32_t id) {
    for (const TokenProb &t : dist)
        if (t.id == id) return t.p;
    return 0.0;
}

} // namespace

DraftVerdict accept_or_resample(const std::vector<TokenProb> &p, const std::vector<TokenProb> &q, int32_t drafted,
                                std::mt19937 &rng) {
    // A point mass p (greedy): p(x) / q(x) is 0 or >= 1, and the residual is p itself.
    if (p.size() == 1) return {p.front().id == drafted, p.front().id};
    const double px = prob_of(p, drafted);
    const double qx = q.empty() ? 1.0 : prob_of(q, drafted);
    if (px > 0 && qx > 0) {
        if (px >= qx) return {true, drafted};
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        if (uniform(rng) * qx < px) return {true, drafted};
    }
    // Rejected: a draw from max(0, p - q), normalized (p's support holds all of it).
    std::vector<TokenProb> residual;
    residual.reserve(p.size());
    double sum = 0;
    for (const TokenProb &t : p) {
        const double r = std::max(0.0, (double)t.p - (q.empty() ? (t.id == drafted ? 1.0 : 0.0) : prob_of(q, t.id)));
        if (r <= 0) continue;
        residual.push_back({t.id, t.logit, (float)r});
        sum += r;
    }
    if (residual.empty()) return {false, draw_token(p, rng)}; // p == q up to rounding
    for (TokenProb &t : residual) t.p = (float)(t.p / sum);
    return {false, draw_token(residual, rng)};
}

size_t verify_drafts(size_t n_draft, const std::function<DraftVerdict(size_t)> &verdict,
                     const std::function<bool(int32_t)> &take, const std::function<int32_t()> &bonus) {
    size_t accepted = 0;
    for (size_t i = 0; i < n_draft; ++i) {
        const DraftVerdict v = verdict(i);
        accepted += v.accepted;
        if (!take(v.token) || !v.accepted) return accepted;
    }
    take(bonus()); // every draft accepted (or none drafted): the target's next token
    return accepted;
}

SamplerParams draft_sampling(const SamplerParams &target) {
    SamplerParams d = target;
    d.repeat_penalty = 1.0f;
    d.frequency_penalty = 0.0f;
    d.presence_penalty = 0.0f;
    d.repeat_last_n = 0;
    d.logit_bias.clear();
    return d;
}

} // namespace rf
