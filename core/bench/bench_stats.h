// Benchmark results: a named measurement with its parameters and raw samples, summarized as
// median / p95 / mean / standard deviation (Welford's algorithm in doubles).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rf::bench {

// Streaming mean and variance (Welford): numerically stable in one pass.
class Welford {
public:
    void add(double x) {
        ++n_;
        const double d = x - mean_;
        mean_ += d / double(n_);
        m2_ += d * (x - mean_);
    }
    uint64_t count() const { return n_; }
    double mean() const { return mean_; }
    // Sample standard deviation (n - 1); 0 for fewer than two samples.
    double stddev() const;

private:
    uint64_t n_ = 0;
    double mean_ = 0, m2_ = 0;
};

// Nearest-rank percentile (p in [0, 1]) of unsorted values; 0 for none.
double percentile(std::vector<double> values, double p);

// 95% confidence interval of the mean of `values` by percentile bootstrap (deterministic seed).
struct Interval {
    double mean = 0, low = 0, high = 0;
};
Interval bootstrap_mean_ci(const std::vector<double> &values, int resamples = 4000, uint32_t seed = 12345);

struct Result {
    std::string name;                          // "matmul", "dequant", "attention", "decode", ...
    std::map<std::string, std::string> params; // "type": "q4_K", "K": "4096", "backend": "cpu", ...
    std::string unit = "ms";                   // unit of the samples
    bool higher_is_better = false;             // false for times, true for rates (t/s)
    std::vector<double> samples;
    // Derived (summarize()):
    double median = 0, p95 = 0, mean = 0, stddev = 0;
    // Extra figures to print/save alongside (GFLOP/s, GB/s): not compared.
    std::map<std::string, double> metrics;

    void summarize();
    // "matmul[K=4096,N=4096,M=1,backend=cpu,type=q4_K]": the identity used to match baselines.
    std::string key() const;
};

} // namespace rf::bench
