// rocmforge-bench-sampler: host time of one draw per sampling chain, over random logits (normal,
// sd 3) of a vocabulary of N tokens: the whole-vocabulary draw (OpenAI requests: no top-k, top-p
// or min-p), llama.cpp's default chain (top-k 40, top-p 0.95, min-p 0.05) and greedy; then a
// step's draws for 16 sequences as the decode loops make them (rf::parallel_for over
// rf::draw_threads(16) threads, each sequence its own sampler and logits row).
// Usage: rocmforge-bench-sampler [N (default 32000)] [DRAWS (default 2000)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "rocmforge/parallel_for.h"
#include "rocmforge/sampler.h"

int main(int argc, char **argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 32000, draws = argc > 2 ? std::atol(argv[2]) : 2000;
    if (n < 1 || draws < 1) {
        std::fprintf(stderr, "usage: rocmforge-bench-sampler [N >= 1] [DRAWS >= 1]\n");
        return 2;
    }
    std::mt19937 g(1);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::vector<float> logits((size_t)n);
    for (float &x : logits) x = normal(g);
    struct Chain { const char *name; rf::SamplerParams p; };
    rf::SamplerParams whole, deflt, greedy;
    whole.top_k = 0, whole.top_p = 1.0f, whole.min_p = 0.0f;
    greedy.temperature = 0.0f;
    std::printf("%-22s %10s   (vocabulary %ld, %ld draws)\n", "chain", "us/draw", n, draws);
    for (const Chain &c : {Chain{"whole vocabulary T=0.8", whole}, Chain{"default chain", deflt}, Chain{"greedy", greedy}}) {
        rf::Sampler s(c.p);
        long checksum = 0;
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < draws; ++i) checksum += s.sample(logits.data(), n);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / (double)draws;
        std::printf("%-22s %10.2f   (token sum %ld)\n", c.name, us, checksum);
    }
    // One decode step of 16 sequences: 16 rows of logits, 16 samplers, drawn together.
    const size_t seqs = 16, threads = rf::draw_threads(seqs);
    std::vector<float> rows(seqs * (size_t)n);
    for (float &x : rows) x = normal(g);
    const long steps = std::max(1L, draws / (long)seqs);
    std::printf("%-22s %10s   (16 sequences on %zu threads, %ld steps)\n", "step of 16 draws", "us/step", threads, steps);
    for (const Chain &c : {Chain{"whole vocabulary T=0.8", whole}, Chain{"default chain", deflt}}) {
        std::vector<rf::Sampler> samplers(seqs, rf::Sampler(c.p));
        std::vector<int32_t> next(seqs);
        const auto t0 = std::chrono::steady_clock::now();
        for (long st = 0; st < steps; ++st)
            rf::parallel_for(seqs, threads, [&](size_t q) { next[q] = samplers[q].sample(rows.data() + q * (size_t)n, n); });
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / (double)steps;
        std::printf("%-22s %10.2f\n", c.name, us);
    }
    return 0;
}
