#include "bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "rocmforge/atomic_file.h"
#include "rocmforge/error.h"

namespace rf {

const char *BenchReportArgs::help() {
    return "  -o, --output F            md (default) or json, on stdout\n"
           "  --save-baseline FILE      save the results and this machine's description as JSON\n"
           "  --compare-baseline FILE   compare with a saved baseline; exit 1 on a regression\n"
           "  --threshold P             regression threshold, e.g. 10% (default) or 0.1\n"
           "  --force                   compare even if the baseline is from different hardware\n";
}

bool BenchReportArgs::parse(int argc, char **argv, int &i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError("option " + a + " needs a value");
        return argv[++i];
    };
    if (a == "--save-baseline") save_baseline = value();
    else if (a == "--compare-baseline") compare_baseline = value();
    else if (a == "--force") force = true;
    else if (a == "-o" || a == "--output") {
        format = value();
        if (format != "md" && format != "json") throw UsageError("-o must be md or json, not '" + format + "'");
    } else if (a == "--threshold") {
        std::string v = value();
        const bool percent = !v.empty() && v.back() == '%';
        if (percent) v.pop_back();
        char *end = nullptr;
        double t = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !std::isfinite(t) || t < 0) throw UsageError("bad --threshold '" + std::string(argv[i]) + "' (e.g. 10% or 0.1)");
        // "10%" and "10" mean ten percent; "0.1" means ten percent too.
        threshold = (percent || t >= 1) ? t / 100.0 : t;
    } else return false;
    return true;
}

void print_results_md(std::FILE *out, const std::vector<bench::Result> &results) {
    std::fprintf(out, "| benchmark | params | median | p95 | mean ± sd | unit | GFLOP/s | GB/s |\n");
    std::fprintf(out, "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |\n");
    for (const auto &r : results) {
        std::string params;
        for (const auto &[k, v] : r.params) params += (params.empty() ? "" : " ") + k + "=" + v;
        auto metric = [&](const char *k) {
            auto it = r.metrics.find(k);
            char buf[32];
            if (it == r.metrics.end()) return std::string("-");
            std::snprintf(buf, sizeof buf, "%.1f", it->second);
            return std::string(buf);
        };
        std::fprintf(out, "| %s | %s | %.6g | %.6g | %.6g ± %.3g | %s | %s | %s |\n", r.name.c_str(), params.c_str(),
                     r.median, r.p95, r.mean, r.stddev, r.unit.c_str(), metric("gflops").c_str(), metric("gbps").c_str());
    }
}

void print_results_json(std::FILE *out, const std::vector<bench::Result> &results, const bench::HardwareInfo &hw) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    auto str = [&](const char *k, const std::string &v) { w.Key(k), w.String(v.c_str()); };
    w.StartObject();
    w.Key("hardware");
    w.StartObject();
    str("cpu_model", hw.cpu_model), str("os", hw.os), str("compiler", hw.compiler), str("git_commit", hw.git_commit);
    str("build_flags", hw.build_flags);
    w.Key("devices");
    w.StartArray();
    for (const auto &d : hw.devices) {
        w.StartObject();
        str("backend", d.backend), str("name", d.name), str("arch", d.arch), str("details", d.details);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    w.Key("results");
    w.StartArray();
    for (const auto &r : results) {
        w.StartObject();
        str("name", r.name);
        w.Key("params");
        w.StartObject();
        for (const auto &[k, v] : r.params) str(k.c_str(), v);
        w.EndObject();
        str("unit", r.unit);
        w.Key("median"), w.Double(r.median);
        w.Key("p95"), w.Double(r.p95);
        w.Key("mean"), w.Double(r.mean);
        w.Key("stddev"), w.Double(r.stddev);
        w.Key("n"), w.Uint64(r.samples.size());
        for (const auto &[k, v] : r.metrics) w.Key(k.c_str()), w.Double(std::isfinite(v) ? v : 0.0);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    std::fprintf(out, "%s\n", sb.GetString());
}

int finish_bench_report(const BenchReportArgs &args, const std::vector<bench::Result> &results,
                        const bench::HardwareInfo &hw) {
    if (args.format == "json") print_results_json(stdout, results, hw);
    else print_results_md(stdout, results);
    std::fflush(stdout);
    int rc = 0;
    if (!args.compare_baseline.empty())
        rc = bench::compare_baseline(args.compare_baseline, results, hw, args.threshold, args.force, stderr);
    if (!args.save_baseline.empty()) {
        bench::save_baseline(args.save_baseline, results, hw);
        std::fprintf(stderr, "baseline saved to %s\n", args.save_baseline.c_str());
    }
    return rc;
}

ProgressBar::ProgressBar(size_t total) : total_(total), tty_(::isatty(2) != 0) {}

ProgressBar::~ProgressBar() { done(); }

void ProgressBar::step(const std::string &label) {
    ++current_;
    if (!tty_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 2.0 && !drawn_) return; // short runs stay quiet
    constexpr int kWidth = 30;
    const int filled = total_ ? int(kWidth * (current_ - 1) / total_) : 0;
    std::string bar(size_t(filled), '#');
    bar.append(size_t(kWidth - filled), '.');
    std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %.60s", bar.c_str(), current_, total_, label.c_str());
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::done() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
}

} // namespace rf

namespace rf {
namespace {
std::string xml_escape(const std::string &s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '&': o += "&amp;"; break;
        case '"': o += "&quot;"; break;
        default: o += c;
        }
    }
    return o;
}
} // namespace

void write_bar_chart_svg(const std::string &path, const std::string &title, const std::string &unit,
                         const std::vector<std::string> &labels, const std::vector<BarSeries> &series) {
    static const char *kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759"};
    const int label_w = 170, bar_h = 14, gap = 10, left = label_w + 10, plot_w = 520, top = 50;
    const int row_h = int(series.size()) * bar_h + gap;
    const int height = top + int(labels.size()) * row_h + 40, width = left + plot_w + 130;
    double vmax = 0;
    for (const auto &s : series)
        for (double v : s.values) vmax = std::max(vmax, v);
    if (vmax <= 0) vmax = 1;
    std::string svg;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                  "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                  "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">%s</text>\n",
                  width, height, xml_escape(title).c_str());
    svg += buf;
    for (size_t s = 0; s < series.size(); ++s) {
        std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"30\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                      "<text x=\"%d\" y=\"40\">%s</text>\n", left + int(s) * 220, kColors[s % 4],
                      left + int(s) * 220 + 16, xml_escape(series[s].name).c_str());
        svg += buf;
    }
    for (size_t l = 0; l < labels.size(); ++l) {
        const int y0 = top + int(l) * row_h;
        std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", label_w,
                      y0 + int(series.size()) * bar_h / 2 + 4, xml_escape(labels[l]).c_str());
        svg += buf;
        for (size_t s = 0; s < series.size(); ++s) {
            const double v = l < series[s].values.size() ? series[s].values[l] : 0;
            const int w = int(plot_w * v / vmax);
            const int y = y0 + int(s) * bar_h;
            std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
                          "<text x=\"%d\" y=\"%d\" font-size=\"10\">%.3g %s</text>\n", left, y, std::max(w, 1), bar_h - 2,
                          kColors[s % 4], left + w + 4, y + bar_h - 4, v, xml_escape(unit).c_str());
            svg += buf;
        }
    }
    svg += "</svg>\n";
    AtomicFile f(path);
    f.write(svg.data(), svg.size());
    f.commit();
}

} // namespace rf
