// The profiler's ABI used directly, in front of the fake timed backend (fake_timed_backend.h):
// device timings read in batches, sampling of whole-graph calls, the phase accounting, the config.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "fake_timed_backend.h"
#include "profiler_test_util.h"

using namespace fake_timed;

TEST_CASE("profiler events: device timings are read in batches, never per node") {
    const rf_profiler_vtable *pv = profiler_vtable();
    const std::string trace = proftest::temp_path("events.json");
    void *prof = nullptr;
    char err[512] = {0};
    const std::string cfg = "{\"trace\": \"" + trace + "\", \"ceilings\": {\"fakeev\": {\"gbps\": 123, \"tflops\": 4.5}}}";
    REQUIRE(pv->init(cfg.c_str(), &prof, err, sizeof err) == RF_OK);

    FakeDevice device;
    const rf_backend_vtable inner = fake_vtable(true);
    const rf_backend_vtable *wrapped = nullptr;
    void *wctx = nullptr;
    REQUIRE(pv->wrap(prof, "fakeev", &inner, &device, &wrapped, &wctx) == RF_OK);
    REQUIRE(wrapped->event_create != nullptr);
    REQUIRE(wrapped->buffer_free == nullptr); // absent in the inner vtable: stays absent

    Chain chain(5);
    const rf_graph g = chain.graph();
    pv->phase(prof, "decode");
    for (int rep = 0; rep < 4; ++rep) REQUIRE(wrapped->compute(wctx, &g, err, sizeof err) == RF_OK);
    // Nodes ran one at a time; the only synchronizations were the one-time anchor's.
    CHECK(device.max_nodes_per_compute == 1);
    CHECK(device.computes == 4 * 5);
    CHECK(device.syncs <= 2);
    const int syncs_before = device.syncs;
    float host = 0;
    REQUIRE(wrapped->download(wctx, &host, &host, sizeof host, err, sizeof err) == RF_OK);
    CHECK(device.syncs == syncs_before);
    CHECK(device.stalls == 0);

    const std::string report = proftest::capture_stderr([&] { REQUIRE(pv->report(prof, err, sizeof err) == RF_OK); });
    INFO(report);
    CHECK(device.stalls == 0);
    CHECK(report.find("123 GB/s, 4.50 TFLOP/s (config)") != std::string::npos);
    CHECK(report.find("timing: device events") != std::string::npos);

    auto events = proftest::load_trace_nodes(trace);
    REQUIRE(events.size() == 4 * 5);
    for (size_t i = 0; i < events.size(); ++i) {
        const int k = int(i % 5);
        CHECK(events[i].name == node_label(k));
        CHECK(events[i].cat == "scale");
        CHECK(events[i].dur == Approx((k + 1) * 1000.0)); // device time, microseconds
        if (k > 0) CHECK(events[i].ts == Approx(events[i - 1].ts + events[i - 1].dur).margin(1.0));
    }
    pv->shutdown(prof);
    std::filesystem::remove(trace);
}

TEST_CASE("profiler events: a failing node returns the backend's status and message") {
    const rf_profiler_vtable *pv = profiler_vtable();
    void *prof = nullptr;
    char err[512] = {0};
    REQUIRE(pv->init("{}", &prof, err, sizeof err) == RF_OK);
    for (bool with_events : {true, false}) {
        FakeDevice device;
        const rf_backend_vtable inner = fake_vtable(with_events);
        const rf_backend_vtable *wrapped = nullptr;
        void *wctx = nullptr;
        REQUIRE(pv->wrap(prof, with_events ? "ev" : "clock", &inner, &device, &wrapped, &wctx) == RF_OK);
        Chain chain(3);
        chain.nodes[1].iparams[1] = 1; // fault
        const rf_graph g = chain.graph();
        err[0] = 0;
        CHECK(wrapped->compute(wctx, &g, err, sizeof err) == RF_ERR_DEVICE);
        CHECK(std::string(err) == "fake device fault at n1");
        CHECK(device.computes == 2); // stopped at the failing node
        // The host-clock path synchronizes after every node; the event path never does.
        if (!with_events) CHECK(device.syncs == 1);
    }
    proftest::capture_stderr([&] { pv->shutdown(prof); });
}

