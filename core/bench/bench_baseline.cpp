#include "bench_baseline.h"

#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "rocmforge/atomic_file.h"
#include "rocmforge/error.h"

namespace rf::bench {
namespace {

constexpr const char *kFormat = "rocmforge-baseline";
constexpr int kVersion = 1;

std::string now_iso() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void kv(Writer &w, const char *k, const std::string &v) {
    w.Key(k);
    w.String(v.c_str(), rapidjson::SizeType(v.size()));
}

// Accessors that name the file and the key when the file is malformed.
struct Reader {
    const std::string &path;
    [[noreturn]] void bad(const std::string &what) const { throw Error("baseline " + path + ": " + what); }
    const rapidjson::Value &member(const rapidjson::Value &o, const char *k, const std::string &where) const {
        if (!o.IsObject() || !o.HasMember(k)) bad("missing \"" + std::string(k) + "\" in " + where);
        return o[k];
    }
    std::string str(const rapidjson::Value &o, const char *k, const std::string &where) const {
        const auto &v = member(o, k, where);
        if (!v.IsString()) bad("\"" + std::string(k) + "\" in " + where + " must be a string");
        return v.GetString();
    }
    double num(const rapidjson::Value &o, const char *k, const std::string &where) const {
        const auto &v = member(o, k, where);
        if (!v.IsNumber()) bad("\"" + std::string(k) + "\" in " + where + " must be a number");
        return v.GetDouble();
    }
};

} // namespace

void save_baseline(const std::string &path, const std::vector<Result> &results, const HardwareInfo &hw) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    kv(w, "format", kFormat);
    w.Key("version"), w.Int(kVersion);
    kv(w, "created", now_iso());
    w.Key("hardware");
    w.StartObject();
    kv(w, "cpu_model", hw.cpu_model);
    kv(w, "os", hw.os);
    kv(w, "compiler", hw.compiler);
    kv(w, "git_commit", hw.git_commit);
    kv(w, "build_flags", hw.build_flags);
    w.Key("devices");
    w.StartArray();
    for (const auto &d : hw.devices) {
        w.StartObject();
        kv(w, "backend", d.backend), kv(w, "name", d.name), kv(w, "arch", d.arch), kv(w, "details", d.details);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.Key("results");
    w.StartArray();
    for (const Result &r : results) {
        w.StartObject();
        kv(w, "name", r.name);
        w.Key("params");
        w.StartObject();
        for (const auto &[k, v] : r.params) kv(w, k.c_str(), v);
        w.EndObject();
        kv(w, "unit", r.unit);
        w.Key("higher_is_better"), w.Bool(r.higher_is_better);
        w.Key("median"), w.Double(r.median);
        w.Key("p95"), w.Double(r.p95);
        w.Key("mean"), w.Double(r.mean);
        w.Key("stddev"), w.Double(r.stddev);
        w.Key("metrics");
        w.StartObject();
        for (const auto &[k, v] : r.metrics) w.Key(k.c_str()), w.Double(std::isfinite(v) ? v : 0.0);
        w.EndObject();
        w.Key("samples");
        w.StartArray();
        for (double s : r.samples) w.Double(s);
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    AtomicFile f(path);
    f.write(sb.GetString(), sb.GetSize());
    f.write("\n", 1);
    f.commit();
}

Baseline load_baseline(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot open baseline file '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    rapidjson::Document d;
    d.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size()); // no stack overflow on deep nesting
    const Reader rd{path};
    if (d.HasParseError())
        rd.bad("not valid JSON at offset " + std::to_string(d.GetErrorOffset()) + ": " +
               rapidjson::GetParseError_En(d.GetParseError()));
    if (!d.IsObject() || rd.str(d, "format", "the file") != kFormat) rd.bad("not a ROCmForge baseline (\"format\" is not \"rocmforge-baseline\")");
    if (rd.num(d, "version", "the file") != kVersion) rd.bad("unsupported version (expected " + std::to_string(kVersion) + ")");
    Baseline b;
    b.created = rd.str(d, "created", "the file");
    const auto &hw = rd.member(d, "hardware", "the file");
    b.hardware.cpu_model = rd.str(hw, "cpu_model", "hardware");
    b.hardware.os = rd.str(hw, "os", "hardware");
    b.hardware.compiler = rd.str(hw, "compiler", "hardware");
    b.hardware.git_commit = rd.str(hw, "git_commit", "hardware");
    b.hardware.build_flags = rd.str(hw, "build_flags", "hardware");
    const auto &devs = rd.member(hw, "devices", "hardware");
    if (!devs.IsArray()) rd.bad("hardware.devices must be an array");
    for (const auto &dv : devs.GetArray())
        b.hardware.devices.push_back({rd.str(dv, "backend", "a device"), rd.str(dv, "name", "a device"),
                                      rd.str(dv, "arch", "a device"), rd.str(dv, "details", "a device")});
    const auto &res = rd.member(d, "results", "the file");
    if (!res.IsArray()) rd.bad("\"results\" must be an array");
    for (const auto &rv : res.GetArray()) {
        Result r;
        r.name = rd.str(rv, "name", "a result");
        const std::string where = "result \"" + r.name + "\"";
        const auto &params = rd.member(rv, "params", where);
        if (!params.IsObject()) rd.bad("params of " + where + " must be an object");
        for (auto it = params.MemberBegin(); it != params.MemberEnd(); ++it) {
            if (!it->value.IsString()) rd.bad("params of " + where + " must be strings");
            r.params[it->name.GetString()] = it->value.GetString();
        }
        r.unit = rd.str(rv, "unit", where);
        const auto &hib = rd.member(rv, "higher_is_better", where);
        if (!hib.IsBool()) rd.bad("higher_is_better of " + where + " must be true or false");
        r.higher_is_better = hib.GetBool();
        r.median = rd.num(rv, "median", where);
        r.p95 = rd.num(rv, "p95", where);
        r.mean = rd.num(rv, "mean", where);
        r.stddev = rd.num(rv, "stddev", where);
        if (rv.HasMember("metrics") && rv["metrics"].IsObject())
            for (auto it = rv["metrics"].MemberBegin(); it != rv["metrics"].MemberEnd(); ++it)
                if (it->value.IsNumber()) r.metrics[it->name.GetString()] = it->value.GetDouble();
        if (rv.HasMember("samples") && rv["samples"].IsArray())
            for (const auto &s : rv["samples"].GetArray())
                if (s.IsNumber()) r.samples.push_back(s.GetDouble());
        b.results.push_back(std::move(r));
    }
    return b;
}

const char *verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Same: return "same";
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "REGRESSED";
    case Verdict::New: return "new";
    case Verdict::Missing: return "missing";
    }
    return "?";
}

