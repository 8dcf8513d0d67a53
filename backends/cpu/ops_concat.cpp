// CONCAT (abi.h, ABI 2.15): two f32 tensors joined along dim 0, as ggml_concat(a, b, 0).
// DeepSeek-V2's latent attention builds each query head and each cached K row this way.
#include <cstring>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_concat(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *a = n.src[0], *b = n.src[1];
    if (!d || !a || !b) { *why = "dst, src0 and src1 are required"; return false; }
    if (d->type != RF_TYPE_F32 || a->type != RF_TYPE_F32 || b->type != RF_TYPE_F32) { *why = "expects f32 tensors"; return false; }
    if (!rows_contiguous(*d) || !rows_contiguous(*a) || !rows_contiguous(*b)) { *why = "rows must be contiguous"; return false; }
    if (d->ne[0] != a->ne[0] + b->ne[0]) { *why = "dst->ne[0] must be src0->ne[0] + src1->ne[0]"; return false; }
    for (int i = 1; i < 4; ++i)
        if (a->ne[i] != d->ne[i] || b->ne[i] != d->ne[i]) {
            *why = "expects src0 [Da,...], src1 [Db,...], dst [Da+Db,...], got " + shape_str(*a) + ", " + shape_str(*b) +
                   " -> " + shape_str(*d);
            return false;
        }
    return true;
}

void run_concat(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &a = *n.src[0], &b = *n.src[1];
    const size_t na = size_t(a.ne[0]) * 4, nb = size_t(b.ne[0]) * 4;
    int64_t r0, r1;
    split_range(nrows(d), part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t i1, i2, i3;
        unravel_row(d, r, &i1, &i2, &i3);
        auto *out = reinterpret_cast<uint8_t *>(row_f32(d, i1, i2, i3));
        std::memcpy(out, row_f32(a, i1, i2, i3), na);
        std::memcpy(out + na, row_f32(b, i1, i2, i3), nb);
    }
}

} // namespace

const OpImpl kOpConcat = {check_concat, plan_simple, run_concat};

} // namespace rfcpu
