/* A minimal backend plugin for the core's tests. Compiled several times with different macros:
 *   FAKE_NAME        plugin/backend name
 *   FAKE_HOST_MEMORY 1: data pointers are host-addressable; 0: pretends to be a device, so the
 *                    executor must copy at boundaries (its memory is still host memory, which
 *                    lets the test detect a missing copy: pointers from other backends are
 *                    poisoned before use).
 *   FAKE_ABI_MAJOR   ABI major version to report (to test refusal)
 *   FAKE_ABI_MINOR   ABI minor version to report
 *   FAKE_OPTION_KEYS the backend_options keys it lists (ABI 1.2 option_keys), e.g. "a", "b"
 *   FAKE_OPTION_DESCS defined: describes its keys (ABI 2.10 option_descs) from the table below:
 *                    level (int 0..9), mode (enum auto|fast|safe), fast (bool), label (string),
 *                    tags (string list); a listed key not in the table stays undescribed.
 *                    fake_last_config() returns the config init last received.
 *   FAKE_FLAGS       its RF_BACKEND_* flags (ABI 1.2 flags)
 *   FAKE_DEVICES     how many devices it serves (list_devices, ABI 1.3; device_memory, ABI 2.2;
 *                    init's "device" picks one, out of range is refused). Each has
 *                    FAKE_DEVICE_MEMORY bytes, counted across all instances on it like a real
 *                    device's: buffer_alloc beyond what is free fails with RF_ERR_OUT_OF_MEMORY.
 *                    Unset: no list_devices and device_memory slots, one device of unknown size.
 *   FAKE_STRUCT_END  the first vtable slot beyond struct_size, as a plugin built against an older
 *                    minor version (a shorter struct) has it. The slots from there on are filled
 *                    with a poison address: a host reading past struct_size calls it and crashes.
 * Every variant has host_pin / host_unpin (ABI 2.3) within its struct_size: they count calls and
 * pinned bytes, read by the tests through fake_pin_stats(); and compute_same (ABI 2.9), which
 * computes as compute() does, both counted (fake_compute_stats()).
 * Ops: ADD, MUL, SCALE on contiguous f32, with FAKE_OPS_MASK selecting which. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "rocmforge/abi.h"

#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR RF_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR RF_ABI_MINOR
#endif
#ifdef FAKE_STRUCT_END
#define FAKE_STRUCT_SIZE offsetof(rf_backend_vtable, FAKE_STRUCT_END)
#else
#define FAKE_STRUCT_SIZE sizeof(rf_backend_vtable)
#endif
/* `impl` if the slot lies within struct_size, else the poison address. */
#define FAKE_SLOT(slot, impl)                                           \
    (offsetof(rf_backend_vtable, slot) < FAKE_STRUCT_SIZE ? (impl)      \
                                                          : (__typeof__(((rf_backend_vtable *)0)->slot))(uintptr_t)0xdead)

typedef struct { int computes; int device; } fake_ctx;

#ifndef FAKE_DEVICE_MEMORY
#define FAKE_DEVICE_MEMORY (64ull << 20)
#endif
#ifdef FAKE_DEVICES
/* Bytes allocated on each device by all instances (a device's memory is shared by its users). */
static uint64_t fake_used[FAKE_DEVICES];
#endif
/* A buffer: this header, then the data (aligned to 256). */
typedef struct { uint64_t size; int device; } fake_buffer_head;
#define FAKE_HEAD 256

/* A "device" backend hands out addresses the host cannot dereference (shifted by DEV_OFF):
 * if the executor forgot a copy, the other backend would fault instead of silently working. */
#define DEV_OFF ((uintptr_t)(FAKE_HOST_MEMORY ? 0 : 0x400000000000ull))
static void *to_host(const void *p) { return (void *)((uintptr_t)p - DEV_OFF); }

#ifdef FAKE_OPTION_DESCS
static char fake_config_seen[4096];
/* The config JSON the last init() received (truncated to 4095 bytes). */
RF_PLUGIN_EXPORT const char *fake_last_config(void) { return fake_config_seen; }
#endif

