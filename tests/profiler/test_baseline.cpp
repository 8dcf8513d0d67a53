// Baselines: save/load round trip, comparison verdicts, refusal across hardware.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench_baseline.h"
#include "profiler_test_util.h"
#include "rocmforge/error.h"

namespace {

rf::bench::HardwareInfo hw(const std::string &cpu, const std::string &gpu) {
    rf::bench::HardwareInfo h;
    h.cpu_model = cpu;
    h.os = "Linux test";
    h.compiler = "gcc test";
    h.git_commit = "abc123";
    h.build_flags = "buildtype=release";
    if (!gpu.empty()) h.devices.push_back({"hip", gpu, "sm_90", "driver 1.2"});
    h.devices.push_back({"cpu", cpu, "x86_64-avx2", ""});
    return h;
}

std::vector<rf::bench::Result> results() {
    std::vector<rf::bench::Result> v;
    for (const char *type : {"f16", "q4_0", "q4_K"}) {
        rf::bench::Result r;
        r.name = "matmul";
        r.params = {{"type", type}, {"K", "4096"}, {"N", "4096"}, {"M", "1"}};
        r.samples = {1.0, 1.1, 0.9, 1.05, 0.95};
        r.summarize();
        v.push_back(r);
    }
    rf::bench::Result tps;
    tps.name = "decode";
    tps.unit = "t/s";
    tps.higher_is_better = true;
    tps.samples = {50, 52, 48};
    tps.summarize();
    v.push_back(tps);
    return v;
}

struct Compared {
    int rc;
    std::string text;
};

Compared compare(const std::string &path, const std::vector<rf::bench::Result> &r, const rf::bench::HardwareInfo &h,
                 bool force = false) {
    const std::string out = proftest::temp_path("compare.txt");
    FILE *f = std::fopen(out.c_str(), "w");
    REQUIRE(f);
    int rc = -1;
    try {
        rc = rf::bench::compare_baseline(path, r, h, 0.10, force, f);
    } catch (...) {
        std::fclose(f);
        std::filesystem::remove(out);
        throw;
    }
    std::fclose(f);
    Compared c{rc, proftest::read_file(out)};
    std::filesystem::remove(out);
    return c;
}

} // namespace

TEST_CASE("bench stats: Welford mean/stddev and nearest-rank percentiles") {
    rf::bench::Result r;
    r.samples = {2, 4, 4, 4, 5, 5, 7, 9};
    r.summarize();
    CHECK(r.mean == Approx(5.0));
    CHECK(r.stddev == Approx(2.138089935)); // sample standard deviation
    CHECK(r.median == 4);
    CHECK(r.p95 == 9);
    rf::bench::Welford w;
    for (int i = 0; i < 1000; ++i) w.add(1e9 + (i % 2)); // large offset: stable in doubles
    CHECK(w.mean() == Approx(1e9 + 0.5));
    CHECK(w.stddev() == Approx(0.50025).epsilon(1e-3));
}

TEST_CASE("bench stats: bootstrap interval brackets the mean and narrows with agreement") {
    const auto wide = rf::bench::bootstrap_mean_ci({0.8, 1.2, 0.9, 1.1, 1.0, 0.7, 1.3});
    CHECK(wide.mean == Approx(1.0));
    CHECK(wide.low < 1.0);
    CHECK(wide.high > 1.0);
    CHECK(wide.low >= 0.7);
    CHECK(wide.high <= 1.3);
    const auto tight = rf::bench::bootstrap_mean_ci({1.01, 0.99, 1.0, 1.0, 1.01, 0.99, 1.0});
    CHECK(tight.high - tight.low < (wide.high - wide.low) / 5);
    const auto one = rf::bench::bootstrap_mean_ci({2.0});
    CHECK((one.low == 2.0 && one.high == 2.0));
}

