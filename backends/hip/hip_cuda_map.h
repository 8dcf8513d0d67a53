// NVIDIA flavour: exactly the HIP runtime/module/hipRTC subset the backend uses, mapped onto
// the CUDA driver API and NVRTC. Nothing is linked: gpu_runtime_load() dlopens libcuda.so.1 and
// libnvrtc at init and fills the function table below, so a machine without the NVIDIA driver
// gets a clean RF_ERR_NO_DEVICE message instead of a loader failure. Prototypes are declared
// here with plain C types (no CUDA headers needed to build this flavour).
#pragma once
#include <cstddef>
#include <string>

typedef int hipError_t;
typedef int hipDevice_t;
typedef struct CUstream_st *hipStream_t;
typedef struct CUevent_st *hipEvent_t;
typedef struct CUmod_st *hipModule_t;
typedef struct CUfunc_st *hipFunction_t;
typedef struct _nvrtcProgram *hiprtcProgram;
typedef int hiprtcResult;
typedef int hipDeviceAttribute_t;
typedef struct CUgraph_st *hipGraph_t;
typedef struct CUgraphExec_st *hipGraphExec_t;
typedef struct CUgraphNode_st *hipGraphNode_t;

enum { hipSuccess = 0, HIPRTC_SUCCESS = 0 };
enum { hipDeviceAttributeMultiprocessorCount = 16, hipDeviceAttributeComputeCapabilityMajor = 75,
       hipDeviceAttributeComputeCapabilityMinor = 76 };
enum hipMemcpyKind { hipMemcpyHostToDevice = 1, hipMemcpyDeviceToHost = 2, hipMemcpyDeviceToDevice = 3 };