static int fake_init(const char *cfg, void **ctx, char *err, size_t n) {
#ifdef FAKE_OPTION_DESCS
    snprintf(fake_config_seen, sizeof fake_config_seen, "%s", cfg ? cfg : "");
#endif
    /* Any option set to "invalid" stands for a bad config value. */
    if (cfg && strstr(cfg, "\"invalid\"")) {
        strncpy(err, "fake: an option is invalid", n);
        return RF_ERR_INVALID;
    }
#ifdef FAKE_INIT_FAILS
    /* Stands for a plugin flavour whose driver is missing on this machine. */
    strncpy(err, "fake driver missing", n);
    (void)ctx;
    return RF_ERR_NO_DEVICE;
#endif
    int device = 0;
    const char *d = cfg ? strstr(cfg, "\"device\":") : NULL;
    if (d) device = atoi(d + strlen("\"device\":"));
#ifdef FAKE_DEVICES
    if (device < 0 || device >= FAKE_DEVICES) {
        snprintf(err, n, "fake: device %d but %d devices", device, FAKE_DEVICES);
        return RF_ERR_INVALID;
    }
#endif
    (void)err; (void)n;
    fake_ctx *c = (fake_ctx *)calloc(1, sizeof(fake_ctx));
    c->device = device;
    *ctx = c;
    return RF_OK;
}
static void fake_shutdown(void *ctx) { free(ctx); }
static void fake_describe(int device, rf_device_info *out) {
    memset(out, 0, sizeof *out);
#ifdef FAKE_DEVICES
    snprintf(out->name, sizeof out->name, "fake " FAKE_NAME " device %d", device);
    out->total_memory = FAKE_DEVICE_MEMORY;
    out->free_memory = FAKE_DEVICE_MEMORY - fake_used[device];
#else
    (void)device;
    strcpy(out->name, "fake " FAKE_NAME);
#endif
    strcpy(out->arch, "fake");
    out->kind = FAKE_HOST_MEMORY ? RF_DEVICE_CPU : RF_DEVICE_GPU;
    out->host_memory = FAKE_HOST_MEMORY;
}
static int fake_device_info(void *ctx, rf_device_info *out) {
    fake_describe(((fake_ctx *)ctx)->device, out);
    return RF_OK;
}
static int fake_alloc(void *vctx, uint64_t size, rf_buffer_desc *out, char *err, size_t n) {
    fake_ctx *ctx = (fake_ctx *)vctx;
#ifdef FAKE_DEVICES
    if (size > FAKE_DEVICE_MEMORY - fake_used[ctx->device]) {
        snprintf(err, n, "fake: %llu bytes requested on device %d, %llu free", (unsigned long long)size, ctx->device,
                 (unsigned long long)(FAKE_DEVICE_MEMORY - fake_used[ctx->device]));
        return RF_ERR_OUT_OF_MEMORY;
    }
    fake_used[ctx->device] += size;
#endif
    (void)err; (void)n;
    char *p = (char *)aligned_alloc(256, (size + 255) / 256 * 256 + 256 + FAKE_HEAD);
    if (!p) return RF_ERR_OUT_OF_MEMORY;
    fake_buffer_head head = {size, ctx->device};
    memcpy(p, &head, sizeof head);
    out->handle = p;
    out->base = (void *)((uintptr_t)(p + FAKE_HEAD) + DEV_OFF);
    out->size = size;
    return RF_OK;
}
static void fake_free(void *ctx, void *h) {
    (void)ctx;
    if (!h) return;
#ifdef FAKE_DEVICES
    fake_buffer_head head;
    memcpy(&head, h, sizeof head);
    fake_used[head.device] -= head.size;
#endif
    free(h);
}

#ifdef FAKE_DEVICES
static int fake_list_devices(rf_device_info *out, int32_t max, int32_t *count, char *err, size_t n) {
    (void)err; (void)n;
    *count = FAKE_DEVICES;
    for (int i = 0; i < FAKE_DEVICES && i < max; ++i) fake_describe(i, &out[i]);
    return RF_OK;
}
static int fake_device_memory(int32_t index, uint64_t *free_bytes, uint64_t *total_bytes, char *err, size_t n) {
    if (index < 0 || index >= FAKE_DEVICES) {
        snprintf(err, n, "fake: no device %d", (int)index);
        return RF_ERR_INVALID;
    }
    *total_bytes = FAKE_DEVICE_MEMORY;
    *free_bytes = FAKE_DEVICE_MEMORY - fake_used[index];
    return RF_OK;
}
#define FAKE_LIST_DEVICES_SLOT fake_list_devices
#define FAKE_DEVICE_MEMORY_SLOT fake_device_memory
#else
#define FAKE_LIST_DEVICES_SLOT NULL
#define FAKE_DEVICE_MEMORY_SLOT NULL
#endif
static int fake_upload(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t n) {
    (void)ctx; (void)err; (void)n;
    memcpy(to_host(dst), src, size);
    return RF_OK;
}
static int fake_download(void *ctx, void *dst, const void *src, uint64_t size, char *err, size_t n) {
    (void)ctx; (void)err; (void)n;
    memcpy(dst, to_host(src), size);
    return RF_OK;
}
/* ABI 2.3 pinning: no pages are locked, the calls are counted. A second pin of the same address
 * without an unpin in between, or an unpin of an address not pinned, counts as an error. */
