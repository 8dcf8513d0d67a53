// CLI glue shared by benchmark commands (rocmforge-bench-ops, rocmforge ab, ...): the
// --save-baseline / --compare-baseline / --threshold / --force / -o options, printing results
// as a markdown table or JSON, and a progress bar for long runs on a terminal.
#pragma once
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_baseline.h"

namespace rf {

struct BenchReportArgs {
    std::string save_baseline;    // --save-baseline FILE
    std::string compare_baseline; // --compare-baseline FILE
    double threshold = 0.10;      // --threshold 10% (or 0.1)
    bool force = false;           // --force: compare across different hardware
    std::string format = "md";    // -o md|json

    // Consumes argv[i] (and its value) if it is one of these options. Throws UsageError on a
    // missing or bad value.
    bool parse(int argc, char **argv, int &i);
    static const char *help();
};

void print_results_md(std::FILE *out, const std::vector<bench::Result> &results);
void print_results_json(std::FILE *out, const std::vector<bench::Result> &results, const bench::HardwareInfo &hw);

// Prints the results (stdout), then saves and/or compares as asked (comparison on stderr).
// Returns the exit code: 0, or 1 when a regression exceeds the threshold. A baseline from other
// hardware without --force throws rf::UsageError (exit code 2).
int finish_bench_report(const BenchReportArgs &args, const std::vector<bench::Result> &results,
                        const bench::HardwareInfo &hw);

// A grouped horizontal bar chart as a standalone SVG file: one row per label, one bar per series.
struct BarSeries {
    std::string name;
    std::vector<double> values; // one per label
};
void write_bar_chart_svg(const std::string &path, const std::string &title, const std::string &unit,
                         const std::vector<std::string> &labels, const std::vector<BarSeries> &series);

// "[#####.....] 12/84 label" on stderr, redrawn in place; silent unless stderr is a terminal and
// the run has lasted more than a couple of seconds.
class ProgressBar {
public:
    explicit ProgressBar(size_t total);
    ~ProgressBar();
    void step(const std::string &label); // call before each item
    void done();

private:
    size_t total_, current_ = 0;
    bool tty_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

} // namespace rf
