// Runtime loading. NVIDIA: the driver and NVRTC are dlopen'ed here (the plugin links neither),
// so a missing driver is a message, not a loader failure. AMD: libamdhip64 is linked.
#include "gpu_runtime.h"

#include <dlfcn.h>

#include <mutex>

namespace rf_hip {

std::string gpu_error(const char *what, hipError_t e) {
    return std::string(what) + ": " + hipGetErrorString(e) + " (" + std::to_string((int)e) + ")";
}

#if defined(RF_HIP_NVIDIA)
} // namespace rf_hip
namespace rf_cuda { Api api{}; }
namespace rf_hip {

namespace {
template <class F> bool bind(void *lib, F &fn, const char *name, const char *alt, std::string &missing) {
    void *p = dlsym(lib, name);
    if (!p && alt) p = dlsym(lib, alt);
    if (!p) { missing = name; return false; }
    fn = reinterpret_cast<F>(p);
    return true;
}

bool load_once(std::string &why) {
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu) { why = std::string("libcuda.so.1 not found (no NVIDIA driver?): ") + dlerror(); return false; }
    void *rtc = nullptr;
    for (const char *n : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        if ((rtc = dlopen(n, RTLD_NOW | RTLD_LOCAL))) break;
    auto &a = rf_cuda::api;
    std::string miss;
    bool ok = bind(cu, a.cuInit, "cuInit", nullptr, miss) && bind(cu, a.cuDriverGetVersion, "cuDriverGetVersion", nullptr, miss) &&
              bind(cu, a.cuDeviceGetCount, "cuDeviceGetCount", nullptr, miss) && bind(cu, a.cuDeviceGet, "cuDeviceGet", nullptr, miss) &&
              bind(cu, a.cuDeviceGetName, "cuDeviceGetName", nullptr, miss) &&
              bind(cu, a.cuDeviceGetAttribute, "cuDeviceGetAttribute", nullptr, miss) &&
              bind(cu, a.cuDeviceTotalMem, "cuDeviceTotalMem_v2", nullptr, miss) &&
              bind(cu, a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", nullptr, miss) &&
              bind(cu, a.cuCtxSetCurrent, "cuCtxSetCurrent", nullptr, miss) && bind(cu, a.cuMemGetInfo, "cuMemGetInfo_v2", nullptr, miss) &&
              bind(cu, a.cuMemAlloc, "cuMemAlloc_v2", nullptr, miss) && bind(cu, a.cuMemFree, "cuMemFree_v2", nullptr, miss) &&
              bind(cu, a.cuMemcpy, "cuMemcpy", nullptr, miss) && bind(cu, a.cuMemcpyAsync, "cuMemcpyAsync", nullptr, miss) &&
              bind(cu, a.cuMemsetD8Async, "cuMemsetD8Async", nullptr, miss) && bind(cu, a.cuStreamCreate, "cuStreamCreate", nullptr, miss) &&
              bind(cu, a.cuStreamDestroy, "cuStreamDestroy_v2", nullptr, miss) &&
              bind(cu, a.cuStreamSynchronize, "cuStreamSynchronize", nullptr, miss) &&
              bind(cu, a.cuEventCreate, "cuEventCreate", nullptr, miss) && bind(cu, a.cuEventRecord, "cuEventRecord", nullptr, miss) &&
              bind(cu, a.cuEventSynchronize, "cuEventSynchronize", nullptr, miss) &&
              bind(cu, a.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", miss) &&
              bind(cu, a.cuEventDestroy, "cuEventDestroy_v2", nullptr, miss) &&
              bind(cu, a.cuModuleLoadData, "cuModuleLoadData", nullptr, miss) &&
              bind(cu, a.cuModuleUnload, "cuModuleUnload", nullptr, miss) &&
              bind(cu, a.cuModuleGetFunction, "cuModuleGetFunction", nullptr, miss) &&
              bind(cu, a.cuLaunchKernel, "cuLaunchKernel", nullptr, miss) && bind(cu, a.cuGetErrorString, "cuGetErrorString", nullptr, miss);
    if (!ok) { why = "libcuda.so.1 lacks " + miss + " (driver too old?)"; return false; }
    // Graph replay of decode steps is an optimisation: a driver without these entry points
    // (pre-CUDA 12) just launches every kernel directly.
    ok = bind(cu, a.cuGraphCreate, "cuGraphCreate", nullptr, miss) && bind(cu, a.cuGraphDestroy, "cuGraphDestroy", nullptr, miss) &&
         bind(cu, a.cuGraphAddKernelNode, "cuGraphAddKernelNode_v2", nullptr, miss) &&
         bind(cu, a.cuGraphInstantiate, "cuGraphInstantiateWithFlags", nullptr, miss) &&
         bind(cu, a.cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2", nullptr, miss) &&
         bind(cu, a.cuGraphLaunch, "cuGraphLaunch", nullptr, miss) && bind(cu, a.cuGraphExecDestroy, "cuGraphExecDestroy", nullptr, miss);
    if (!ok) a.cuGraphLaunch = nullptr; // graphs_available() reports false
    if (!bind(cu, a.cuGraphAddDependencies, "cuGraphAddDependencies_v2", nullptr, miss)) a.cuGraphAddDependencies = nullptr;
    if (!bind(cu, a.cuGraphAddEventRecordNode, "cuGraphAddEventRecordNode", nullptr, miss)) a.cuGraphAddEventRecordNode = nullptr;
    if (!bind(cu, a.cuEventQuery, "cuEventQuery", nullptr, miss)) a.cuEventQuery = nullptr;
    if (!bind(cu, a.cuFuncSetAttribute, "cuFuncSetAttribute", nullptr, miss)) a.cuFuncSetAttribute = nullptr;
    if (!bind(cu, a.cuFuncGetAttribute, "cuFuncGetAttribute", nullptr, miss)) a.cuFuncGetAttribute = nullptr;
    if (!bind(cu, a.cuCtxSetLimit, "cuCtxSetLimit", nullptr, miss)) a.cuCtxSetLimit = nullptr;
    if (!bind(cu, a.cuModuleGetGlobal, "cuModuleGetGlobal_v2", nullptr, miss)) a.cuModuleGetGlobal = nullptr;
    if (!bind(cu, a.cuMemHostAlloc, "cuMemHostAlloc", nullptr, miss)) a.cuMemHostAlloc = nullptr;
    if (!bind(cu, a.cuMemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2", nullptr, miss)) a.cuMemHostGetDevicePointer = nullptr;
    if (!bind(cu, a.cuMemFreeHost, "cuMemFreeHost", nullptr, miss)) a.cuMemFreeHost = nullptr;
    if (!bind(cu, a.cuMemHostRegister, "cuMemHostRegister_v2", "cuMemHostRegister", miss)) a.cuMemHostRegister = nullptr;
    if (!bind(cu, a.cuMemHostUnregister, "cuMemHostUnregister", nullptr, miss)) a.cuMemHostUnregister = nullptr;
    if (rtc) { // optional: only the JIT fallback needs it
        ok = bind(rtc, a.nvrtcVersion, "nvrtcVersion", nullptr, miss) && bind(rtc, a.nvrtcCreateProgram, "nvrtcCreateProgram", nullptr, miss) &&
             bind(rtc, a.nvrtcCompileProgram, "nvrtcCompileProgram", nullptr, miss) &&
             bind(rtc, a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", nullptr, miss) &&
             bind(rtc, a.nvrtcGetProgramLog, "nvrtcGetProgramLog", nullptr, miss) &&
             bind(rtc, a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize", nullptr, miss) && bind(rtc, a.nvrtcGetCUBIN, "nvrtcGetCUBIN", nullptr, miss) &&
             bind(rtc, a.nvrtcDestroyProgram, "nvrtcDestroyProgram", nullptr, miss) &&
             bind(rtc, a.nvrtcGetErrorString, "nvrtcGetErrorString", nullptr, miss);
        if (!ok) a.nvrtcVersion = nullptr; // JIT reports itself unavailable
    }
    return true;
}
} // namespace

bool gpu_runtime_load(std::string &why) {
    static std::once_flag once;
    static bool ok = false;
    static std::string reason;
    std::call_once(once, [] { ok = load_once(reason); });
    why = reason;
    return ok;
}

bool jit_available() { return rf_cuda::api.nvrtcVersion != nullptr; }
bool graphs_available() { return rf_cuda::api.cuGraphLaunch != nullptr; }
bool graph_events_available() { return graphs_available() && rf_cuda::api.cuGraphAddEventRecordNode != nullptr; }
#else
bool gpu_runtime_load(std::string &) { return true; }
bool jit_available() { return true; }
bool graphs_available() { return false; } // module-function graph nodes untested on ROCm: direct launches
bool graph_events_available() { return false; }
#endif

} // namespace rf_hip
