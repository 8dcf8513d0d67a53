// Device-side portability layer shared by every kernel in kernels/*.hip.
// The same sources compile with hipcc (AMD, RDNA wave32), nvcc -x cu (NVIDIA packs),
// hipRTC and NVRTC (JIT fallback). No system headers are included so the run-time
// compilers need no include paths: fp16/bf16 conversions are done here by hand/PTX.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define RF_NVIDIA 1
#else
#define RF_AMD 1
#if !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h> // hipcc offline builds; hipRTC has these built in
#endif
#endif

#define RF_WARP 32 // RDNA (wave32, the only AMD mode we build) and NVIDIA
#define RF_KERNEL extern "C" __global__
#define RF_DEV __device__ __forceinline__

typedef unsigned char u8;
typedef signed char i8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef long long i64;

#include "kernel_args.h"
#include "stamps.h"

// ---- programmatic dependent launch (Hopper) and timestamps ----------------------------------
// Decode graphs chain their kernels with programmatic edges (backends/hip/launch_queue.cpp).
// Every kernel calls rf_kernel_start() first, before touching memory: it waits until the
// previous kernel has completed and its writes are visible, then lets the next kernel's grid
// launch. That grid's blocks are thus scheduled while this kernel's last blocks still run, and
// wait at their own rf_kernel_start(): the launch and ramp-up of each small decode kernel
// overlap the tail of the one before. (The next grid launches only once every block of this
// one has started, so waiting blocks never hold resources this grid still needs.) Without such
// an edge (other launches, other archs) both instructions do nothing.
// kernels/pack_tool.py refuses a kernel whose body does not start with it.
//
// Timestamps (stamps.h; an observed backend, exec_observer.h): while rf_stamp_ctl_v1.on, the
// first thread of block (0,0,0) takes the next ring index before the wait (the previous kernel
// took its own before it let this grid launch: in block 0 only that thread lets the next grid
// launch, after its atomic returned; so the order is the launch order, and the atomic's latency
// overlaps the wait) and writes the clock right after the wait, i.e. when the previous kernel had
// completed. Without programmatic launch (other archs) kernels do not overlap: the same without
// the wait. Off (the host never wrote the constant): one load of a constant and a predicate in
// that thread, nothing in the others.
extern "C" {
__constant__ rf_stamp_ctl rf_stamp_ctl_v1;
}

RF_DEV unsigned long long rf_clock() {
#if RF_NVIDIA
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
    // RDNA3 has no s_memrealtime; LLVM 15 has no builtin for its replacement
    unsigned long long t;
    asm volatile("s_sendmsg_rtn_b64 %0, sendmsg(MSG_RTN_GET_REALTIME)\n\ts_waitcnt lgkmcnt(0)" : "=s"(t));
    return t;
#else
    return __builtin_amdgcn_s_memrealtime();
#endif
}

RF_DEV void rf_kernel_start() {
#if RF_NVIDIA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // One block of predicated PTX, without operands (so '%' is written once): nothing for the
    // compiler to schedule around or keep in registers, so a kernel's code stays as without
    // timestamps (C++ here, even only the block-0 test for the trigger, changed the register
    // counts of hot decode kernels, e.g. rf_mvq_multi 56 -> 64); the other threads skip every
    // instruction of the stamp (their predicate is false: no load).
    asm volatile("{\n\t"
                 ".reg .pred p, q;\n\t"
                 ".reg .u32 a, b, on, idx, m;\n\t"
                 ".reg .u64 cnt, ring, t, off;\n\t"
                 "mov.u32 a, %ctaid.x;\n\t"
                 "mov.u32 b, %ctaid.y;\n\t"
                 "or.b32 a, a, b;\n\t"
                 "mov.u32 b, %ctaid.z;\n\t"
                 "or.b32 a, a, b;\n\t"                 // a: block index bits
                 "mov.u32 b, %tid.x;\n\t"
                 "mov.u32 m, %tid.y;\n\t"
                 "or.b32 b, b, m;\n\t"
                 "mov.u32 m, %tid.z;\n\t"
                 "or.b32 b, b, m;\n\t"                 // b: thread index bits
                 "or.b32 m, a, b;\n\t"
                 "setp.eq.u32 p, m, 0;\n\t"            // p: first thread of block 0
                 "setp.ne.or.u32 q, a, 0, p;\n\t"      // q: another block, or that thread
                 "@p ld.const.u32 on, [rf_stamp_ctl_v1+20];\n\t" // rf_stamp_ctl.on
                 "@p setp.ne.and.u32 p, on, 0, p;\n\t"
                 "@p ld.const.u64 cnt, [rf_stamp_ctl_v1+8];\n\t" // .counter
                 "@p cvta.to.global.u64 cnt, cnt;\n\t"
                 "@p atom.global.add.u32 idx, [cnt], 1;\n\t"
                 "griddepcontrol.wait;\n\t"
                 "@p mov.u64 t, %globaltimer;\n\t"
                 "@p ld.const.u64 ring, [rf_stamp_ctl_v1];\n\t" // .ring
                 "@p ld.const.u32 m, [rf_stamp_ctl_v1+16];\n\t" // .mask
                 "@p cvta.to.global.u64 ring, ring;\n\t"
                 "@p and.b32 m, idx, m;\n\t"
                 "@p mul.wide.u32 off, m, 16;\n\t"
                 "@p add.u64 ring, ring, off;\n\t"
                 "@p st.global.u64 [ring], t;\n\t"
                 "@p st.global.v2.u32 [ring+8], {idx, 0x54534652};\n\t" // .idx, .tag = RF_STAMP_TAG
                 "@q griddepcontrol.launch_dependents;\n\t"
                 "}" ::: "memory");
#else
    const bool stamp = (threadIdx.x | threadIdx.y | threadIdx.z | blockIdx.x | blockIdx.y | blockIdx.z) == 0 && rf_stamp_ctl_v1.on;
    if (stamp) {
        const unsigned int idx = atomicAdd(rf_stamp_ctl_v1.counter, 1u);
        const unsigned long long t = rf_clock();
        rf_stamp *e = rf_stamp_ctl_v1.ring + (idx & rf_stamp_ctl_v1.mask);
        e->t = t;
        e->idx = idx;
        e->tag = RF_STAMP_TAG;
    }
#endif
}