namespace {
// The key without its model=... parameter: results whose model label changed (a Q4_K_M file was
// labelled by its largest tensor type, "Q4_K", before general.file_type named it) still meet
// their baseline when that is the only difference.
std::string key_without_model(const Result &r) {
    Result t = r;
    t.params.erase("model");
    return t.key();
}
} // namespace

std::vector<Comparison> compare_results(const std::vector<Result> &baseline, const std::vector<Result> &current,
                                        double threshold) {
    std::map<std::string, const Result *> old;
    for (const auto &r : baseline) old[r.key()] = &r;
    // Second chance by the key without the model label, where it names one baseline result.
    std::map<std::string, int> loose_count;
    for (const auto &r : baseline) ++loose_count[key_without_model(r)];
    auto loose_match = [&](const Result &r) {
        const std::string k = key_without_model(r);
        if (loose_count[k] != 1) return old.end();
        for (auto it = old.begin(); it != old.end(); ++it)
            if (key_without_model(*it->second) == k) return it;
        return old.end();
    };
    std::vector<Comparison> out;
    for (const auto &r : current) {
        Comparison c;
        c.key = r.key();
        c.unit = r.unit;
        c.current = r.median;
        auto it = old.find(c.key);
        if (it == old.end()) it = loose_match(r);
        if (it == old.end()) {
            c.verdict = Verdict::New;
            out.push_back(c);
            continue;
        }
        c.baseline = it->second->median;
        old.erase(it);
        if (c.baseline > 0) {
            // Positive = better: less time, or more throughput.
            c.change = r.higher_is_better ? (c.current - c.baseline) / c.baseline : (c.baseline - c.current) / c.baseline;
        }
        c.verdict = c.change < -threshold ? Verdict::Regressed : c.change > threshold ? Verdict::Improved : Verdict::Same;
        out.push_back(c);
    }
    for (const auto &r : baseline) {
        if (!old.count(r.key())) continue;
        Comparison c;
        c.key = r.key();
        c.unit = r.unit;
        c.baseline = r.median;
        c.verdict = Verdict::Missing;
        out.push_back(c);
    }
    return out;
}

int compare_baseline(const std::string &path, const std::vector<Result> &results, const HardwareInfo &hw,
                     double threshold, bool force, std::FILE *out) {
    const Baseline b = load_baseline(path);
    const std::string was = b.hardware.identity(), now = hw.identity();
    if (was != now) {
        if (!force)
            throw UsageError("baseline " + path + " was measured on different hardware:\n  baseline: " + was +
                             "\n  this run: " + now + "\n(use --force to compare anyway)");
        std::fprintf(out, "warning: comparing across different hardware (--force):\n  baseline: %s\n  this run: %s\n",
                     was.c_str(), now.c_str());
    }
    std::fprintf(out, "baseline %s (%s, commit %s) vs this run (commit %s), threshold %.1f%%\n", path.c_str(),
                 b.created.c_str(), b.hardware.git_commit.c_str(), hw.git_commit.c_str(), threshold * 100);
    int regressions = 0;
    for (const auto &c : compare_results(b.results, results, threshold)) {
        if (c.verdict == Verdict::Regressed) ++regressions;
        if (c.verdict == Verdict::New || c.verdict == Verdict::Missing)
            std::fprintf(out, "  %-9s %s\n", verdict_name(c.verdict), c.key.c_str());
        else
            std::fprintf(out, "  %-9s %s: %.4g -> %.4g %s (%+.1f%%)\n", verdict_name(c.verdict), c.key.c_str(),
                         c.baseline, c.current, c.unit.c_str(), c.change * 100);
    }
    std::fprintf(out, "%d regression(s) beyond %.1f%%\n", regressions, threshold * 100);
    return regressions ? 1 : 0;
}

} // namespace rf::bench
