// Device buffers and host<->device copies (all on the backend's stream, so they order with
// compute). Out-of-memory messages carry the requested and the free bytes.
#include "memory.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace rf_hip {

int buffer_alloc(Backend &b, uint64_t size, rf_buffer_desc *out, char *err, size_t len) {
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    void *p = nullptr;
    // Rounded up to 256 bytes: the wide weight loads (ld16_a2, Q6_K's 8-byte words) may touch the
    // rest of the aligned word that holds a row's last byte.
    const hipError_t r = hipMalloc(&p, (std::max<uint64_t>(size, 1) + 255) / 256 * 256);
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

bool ensure_scratch(Backend &b, Backend::Scratch &s, uint64_t bytes, bool zero, std::string &err) {
    if (s.size >= bytes) return true;
    const uint64_t want = bytes + bytes / 4; // headroom: contexts grow step by step
    if (s.ptr) {
        // Launches collected so far in this compute() still name the old buffer: submit them first.
        if (b.queue.flush(b.stream, err) != RF_OK) return false;
        b.queue.begin();
        b.q8 = {};
        b.fq = {};
        hipStreamSynchronize(b.stream); // kernels queued earlier may still read it
        hipFree(s.ptr);
        s = {};
    }
    void *p = nullptr;
    if (hipError_t r = hipMalloc(&p, want); r != hipSuccess || !p) {
        size_t free_b = 0, total = 0;
        hipMemGetInfo(&free_b, &total);
        err = "out of device memory on " + b.name + " for kernel scratch: requested " + std::to_string(want) + " bytes, free " +
              std::to_string(free_b) + " (" + gpu_error("hipMalloc", r) + ")";
        return false;
    }
    if (zero)
        if (hipError_t r = hipMemsetAsync(p, 0, want, b.stream)) { hipFree(p); err = gpu_error("scratch clear", r); return false; }
    s.ptr = p;
    s.size = want;
    ++b.scratch_gen;
    return true;
}

namespace {
// Option stats: host time of a copy, from its construction to the end of the scope.
struct CopyAccount {
    Backend &b;
    bool up;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~CopyAccount() {
        if (!b.stats.on || b.stats.computes == 0) return; // model loading is not a step's cost
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        (up ? b.stats.upload_us : b.stats.download_us) += us;
        ++(up ? b.stats.uploads : b.stats.downloads);
    }
};
} // namespace

int copy(Backend &b, void *dst, const void *src, uint64_t size, bool to_device, char *err, size_t len) {
    const CopyAccount account{b, to_device};
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    if (size == 0) return RF_OK;
    if (hipError_t r = hipMemcpyAsync(dst, src, size, to_device ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost, b.stream))
        return fail(err, len, RF_ERR_DEVICE, gpu_error(to_device ? "upload" : "download", r) + " (" + std::to_string(size) + " bytes)");
    if (hipError_t r = hipStreamSynchronize(b.stream)) // pageable host memory: the copy must be done on return
        return fail(err, len, RF_ERR_DEVICE, gpu_error(to_device ? "upload (sync)" : "download (sync)", r));
    return RF_OK;
}

namespace {
constexpr uint64_t kStagingBytes = 4ull << 20; // a decode step's inputs fit many times over
constexpr uint64_t kStagedMax = 256ull << 10;  // larger uploads are not worth the host copy
} // namespace

int upload(Backend &b, void *dst, const void *src, uint64_t size, bool *blocked, char *err, size_t len) {
    *blocked = true;
    Backend::Staging &st = b.staging;
    if (!st.on || size == 0 || size > kStagedMax) return copy(b, dst, src, size, true, err, len);
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    if (!st.ptr) {
        void *p = nullptr;
        if (hipHostMalloc(&p, kStagingBytes, 0) != hipSuccess || !p) {
            st.on = false; // no pinned memory: blocking uploads from now on
            return copy(b, dst, src, size, true, err, len);
        }
        st.ptr = static_cast<uint8_t *>(p);
        st.size = kStagingBytes;
        st.used = 0;
    }
    // Full: wait for the queued copies that read it. (Not reported as blocked: the copy queued
    // below is in flight when this returns, its staging bytes still in use.)
    if (st.used + size > st.size) {
        if (hipError_t r = hipStreamSynchronize(b.stream)) return fail(err, len, RF_ERR_DEVICE, gpu_error("upload (sync)", r));
        st.used = 0;
    }
    *blocked = false;
    const CopyAccount account{b, true};
    uint8_t *at = st.ptr + st.used;
    std::memcpy(at, src, size);
    st.used += (size + 255) / 256 * 256;
    if (hipError_t r = hipMemcpyAsync(dst, at, size, hipMemcpyHostToDevice, b.stream))
        return fail(err, len, RF_ERR_DEVICE, gpu_error("upload", r) + " (" + std::to_string(size) + " bytes)");
    return RF_OK;
}

void staging_idle(Backend &b) { b.staging.used = 0; }

void staging_release(Backend &b) {
    if (b.staging.ptr) hipHostFree(b.staging.ptr);
    b.staging = {};
}

int host_pin(Backend &b, void *ptr, uint64_t size, char *err, size_t len) {
    std::string e;
    if (!make_current(b, e)) return fail(err, len, RF_ERR_DEVICE, e);
    if (!ptr || size == 0) return fail(err, len, RF_ERR_INVALID, "host_pin: no memory given");
    if (hipError_t r = hipHostRegister(ptr, size, hipHostRegisterPortable))
        return fail(err, len, RF_ERR_UNSUPPORTED, gpu_error("host_pin", r) + " (" + std::to_string(size) + " bytes)");
    return RF_OK;
}

void host_unpin(Backend &b, void *ptr) {
    std::string e;
    if (ptr && make_current(b, e)) hipHostUnregister(ptr);
}

} // namespace rf_hip
