/* A kernel pack plugin for the pack checks (test_pack_plugin.cpp), built in variants by
 * tests/hip/meson.build, each with one defect:
 *   FAKE_ARCH "sm_90"       the arch it declares
 *   FAKE_ABI_MAJOR          the ABI major of its plugin info
 *   FAKE_ABI_MINOR          the ABI minor of its plugin info (this runtime's by default); below 11
 *                           its claim writes the raw parameter slots, as a pack of ABI 2.10 does
 *   FAKE_KIND               its plugin kind
 *   FAKE_KARGS              its kernel-argument version
 *   FAKE_BAD_SUM            declares a checksum that is not its code's
 *   FAKE_BASE               claims to carry the base kernels (it lists rf_add_f32, rf_mul_f32)
 *   FAKE_FEW_KERNELS        ... but lists only rf_add_f32
 *   FAKE_FUSION_KERNEL      the kernel its one fusion launches
 *   FAKE_HOST_NOOP          has a host_run that computes nothing (rocmforge-pack-check must fail)
 *   FAKE_BAD_BIND           its claim binds src[4] to a source the MUL does not have */
#include "rocmforge/pack_abi.h"

#ifndef FAKE_ARCH
#define FAKE_ARCH "sm_90"
#endif
#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR RF_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR RF_ABI_MINOR
#endif
#ifndef FAKE_KIND
#define FAKE_KIND RF_PLUGIN_KERNEL_PACK
#endif
#ifndef FAKE_KARGS
#define FAKE_KARGS RF_KARGS_VERSION
#endif
#ifndef FAKE_FUSION_KERNEL
#define FAKE_FUSION_KERNEL "fake_mul_add"
#endif

/* Not a real code object: the checks before any GPU call only hash it. */
static const char code[] = "ROCMFORGE-FAKE-CODE-OBJECT";
#ifdef FAKE_BAD_SUM
static const char sum[] = "0000000000000000000000000000000000000000000000000000000000000000";
#else
static const char sum[] = "5a07f38f0dcd5b5bc511a6a487bd905a98c67fa6cc411742af95602a039985a5";
#endif

#ifdef FAKE_FEW_KERNELS
static const char *const names[] = {"rf_add_f32", "fake_mul_add"};
#else
static const char *const names[] = {"rf_add_f32", "rf_mul_f32", "fake_mul_add"};
#endif

/* MUL then ADD of its product: claims both (binding checked by the test). */
static int32_t claim(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    (void)dev;
    if (first + 1 >= g->n_nodes || g->nodes[first + 1]->op != RF_OP_ADD) return 0;
    l->dst = (rf_tensor_ref){1, RF_BIND_DST};
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){0, 1};
    l->src[2] = (rf_tensor_ref){1, 1};
    l->src[3] = (rf_tensor_ref){0, RF_BIND_DST};
#ifdef FAKE_BAD_BIND
    l->src[4] = (rf_tensor_ref){0, 3};
#endif
    l->threads = 256;
    /* Parameters (checked by the test): named from ABI 2.11 on (any family's struct: all are the
     * same 64 bytes), in the raw slots before, which the backend must read the same. */
#if FAKE_ABI_MINOR >= 11
    l->rope.mode = RF_ROPE_NEOX;
    l->rope.n_rot = 96;
    l->rope.freq_base = 500000.f;
    l->rope.freq_scale = 0.25f;
#else
    l->iparams[0] = RF_ROPE_NEOX;
    l->iparams[1] = 96;
    l->fparams[0] = 500000.f;
    l->fparams[1] = 0.25f;
#endif
    return 2;
}

#ifdef FAKE_HOST_NOOP
static int32_t host_run(const rf_kargs *args, const rf_fusion_launch *launch) {
    (void)args, (void)launch;
    return RF_OK;
}
#else
#define host_run 0
#endif

static const rf_fusion mul_add = {sizeof(rf_fusion), "fake_mul_add", FAKE_FUSION_KERNEL, RF_OP_MUL, claim, host_run};
static const rf_fusion *const fusions[] = {&mul_add};

static const rf_kernel_pack_vtable pack = {
    /* .struct_size   = */ sizeof(rf_kernel_pack_vtable),
    /* .arch          = */ FAKE_ARCH,
    /* .kargs_version = */ FAKE_KARGS,
#ifdef FAKE_BASE
    /* .flags         = */ RF_PACK_BASE_KERNELS,
#else
    /* .flags         = */ 0,
#endif
    /* .code          = */ code,
    /* .code_size     = */ sizeof code - 1,
    /* .code_sha256   = */ sum,
    /* .n_kernels     = */ (int32_t)(sizeof names / sizeof names[0]),
    /* .kernel_names  = */ names,
    /* .n_fusions     = */ 1,
    /* .fusions       = */ fusions,
};

static const rf_plugin_info info = {FAKE_ABI_MAJOR, FAKE_ABI_MINOR, FAKE_KIND, "fake", "test", &pack};

RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &info; }
