// NVTX / ROCTX range library selection: nothing is loaded (and the report names no library)
// unless a tool that records ranges is attached through its environment variable.
#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <stdlib.h>

#include <string>

#include "nvtx_ranges.h"

namespace {

const char *const kToolVars[] = {"NVTX_INJECTION64_PATH", "ROCP_TOOL_LIBRARIES", "HSA_TOOLS_LIB"};

void clear_tool_vars() {
    for (const char *v : kToolVars) unsetenv(v);
}

bool loadable(const char *lib) {
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != nullptr;
}

} // namespace

TEST_CASE("nvtx ranges: no tool attached, no range library, even where one is installed", "[profiler][nvtx]") {
    clear_tool_vars();
    CHECK_FALSE(rfprof::RangeMarker(true).active());
    CHECK_FALSE(rfprof::RangeMarker(false).active());
}

TEST_CASE("nvtx ranges: an attached NVTX tool selects an installed NVTX library", "[profiler][nvtx]") {
    clear_tool_vars();
    setenv("NVTX_INJECTION64_PATH", "/nonexistent/injection.so", 1);
    const bool nvtx_installed = loadable("libnvToolsExt.so.1") || loadable("libnvToolsExt.so") ||
                                loadable("libnvtx3interop.so.1") || loadable("libnvtx3interop.so");
    {
        rfprof::RangeMarker m(true);
        CHECK(m.active() == nvtx_installed);
        if (m.active()) {
            CHECK(std::string(m.tool_var()) == "NVTX_INJECTION64_PATH");
            CHECK(std::string(m.library()).find("nvtx") != std::string::npos);
        }
        CHECK_FALSE(rfprof::RangeMarker(false).active());
    }
    clear_tool_vars();
}
