// Counters, gauges and latency histograms of the server, written as Prometheus text for
// GET /metrics. Updated from the connection threads and the scheduler thread, hence atomics
// and a mutex per histogram.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace rf::serve {

class Histogram {
public:
    explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
    void observe(double seconds);
    // "# TYPE name histogram" and the _bucket / _sum / _count lines.
    std::string prometheus(const std::string &name, const std::string &help) const;

private:
    std::vector<double> bounds_;
    mutable std::mutex mutex_;
    std::vector<uint64_t> counts_; // per bucket, not cumulative; the last one is +Inf
    double sum_ = 0;
    uint64_t count_ = 0;
};

struct Metrics {
    std::atomic<int64_t> prompt_tokens{0}, completion_tokens{0};
    std::atomic<int64_t> cancelled{0}; // requests dropped because their client left
    std::atomic<int64_t> queue_depth{0}, running{0};
    std::atomic<int64_t> kv_pages_used{0}, kv_pages_total{0};
    // Prefix caching: pages in the cache (held or not), requests looked up, those that found
    // cached pages, and the prompt tokens those pages held (prefill skipped).
    std::atomic<int64_t> kv_pages_cached{0};
    std::atomic<int64_t> prefix_lookups{0}, prefix_hits{0}, prefix_cached_tokens{0};
    // Scheduler steps (one forward pass each): those that only decode and those that also feed
    // prompt tokens, their wall time (the forward pass and the draws), the decode rows they ran
    // and the prompt tokens they fed: where a server's throughput goes against a decode benchmark.
    struct StepCounts {
        std::atomic<int64_t> steps{0}, decode_rows{0}, prompt_tokens{0};
        std::atomic<double> seconds{0};
    };
    StepCounts decode_steps, mixed_steps;
    // Speculative decoding (serve --draft-model / --draft-ngram): tokens drafted and those the
    // target accepted, over all requests.
    std::atomic<int64_t> draft_tokens{0}, draft_accepted{0};
    Histogram ttft{{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}};
    Histogram inter_token{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}};

    void count_request(const std::string &endpoint, int status);
    std::string prometheus() const;

private:
    void scheduler_steps(std::string &out) const;
    mutable std::mutex requests_mutex_;
    std::map<std::pair<std::string, int>, uint64_t> requests_; // (endpoint, status) -> count
};

} // namespace rf::serve