TEST_CASE("profiler config: bad values are refused with the key named") {
    const rf_profiler_vtable *pv = profiler_vtable();
    const std::map<std::string, std::string> cases = {
        {"{\"ceilings\": {\"cpu\": {\"gbps\": -1, \"tflops\": 1}}}", "profiler.ceilings.cpu"},
        {"{\"ceilings\": 3}", "profiler.ceilings"},
        {"{\"trace\": 5}", "profiler.trace"},
        {"{\"tarce\": \"x\"}", "unknown profiler config key \"tarce\""},
        {"{oops", "not valid JSON"},
        {"{\"sample_every\": 0}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": -2}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": 2.5}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": \"4\"}", "profiler.sample_every must be an integer >= 1"},
        {"{\"device_node_marks\": true}", "profiler.device_node_marks was removed"},
    };
    for (const auto &[json, message] : cases) {
        INFO(json);
        void *prof = nullptr;
        char err[512] = {0};
        CHECK(pv->init(json.c_str(), &prof, err, sizeof err) == RF_ERR_INVALID);
        CHECK_THAT(std::string(err), Catch::Contains(message));
    }
}

TEST_CASE("profiler sampling: sample_every 4 times calls 0, 1, 4, 8 of 10 node by node, the rest whole") {
    for (bool with_events : {true, false}) {
        INFO((with_events ? "device events" : "host clock"));
        const std::string trace = proftest::temp_path("sampled.json");
        Session s("{\"sample_every\": 4, \"trace\": \"" + trace + "\"}", with_events, "fakeev");
        Chain chain(5); // 1+2+3+4+5 = 15 ms per graph on the fake device clock
        s.pv->phase(s.prof, "decode");
        for (int call = 0; call < 10; ++call) s.compute(chain);
        // Unsampled calls hand the inner backend the whole graph in one compute().
        CHECK(s.device.compute_sizes == expected_sizes({1, 1, 0, 0, 1, 0, 0, 0, 1, 0}, 5));
        if (with_events) CHECK(s.device.syncs <= 2); // the one-time anchor only
        else CHECK(s.device.syncs == 4 * 5 + 6);     // after every node, and after every whole graph

        const std::string report = s.report();
        INFO(report);
        CHECK(s.device.stalls == 0);
        CHECK_THAT(report, Catch::Contains("sample_every 4: the first 2 and every 4th call"));
        CHECK_THAT(report, Catch::Contains("  fakeev   4 timed node by node, 6 whole\n"));
        CHECK_THAT(report, Catch::Contains("timed 20 nodes one at a time and 6 whole graphs (30 nodes)"));
        CHECK(std::regex_search(report, std::regex(R"(\(whole graph\) +5 nodes +- +fakeev +6 )")));
        // The phases table counts the whole graphs' nodes.
        CHECK(std::regex_search(report, std::regex(R"(\ndecode +[0-9.]+ +[0-9.]+ +50 )")));

        const auto events = proftest::load_trace_nodes(trace);
        REQUIRE(events.size() == 4 * 5 + 6);
        int whole = 0;
        for (const auto &e : events) {
            if (e.name != "(whole graph)") continue;
            ++whole;
            CHECK(e.cat == "(whole graph)");
            if (with_events) CHECK(e.dur == Approx(15000.0)); // the whole graph's device time, us
        }
        CHECK(whole == 6);
        std::filesystem::remove(trace);
    }
}

TEST_CASE("profiler sampling: graphs of different sizes are sampled separately") {
    Session s("{\"sample_every\": 3}", true, "fakeev");
    Chain a(2), b(3);
    for (int call = 0; call < 7; ++call) s.compute(a), s.compute(b);
    // Counted per size, so each graph is timed node by node on its calls 0, 1, 3, 6 (a single
    // counter would have landed every third call on alternating graphs only by chance).
    std::vector<int> expected;
    const std::vector<int> per_node = {1, 1, 0, 1, 0, 0, 1};
    for (int p : per_node) {
        const auto sa = expected_sizes({p}, 2), sb = expected_sizes({p}, 3);
        expected.insert(expected.end(), sa.begin(), sa.end());
        expected.insert(expected.end(), sb.begin(), sb.end());
    }
    CHECK(s.device.compute_sizes == expected);
    const std::string report = s.report();
    INFO(report);
    CHECK_THAT(report, Catch::Contains("  fakeev   8 timed node by node, 6 whole\n"));
}

TEST_CASE("profiler sampling: sample_every 1 times every call node by node") {
    Session s("{\"sample_every\": 1}", true, "fakeev");
    Chain chain(4);
    for (int call = 0; call < 5; ++call) s.compute(chain);
    CHECK(s.device.max_nodes_per_compute == 1);
    CHECK(s.device.computes == 5 * 4);
    const std::string report = s.report();
    CHECK_THAT(report, Catch::Contains("  fakeev   5 timed node by node, 0 whole\n"));
    CHECK_THAT(report, Catch::Contains("timed 20 nodes, "));
}

