// The unity translation unit compiled into each per-arch code object (one pack per arch) and,
// with its includes inlined at build time, embedded into the plugin for the JIT fallback.
#include "elementwise.hip"
#include "rownorm.hip"
#include "norm_fused.hip"
#include "rope.hip"
#include "get_rows.hip"
#include "kv_cache.hip"
#include "attention.hip"
#include "attention_prefill.hip"
#include "matmul_generic.hip"
#include "matmul_tiled.hip"
#include "matmul_mma.hip"
#include "matmul_vec.hip"
