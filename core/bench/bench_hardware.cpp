#include "bench_hardware.h"

#include <fstream>
#include <sys/utsname.h>

#include "rocmforge/runtime.h"
#include "rocmforge_build_info.h" // generated: RF_BUILD_FLAGS
#include "rocmforge_commit.h"     // generated at build time: RF_GIT_COMMIT

namespace rf::bench {

std::string HardwareInfo::identity() const {
    std::string s = "cpu: " + cpu_model;
    for (const auto &d : devices) s += "; " + d.backend + ": " + d.name + " (" + d.arch + ")";
    return s;
}

namespace {

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        size_t b = line.find_first_not_of(' ', colon + 1);
        return b == std::string::npos ? "" : line.substr(b);
    }
    return "unknown CPU";
}

std::string os_name() {
    utsname u{};
    if (uname(&u) != 0) return "unknown";
    return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

} // namespace

HardwareInfo collect_hardware(const Runtime *runtime) {
    HardwareInfo h;
    h.cpu_model = cpu_model_name();
    h.os = os_name();
#if defined(__clang__)
    h.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
    h.compiler = std::string("gcc ") + __VERSION__;
#else
    h.compiler = __VERSION__;
#endif
    h.git_commit = RF_GIT_COMMIT;
    h.build_flags = RF_BUILD_FLAGS;
    if (runtime)
        for (const Backend *b : runtime->backends())
            h.devices.push_back({b->name(), b->info().name, b->info().arch, b->info().details});
    return h;
}

} // namespace rf::bench