TEST_CASE("profiler phases: node time and outside-ops time add up to the wall time") {
    // Node time >= 30 ms, outside ops >= 20 ms, and together they are the wall time (decode_rounds).
    for (int every : {1, 3}) {
        INFO("sample_every " << every);
        Session s("{\"sample_every\": " + std::to_string(every) + "}", true, "fakeev");
        const std::string report = decode_rounds(s, false);
        const PhaseRow r = phase_row(report, "decode");
        CHECK(r.nodes == 15);
        CHECK(r.node_ms >= 30.0);
        CHECK(r.outside_ms >= 20.0);
        CHECK(r.node_ms + r.outside_ms == Approx(r.wall_ms).epsilon(0.01));
        CHECK(r.accounted_pct == Approx(100.0).margin(1.0));
        std::smatch m;
        REQUIRE(std::regex_search(report, m, std::regex(R"(total: op time ([0-9.]+) ms \+ outside ops ([0-9.]+) ms = ([0-9.]+) ms of ([0-9.]+) ms wall \(([0-9.]+)%\))")));
        CHECK(std::stod(m[1]) == Approx(r.node_ms).margin(0.002));
        CHECK(std::stod(m[4]) == Approx(r.wall_ms).margin(0.002));
        CHECK(std::stod(m[5]) == Approx(100.0).margin(1.0));
        CHECK(report.find("partial") == std::string::npos);
    }
}

TEST_CASE("profiler phases: a capped event store makes the rollup partial") {
    Session s("{\"max_events\": 3}", true, "fakeev");
    Chain chain(5);
    s.pv->phase(s.prof, "decode");
    s.compute(chain);
    const std::string report = s.report();
    INFO(report);
    // 5 nodes and the download of report(): 3 samples stored, 3 not.
    CHECK_THAT(report, Catch::Contains("note: partial: the phase rollup sees only the first 3 stored samples (max_events); "
                                       "the time of the 3 later ones counts as outside ops"));
    // The per-op tables still have every node.
    CHECK_THAT(report, Catch::Contains("timed 5 nodes, 15.000 ms in total"));
}

TEST_CASE("profiler sampling: a failing whole-graph call returns the backend's status and message") {
    for (bool with_events : {true, false}) {
        Session s("{\"sample_every\": 4}", with_events, "fakeev");
        Chain good(3), bad(3);
        bad.nodes[2].iparams[1] = 1; // fault
        s.compute(good), s.compute(good); // the first two calls: node by node
        const rf_graph g = bad.graph();
        s.err[0] = 0;
        CHECK(s.vt->compute(s.ctx, &g, s.err, sizeof s.err) == RF_ERR_DEVICE); // call 2: whole
        CHECK(std::string(s.err) == "fake device fault at n2");
        CHECK(s.device.compute_sizes == expected_sizes({1, 1, 0}, 3));
    }
}

TEST_CASE("profiler phases: time to first token ends with the 'first token' phase; transfers are op time") {
    Session s("{}", true, "fakeev");
    s.device.realtime = true;
    Chain chain(2); // 1 + 2 ms
    s.pv->phase(s.prof, "load");
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    s.pv->phase(s.prof, "prefill");
    s.compute(chain);
    float host[4] = {0};
    REQUIRE(s.vt->download(s.ctx, host, host, sizeof host, s.err, sizeof s.err) == RF_OK);
    s.pv->phase(s.prof, "first token");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s.pv->phase(s.prof, "decode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    s.compute(chain);
    const std::string report = s.report();
    INFO(report);
    std::smatch m;
    REQUIRE(std::regex_search(report, m, std::regex(R"(time to first token: ([0-9.]+) ms)")));
    const double ttft = std::stod(m[1]);
    CHECK(ttft >= 3.0 + 3.0 + 2.0); // load sleep + prefill nodes + first-token sleep
    // The phases before decode, back to back from the first mark.
    CHECK(ttft == Approx(phase_row(report, "load").wall_ms + phase_row(report, "prefill").wall_ms +
                         phase_row(report, "first token").wall_ms).margin(0.01));
    CHECK(phase_row(report, "decode").wall_ms >= 5.0);
    // The prefill's download is a transfer: in the per-op table and in the phase's op time, not a node.
    CHECK(std::regex_search(report, std::regex(R"(\ndownload +fakeev -> host +- +fakeev +2 )"))); // prefill's and report()'s
    CHECK(phase_row(report, "prefill").nodes == 2);
    CHECK_THAT(report, Catch::Contains("transfers (host clock around each copy): 0 uploads"));
}
