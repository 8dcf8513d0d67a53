#include "bench_stats.h"

#include <algorithm>
#include <cmath>

namespace rf::bench {

double Welford::stddev() const { return n_ < 2 ? 0.0 : std::sqrt(m2_ / double(n_ - 1)); }

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t rank = size_t(std::ceil(p * double(v.size())));
    return v[std::min(v.size() - 1, rank ? rank - 1 : 0)];
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
