// SET_ROWS (KV append): pool row src1[t] = src0 row t converted to the pool's type (f32, f16,
// q8_0 with ggml's reference rounding: d = amax/127, q = round(x/d)).
#include "compat.h"
#include "quant_decode.h"

RF_KERNEL void rf_set_rows(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &x = a.src[0], &d = a.dst;
    const i64 R = x.ne[0], t = blockIdx.x;
    const int slot = ((const int *)a.src[1].data)[t];
    const float *xr = (const float *)((const u8 *)x.data + t * x.nb[1]);
    u8 *yr = (u8 *)d.data + (i64)slot * d.nb[1];
    if (d.type == T_Q8_0) {
        for (i64 c = threadIdx.x; c < R / 32; c += blockDim.x) {
            float amax = 0.f;
            for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(xr[c * 32 + j]));
            const float dd = amax / 127.f, id = dd != 0.f ? 1.f / dd : 0.f;
            u16 *b = (u16 *)(yr + c * 34); // blocks are 2-byte aligned: write 17 halfwords
            b[0] = f2h(dd);
            for (int j = 0; j < 16; ++j) {
                const int q0 = (int)roundf(xr[c * 32 + 2 * j] * id), q1 = (int)roundf(xr[c * 32 + 2 * j + 1] * id);
                b[1 + j] = (u16)((q0 & 0xFF) | ((q1 & 0xFF) << 8));
            }
        }
    } else {
        for (i64 i = threadIdx.x; i < R; i += blockDim.x) {
            if (d.type == T_F16) ((u16 *)yr)[i] = f2h(xr[i]);
            else ((float *)yr)[i] = xr[i];
        }
    }
}

// Two SET_ROWS into f16/f32 pools in one launch (decode: the K and V appends, fusion.cpp),
// one thread per element: src0 rows -> dst pool at slots src1; src2 rows -> pool src4 at slots src3.
RF_KERNEL void rf_set_rows2(rf_kargs a) {
    rf_kernel_start();
    const i64 nk = a.src[0].ne[0] * a.src[0].ne[1], nv = a.src[2].ne[0] * a.src[2].ne[1];
    for (i64 idx = blockIdx.x * (i64)blockDim.x + threadIdx.x; idx < nk + nv; idx += (i64)gridDim.x * blockDim.x) {
        const bool k = idx < nk;
        const rf_ktensor &x = a.src[k ? 0 : 2], &pool = k ? a.dst : a.src[4];
        const int j = (int)(k ? idx : idx - nk), e = j % (int)x.ne[0], t = j / (int)x.ne[0]; // 32-bit: one append
        const int slot = ((const int *)a.src[k ? 1 : 3].data)[t];
        const float v = ((const float *)((const u8 *)x.data + t * x.nb[1]))[e];
        store_pool_elem((u8 *)pool.data + (i64)slot * pool.nb[1], pool.type, e, v);
    }
}