// The PTX above reads rf_stamp_ctl at fixed offsets (ring 0, counter 8, mask 16, on 20) and
// writes rf_stamp's idx and tag at 8 (tag = RF_STAMP_TAG): a change of stamps.h must follow there.
// (NVRTC has no offsetof: the sizes at least.)
static_assert(sizeof(rf_stamp_ctl) == 24 && sizeof(rf_stamp) == 16 && RF_STAMP_TAG == 0x54534652u, "rf_stamp_ctl / rf_stamp layout");

// ---- warp shuffles ----------------------------------------------------------------------
// Sum over the warp (float or double: the norms accumulate squares in double).
template <class T> RF_DEV T warp_sum(T v) {
#pragma unroll
    for (int o = RF_WARP / 2; o > 0; o >>= 1) {
#if RF_NVIDIA
        v += __shfl_xor_sync(0xffffffffu, v, o, RF_WARP);
#else
        v += __shfl_xor(v, o, RF_WARP);
#endif
    }
    return v;
}

RF_DEV float warp_max(float v) {
#pragma unroll
    for (int o = RF_WARP / 2; o > 0; o >>= 1) {
#if RF_NVIDIA
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, RF_WARP));
#else
        v = fmaxf(v, __shfl_xor(v, o, RF_WARP));
#endif
    }
    return v;
}

RF_DEV float shfl_xor_f(float v, int o) {
#if RF_NVIDIA
    return __shfl_xor_sync(0xffffffffu, v, o, RF_WARP);
#else
    return __shfl_xor(v, o, RF_WARP);
#endif
}

// Lane `src`'s value of v, to every lane (all lanes must call it).
RF_DEV float shfl_f(float v, int src) {
#if RF_NVIDIA
    return __shfl_sync(0xffffffffu, v, src, RF_WARP);
#else
    return __shfl(v, src, RF_WARP);
#endif
}

RF_DEV int shfl_xor_i(int v, int o) {
#if RF_NVIDIA
    return __shfl_xor_sync(0xffffffffu, v, o, RF_WARP);
#else
    return __shfl_xor(v, o, RF_WARP);
#endif
}

// ---- batch coordinates ---------------------------------------------------------------------
// Grid z -> (i2, i3) of a [.., ne2, ne3] activation x and the broadcast weight slice (w2, w3).
// 32-bit arithmetic (64-bit division is a long software sequence that every thread would run);
// z == 0, the only slice of a decode step, needs none.
RF_DEV void batch_coords(int z, const rf_ktensor &x, const rf_ktensor &w, int &i2, int &i3, int &w2, int &w3) {
    if (z == 0) { i2 = i3 = w2 = w3 = 0; return; }
    const int n2 = (int)x.ne[2];
    i2 = z % n2; i3 = z / n2;
    w2 = i2 / (n2 / (int)w.ne[2]); w3 = i3 / ((int)x.ne[3] / (int)w.ne[3]);
}

