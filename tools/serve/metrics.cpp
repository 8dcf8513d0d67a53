#include "metrics.h"

#include <cstdio>

namespace rf::serve {
namespace {

std::string num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.9g", v); // "0.005", not its binary expansion
    return b;
}

void scalar(std::string &out, const char *name, const char *type, const char *help, double v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + num(v) + "\n";
}

} // namespace

void Histogram::observe(double seconds) {
    size_t i = 0;
    while (i < bounds_.size() && seconds > bounds_[i]) ++i;
    std::lock_guard lock(mutex_);
    ++counts_[i];
    sum_ += seconds;
    ++count_;
}

std::string Histogram::prometheus(const std::string &name, const std::string &help) const {
    std::lock_guard lock(mutex_);
    std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= bounds_.size(); ++i) {
        cumulative += counts_[i];
        out += name + "_bucket{le=\"" + (i < bounds_.size() ? num(bounds_[i]) : std::string("+Inf")) + "\"} " +
               std::to_string(cumulative) + "\n";
    }
    out += name + "_sum " + num(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
    return out;
}

// The step counters of both kinds, grouped by metric as the text format wants.
void Metrics::scheduler_steps(std::string &out) const {
    struct Family { const char *name, *help; };
    static const Family families[] = {
        {"rocmforge_scheduler_steps_total", "forward passes: kind decode (only decoding requests) or mixed (with prompt tokens)"},
        {"rocmforge_scheduler_step_seconds_total", "wall time of those steps (forward pass and draws)"},
        {"rocmforge_scheduler_decode_rows_total", "tokens decoded in those steps (one per decoding request)"},
        {"rocmforge_scheduler_prompt_tokens_total", "prompt tokens fed in those steps"}};
    for (int f = 0; f < 4; ++f) {
        out += std::string("# HELP ") + families[f].name + " " + families[f].help + "\n# TYPE " + families[f].name + " counter\n";
        for (const auto &[kind, c] : {std::pair<const char *, const StepCounts *>{"decode", &decode_steps}, {"mixed", &mixed_steps}}) {
            const std::string v = f == 1 ? num(c->seconds.load())
                                         : std::to_string(f == 0 ? c->steps.load() : f == 2 ? c->decode_rows.load() : c->prompt_tokens.load());
            out += std::string(families[f].name) + "{kind=\"" + kind + "\"} " + v + "\n";
        }
    }
}

void Metrics::count_request(const std::string &endpoint, int status) {
    std::lock_guard lock(requests_mutex_);
    ++requests_[{endpoint, status}];
}

std::string Metrics::prometheus() const {
    std::string out = "# HELP rocmforge_requests_total HTTP requests answered, by endpoint and status\n"
                      "# TYPE rocmforge_requests_total counter\n";
    {
        std::lock_guard lock(requests_mutex_);
        for (const auto &[key, n] : requests_)
            out += "rocmforge_requests_total{endpoint=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
                   std::to_string(n) + "\n";
    }
    scalar(out, "rocmforge_prompt_tokens_total", "counter", "prompt tokens of admitted requests", (double)prompt_tokens);
    scalar(out, "rocmforge_completion_tokens_total", "counter", "tokens generated", (double)completion_tokens);
    scalar(out, "rocmforge_requests_cancelled_total", "counter", "requests whose client left before the end", (double)cancelled);
    scalar(out, "rocmforge_queue_depth", "gauge", "requests waiting for a sequence slot or KV pages", (double)queue_depth);
    scalar(out, "rocmforge_running_sequences", "gauge", "requests in the decode batch", (double)running);
    scalar(out, "rocmforge_kv_pages_used", "gauge", "KV cache pages in use", (double)kv_pages_used);
    scalar(out, "rocmforge_kv_pages_total", "gauge", "KV cache pages in the pool", (double)kv_pages_total);
    scalar(out, "rocmforge_kv_pages_cached", "gauge", "KV cache pages held by the prefix cache (in use or evictable)",
           (double)kv_pages_cached);
    scalar(out, "rocmforge_prefix_cache_lookups_total", "counter", "prompts looked up in the prefix cache",
           (double)prefix_lookups);
    scalar(out, "rocmforge_prefix_cache_hits_total", "counter", "prompts that began with cached pages", (double)prefix_hits);
    scalar(out, "rocmforge_prefix_cache_cached_tokens_total", "counter", "prompt tokens served from the prefix cache (prefill skipped)",
           (double)prefix_cached_tokens);
    scalar(out, "rocmforge_draft_tokens_total", "counter", "tokens drafted for speculative decoding", (double)draft_tokens);
    scalar(out, "rocmforge_draft_accepted_tokens_total", "counter", "drafted tokens the target accepted", (double)draft_accepted);
    scheduler_steps(out);
    out += ttft.prometheus("rocmforge_time_to_first_token_seconds", "from admission to the queue until the first token");
    out += inter_token.prometheus("rocmforge_inter_token_seconds", "between consecutive tokens of one request");
    return out;
}

} // namespace rf::serve