#define FAKE_MAX_PINS 8
static struct { void *p[FAKE_MAX_PINS]; uint64_t bytes[FAKE_MAX_PINS]; int pins, unpins, errors; } fake_pin;
static int fake_host_pin(void *ctx, void *ptr, uint64_t size, char *err, size_t n) {
    (void)ctx; (void)err; (void)n;
    int slot = -1;
    for (int i = 0; i < FAKE_MAX_PINS; ++i) {
        if (fake_pin.p[i] == ptr) ++fake_pin.errors;
        if (!fake_pin.p[i] && slot < 0) slot = i;
    }
    if (slot < 0) { snprintf(err, n, "fake: too many pinned ranges"); return RF_ERR_OUT_OF_MEMORY; }
    fake_pin.p[slot] = ptr;
    fake_pin.bytes[slot] = size;
    ++fake_pin.pins;
    return RF_OK;
}
static void fake_host_unpin(void *ctx, void *ptr) {
    (void)ctx;
    for (int i = 0; i < FAKE_MAX_PINS; ++i)
        if (fake_pin.p[i] == ptr) { fake_pin.p[i] = NULL; fake_pin.bytes[i] = 0; ++fake_pin.unpins; return; }
    ++fake_pin.errors;
}
/* Calls so far and the bytes pinned now. */
RF_PLUGIN_EXPORT void fake_pin_stats(int *pins, int *unpins, int *errors, uint64_t *bytes) {
    *pins = fake_pin.pins;
    *unpins = fake_pin.unpins;
    *errors = fake_pin.errors;
    *bytes = 0;
    for (int i = 0; i < FAKE_MAX_PINS; ++i) *bytes += fake_pin.bytes[i];
}

static int fake_supports(void *ctx, const rf_node *node) {
    (void)ctx;
    if (!((FAKE_OPS_MASK >> node->op) & 1)) return 0;
    for (int i = 0; i < RF_MAX_SRC; ++i)
        if (node->src[i] && node->src[i]->type != RF_TYPE_F32) return 0;
    return 1;
}
static struct { int computes, sames; } fake_calls;
/* compute() and compute_same() calls so far, all instances of this plugin. */
RF_PLUGIN_EXPORT void fake_compute_stats(int *computes, int *sames) {
    *computes = fake_calls.computes;
    *sames = fake_calls.sames;
}
static int fake_run(void *vctx, const rf_graph *g, char *err, size_t n) {
    fake_ctx *ctx = (fake_ctx *)vctx;
    ctx->computes++;
    for (int k = 0; k < g->n_nodes; ++k) {
        const rf_node *nd = g->nodes[k];
        float *d = (float *)to_host(nd->dst->data);
        const float *a = (const float *)to_host(nd->src[0]->data);
        const float *b = nd->src[1] ? (const float *)to_host(nd->src[1]->data) : NULL;
        int64_t cnt = nd->dst->ne[0] * nd->dst->ne[1] * nd->dst->ne[2] * nd->dst->ne[3];
        int64_t bcnt = nd->src[1] ? nd->src[1]->ne[0] * nd->src[1]->ne[1] * nd->src[1]->ne[2] * nd->src[1]->ne[3] : 1;
        for (int64_t i = 0; i < cnt; ++i) {
            switch (nd->op) {
            case RF_OP_ADD: d[i] = a[i] + b[i % bcnt]; break;
            case RF_OP_MUL: d[i] = a[i] * b[i % bcnt]; break;
            case RF_OP_SCALE: d[i] = a[i] * nd->fparams[0]; break;
            default:
                strncpy(err, "fake backend: unsupported op", n);
                return RF_ERR_UNSUPPORTED;
            }
        }
    }
    return RF_OK;
}
static int fake_compute(void *vctx, const rf_graph *g, char *err, size_t n) {
    ++fake_calls.computes;
    return fake_run(vctx, g, err, n);
}
static int fake_compute_same(void *vctx, const rf_graph *g, char *err, size_t n) {
    ++fake_calls.sames;
    return fake_run(vctx, g, err, n);
}

