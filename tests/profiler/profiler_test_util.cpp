#include "profiler_test_util.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace proftest {

std::string temp_path(const std::string &name) {
    static std::atomic<int> counter{0};
    auto p = std::filesystem::temp_directory_path() /
             ("rf-prof-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" + name);
    std::filesystem::remove(p);
    return p.string();
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string capture_stderr_impl(void (*fn)(void *), void *arg) {
    const std::string path = temp_path("stderr.txt");
    std::fflush(stderr);
    const int saved = ::dup(2);
    FILE *f = std::fopen(path.c_str(), "wb");
    ::dup2(::fileno(f), 2);
    try {
        fn(arg);
    } catch (...) {
        std::fflush(stderr);
        ::dup2(saved, 2);
        ::close(saved);
        std::fclose(f);
        throw;
    }
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(f);
    std::string text = read_file(path);
    std::filesystem::remove(path);
    return text;
}

std::vector<TraceNode> load_trace_nodes(const std::string &path, bool with_transfers) {
    const std::string text = read_file(path);
    rapidjson::Document d;
    d.Parse(text.c_str(), text.size());
    INFO("trace file " << path);
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(d.IsObject());
    REQUIRE(d.HasMember("traceEvents"));
    REQUIRE(d["traceEvents"].IsArray());
    std::vector<TraceNode> out;
    for (const auto &e : d["traceEvents"].GetArray()) {
        REQUIRE(e.IsObject());
        REQUIRE(e.HasMember("ph"));
        if (std::string(e["ph"].GetString()) != "X") continue;
        REQUIRE(e["ts"].IsNumber());
        REQUIRE(e["dur"].IsNumber());
        const std::string cat = e["cat"].GetString();
        if (cat == "phase" || (!with_transfers && (cat == "upload" || cat == "download"))) continue;
        out.push_back({e["name"].GetString(), e["cat"].GetString(), e["tid"].GetInt(), e["ts"].GetDouble(),
                       e["dur"].GetDouble()});
    }
    return out;
}

} // namespace proftest