TEST_CASE("baseline: against itself there is no regression") {
    const std::string path = proftest::temp_path("base.json");
    const auto h = hw("Test CPU 9000", "Test GPU");
    rf::bench::save_baseline(path, results(), h);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    const auto loaded = rf::bench::load_baseline(path);
    REQUIRE(loaded.results.size() == 4);
    CHECK(loaded.results[1].key() == results()[1].key());
    CHECK(loaded.results[1].samples == results()[1].samples);
    CHECK(loaded.hardware.identity() == h.identity());
    const auto c = compare(path, results(), h);
    INFO(c.text);
    CHECK(c.rc == 0);
    CHECK(c.text.find("REGRESSED") == std::string::npos);
    CHECK(c.text.find("0 regression(s)") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("baseline: a slowed record is exactly the regression reported") {
    const std::string path = proftest::temp_path("base.json");
    const auto h = hw("Test CPU 9000", "Test GPU");
    rf::bench::save_baseline(path, results(), h);
    auto now = results();
    for (auto &s : now[1].samples) s *= 1.3; // q4_0 matmul 30% slower
    now[1].summarize();
    for (auto &s : now[3].samples) s *= 1.5; // decode 50% faster (higher is better)
    now[3].summarize();
    const auto c = compare(path, now, h);
    INFO(c.text);
    CHECK(c.rc == 1);
    CHECK(c.text.find("1 regression(s)") != std::string::npos);
    CHECK(c.text.find("REGRESSED matmul[K=4096,M=1,N=4096,type=q4_0]") != std::string::npos);
    CHECK(c.text.find("improved  decode[]") != std::string::npos);

    const auto v = rf::bench::compare_results(results(), now, 0.10);
    int regressed = 0;
    for (const auto &x : v) regressed += x.verdict == rf::bench::Verdict::Regressed;
    CHECK(regressed == 1);
    CHECK(v[1].change == Approx(-0.3));
    // Below the threshold: not a regression.
    auto slight = results();
    for (auto &s : slight[0].samples) s *= 1.05;
    slight[0].summarize();
    CHECK(compare(path, slight, h).rc == 0);
    std::filesystem::remove(path);
}

TEST_CASE("baseline: a result whose model label changed still meets its baseline when unambiguous") {
    auto labelled = [](const char *model, const char *test, double tps) {
        rf::bench::Result r;
        r.name = test;
        r.unit = "t/s";
        r.higher_is_better = true;
        r.params = {{"backend", "hip"}, {"model", model}};
        r.samples = {tps};
        r.summarize();
        return r;
    };
    const std::vector<rf::bench::Result> base = {labelled("llama 6.7B Q4_K", "pp512", 100), labelled("llama 6.7B Q4_K", "tg128", 10)};
    const auto v = rf::bench::compare_results(base, {labelled("llama 6.7B Q4_K_M", "pp512", 50)}, 0.10);
    REQUIRE(v.size() == 2);
    CHECK(v[0].verdict == rf::bench::Verdict::Regressed);
    CHECK(v[0].change == Approx(-0.5));
    CHECK(v[1].verdict == rf::bench::Verdict::Missing); // tg128 was not run
    // Two baseline models with the same test: no guess.
    const std::vector<rf::bench::Result> two = {labelled("a", "pp512", 100), labelled("b", "pp512", 100)};
    const auto w = rf::bench::compare_results(two, {labelled("c", "pp512", 50)}, 0.10);
    CHECK(w[0].verdict == rf::bench::Verdict::New);
}

TEST_CASE("baseline: different hardware is refused unless forced, naming both") {
    const std::string path = proftest::temp_path("base.json");
    rf::bench::save_baseline(path, results(), hw("Test CPU 9000", "Test GPU"));
    const auto other = hw("Other CPU 1", "Other GPU");
    try {
        compare(path, results(), other);
        FAIL("expected a refusal");
    } catch (const rf::UsageError &e) {
        const std::string m = e.what();
        CHECK(e.exit_code() == 2);
        CHECK(m.find("Test CPU 9000") != std::string::npos);
        CHECK(m.find("Test GPU") != std::string::npos);
        CHECK(m.find("Other CPU 1") != std::string::npos);
        CHECK(m.find("Other GPU") != std::string::npos);
    }
    const auto forced = compare(path, results(), other, true);
    CHECK(forced.rc == 0);
    CHECK(forced.text.find("different hardware") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("baseline: malformed files are errors naming the file and the problem") {
    const std::string path = proftest::temp_path("bad.json");
    {
        std::ofstream(path) << "{\"format\": \"rocmforge-baseline\", \"version\": 1, \"created\": \"x\"}";
    }
    CHECK_THROWS_WITH(rf::bench::load_baseline(path), Catch::Contains(path) && Catch::Contains("missing \"hardware\""));
    {
        std::ofstream(path) << "[1, 2";
    }
    CHECK_THROWS_WITH(rf::bench::load_baseline(path), Catch::Contains("not valid JSON"));
    CHECK_THROWS_WITH(rf::bench::load_baseline(path + ".absent"), Catch::Contains("cannot open baseline file"));
    std::filesystem::remove(path);
}
