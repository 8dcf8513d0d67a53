// Backend creation from the config JSON and the device description from /proc.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "backend.h"
#include "rocmforge/error.h"

namespace rfcpu {

namespace {

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) {
                size_t b = line.find_first_not_of(" \t", colon + 1);
                return b == std::string::npos ? "" : line.substr(b);
            }
        }
    }
    return "unknown CPU";
}

// Value of a "Key:   123 kB" line of /proc/meminfo, in bytes (0 if absent).
uint64_t meminfo_bytes(const char *key) {
    std::ifstream in("/proc/meminfo");
    std::string line;
    const size_t klen = std::strlen(key);
    while (std::getline(in, line)) {
        if (line.compare(0, klen, key) == 0 && line.size() > klen && line[klen] == ':')
            return std::strtoull(line.c_str() + klen + 1, nullptr, 10) * 1024ull;
    }
    return 0;
}

void copy_str(char *dst, size_t cap, const std::string &s) {
    std::snprintf(dst, cap, "%s", s.c_str());
}

} // namespace

uint64_t available_memory_bytes() { return meminfo_bytes("MemAvailable"); }

const char *const *option_keys() {
    static const char *const keys[] = {"n_threads", "weights", "simd", nullptr};
    return keys;
}

const rf_option_desc *option_descs(int32_t *count) {
    static const rf_option_desc descs[] = {
        {"n_threads", RF_OPTION_INT, "0", 0, 1024, nullptr, "worker threads; 0: one per core (-t N sets it)"},
        {"weights", RF_OPTION_ENUM, "auto", 0, 0, "auto|copy|map",
         "the model's weights copied into huge-page memory (copy), read from the mapped file (map), "
         "or copied when they fit in free memory (auto)"},
        {"simd", RF_OPTION_ENUM, "auto", 0, 0, "auto|scalar|avx2|avx512vnni",
         "the kernels' instruction set: the best this CPU has (auto) or a lower one; one it lacks is refused"},
    };
    *count = int32_t(sizeof descs / sizeof descs[0]);
    return descs;
}

std::unique_ptr<CpuBackend> create_backend(const char *config_json) {
    auto be = std::make_unique<CpuBackend>();
    int n_threads = 0;
    be->detected = detect_simd_level();
    be->simd = be->detected;
    std::string simd_name;

    rapidjson::Document doc;
    const char *text = (config_json && *config_json) ? config_json : "{}";
    doc.Parse(text);
    if (doc.HasParseError())
        throw rf::UsageError(std::string("cpu backend config: invalid JSON at offset ") +
                             std::to_string(doc.GetErrorOffset()) + ": " + rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw rf::UsageError("cpu backend config: expected a JSON object");
    if (auto it = doc.FindMember("n_threads"); it != doc.MemberEnd()) {
        if (!it->value.IsInt() || it->value.GetInt() < 0 || it->value.GetInt() > 1024)
            throw rf::UsageError("cpu backend config: n_threads must be an integer in [0, 1024]");
        n_threads = it->value.GetInt();
    }
    std::string weights_name;
    if (auto it = doc.FindMember("weights"); it != doc.MemberEnd()) {
        if (!it->value.IsString()) throw rf::UsageError("cpu backend config: weights must be a string");
        weights_name = it->value.GetString();
    }
    if (weights_name == "copy") be->weights = WeightsMode::Copy;
    else if (weights_name == "map") be->weights = WeightsMode::Map;
    else if (!weights_name.empty() && weights_name != "auto")
        throw rf::UsageError("cpu backend config: weights \"" + weights_name + "\" is not one of auto, copy, map");
    if (auto it = doc.FindMember("simd"); it != doc.MemberEnd()) {
        if (!it->value.IsString()) throw rf::UsageError("cpu backend config: simd must be a string");
        simd_name = it->value.GetString();
    }
    if (!simd_name.empty()) {
        SimdLevel want;
        if (!parse_simd_level(simd_name.c_str(), &want))
            throw rf::UsageError("cpu backend config: simd \"" + simd_name +
                                 "\" is not one of auto, scalar, avx2, avx512vnni");
        if (int(want) > int(be->detected))
            throw rf::UsageError("cpu backend config: simd \"" + simd_name + "\" is not supported by this CPU (best: " +
                                 simd_level_name(be->detected) + ")");
        be->simd = want;
    }
    if (n_threads == 0) n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
    be->n_threads = n_threads;
    be->ks = &kernels_for(be->simd);
    be->pool = std::make_unique<ThreadPool>(n_threads);
    return be;
}

void fill_device_info(const CpuBackend &be, rf_device_info *out) {
    std::memset(out, 0, sizeof(*out));
    copy_str(out->name, sizeof(out->name), cpu_model_name());
    copy_str(out->arch, sizeof(out->arch), std::string("x86_64-") + simd_level_name(be.simd));
    copy_str(out->details, sizeof(out->details),
             "threads=" + std::to_string(be.n_threads) + " simd=" + simd_level_name(be.simd) +
                 " (detected " + simd_level_name(be.detected) + ")");
    out->total_memory = meminfo_bytes("MemTotal");
    out->free_memory = meminfo_bytes("MemAvailable");
    out->kind = RF_DEVICE_CPU;
    out->host_memory = 1;
}

} // namespace rfcpu