// Row r of a [K, ne1, ne2, ne3] tensor (r < 2^31), 32-bit index arithmetic.
// Row r's coordinates in a tensor of t's shape, once for several tensors of that shape: the
// divisions only where there are slices beyond the first (decode's and a prompt's rows: i1 = r).
struct RowAt { i64 i1, i2, i3; };
RF_DEV RowAt row_at(const rf_ktensor &t, i64 r) {
    if (t.ne[2] * t.ne[3] == 1) return RowAt{r, 0, 0};
    return RowAt{r % t.ne[1], (r / t.ne[1]) % t.ne[2], r / (t.ne[1] * t.ne[2])};
}
RF_DEV float *row_of(const rf_ktensor &t, const RowAt &c) {
    return (float *)((u8 *)t.data + c.i1 * t.nb[1] + c.i2 * t.nb[2] + c.i3 * t.nb[3]);
}
RF_DEV const u8 *row_ptr(const rf_ktensor &t, i64 r) {
    if (r == 0) return (const u8 *)t.data;
    const int n1 = (int)t.ne[1], n2 = (int)t.ne[2], rr = (int)r;
    const int i1 = rr % n1, i2 = (rr / n1) % n2, i3 = rr / (n1 * n2);
    return (const u8 *)t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// ---- RMS_NORM scale as the CPU backend computes it ---------------------------------------------
// Squares summed in double (each product exact), 1/sqrt in double, rounded once to float: the
// sum's order then no longer matters, so GPU and CPU normalise rows to the same floats and the
// int8 activations quantized from them agree.
// Sum over the block (every thread calls it; sh: RF_WARP doubles).
RF_DEV double block_sum_d(double v, double *sh) {
    v = warp_sum(v);
    const int w = threadIdx.x / RF_WARP, l = threadIdx.x % RF_WARP;
    __syncthreads();
    if (l == 0) sh[w] = v;
    __syncthreads();
    v = l < (int)(blockDim.x / RF_WARP) ? sh[l] : 0.0;
    return warp_sum(v);
}

// The 128-byte line at p into L2 (NVIDIA; nothing elsewhere). Before rf_kernel_start this is safe
// for any bytes, also those the kernel before still writes: it only moves a line into L2, where
// every SM sees it, and returns no value.
RF_DEV void prefetch_line_l2(const void *p) {
#if RF_NVIDIA
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

// A generic pointer to shared memory as a 32-bit shared address.
RF_DEV u32 shared_addr(const void *p) {
#if RF_NVIDIA
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
#else
    return (u32)(unsigned long long)p;
#endif
}

RF_DEV float rms_scale(double sum_sq, i64 K, float eps) { return (float)(1.0 / sqrt(sum_sq / (double)K + (double)eps)); }

// SWIGLU of one element: silu(u) * v (rf_swiglu_f32 and the fused rf_swiglu_q8_1: same bits).
RF_DEV float swiglu_f(float u, float v) { return (u / (1.f + __expf(-u))) * v; }

// ---- int8 activations as the CPU backend quantizes them (quantize_act.hip) -------------------
// Scale and quant of one element given its block's absolute maximum.
RF_DEV float act_scale(float amax) { return amax / 127.f; }
RF_DEV int act_quant(float v, float amax) { return amax > 0.f ? (int)rintf(v * (127.f / amax)) : 0; }
// act_quant with its factor 127 / amax taken once for the elements of a block (the same float:
// a division per element is ~10 instructions, and the quantizing kernels are instruction-bound).
RF_DEV float act_factor(float amax) { return amax > 0.f ? 127.f / amax : 0.f; }
RF_DEV int act_quant_f(float v, float amax, float factor) { return amax > 0.f ? (int)rintf(v * factor) : 0; }

// ---- 4x int8 dot product -------------------------------------------------------------------
RF_DEV int dot4_i8(int a, int b, int c) {
#if RF_NVIDIA
    return __dp4a(a, b, c);
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
    // RDNA3 has only the mixed-sign form (v_dot4_i32_iu8); LLVM 15 crashes compiling sdot4 there.
    return __builtin_amdgcn_sudot4(true, a, true, b, c, false);
#elif defined(__gfx1030__)
    return __builtin_amdgcn_sdot4(a, b, c, false);
#else
    const i8 *x = (const i8 *)&a, *y = (const i8 *)&b;
    return c + x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3];
#endif
}

// ---- half / bfloat16 -----------------------------------------------------------------------
RF_DEV float h2f(u16 h) {
#if RF_NVIDIA
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return (float)__builtin_bit_cast(_Float16, h);
#endif
}

RF_DEV u16 f2h(float f) { // round to nearest even
#if RF_NVIDIA
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    return __builtin_bit_cast(u16, (_Float16)f);
#endif
}

// Two floats -> packed f16x2 (lo in the low half), the operand format of the matrix units.
RF_DEV u32 pack_h2(float lo, float hi) { return (u32)f2h(lo) | ((u32)f2h(hi) << 16); }

RF_DEV float bf2f(u16 h) { return __int_as_float(((u32)h) << 16); }

RF_DEV u16 f2bf(float f) { // round to nearest even, NaN stays NaN
    u32 u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (u16)((u >> 16) | 64);
    return (u16)((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

// Unaligned-safe loads from byte pointers (block rows are only 1- or 2-byte aligned).
RF_DEV u16 ld_u16(const u8 *p) { return (u16)p[0] | ((u16)p[1] << 8); }
RF_DEV u32 ld_u32_a2(const u8 *p) { // p 2-byte aligned
    const u16 *q = (const u16 *)p;
    return (u32)q[0] | ((u32)q[1] << 16);
}
