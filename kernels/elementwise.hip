// Element-wise ops: ADD, MUL (src1 broadcasts by modulo), SCALE, SILU, SWIGLU, COPY (type
// conversion f32/f16/bf16 -> f32/f16/bf16). One thread per element, grid-stride loop; all
// tensors addressed through their byte strides so views work.
#include "compat.h"
#include "quant_decode.h"

RF_DEV const u8 *elem_ptr(const rf_ktensor &t, i64 i0, i64 i1, i64 i2, i64 i3) {
    return (const u8 *)t.data + i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Splits a linear index over dst's shape into 4 coordinates.
RF_DEV void unravel(const rf_ktensor &t, i64 i, i64 &i0, i64 &i1, i64 &i2, i64 &i3) {
    i0 = i % t.ne[0]; i /= t.ne[0];
    i1 = i % t.ne[1]; i /= t.ne[1];
    i2 = i % t.ne[2]; i3 = i / t.ne[2];
}

RF_DEV float load_any(const rf_ktensor &t, const u8 *p) {
    if (t.type == T_F16) return h2f(*(const u16 *)p);
    if (t.type == T_BF16) return bf2f(*(const u16 *)p);
    return *(const float *)p;
}

RF_DEV void store_any(const rf_ktensor &t, u8 *p, float v) {
    if (t.type == T_F16) *(u16 *)p = f2h(v);
    else if (t.type == T_BF16) *(u16 *)p = f2bf(v);
    else *(float *)p = v;
}

// f32, dense rows, dense slices: element i at byte 4 i.
RF_DEV bool dense_f32(const rf_ktensor &t) {
    return t.nb[0] == 4 && t.nb[1] == 4 * t.ne[0] && t.nb[2] == t.nb[1] * t.ne[1] && t.nb[3] == t.nb[2] * t.ne[2];
}
RF_DEV bool same_shape(const rf_ktensor &a, const rf_ktensor &b) {
    return a.ne[0] == b.ne[0] && a.ne[1] == b.ne[1] && a.ne[2] == b.ne[2] && a.ne[3] == b.ne[3];
}
template <int OP> RF_DEV float binary_op(float u, float v) {
    if (OP == 0) return u + v;
    if (OP == 1) return u * v;
    return swiglu_f(u, v);
}

template <int OP> RF_DEV void binary_impl(const rf_kargs &a) {
    const rf_ktensor &d = a.dst, &x = a.src[0], &y = a.src[1];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    // Same shape, all dense and 16-byte aligned (prefill activations): 4 elements per step and
    // no index arithmetic (the general path below divides 64-bit indices per element).
    if (same_shape(d, x) && same_shape(d, y) && dense_f32(d) && dense_f32(x) && dense_f32(y) && n % 4 == 0 &&
        (((unsigned long long)d.data | (unsigned long long)x.data | (unsigned long long)y.data) & 15) == 0) {
        const float4 *xv = (const float4 *)x.data, *yv = (const float4 *)y.data;
        float4 *dv = (float4 *)d.data;
        for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n / 4; i += (i64)gridDim.x * blockDim.x) {
            const float4 u = xv[i], v = yv[i];
            dv[i] = float4{binary_op<OP>(u.x, v.x), binary_op<OP>(u.y, v.y), binary_op<OP>(u.z, v.z), binary_op<OP>(u.w, v.w)};
        }
        return;
    }
    // src1 one dense row broadcast over dense rows (biases, norm weights): 4 elements per step,
    // one 32-bit modulo per step.
    if (same_shape(d, x) && dense_f32(d) && dense_f32(x) && y.ne[0] == d.ne[0] && y.ne[1] == 1 && y.ne[2] == 1 && y.ne[3] == 1 &&
        y.nb[0] == 4 && d.ne[0] % 4 == 0 && d.ne[0] < (1 << 30) && n % 4 == 0 &&
        (((unsigned long long)d.data | (unsigned long long)x.data | (unsigned long long)y.data) & 15) == 0) {
        const float4 *xv = (const float4 *)x.data, *yv = (const float4 *)y.data;
        float4 *dv = (float4 *)d.data;
        const u32 row4 = (u32)(d.ne[0] / 4);
        for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n / 4; i += (i64)gridDim.x * blockDim.x) {
            const float4 u = xv[i], v = yv[n / 4 <= 0xFFFFFFFFll ? (u32)i % row4 : (u32)(i % row4)];
            dv[i] = float4{binary_op<OP>(u.x, v.x), binary_op<OP>(u.y, v.y), binary_op<OP>(u.z, v.z), binary_op<OP>(u.w, v.w)};
        }
        return;
    }
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3; unravel(d, i, i0, i1, i2, i3);
        const float u = *(const float *)elem_ptr(x, i0, i1, i2, i3);
        const float v = *(const float *)elem_ptr(y, i0 % y.ne[0], i1 % y.ne[1], i2 % y.ne[2], i3 % y.ne[3]);
        *(float *)elem_ptr(d, i0, i1, i2, i3) = binary_op<OP>(u, v);
    }
}

RF_KERNEL void rf_add_f32(rf_kargs a) { rf_kernel_start(); binary_impl<0>(a); }
RF_KERNEL void rf_mul_f32(rf_kargs a) { rf_kernel_start(); binary_impl<1>(a); }
RF_KERNEL void rf_swiglu_f32(rf_kargs a) { rf_kernel_start(); binary_impl<2>(a); }

template <int OP> RF_DEV void unary_impl(const rf_kargs &a) {
    const rf_ktensor &d = a.dst, &x = a.src[0];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    const float s = a.scale.factor; // SCALE (SILU ignores it)
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3; unravel(d, i, i0, i1, i2, i3);
        const float u = *(const float *)elem_ptr(x, i0, i1, i2, i3);
        const float r = OP == 0 ? u * s : u / (1.f + __expf(-u));
        *(float *)elem_ptr(d, i0, i1, i2, i3) = r;
    }
}

RF_KERNEL void rf_scale_f32(rf_kargs a) { rf_kernel_start(); unary_impl<0>(a); }
RF_KERNEL void rf_silu_f32(rf_kargs a) { rf_kernel_start(); unary_impl<1>(a); }

// COPY between f32/f16/bf16 tensors of equal element count: walks dst's shape, reads src at
// the same linear position in src's shape.
RF_KERNEL void rf_copy_float(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &x = a.src[0];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3; unravel(x, i, i0, i1, i2, i3);
        const float v = load_any(x, elem_ptr(x, i0, i1, i2, i3));
        unravel(d, i, i0, i1, i2, i3);
        store_any(d, (u8 *)elem_ptr(d, i0, i1, i2, i3), v);
    }
}
