// A fusion's claim (rocmforge/pack_abi.h) turned into a kernel argument block: the covered
// nodes' tensors bound into rf_kargs slots. No GPU call, so rocmforge-pack-check binds exactly as
// the backend does.
#pragma once
#include <string>

#include "rocmforge/pack_abi.h"

namespace rf_hip {

// The kernels' view of a tensor (kernel_args.h); a null tensor gives an empty one.
rf_ktensor ktensor(const rf_tensor *t);

// Checks what a claim returned (`count` nodes from `first`, the launch geometry, every tensor
// reference naming a covered node's existing tensor) and builds `out`; "" or the reason the claim
// is invalid (a pack bug: the caller reports it with the fusion's name).
std::string bind_claim(const rf_graph &g, int first, int count, const rf_fusion_launch &l, rf_kargs &out);

// The tensor whose q8_1 columns the claim's launch can write (ABI 2.4, rf_fusion_launch.q8_of;
// *x = null when it offers none): "" or the reason the offer is invalid (aux indices outside
// 0..3 or equal, not an f32 tensor of rows with K % 32 == 0 elements).
std::string bind_q8(const rf_graph &g, int first, int count, const rf_fusion_launch &l, const rf_tensor **x);
// The columns lent into the argument block (scratch = column 0, the stride and the block into the
// launch's aux slots), or, with block 0, none (scratch null, both slots 0).
void lend_q8(const rf_fusion_launch &l, void *scratch, int64_t stride, int block, rf_kargs &out);

// The activation rows the claim's launch reads (ABI 2.6, rf_fusion_launch.act_in; *x = null when
// it reads none) and how (*block: 32 or 256 for q8_1 columns, RF_ACT_IN_F32 for the rows as they
// are): "" or the reason the claim is invalid (both act_in and q8_of, an aux slot outside 0..3,
// another block, not f32 rows of a multiple of the block (of 32 for the f32 form), rows not
// contiguous). (A claim of a pack before 2.6 leaves act_in as rf_fusion_launch_init set it.)
std::string bind_act_in(const rf_graph &g, int first, int count, const rf_fusion_launch &l, const rf_tensor **x, int *block);
// The activation rows lent: scratch = the first column (row), aux[q8_aux_stride] = the stride
// (none for q8_aux_stride = -1).
void lend_act_in(const rf_fusion_launch &l, const void *first, int64_t stride, rf_kargs &out);

// The claim's address words (ABI 2.6, rf_fusion_launch.words) written into `out` (bound by
// bind_claim): "" or the reason they are invalid (a field outside rf_kargs_field, a dst shape member
// while dst is bound, a data address of an unbound slot, the aux member of the q8_1 stride, a tensor
// outside the claimed nodes, RF_BIND_LENT without lent scratch or past its `lent_bytes`). `lent`: the
// scratch lent to the claim (ABI 2.7), null where none.
std::string bind_words(const rf_graph &g, int first, int count, const rf_fusion_launch &l, rf_kargs &out, void *lent = nullptr,
                       uint64_t lent_bytes = 0);

} // namespace rf_hip
