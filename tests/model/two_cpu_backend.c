/* A test plugin, "twocpu", serving two devices, each a CPU backend of its own: the CPU plugin
 * (INNER_PLUGIN, loaded with dlopen) with one ctx per instance, so two instances in one runtime
 * hold separate contexts, thread pools and buffers. What makes them devices for the core:
 *   - list_devices lists two, init's "device" picks one (out of range: RF_ERR_INVALID);
 *   - each device has TWOCPU_MEMORY bytes, counted across all instances on it like a real
 *     device's memory: buffer_alloc beyond what is free fails with RF_ERR_OUT_OF_MEMORY, and
 *     device_info / device_memory (ABI 2.2) report that device's free bytes;
 *   - no buffer_from_host, so weights are allocated on the device and uploaded, as on a GPU.
 * The memory itself is host memory (host_memory = 1, as the CPU plugin says): honest about what it
 * is, so the executor needs no copies between the two. Everything else is forwarded.
 *
 * Built with TWOCPU_FAKE_GPU it is "gpulike" instead: a GPU-like backend without the encoder
 * kernels, as the HIP one is: it reports device memory (host_memory = 0, so the executor copies
 * across its boundary and refuses to copy KV pools) and declines LAYER_NORM, GELU and
 * bidirectional ATTENTION (test_encoder.cpp), CONCAT, MOE_GROUP_MASK and MOE_WEIGHTS mode 3
 * (test_forward_deepseek2.cpp). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocmforge/abi.h"

#define TWOCPU_DEVICES 2
#ifndef TWOCPU_MEMORY
#define TWOCPU_MEMORY (256ull << 20)
#endif

static const rf_backend_vtable *inner;
static uint64_t used[TWOCPU_DEVICES]; /* bytes allocated on each device by all instances */

typedef struct {
    void *inner_ctx;
    int device;
} two_ctx;
typedef struct {
    void *inner_handle;
    uint64_t size;
    int device;
} two_buffer;