#ifdef FAKE_OPTION_KEYS
static const char *const *fake_option_keys(void) {
    static const char *const keys[] = {FAKE_OPTION_KEYS, NULL};
    return keys;
}
#define FAKE_OPTION_KEYS_SLOT fake_option_keys
#else
#define FAKE_OPTION_KEYS_SLOT NULL
#endif
#ifdef FAKE_OPTION_DESCS
static const rf_option_desc *fake_option_descs(int32_t *count) {
    static const rf_option_desc descs[] = {
        {"level", RF_OPTION_INT, "2", 0, 9, NULL, "how hard it tries"},
        {"mode", RF_OPTION_ENUM, "auto", 0, 0, "auto|fast|safe", "which way it runs"},
        {"fast", RF_OPTION_BOOL, "false", 0, 0, NULL, "skips the slow part"},
        {"label", RF_OPTION_STRING, "", 0, 0, NULL, "a name for the logs"},
        {"tags", RF_OPTION_STRING_LIST, "", 0, 0, NULL, "labels for the logs"},
        {NULL, RF_OPTION_INT, "", 0, 0, NULL, "an entry without a key: the host skips it"},
    };
    *count = (int32_t)(sizeof descs / sizeof descs[0]);
    return descs;
}
#define FAKE_OPTION_DESCS_SLOT fake_option_descs
#else
#define FAKE_OPTION_DESCS_SLOT NULL
#endif
#ifdef FAKE_FLAGS
static uint32_t fake_flags(void) { return FAKE_FLAGS; }
#define FAKE_FLAGS_SLOT fake_flags
#else
#define FAKE_FLAGS_SLOT NULL
#endif

static const rf_backend_vtable fake_vtable = {
    .struct_size = FAKE_STRUCT_SIZE,
    .init = FAKE_SLOT(init, fake_init),
    .shutdown = FAKE_SLOT(shutdown, fake_shutdown),
    .device_info = FAKE_SLOT(device_info, fake_device_info),
    .buffer_alloc = FAKE_SLOT(buffer_alloc, fake_alloc),
    .buffer_free = FAKE_SLOT(buffer_free, fake_free),
    .upload = FAKE_SLOT(upload, fake_upload),
    .download = FAKE_SLOT(download, fake_download),
    .supports_op = FAKE_SLOT(supports_op, fake_supports),
    .compute = FAKE_SLOT(compute, fake_compute),
    .synchronize = FAKE_SLOT(synchronize, NULL),
    .event_create = FAKE_SLOT(event_create, NULL),
    .event_record = FAKE_SLOT(event_record, NULL),
    .event_elapsed_ms = FAKE_SLOT(event_elapsed_ms, NULL),
    .event_destroy = FAKE_SLOT(event_destroy, NULL),
    .buffer_from_host = FAKE_SLOT(buffer_from_host, NULL),
    .retired_compute_timed = FAKE_SLOT(retired_compute_timed, NULL),
    .retired_compute_events = FAKE_SLOT(retired_compute_events, NULL),
    .option_keys = FAKE_SLOT(option_keys, FAKE_OPTION_KEYS_SLOT),
    .flags = FAKE_SLOT(flags, FAKE_FLAGS_SLOT),
    .list_devices = FAKE_SLOT(list_devices, FAKE_LIST_DEVICES_SLOT),
    .set_observer = FAKE_SLOT(set_observer, NULL),
    .device_memory = FAKE_SLOT(device_memory, FAKE_DEVICE_MEMORY_SLOT),
    .host_pin = FAKE_SLOT(host_pin, fake_host_pin),
    .host_unpin = FAKE_SLOT(host_unpin, fake_host_unpin),
    .compute_same = FAKE_SLOT(compute_same, fake_compute_same),
    .option_descs = FAKE_SLOT(option_descs, FAKE_OPTION_DESCS_SLOT),
};

static const rf_plugin_info fake_info = {FAKE_ABI_MAJOR, FAKE_ABI_MINOR, RF_PLUGIN_BACKEND, FAKE_NAME, "test", &fake_vtable};

RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &fake_info; }
