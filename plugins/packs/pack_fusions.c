/* The in-tree packs' fusion table (pack_fusions.h), in the order they are tried. */
#include "pack_fusions.h"

const rf_fusion *const rf_pack_fusions[RF_PACK_N_FUSIONS] = {
    &rf_fusion_add_norm_1, &rf_fusion_add_norm_2, &rf_fusion_add_norm_4, &rf_fusion_head_norm_rope, &rf_fusion_norm_rows,
    &rf_fusion_norm_1,     &rf_fusion_norm_2,     &rf_fusion_norm_4,     &rf_fusion_kv_append,  &rf_fusion_rope_pair, &rf_fusion_moe_route,
    &rf_fusion_moe_gate_up, &rf_fusion_moe_down_sum, &rf_fusion_swiglu_q8,
    &rf_fusion_projections, &rf_fusion_cols_run,  &rf_fusion_gate_up,     &rf_fusion_matmul_rope, &rf_fusion_mmq_run,
};