static int load_inner(char *err, size_t n) {
    if (inner) return RF_OK;
    void *lib = dlopen(INNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    rf_plugin_entry_fn entry = lib ? (rf_plugin_entry_fn)dlsym(lib, RF_PLUGIN_ENTRY_SYMBOL) : NULL;
    const rf_plugin_info *info = entry ? entry() : NULL;
    if (!info || info->kind != RF_PLUGIN_BACKEND) {
        snprintf(err, n, "twocpu: cannot load the CPU plugin %s: %s", INNER_PLUGIN, lib ? "not a backend" : dlerror());
        return RF_ERR_NO_DEVICE;
    }
    inner = (const rf_backend_vtable *)info->vtable;
    return RF_OK;
}

static void describe(int device, rf_device_info *out) {
    char cpu[sizeof out->name];
    snprintf(cpu, sizeof cpu, "%s", out->name);
    snprintf(out->name, sizeof out->name, "twocpu device %d (%.90s)", device, cpu);
    out->total_memory = TWOCPU_MEMORY;
    out->free_memory = TWOCPU_MEMORY - used[device];
#ifdef TWOCPU_FAKE_GPU
    out->host_memory = 0;
    out->kind = RF_DEVICE_GPU;
#endif
}

static int two_init(const char *cfg, void **ctx, char *err, size_t n) {
    int st = load_inner(err, n);
    if (st != RF_OK) return st;
    const char *d = cfg ? strstr(cfg, "\"device\":") : NULL;
    const int device = d ? atoi(d + strlen("\"device\":")) : 0;
    if (device < 0 || device >= TWOCPU_DEVICES) {
        snprintf(err, n, "twocpu: device %d but %d devices", device, TWOCPU_DEVICES);
        return RF_ERR_INVALID;
    }
    two_ctx *c = (two_ctx *)calloc(1, sizeof *c);
    c->device = device;
    if ((st = inner->init(cfg, &c->inner_ctx, err, n)) != RF_OK) {
        free(c);
        return st;
    }
    *ctx = c;
    return RF_OK;
}
static void two_shutdown(void *ctx) {
    two_ctx *c = (two_ctx *)ctx;
    inner->shutdown(c->inner_ctx);
    free(c);
}
static int two_device_info(void *ctx, rf_device_info *out) {
    two_ctx *c = (two_ctx *)ctx;
    int st = inner->device_info(c->inner_ctx, out);
    if (st == RF_OK) describe(c->device, out);
    return st;
}
static int two_alloc(void *ctx, uint64_t size, rf_buffer_desc *out, char *err, size_t n) {
    two_ctx *c = (two_ctx *)ctx;
    if (size > TWOCPU_MEMORY - used[c->device]) {
        snprintf(err, n, "twocpu: %llu bytes requested on device %d, %llu free", (unsigned long long)size, c->device,
                 (unsigned long long)(TWOCPU_MEMORY - used[c->device]));
        return RF_ERR_OUT_OF_MEMORY;
    }
    int st = inner->buffer_alloc(c->inner_ctx, size, out, err, n);
    if (st != RF_OK) return st;
    two_buffer *b = (two_buffer *)malloc(sizeof *b);
    b->inner_handle = out->handle;
    b->size = size;
    b->device = c->device;
    out->handle = b;
    used[c->device] += size;
    return RF_OK;
}
static void two_free(void *ctx, void *handle) {
    two_buffer *b = (two_buffer *)handle;
    if (!b) return;
    inner->buffer_free(((two_ctx *)ctx)->inner_ctx, b->inner_handle);
    used[b->device] -= b->size;
    free(b);
}
static int two_upload(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t n) {
    return inner->upload(((two_ctx *)ctx)->inner_ctx, dst, src, size, err, n);
}
static int two_download(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t n) {
    return inner->download(((two_ctx *)ctx)->inner_ctx, dst, src, size, err, n);
}
static int two_supports(void *ctx, const rf_node *node) {
#ifdef TWOCPU_FAKE_GPU
    if (node->op == RF_OP_LAYER_NORM || node->op == RF_OP_GELU) return 0;
    if (node->op == RF_OP_ATTENTION && node->iparams[2] != 0) return 0;
    /* nor the deepseek2 ops (the HIP backend declines them too) */
    if (node->op == RF_OP_CONCAT || node->op == RF_OP_MOE_GROUP_MASK) return 0;
    if (node->op == RF_OP_MOE_WEIGHTS && node->iparams[0] == 3) return 0;
    if (node->op == RF_OP_SSM_CONV || node->op == RF_OP_GATED_DELTA_NET) return 0; /* as HIP: test_qwen35.cpp */
#endif
    return inner->supports_op(((two_ctx *)ctx)->inner_ctx, node);
}
static int two_compute(void *ctx, const rf_graph *g, char *err, size_t n) {
    return inner->compute(((two_ctx *)ctx)->inner_ctx, g, err, n);
}
static int two_list_devices(rf_device_info *out, int32_t max, int32_t *count, char *err, size_t n) {
    int st = load_inner(err, n);
    if (st != RF_OK) return st;
    /* The CPU plugin's one device, described twice. */
    int32_t one = 0;
    rf_device_info cpu;
    memset(&cpu, 0, sizeof cpu);
    if ((st = inner->list_devices(&cpu, 1, &one, err, n)) != RF_OK) return st;
    *count = TWOCPU_DEVICES;
    for (int i = 0; i < TWOCPU_DEVICES && i < max; ++i) {
        out[i] = cpu;
        describe(i, &out[i]);
    }
    return RF_OK;
}
static int two_device_memory(int32_t index, uint64_t *free_bytes, uint64_t *total_bytes, char *err, size_t n) {
    if (index < 0 || index >= TWOCPU_DEVICES) {
        snprintf(err, n, "twocpu: no device %d", (int)index);
        return RF_ERR_INVALID;
    }
    *total_bytes = TWOCPU_MEMORY;
    *free_bytes = TWOCPU_MEMORY - used[index];
    return RF_OK;
}

static const rf_backend_vtable two_vtable = {
    .struct_size = sizeof(rf_backend_vtable),
    .init = two_init,
    .shutdown = two_shutdown,
    .device_info = two_device_info,
    .buffer_alloc = two_alloc,
    .buffer_free = two_free,
    .upload = two_upload,
    .download = two_download,
    .supports_op = two_supports,
    .compute = two_compute,
    .list_devices = two_list_devices,
    .device_memory = two_device_memory,
};

#ifdef TWOCPU_FAKE_GPU
#define TWOCPU_NAME "gpulike"
#else
#define TWOCPU_NAME "twocpu"
#endif
static const rf_plugin_info two_info = {RF_ABI_MAJOR, RF_ABI_MINOR, RF_PLUGIN_BACKEND, TWOCPU_NAME, "test", &two_vtable};

RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &two_info; }
