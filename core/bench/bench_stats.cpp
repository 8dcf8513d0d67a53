#include "bench_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace rf::bench {

double Welford::stddev() const { return n_ < 2 ? 0.0 : std::sqrt(m2_ / double(n_ - 1)); }

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p * double(v.size())));
    return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
}

Interval bootstrap_mean_ci(const std::vector<double> &v, int resamples, uint32_t seed) {
    Interval ci;
    if (v.empty()) return ci;
    Welford all;
    for (double x : v) all.add(x);
    ci.mean = ci.low = ci.high = all.mean();
    if (v.size() < 2) return ci;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
    std::vector<double> means(static_cast<size_t>(resamples));
    for (auto &m : means) {
        double s = 0;
        for (size_t i = 0; i < v.size(); ++i) s += v[pick(rng)];
        m = s / double(v.size());
    }
    ci.low = percentile(means, 0.025);
    ci.high = percentile(means, 0.975);
    return ci;
}

void Result::summarize() {
    Welford w;
    for (double s : samples) w.add(s);
    mean = w.mean();
    stddev = w.stddev();
    median = percentile(samples, 0.5);
    p95 = percentile(samples, 0.95);
}

std::string Result::key() const {
    std::string k = name + "[";
    bool first = true;
    for (const auto &[p, v] : params) {
        if (!first) k += ',';
        first = false;
        k += p;
        k += '=';
        k += v;
    }
    k += ']';
    return k;
}

} // namespace rf::bench
