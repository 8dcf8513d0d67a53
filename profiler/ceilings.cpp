#include "ceilings.h"

#include <cstring>

namespace rfprof {
namespace {

struct KnownDevice {
    const char *name_part; // matched against rf_device_info.name
    double gbps, tflops;   // HBM bandwidth, dense fp16/bf16 tensor throughput (datasheets)
};

// Order matters: the first match wins ("H100 PCIe" before "H100").
const KnownDevice kKnown[] = {
    {"H200", 4800, 989},   {"H100 PCIe", 2000, 756}, {"H100", 3350, 989},   {"A100", 2039, 312},
    {"L40S", 864, 362},    {"MI300X", 5300, 1307},   {"MI300A", 5300, 980}, {"MI250", 3277, 383},
    {"MI210", 1638, 181},  {"7900 XTX", 960, 123},   {"7900 XT", 800, 103},
};

} // namespace

Ceiling pick_ceiling(const CeilingConfig &configured, const std::string &backend, const rf_device_info &info) {
    auto it = configured.find(backend);
    if (it != configured.end()) return it->second;
    for (const auto &k : kKnown)
        if (std::strstr(info.name, k.name_part))
            return {k.gbps, k.tflops, std::string("default: ") + k.name_part + " datasheet"};
    if (info.kind == RF_DEVICE_GPU) return {1000, 100, "default: generic GPU guess"};
    return {50, 1.0, "default: generic CPU guess"};
}

} // namespace rfprof
