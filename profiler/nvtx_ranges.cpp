#include "nvtx_ranges.h"

#include <dlfcn.h>

namespace rfprof {

RangeMarker::RangeMarker(bool enabled) {
    if (!enabled) return;
    struct Candidate {
        const char *lib, *push, *pop;
    };
    // nvToolsExt (CUDA <= 12) exports the C entry points; libnvtx3interop is the NVTX3 shim that
    // CUDA 12.x ships for exactly this use; roctx is ROCm's equivalent for rocprof.
    static const Candidate kCandidates[] = {
        {"libnvToolsExt.so.1", "nvtxRangePushA", "nvtxRangePop"},
        {"libnvToolsExt.so", "nvtxRangePushA", "nvtxRangePop"},
        {"libnvtx3interop.so.1", "nvtxRangePushA", "nvtxRangePop"},
        {"libnvtx3interop.so", "nvtxRangePushA", "nvtxRangePop"},
        {"libroctx64.so.4", "roctxRangePushA", "roctxRangePop"},
        {"libroctx64.so", "roctxRangePushA", "roctxRangePop"},
    };
    for (const auto &c : kCandidates) {
        void *h = dlopen(c.lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        auto push = reinterpret_cast<int (*)(const char *)>(dlsym(h, c.push));
        auto pop = reinterpret_cast<int (*)()>(dlsym(h, c.pop));
        if (push && pop) {
            handle_ = h;
            library_ = c.lib;
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
