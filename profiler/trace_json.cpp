#include "trace_json.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <rapidjson/filewritestream.h>
#include <rapidjson/writer.h>

#include "node_cost.h"

namespace rfprof {
namespace {

constexpr int kPid = 1;
constexpr int kPhaseTrack = 0; // backends are tracks 1..n

using JsonWriter = rapidjson::Writer<rapidjson::FileWriteStream>;

void metadata(JsonWriter &w, const char *what, int tid, const std::string &name) {
    w.StartObject();
    w.Key("name"), w.String(what);
    w.Key("ph"), w.String("M");
    w.Key("pid"), w.Int(kPid);
    w.Key("tid"), w.Int(tid);
    w.Key("args"), w.StartObject(), w.Key("name"), w.String(name.c_str()), w.EndObject();
    w.EndObject();
}

void complete(JsonWriter &w, const std::string &name, const char *cat, int tid, double ts, double dur) {
    w.Key("name"), w.String(name.c_str());
    w.Key("cat"), w.String(cat);
    w.Key("ph"), w.String("X");
    w.Key("pid"), w.Int(kPid);
    w.Key("tid"), w.Int(tid);
    w.Key("ts"), w.Double(ts);
    w.Key("dur"), w.Double(dur);
}

} // namespace

bool write_trace(const ProfilerState &st, const std::string &path, double end_us, std::string &error) {
    const std::string tmp = path + ".tmp";
    FILE *f = std::fopen(tmp.c_str(), "wb");
    if (!f) {
        error = "cannot write trace file '" + tmp + "': " + std::strerror(errno);
        return false;
    }
    char buf[1 << 16];
    rapidjson::FileWriteStream os(f, buf, sizeof buf);
    JsonWriter w(os);
    w.StartObject();
    w.Key("displayTimeUnit"), w.String("ms");
    w.Key("traceEvents");
    w.StartArray();
    metadata(w, "process_name", kPhaseTrack, "rocmforge");
    metadata(w, "thread_name", kPhaseTrack, "phases");
    for (size_t b = 0; b < st.backends().size(); ++b) {
        const BackendEntry &be = st.backends()[b];
        metadata(w, "thread_name", int(b) + 1, be.name + " (" + be.info.name + ")");
    }
    const auto &marks = st.phase_marks();
    for (size_t i = 0; i < marks.size(); ++i) {
        const double end = i + 1 < marks.size() ? marks[i + 1].t_us : end_us;
        w.StartObject();
        complete(w, st.phase_names()[size_t(marks[i].phase)], "phase", kPhaseTrack, marks[i].t_us, end - marks[i].t_us);
        w.EndObject();
    }
    const auto &groups = st.groups();
    for (const NodeEvent &e : st.events()) {
        const OpGroup &g = groups[size_t(e.group)];
        w.StartObject();
        complete(w, st.labels()[size_t(e.label)], group_op_name(g), g.backend + 1, e.ts_us, e.dur_us);
        w.Key("args");
        w.StartObject();
        w.Key("op"), w.String(group_op_name(g));
        w.Key("shapes"), w.String(g.shapes.c_str());
        w.Key("dtype"), w.String(g.dtypes.c_str());
        w.Key("phase"), w.String(st.phase_names()[size_t(e.phase)].c_str());
        w.Key("bytes"), w.Double(e.bytes);
        w.Key("flops"), w.Double(e.flops);
        w.EndObject();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    os.Flush();
    const bool write_ok = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !write_ok) {
        error = "writing trace file '" + tmp + "' failed: " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        error = "cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno);
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace rfprof
