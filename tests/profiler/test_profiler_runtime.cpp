// The profiler plugin loaded by rf::Runtime in front of the fake backends of tests/core
// (fakehost: host memory, ADD/MUL/SCALE; fakedev: "device" memory, SCALE only).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <sstream>

#include "profiler_test_util.h"
#include "rocmforge/graph.h"
#include "rocmforge/profiler_host.h"
#include "rocmforge/runtime.h"

namespace {

std::string dir_of(const char *env) {
    const char *p = std::getenv(env);
    REQUIRE(p != nullptr);
    return std::filesystem::path(p).parent_path().string();
}

std::unique_ptr<rf::Runtime> make_runtime(bool profile, const std::string &trace) {
    std::string json = "{\"backends\": [\"fakedev\", \"fakehost\"], \"plugin_dirs\": [\"" + dir_of("RF_FAKE_HOST") +
                       "\", \"" + dir_of("RF_PROFILER") + "\"]";
    if (profile) json += ", \"profiler\": {\"enabled\": true, \"trace\": \"" + trace + "\"}";
    return rf::Runtime::create(rf::Config::from_json(json + "}", "profiler-test.json"));
}

struct Run {
    std::vector<float> out;
    std::vector<std::pair<std::string, int>> nodes; // label, op of every node run
};

// Two "layers" of a toy model; nodes alternate between the device and the host backend.
Run run_model(rf::Runtime &rt, int repeats) {
    rf::Executor ex(rt);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1, 1);
    const int64_t n = 257;
    std::vector<float> x(n * 4), bias(n);
    for (auto &v : x) v = dist(rng);
    for (auto &v : bias) v = dist(rng);
    Run r;
    for (int rep = 0; rep < repeats; ++rep) {
        rt.phase(rep == 0 ? "prefill" : "decode");
        rf::Graph g;
        auto *h = g.input("x", RF_TYPE_F32, {n, 4}, x.data());
        auto *b = g.input("bias", RF_TYPE_F32, {n}, bias.data());
        for (int l = 0; l < 2; ++l) {
            g.set_prefix("blk." + std::to_string(l) + ".");
            auto *q = g.scale(h, 0.5f, "attn_q");      // fakedev
            auto *s = g.add(q, b, "attn_bias");        // fakehost
            auto *m = g.mul(s, h, "ffn_up");           // fakehost
            h = g.scale(m, 1.25f, "ffn_down");         // fakedev
        }
        g.set_prefix("");
        auto *y = g.add(h, b, "output");
        ex.run(g);
        r.out.resize(size_t(n * 4));
        ex.read(y, r.out.data(), r.out.size() * sizeof(float));
        for (const auto &node : g.nodes()) r.nodes.emplace_back(node.label ? node.label : "", node.op);
    }
    return r;
}

const char *op_name(int op) {
    switch (op) {
    case RF_OP_ADD: return "add";
    case RF_OP_MUL: return "mul";
    case RF_OP_SCALE: return "scale";
    default: return "?";
    }
}

} // namespace

