// Device buffers and host<->device copies (all on the backend's stream, so they order with
// compute). Out-of-memory messages carry the requested and the free bytes.
#include "memory.h"

namespace rf_hip {

int buffer_alloc(Backend &b, uint64_t size, rf_buffer_desc *out, char *err, size_t len) {
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    void *p = nullptr;
    const hipError_t r = hipMalloc(&p, size ? size : 1);
    if (r != hipSuccess || !p) {
        size_t free_b = 0, total = 0;
        hipMemGetInfo(&free_b, &total);
        return fail(err, len, RF_ERR_OUT_OF_MEMORY,
                    "out of device memory on " + b.name + ": requested " + std::to_string(size) + " bytes, free " +
                        std::to_string(free_b) + " of " + std::to_string(total) + " bytes (" + gpu_error("hipMalloc", r) + ")");
    }
    out->handle = p;
    out->base = p;
    out->size = size;
    return RF_OK;
}

void buffer_free(Backend &b, void *handle) {
    std::string e;
    if (handle && make_current(b, e)) {
        hipStreamSynchronize(b.stream); // kernels still reading it must finish first
        hipFree(handle);
    }
}

int copy(Backend &b, void *dst, const void *src, uint64_t size, bool to_device, char *err, size_t len) {
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    if (size == 0) return RF_OK;
    if (hipError_t r = hipMemcpyAsync(dst, src, size, to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost, b.stream))
        return fail(err, len, RF_ERR_DEVICE, gpu_error(to_device ? "upload" : "download", r) + " (" + std::to_string(size) + " bytes)");
    if (hipError_t r = hipStreamSynchronize(b.stream)) // pageable host memory: the copy must be done on return
        return fail(err, len, RF_ERR_DEVICE, gpu_error(to_device ? "upload (sync)" : "download (sync)", r));
    return RF_OK;
}

} // namespace rf_hip
