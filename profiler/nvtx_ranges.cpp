#include "nvtx_ranges.h"

#include <dlfcn.h>

#include <cstdlib>

namespace rfprof {

namespace {

// The first of `vars` set in the environment, or nullptr. A range library records nothing unless
// a tool has attached itself through one of these, so without one there is nothing to emit.
const char *first_set(const char *const *vars) {
    for (; *vars; ++vars)
        if (std::getenv(*vars)) return *vars;
    return nullptr;
}

// nsys and ncu hand NVTX their injection library in NVTX_INJECTION64_PATH; rocprof (v1/v2)
// loads its tool through HSA_TOOLS_LIB (it also sets ROCP_TOOL_LIB, which adds nothing),
// rocprofv3 through ROCP_TOOL_LIBRARIES.
const char *const kNvtxToolVars[] = {"NVTX_INJECTION64_PATH", nullptr};
const char *const kRoctxToolVars[] = {"ROCP_TOOL_LIBRARIES", "HSA_TOOLS_LIB", nullptr};

} // namespace

RangeMarker::RangeMarker(bool enabled) {
    if (!enabled) return;
    struct Candidate {
        const char *lib, *push, *pop;
        const char *const *tool_vars;
    };
    // nvToolsExt (CUDA <= 12) exports the C entry points; libnvtx3interop is the NVTX3 shim that
    // CUDA 12.x ships for exactly this use; roctx is ROCm's equivalent for rocprof.
    static const Candidate kCandidates[] = {
        {"libnvToolsExt.so.1", "nvtxRangePushA", "nvtxRangePop", kNvtxToolVars},
        {"libnvToolsExt.so", "nvtxRangePushA", "nvtxRangePop", kNvtxToolVars},
        {"libnvtx3interop.so.1", "nvtxRangePushA", "nvtxRangePop", kNvtxToolVars},
        {"libnvtx3interop.so", "nvtxRangePushA", "nvtxRangePop", kNvtxToolVars},
        {"libroctx64.so.4", "roctxRangePushA", "roctxRangePop", kRoctxToolVars},
        {"libroctx64.so", "roctxRangePushA", "roctxRangePop", kRoctxToolVars},
    };
    for (const auto &c : kCandidates) {
        const char *tool_var = first_set(c.tool_vars);
        if (!tool_var) continue;
        void *h = dlopen(c.lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        auto push = reinterpret_cast<int (*)(const char *)>(dlsym(h, c.push));
        auto pop = reinterpret_cast<int (*)()>(dlsym(h, c.pop));
        if (push && pop) {
            handle_ = h;
            library_ = c.lib;
            tool_var_ = tool_var;
            push_ = push;
            pop_ = pop;
            return;
        }
        dlclose(h);
    }
}

RangeMarker::~RangeMarker() {
    // Never dlclose: a tool's injection library may still reference it at process exit.
    (void)handle_;
}

} // namespace rfprof