TEST_CASE("profiler: wrapped backends give the same results and record every node") {
    const std::string trace = proftest::temp_path("trace.json");
    Run plain, profiled;
    {
        auto rt = make_runtime(false, "");
        REQUIRE(rt->profiler() == nullptr);
        plain = run_model(*rt, 3);
    }
    std::string report;
    {
        auto rt = make_runtime(true, trace);
        REQUIRE(rt->profiler() != nullptr);
        // Optional slots the fakes lack stay absent after wrapping (the core's defaults apply).
        REQUIRE(rt->find("fakehost")->vtable()->synchronize == nullptr);
        REQUIRE(rt->find("fakehost")->vtable()->event_create == nullptr);
        profiled = run_model(*rt, 3);
        report = proftest::capture_stderr([&] { rt->profiler()->report(); });
    }
    INFO(report);
    // Bit-identical outputs.
    REQUIRE(plain.out.size() == profiled.out.size());
    CHECK(std::memcmp(plain.out.data(), profiled.out.data(), plain.out.size() * sizeof(float)) == 0);

    // One trace event per node, in order per backend track, with the node's label and op.
    auto events = proftest::load_trace_nodes(trace);
    REQUIRE(events.size() == profiled.nodes.size());
    std::map<std::string, int> expected, seen;
    for (const auto &[label, op] : profiled.nodes) expected[label + "|" + op_name(op)]++;
    for (const auto &e : events) seen[e.name + "|" + e.cat]++;
    CHECK(seen == expected);
    CHECK(seen["blk.1.attn_q|scale"] == 3);
    CHECK(seen["output|add"] == 3);
    for (const auto &e : events) {
        CHECK(e.dur >= 0);
        CHECK(e.tid >= 1); // backend tracks; 0 is the phase track
    }

    // Copies (inputs to the device, cross-backend copies through a host staging buffer, the
    // result read back) are timed as transfers on their backend's track.
    auto with_transfers = proftest::load_trace_nodes(trace, true);
    std::map<std::string, int> transfers;
    for (const auto &e : with_transfers)
        if (e.cat == "upload" || e.cat == "download") {
            CHECK(e.name == e.cat);
            CHECK(e.tid >= 1);
            transfers[e.cat]++;
        }
    CHECK(transfers["upload"] > 0);
    CHECK(transfers["download"] > 0);
    CHECK(std::regex_search(report, std::regex(R"(\nupload +host -> fakedev +- +fakedev +\d+ )")));
    CHECK(std::regex_search(report, std::regex(R"(\ndownload +fakedev -> host +- +fakedev +\d+ )")));
    CHECK(with_transfers.size() == events.size() + size_t(transfers["upload"] + transfers["download"]));

    // The report's per-op totals add up to the grand totals and match the trace.
    std::smatch m;
    REQUIRE(std::regex_search(report, m, std::regex(R"(timed (\d+) nodes, ([0-9.]+) ms in total)")));
    CHECK(std::stoul(m[1]) == profiled.nodes.size());
    const double total_ms = std::stod(m[2]);
    REQUIRE(std::regex_search(report, m, std::regex(R"(transfers \(host clock around each copy\): (\d+) uploads, [0-9.]+ MiB in ([0-9.]+) ms; (\d+) downloads, [0-9.]+ MiB in ([0-9.]+) ms)")));
    CHECK(std::stoi(m[1]) == transfers["upload"]);
    CHECK(std::stoi(m[3]) == transfers["download"]);
    const double transfer_ms = std::stod(m[2]) + std::stod(m[4]);
    const size_t at = report.find("per op (all shapes)");
    REQUIRE(at != std::string::npos);
    std::istringstream lines(report.substr(at));
    std::string line;
    std::getline(lines, line), std::getline(lines, line); // title, header
    double node_ms = 0, copy_ms = 0;
    unsigned long node_calls = 0, copy_calls = 0;
    std::map<std::string, double> trace_ms;
    for (const auto &e : events) trace_ms[e.cat] += e.dur / 1000.0;
    while (std::getline(lines, line) && !line.empty()) {
        std::istringstream f(line);
        std::string op, backend;
        unsigned long calls;
        double ms;
        REQUIRE(static_cast<bool>(f >> op >> backend >> calls >> ms));
        const bool copy = op == "upload" || op == "download";
        (copy ? copy_ms : node_ms) += ms;
        (copy ? copy_calls : node_calls) += calls;
    }
    CHECK(node_calls == profiled.nodes.size());
    CHECK(copy_calls == size_t(transfers["upload"] + transfers["download"]));
    CHECK(node_ms == Approx(total_ms).margin(0.01));
    CHECK(copy_ms == Approx(transfer_ms).margin(0.01));
    double trace_total = 0;
    for (const auto &[op, ms] : trace_ms) trace_total += ms;
    CHECK(trace_total == Approx(total_ms).margin(0.01));
    // Per-layer and per-part rollups and the phases are present.
    CHECK(report.find("per layer") != std::string::npos);
    CHECK(report.find("attention") != std::string::npos);
    CHECK(report.find("mlp") != std::string::npos);
    CHECK(report.find("prefill") != std::string::npos);
    CHECK(report.find("decode") != std::string::npos);
    CHECK(report.find("default: generic CPU guess") != std::string::npos);
    std::filesystem::remove(trace);
}