namespace rf_cuda {
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
// CUDA_KERNEL_NODE_PARAMS_v2 (cuda.h): kernel node of an explicitly built graph.
struct KernelNodeParams {
    hipFunction_t func;
    unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern; // CUkernel, unused (func is set)
    CUcontext ctx;
};
// CUgraphEdgeData (cuda.h, CUDA 12.3+): type 1 = programmatic dependency, from_port 1 =
// CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC (the upstream kernel's blocks have all started and
// triggered; the downstream kernel orders itself with griddepcontrol.wait).
struct GraphEdgeData { unsigned char from_port, to_port, type, reserved[5]; };
constexpr int kMaxDevices = 64;
// One pointer per driver / NVRTC entry point we call (filled by gpu_runtime_load).
struct Api {
    int (*cuInit)(unsigned);
    int (*cuDriverGetVersion)(int *);
    int (*cuDeviceGetCount)(int *);
    int (*cuDeviceGet)(int *, int);
    int (*cuDeviceGetName)(char *, int, int);
    int (*cuDeviceGetAttribute)(int *, int, int);
    int (*cuDeviceTotalMem)(size_t *, int);
    int (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
    int (*cuCtxSetCurrent)(CUcontext);
    int (*cuMemGetInfo)(size_t *, size_t *);
    int (*cuMemAlloc)(CUdeviceptr *, size_t);
    int (*cuMemFree)(CUdeviceptr);
    int (*cuMemcpy)(CUdeviceptr, CUdeviceptr, size_t);
    int (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, hipStream_t);
    int (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, hipStream_t);
    int (*cuStreamCreate)(hipStream_t *, unsigned);
    int (*cuStreamDestroy)(hipStream_t);
    int (*cuStreamSynchronize)(hipStream_t);
    int (*cuEventCreate)(hipEvent_t *, unsigned);
    int (*cuEventRecord)(hipEvent_t, hipStream_t);
    int (*cuEventSynchronize)(hipEvent_t);
    int (*cuEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
    int (*cuEventDestroy)(hipEvent_t);
    // Optional (null: an event reads as not complete yet; exec_observer.h then reports later)
    int (*cuEventQuery)(hipEvent_t);
    int (*cuModuleLoadData)(hipModule_t *, const void *);
    int (*cuModuleUnload)(hipModule_t);
    int (*cuModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
    int (*cuLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, hipStream_t, void **, void **);
    int (*cuGetErrorString)(int, const char **);
    // Optional: raises a kernel's dynamic shared-memory limit above 48 KB (null: kernels that
    // need more are not launched)
    int (*cuFuncSetAttribute)(hipFunction_t, int, int);
    // Optional: a kernel's attributes and the context's limits (null: the per-thread stack
    // reservation stays the driver's default)
    int (*cuFuncGetAttribute)(int *, int, hipFunction_t);
    int (*cuCtxSetLimit)(int, size_t);
    // Optional: a module's global variable, and mapped pinned host memory (kernel timestamps,
    // exec_observer.h; null: the observer times with events)
    int (*cuModuleGetGlobal)(CUdeviceptr *, size_t *, hipModule_t, const char *);
    int (*cuMemHostAlloc)(void **, size_t, unsigned);
    int (*cuMemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
    int (*cuMemFreeHost)(void *);
    // Optional: page-locking memory the host allocated (the logits buffer, ABI host_pin)
    int (*cuMemHostRegister)(void *, size_t, unsigned);
    int (*cuMemHostUnregister)(void *);
    // Graphs (optional: null when the driver lacks them; the backend then launches directly)
    int (*cuGraphCreate)(hipGraph_t *, unsigned);
    int (*cuGraphDestroy)(hipGraph_t);
    int (*cuGraphAddKernelNode)(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, const KernelNodeParams *);
    int (*cuGraphInstantiate)(hipGraphExec_t *, hipGraph_t, unsigned long long);
    int (*cuGraphExecKernelNodeSetParams)(hipGraphExec_t, hipGraphNode_t, const KernelNodeParams *);
    int (*cuGraphLaunch)(hipGraphExec_t, hipStream_t);
    int (*cuGraphExecDestroy)(hipGraphExec_t);
    // Optional (CUDA 11.1+ drivers): event records inside a graph (exec_observer.h timing marks)
    int (*cuGraphAddEventRecordNode)(hipGraphNode_t *, hipGraph_t, const hipGraphNode_t *, size_t, hipEvent_t);
    // Optional (CUDA 12.3+ drivers): typed edges, for programmatic dependent launch
    int (*cuGraphAddDependencies)(hipGraph_t, const hipGraphNode_t *, const hipGraphNode_t *, const GraphEdgeData *, size_t);
    // NVRTC
    int (*nvrtcVersion)(int *, int *);
    int (*nvrtcCreateProgram)(hiprtcProgram *, const char *, const char *, int, const char *const *,
                              const char *const *);
    int (*nvrtcCompileProgram)(hiprtcProgram, int, const char *const *);
    int (*nvrtcGetProgramLogSize)(hiprtcProgram, size_t *);
    int (*nvrtcGetProgramLog)(hiprtcProgram, char *);
    int (*nvrtcGetCUBINSize)(hiprtcProgram, size_t *);
    int (*nvrtcGetCUBIN)(hiprtcProgram, char *);
    int (*nvrtcDestroyProgram)(hiprtcProgram *);
    const char *(*nvrtcGetErrorString)(int);
    // Each device's primary context, retained at its first hipSetDevice (index: the ordinal), so
    // that backend instances on different GPUs in one process each run in their own device's.
    CUcontext ctx[kMaxDevices];
};
extern Api api;
inline CUdeviceptr dptr(const void *p) { return (CUdeviceptr)(size_t)p; }
} // namespace rf_cuda

// ---- HIP names -> driver API ---------------------------------------------------------------
inline hipError_t hipInit(unsigned f) { return rf_cuda::api.cuInit(f); }
inline hipError_t hipDriverGetVersion(int *v) { return rf_cuda::api.cuDriverGetVersion(v); }
inline hipError_t hipGetDeviceCount(int *n) { return rf_cuda::api.cuDeviceGetCount(n); }
inline hipError_t hipDeviceGet(hipDevice_t *d, int ordinal) { return rf_cuda::api.cuDeviceGet(d, ordinal); }
inline hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d) { return rf_cuda::api.cuDeviceGetName(name, len, d); }
inline hipError_t hipDeviceGetAttribute(int *v, hipDeviceAttribute_t a, int d) { return rf_cuda::api.cuDeviceGetAttribute(v, a, d); }
inline hipError_t hipDeviceTotalMem(size_t *b, hipDevice_t d) { return rf_cuda::api.cuDeviceTotalMem(b, d); }
// HIP's hipSetDevice makes the device current; the driver-API equivalent is its primary context.
inline hipError_t hipSetDevice(int ordinal) {
    if (ordinal < 0 || ordinal >= rf_cuda::kMaxDevices) return 101; // CUDA_ERROR_INVALID_DEVICE
    int dev = 0;
    if (int e = rf_cuda::api.cuDeviceGet(&dev, ordinal)) return e;
    rf_cuda::CUcontext &ctx = rf_cuda::api.ctx[ordinal];
    if (!ctx)
        if (int e = rf_cuda::api.cuDevicePrimaryCtxRetain(&ctx, dev)) return e;
    return rf_cuda::api.cuCtxSetCurrent(ctx);
}
inline hipError_t hipMemGetInfo(size_t *free_b, size_t *total) { return rf_cuda::api.cuMemGetInfo(free_b, total); }
inline hipError_t hipMalloc(void **p, size_t n) {
    rf_cuda::CUdeviceptr d = 0;
    const int e = rf_cuda::api.cuMemAlloc(&d, n);
    *p = (void *)(size_t)d;
    return e;
}
inline hipError_t hipFree(void *p) { return rf_cuda::api.cuMemFree(rf_cuda::dptr(p)); }
inline hipError_t hipMemcpy(void *dst, const void *src, size_t n, hipMemcpyKind) {
    return rf_cuda::api.cuMemcpy(rf_cuda::dptr(dst), rf_cuda::dptr(src), n); // unified addressing
}
inline hipError_t hipMemcpyAsync(void *dst, const void *src, size_t n, hipMemcpyKind, hipStream_t s) {
    return rf_cuda::api.cuMemcpyAsync(rf_cuda::dptr(dst), rf_cuda::dptr(src), n, s);
}
inline hipError_t hipMemsetAsync(void *dst, int v, size_t n, hipStream_t s) {
    return rf_cuda::api.cuMemsetD8Async(rf_cuda::dptr(dst), (unsigned char)v, n, s);
}
inline hipError_t hipStreamCreate(hipStream_t *s) { return rf_cuda::api.cuStreamCreate(s, 0); }
inline hipError_t hipStreamDestroy(hipStream_t s) { return rf_cuda::api.cuStreamDestroy(s); }
inline hipError_t hipStreamSynchronize(hipStream_t s) { return rf_cuda::api.cuStreamSynchronize(s); }
inline hipError_t hipEventCreate(hipEvent_t *e) { return rf_cuda::api.cuEventCreate(e, 0); }
inline hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) { return rf_cuda::api.cuEventRecord(e, s); }
inline hipError_t hipEventSynchronize(hipEvent_t e) { return rf_cuda::api.cuEventSynchronize(e); }
inline hipError_t hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b) { return rf_cuda::api.cuEventElapsedTime(ms, a, b); }
inline hipError_t hipEventDestroy(hipEvent_t e) { return rf_cuda::api.cuEventDestroy(e); }
// hipSuccess once the work before the record is done; CUDA_ERROR_NOT_READY (600) until then.
inline hipError_t hipEventQuery(hipEvent_t e) { return rf_cuda::api.cuEventQuery ? rf_cuda::api.cuEventQuery(e) : 600; }
inline hipError_t hipModuleLoadData(hipModule_t *m, const void *image) { return rf_cuda::api.cuModuleLoadData(m, image); }
inline hipError_t hipModuleUnload(hipModule_t m) { return rf_cuda::api.cuModuleUnload(m); }
inline hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
    return rf_cuda::api.cuModuleGetFunction(f, m, name);
}
inline hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned smem, hipStream_t s, void **params,
                                        void **extra) {
    return rf_cuda::api.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a launch may ask for more than 48 KB of
// dynamic shared memory only after this is raised for the function.
// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 100: the whole L1/shared split as shared
// memory, so several such blocks can share a multiprocessor.
inline hipError_t rf_set_max_dynamic_smem(hipFunction_t f, unsigned bytes) {
    if (!rf_cuda::api.cuFuncSetAttribute) return 1; // CUDA_ERROR_INVALID_VALUE
    if (hipError_t e = rf_cuda::api.cuFuncSetAttribute(f, 8, (int)bytes)) return e;
    return rf_cuda::api.cuFuncSetAttribute(f, 9, 100);
}
// CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: local memory (stack frame and spills) per thread.
inline hipError_t rf_local_bytes(hipFunction_t f, int *bytes) {
    if (!rf_cuda::api.cuFuncGetAttribute) return 1;
    return rf_cuda::api.cuFuncGetAttribute(bytes, 3, f);
}
// CU_LIMIT_STACK_SIZE of the current context: local memory per thread that the driver reserves
// for every thread the device can hold at once (it raises the reservation itself when a kernel
// needs more).
inline hipError_t rf_set_thread_stack(size_t bytes) {
    if (!rf_cuda::api.cuCtxSetLimit) return 1;
    return rf_cuda::api.cuCtxSetLimit(0, bytes);
}
// A module's global variable (its device address and size). CUDA_ERROR_NOT_FOUND (500) when absent.
inline hipError_t hipModuleGetGlobal(void **dptr, size_t *bytes, hipModule_t m, const char *name) {
    if (!rf_cuda::api.cuModuleGetGlobal) return 500;
    rf_cuda::CUdeviceptr d = 0;
    const int e = rf_cuda::api.cuModuleGetGlobal(&d, bytes, m, name);
    *dptr = (void *)(size_t)d;
    return e;
}
// Pinned host memory; hipHostMallocMapped = CU_MEMHOSTALLOC_DEVICEMAP: kernels may write it.
enum { hipHostMallocMapped = 2 };
inline bool rf_host_alloc_available() { return rf_cuda::api.cuMemHostAlloc && rf_cuda::api.cuMemHostGetDevicePointer && rf_cuda::api.cuMemFreeHost; }
inline hipError_t hipHostMalloc(void **p, size_t n, unsigned flags) {
    if (!rf_host_alloc_available()) return 1;
    return rf_cuda::api.cuMemHostAlloc(p, n, flags);
}
inline hipError_t hipHostGetDevicePointer(void **dev, void *host, unsigned flags) {
    if (!rf_host_alloc_available()) return 1;
    rf_cuda::CUdeviceptr d = 0;
    const int e = rf_cuda::api.cuMemHostGetDevicePointer(&d, host, flags);
    *dev = (void *)(size_t)d;
    return e;
}
// Page-locks existing host memory; hipHostRegisterPortable = CU_MEMHOSTREGISTER_PORTABLE (pinned
// for every context, so an instance on another device may copy into it too).
enum { hipHostRegisterPortable = 1 };
inline hipError_t hipHostRegister(void *p, size_t n, unsigned flags) {
    return rf_cuda::api.cuMemHostRegister ? rf_cuda::api.cuMemHostRegister(p, n, flags) : 1;
}
inline hipError_t hipHostUnregister(void *p) { return rf_cuda::api.cuMemHostUnregister ? rf_cuda::api.cuMemHostUnregister(p) : 1; }
inline hipError_t hipHostFree(void *p) { return rf_host_alloc_available() ? rf_cuda::api.cuMemFreeHost(p) : 1; }
inline const char *hipGetErrorString(hipError_t e) {
    const char *s = nullptr;
    if (rf_cuda::api.cuGetErrorString) rf_cuda::api.cuGetErrorString(e, &s);
    return s ? s : "unknown CUDA error";
}

// ---- hipRTC names -> NVRTC (code = cubin for the real sm arch) -------------------------------
inline hiprtcResult hiprtcVersion(int *major, int *minor) { return rf_cuda::api.nvrtcVersion(major, minor); }
inline hiprtcResult hiprtcCreateProgram(hiprtcProgram *p, const char *src, const char *name, int n,
                                        const char *const *headers, const char *const *names) {
    return rf_cuda::api.nvrtcCreateProgram(p, src, name, n, headers, names);
}
inline hiprtcResult hiprtcCompileProgram(hiprtcProgram p, int n, const char *const *opts) {
    return rf_cuda::api.nvrtcCompileProgram(p, n, opts);
}
inline hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram p, size_t *n) { return rf_cuda::api.nvrtcGetProgramLogSize(p, n); }
inline hiprtcResult hiprtcGetProgramLog(hiprtcProgram p, char *log) { return rf_cuda::api.nvrtcGetProgramLog(p, log); }
inline hiprtcResult hiprtcGetCodeSize(hiprtcProgram p, size_t *n) { return rf_cuda::api.nvrtcGetCUBINSize(p, n); }
inline hiprtcResult hiprtcGetCode(hiprtcProgram p, char *code) { return rf_cuda::api.nvrtcGetCUBIN(p, code); }
inline hiprtcResult hiprtcDestroyProgram(hiprtcProgram *p) { return rf_cuda::api.nvrtcDestroyProgram(p); }
inline const char *hiprtcGetErrorString(hiprtcResult r) { return rf_cuda::api.nvrtcGetErrorString(r); }

// ---- graphs (explicitly built chains of kernel nodes; see launch_queue.cpp) ------------------
inline hipError_t hipGraphCreate(hipGraph_t *g, unsigned flags) { return rf_cuda::api.cuGraphCreate(g, flags); }
inline hipError_t hipGraphDestroy(hipGraph_t g) { return rf_cuda::api.cuGraphDestroy(g); }
inline hipError_t hipGraphExecDestroy(hipGraphExec_t e) { return rf_cuda::api.cuGraphExecDestroy(e); }
inline hipError_t hipGraphLaunch(hipGraphExec_t e, hipStream_t s) { return rf_cuda::api.cuGraphLaunch(e, s); }
inline hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *e, hipGraph_t g, unsigned long long flags) {
    return rf_cuda::api.cuGraphInstantiate(e, g, flags);
}
