// Row movement: GET_ROWS (embedding lookup, any type -> f32), SET_ROWS (KV append into an
// f32/f16/q8_0 pool) and COPY (f32 <-> f16 conversion).
#include <cstring>

#include "ops.h"
#include "rocmforge/types.h"

namespace rfcpu {
namespace {

bool check_index_vector(const rf_tensor *idx, int64_t n, const char *what, std::string *why) {
    if (!idx || idx->type != RF_TYPE_I32 || !is_contiguous(*idx) || nelements(*idx) != n) {
        *why = std::string(what) + " must be a contiguous i32 vector of " + std::to_string(n) + " entries";
        return false;
    }
    return true;
}

bool check_get_rows(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *w = n.src[0];
    if (!d || !w) { *why = "dst/src0 missing"; return false; }
    if (!dequantizable(w->type)) { *why = "src0 type cannot be dequantized: " + shape_str(*w); return false; }
    if (d->type != RF_TYPE_F32 || !rows_contiguous(*d) || !rows_contiguous(*w)) { *why = "layout not supported"; return false; }
    if (w->ne[2] != 1 || w->ne[3] != 1 || d->ne[2] != 1 || d->ne[3] != 1 || d->ne[0] != w->ne[0]) {
        *why = "expects src0 [K,V], dst [K,M]";
        return false;
    }
    return check_index_vector(n.src[1], d->ne[1], "src1 (row ids)", why);
}

void run_get_rows(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &w = *n.src[0];
    const auto *ids = static_cast<const int32_t *>(n.src[1]->data);
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int32_t id = ids[r];
        float *out = row_f32(d, r);
        if (id < 0 || id >= w.ne[1]) {
            ctx.errors.fail("GET_ROWS: row id " + std::to_string(id) + " at " + std::to_string(r) +
                            " outside [0, " + std::to_string(w.ne[1]) + ")");
            std::memset(out, 0, size_t(d.ne[0]) * sizeof(float));
            continue;
        }
        const uint8_t *src = row_ptr(w, id);
        if (w.type == RF_TYPE_F32) std::memcpy(out, src, size_t(d.ne[0]) * sizeof(float));
        else if (w.type == RF_TYPE_F16) ctx.ks.f16_to_f32(reinterpret_cast<const uint16_t *>(src), out, d.ne[0]);
        else rf::dequantize_row(w.type, src, out, d.ne[0]);
    }
}

bool check_set_rows(const rf_node &n, std::string *why) {
    const rf_tensor *pool = n.dst, *x = n.src[0];
    if (!pool || !x) { *why = "dst/src0 missing"; return false; }
    if (pool->type != RF_TYPE_F32 && pool->type != RF_TYPE_F16 && pool->type != RF_TYPE_Q8_0) {
        *why = "pool type must be f32, f16 or q8_0, got " + shape_str(*pool);
        return false;
    }
    if (x->type != RF_TYPE_F32 || !rows_contiguous(*x) || !rows_contiguous(*pool)) { *why = "layout not supported"; return false; }
    if (x->ne[0] != pool->ne[0] || x->ne[2] != 1 || x->ne[3] != 1 || pool->ne[2] != 1 || pool->ne[3] != 1) {
        *why = "expects src0 [R,T] and pool [R,S] with the same R";
        return false;
    }
    return check_index_vector(n.src[1], x->ne[1], "src1 (slots)", why);
}

void run_set_rows(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &pool = *n.dst, &x = *n.src[0];
    const auto *slots = static_cast<const int32_t *>(n.src[1]->data);
    int64_t r0, r1;
    split_range(x.ne[1], part, n_parts, &r0, &r1);
    for (int64_t t = r0; t < r1; ++t) {
        const int32_t slot = slots[t];
        if (slot < 0 || slot >= pool.ne[1]) {
            ctx.errors.fail("SET_ROWS: slot " + std::to_string(slot) + " of token " + std::to_string(t) +
                            " outside the pool [0, " + std::to_string(pool.ne[1]) + ")");
            continue;
        }
        const float *src = row_f32(x, t);
        uint8_t *dst = row_ptr(pool, slot);
        if (pool.type == RF_TYPE_F32) std::memcpy(dst, src, size_t(x.ne[0]) * sizeof(float));
        else if (pool.type == RF_TYPE_F16) ctx.ks.f32_to_f16(src, reinterpret_cast<uint16_t *>(dst), x.ne[0]);
        else rf::quantize_row(RF_TYPE_Q8_0, src, dst, x.ne[0]);
    }
}

bool check_copy(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *a = n.src[0];
    if (!d || !a) { *why = "dst/src0 missing"; return false; }
    auto ok_type = [](int t) { return t == RF_TYPE_F32 || t == RF_TYPE_F16; };
    if (!ok_type(d->type) || !ok_type(a->type)) { *why = "COPY converts between f32 and f16 only"; return false; }
    if (!is_contiguous(*d) || !is_contiguous(*a)) { *why = "COPY needs contiguous tensors"; return false; }
    if (nelements(*d) != nelements(*a)) { *why = "element counts differ"; return false; }
    return true;
}

void run_copy(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &a = *n.src[0];
    int64_t b, e;
    split_range(nelements(d), part, n_parts, &b, &e);
    const size_t es = scalar_type_size(a.type), ed = scalar_type_size(d.type);
    const uint8_t *src = static_cast<const uint8_t *>(a.data) + b * es;
    uint8_t *dst = static_cast<uint8_t *>(d.data) + b * ed;
    if (a.type == d.type) std::memmove(dst, src, size_t(e - b) * es);
    else if (a.type == RF_TYPE_F32)
        ctx.ks.f32_to_f16(reinterpret_cast<const float *>(src), reinterpret_cast<uint16_t *>(dst), e - b);
    else ctx.ks.f16_to_f32(reinterpret_cast<const uint16_t *>(src), reinterpret_cast<float *>(dst), e - b);
}

} // namespace

const OpImpl kOpGetRows = {check_get_rows, plan_simple, run_get_rows};
static NodeWork plan_set_rows(const KernelSet &, const rf_node &n, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(n.src[0]->ne[1], n.src[0]->ne[0], nth);
    return w;
}

const OpImpl kOpSetRows = {check_set_rows, plan_set_rows, run_set_rows};
const OpImpl kOpCopy = {check_copy, plan_simple, run_copy};

} // namespace rfcpu
