// GET_ROWS: dst[K, M] f32 = rows src1[m] of src0[K, V] (any weight type), decoded to f32.
// Block per output row; threads walk 32-element chunks (scalar types: single elements).
#include "compat.h"
#include "quant_decode.h"

template <int T> RF_DEV void get_rows_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &d = a.dst;
    const i64 K = w.ne[0], m = blockIdx.x;
    const int r = ((const int *)a.src[1].data)[m];
    const u8 *row = (const u8 *)w.data + (i64)r * w.nb[1];
    float *y = (float *)((u8 *)d.data + m * d.nb[1]);
    if (qtraits<T>::scalar) {
        for (i64 i = threadIdx.x; i < K; i += blockDim.x) y[i] = load_scalar<T>(row, i);
    } else {
        float v[32];
        for (i64 c = threadIdx.x; c < K / 32; c += blockDim.x) {
            decode32<T>(row, c, v);
            for (int j = 0; j < 32; ++j) y[c * 32 + j] = v[j];
        }
    }
}

#define RF_GET_ROWS(NAME, T) RF_KERNEL __launch_bounds__(128) void rf_get_rows_##NAME(rf_kargs a) { rf_kernel_start(); get_rows_impl<T>(a); }
RF_FOR_EACH_WTYPE(RF_GET_ROWS)
