// What a benchmark ran on and with which build: baselines from different hardware are not
// compared unless forced.
#pragma once
#include <string>
#include <vector>

namespace rf {
class Runtime;
}

namespace rf::bench {

struct DeviceRecord {
    std::string backend, name, arch, details; // details: driver/runtime versions when known
};

struct HardwareInfo {
    std::string cpu_model;
    std::vector<DeviceRecord> devices; // one per backend of the runtime
    std::string os;
    std::string compiler;              // "gcc 12.2.0"
    std::string git_commit;            // at build time, "unknown" outside a git checkout
    std::string build_flags;           // buildtype, optimization, native_simd, ...

    // The identity compared between baselines: CPU model and each device's name and arch.
    std::string identity() const;
};

// Collects the CPU model (/proc/cpuinfo), OS (uname) and build facts; devices from the
// runtime's backends when one is given.
HardwareInfo collect_hardware(const Runtime *runtime);

} // namespace rf::bench
