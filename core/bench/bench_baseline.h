// Baseline files: benchmark results + hardware saved as JSON, and the comparison of a new run
// against one (improvements, regressions beyond a threshold, refusal across hardware).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "bench_hardware.h"

namespace rf::bench {

struct Baseline {
    HardwareInfo hardware;
    std::vector<Result> results;
    std::string created; // ISO 8601 UTC
};

// Writes atomically (temporary file + rename). Throws rf::Error naming the file on failure.
void save_baseline(const std::string &path, const std::vector<Result> &results, const HardwareInfo &hw);
// Throws rf::Error naming the file and the problem (not JSON, missing key, wrong type).
Baseline load_baseline(const std::string &path);

enum class Verdict { Same, Improved, Regressed, New, Missing };
const char *verdict_name(Verdict v);

struct Comparison {
    std::string key;
    std::string unit;
    double baseline = 0, current = 0; // medians
    double change = 0;                // + = better, - = worse, as a fraction of the baseline
    Verdict verdict = Verdict::Same;
};

// Matches results by key(); `threshold` is a fraction (0.10 = 10%): a result worse than the
// baseline by more than that is a regression, better by more than that an improvement.
std::vector<Comparison> compare_results(const std::vector<Result> &baseline, const std::vector<Result> &current,
                                        double threshold);

// Loads the baseline, refuses a different hardware identity unless `force` (throws
// rf::UsageError naming both, exit code 2), prints one line per benchmark to `out` and
// returns 1 if any regression exceeds the threshold, else 0.
int compare_baseline(const std::string &path, const std::vector<Result> &results, const HardwareInfo &hw,
                     double threshold, bool force, std::FILE *out);

} // namespace rf::bench
