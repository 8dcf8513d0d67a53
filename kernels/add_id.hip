// ADD_ID (abi.h; gpt-oss's expert biases, ggml_add_id): dst[:, s, m] = src0[:, s, m] plus row
// src2[s, m] of src1 [N, E]; an id outside 0..E-1 adds nothing. Grid (ceil(N / 256), S, M).
#include "compat.h"

RF_KERNEL __launch_bounds__(256) void rf_add_id_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &y = a.src[0], &b = a.src[1], &ids = a.src[2];
    const i64 n = (i64)blockIdx.x * 256 + threadIdx.x, s = blockIdx.y, m = blockIdx.z;
    if (n >= d.ne[0]) return;
    const int e = ((const int *)((const u8 *)ids.data + m * ids.nb[1]))[s];
    float v = ((const float *)((const u8 *)y.data + s * y.nb[1] + m * y.nb[2]))[n];
    if (e >= 0 && e < b.ne[1]) v = __fadd_rn(v, ((const float *)((const u8 *)b.data + (i64)e * b.nb[1]))[n]);
    ((float *)((u8 *)d.data + s * d.nb[1] + m * d.nb[2]))[n] = v;
}
