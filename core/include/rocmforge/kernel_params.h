/* Named kernel parameters (ABI 2.11): the 8 integers and 8 floats at the end of rf_kargs
 * (rocmforge/kernel_args.h) and of rf_fusion_launch (rocmforge/pack_abi.h), as one struct per
 * launch family, so that a kernel and the code that launches it name what each slot means instead
 * of agreeing on iparams[N]. Both keep the raw view (iparams[8], fparams[8]) in a union with these
 * structs: every struct is those 64 bytes, and each member sits at the slot it names (checked
 * below), so a kernel or pack written against the raw slots (ABI 2.10) means the same and
 * RF_KARGS_VERSION stays. A slot a family does not use is padding (unused_*) that launches leave 0.
 * Where one slot means two things in two kernels, they are two families (rf_kp_mv_proj,
 * rf_kp_mvn_proj). docs/PLUGINS.md lists the kernels of each family.
 * Plain C, no system headers (NVRTC/hipRTC compile it). */
#ifndef RF_KERNEL_PARAMS_H
#define RF_KERNEL_PARAMS_H

/* ---- the decode matrix-vector kernels (kernels/matmul_vec.hip, matmul_vec_qx.hip) ---------- */

/* rf_kp_mv.form: what rf_mvq_multi and rf_mvqn_<type>_<NC>f compute besides the product. */
enum rf_kp_mv_form {
    RF_KP_MV_SEGMENTS = 0, /* rf_mvq_multi: up to three matmuls of one vector (segments: aux[1..3]) */
    RF_KP_MV_GATED = 1,    /* gate (src0) and up (src1) rows and their SwiGLU product (GeGLU in the *g kernels) */
    RF_KP_MV_ROPE = 2,     /* a matmul and the ROPE NORMAL of its product (one rotation pair per row pair) */
    RF_KP_MV_PLAIN = 3,    /* rf_mvqn_<type>_<NC>f: the matmul alone, two rows a warp */
};

/* rf_mvq_<type>, rf_mvq_<type>_qx, rf_mvqn_<type>_<NC>x<R>, rf_mvq_idc_<type>, rf_mv_f32 (no_weight_prefetch only),
 * rf_mvq_multi and rf_mvqn_<type>_<NC>f / _1fg / _1fw / _1fwg (every member). */
typedef struct rf_kp_mv {
    int form;                 /* rf_kp_mv_form (the fused kernels) */
    int n_rot;                /* ROPE form: the rope's n_rot */
    int head_dim;             /* ROPE form: the head size D */
    int append;               /* rf_mvqn_*f, ROPE and PLAIN forms: 1 = each column's final rows also go to
                               * the pool src[4], row ((const int *)aux[2])[m] (a K or V append) */
    int unused_i4;
    int geglu;                /* GATED form: 1 = the product is GeGLU's (the kernel name decides on the
                               * device; host_run reads this) */
    int prefetch_head_blocks; /* fused kernels with no_weight_prefetch 0: k > 0 = only the first k blocks
                               * pull their rows into L2 (the head of the weights); 0 = every block */
    int no_weight_prefetch;   /* 1 = no L2 prefetch of the weight rows before rf_kernel_start */
    float freq_base;          /* ROPE form: the rope's freq_base */
    float freq_scale;         /* ROPE form: the rope's freq_scale */
    float unused_f[6];
} rf_kp_mv;

/* A layer's joined attention projections for one column: rf_mvq_proj, rf_mvq_proj_<type>,
 * rf_mvq_proj2_<type>, rf_mvq_proj2w_<type>. Pool A is at aux[0] (slots aux[2], row stride
 * dst.ne[3]), pool B at aux[1] (slots aux[3], row stride dst.nb[3]). */
typedef struct rf_kp_mv_proj {
    int prefetch_head_blocks; /* k > 0: the first k blocks also pull their weight rows into L2 */
    int n_rot;                /* the ropes' n_rot */
    int head_dim;             /* the ropes' head size D */
    int n_segments;           /* weights src[0 .. n_segments - 1], 1..3 */
    int pool_segment[2];      /* pool A, B: s + 1 = segment s's final output is appended to it; 0: no pool */
    int pool_type[2];         /* pool A, B: the pool's rf_type (F16 or F32) */
    float freq_base;
    float freq_scale;
    float unused_f[6];
} rf_kp_mv_proj;

/* The same projections for 2..4 columns: rf_mvqn_proj_<type>_<NC>. As rf_kp_mv_proj, except that
 * the first slot is pool B's row stride (no head prefetch) and the pools lie elsewhere: pool A at
 * aux[1] (slots aux[3], row stride dst.nb[3]), pool B at aux[2] (slots dst.ne[3]). */
typedef struct rf_kp_mvn_proj {
    int pool_b_row_bytes;     /* pool B's row stride in bytes */
    int n_rot;
    int head_dim;
    int n_segments;
    int pool_segment[2];
    int pool_type[2];
    float freq_base;
    float freq_scale;
    float unused_f[6];
} rf_kp_mvn_proj;

/* ---- the integer tensor-core tiles: rf_mmq_<type>_<C>_k<S> (kernels/matmul_mmq.hip) ----------- */
/* Up to three matrices of one K and activations (grid z = segments: weights src[0], src[2],
 * src[3]; outputs dst, aux[1], aux[2]); the V append's pool at aux[3], its slots at src[4]. */
typedef struct rf_kp_mmq {
    int pool_row_bytes;   /* append: the pool's row stride in bytes */
    int no_row_prefetch;  /* 1 = no bulk L2 prefetch of the weight rows (what the backend passes) */
    int prefetch_window;  /* steps per prefetch window; 0: the format's */
    int bulk_copy;        /* 1 = stages filled with bulk (TMA) copies on mbarriers (sm_90) */
    int pool_type;        /* append: the pool's rf_type (F16 or F32) */
    int out_col_bytes[2]; /* segments 1, 2: their output's column stride in bytes (segment 0: dst.nb[1]) */
    int append_segment;   /* s + 1 = segment s's outputs also go to the pool; 0: none */
    float unused_f[8];
} rf_kp_mmq;

/* ---- ADD + RMS_NORM + MUL (+ q8_1): rf_add_rms_norm_mul* (kernels/norm_fused.hip) --------------- */
typedef struct rf_kp_norm {
    int weight_is_model;  /* 1 = src2 is a model weight: read before the previous kernel ends */
    int cluster_blocks;   /* the cluster form: blocks sharing a row (grid x = rows x blocks); 0, 1: one */
    int prefetch_add;     /* 1 = the add's operands pulled into L2 before the wait */
    int unused_i[5];
    float eps;            /* the RMS_NORM's eps */
    float unused_f[7];
} rf_kp_norm;

/* ---- ROPE: rf_rope_f32 with its second tensor and K append (kernels/rope.hip), and
 * rf_head_norm_rope_f32 (kernels/head_norm_rope.hip) ------------------------------------------ */
/* mode, n_rot, freq_base, freq_scale sit where the ROPE node has them (abi.h). */
typedef struct rf_kp_rope {
    int mode;            /* RF_ROPE_NORMAL or RF_ROPE_NEOX */
    int n_rot;           /* dims rotated */
    int pool_type;       /* the K append (aux[1] != 0): the pool's rf_type (F16 or F32) */
    int unused_i[5];
    float freq_base;
    float freq_scale;
    float norm_eps;      /* rf_head_norm_rope_f32: the head norms' RMS_NORM eps */
    float unused_f[5];
} rf_kp_rope;

/* ---- MATMUL_ID's expert grouping: rf_moe_group_ids (kernels/moe_group.hip) -------------------- */
typedef struct rf_kp_moe_group {
    int n_experts;       /* E */
    int tile_cols;       /* activation columns per tile of the grouped matmul */
    int tile_entries;    /* tile entries the group scratch holds (the matmul's grid) */
    int unused_i[5];
    float unused_f[8];
} rf_kp_moe_group;

/* ---- the observer's stamp kernel: rf_stamp_mark (kernels/stamp.hip, stamps.h) ----------------- */
typedef struct rf_kp_stamp {
    int n_stamps;        /* n > 0: copy the n ring entries ending with its own stamp to dst.data; 0: stamp only */
    int unused_i[7];
    float unused_f[8];
} rf_kp_stamp;

/* ---- ops whose kernels read the node's own parameters (abi.h), copied as they are -------------- */
/* ATTENTION: rf_attention_* (attention.hip, attention_decode.hip, attention_stream.hip,
 * attention_prefill.hip, attention_prefill_mma.hip). */
typedef struct rf_kp_attention {
    int window;          /* W > 0: sliding window, positions pos - W + 1 .. pos only */
    int decode_rows;     /* n > 0: tokens 0..n-1 are single decode rows (a hint; the host splits on it) */
    int bidirectional;   /* 1: a token sees every position of its sequence in the node (encoders) */
    int unused_i[5];
    float scale;         /* the score scale (usually 1 / sqrt(D)) */
    float soft_cap;      /* c > 0: scores soft-capped, c * tanh(s / c) */
    float unused_f[6];
} rf_kp_attention;

/* SCALE (rf_scale_f32; rf_silu_f32 shares its code and ignores it). */
typedef struct rf_kp_scale {
    int unused_i[8];
    float factor;
    float unused_f[7];
} rf_kp_scale;

/* RMS_NORM (rf_rms_norm_f32). */
typedef struct rf_kp_rms_norm {
    int unused_i[8];
    float eps;
    float unused_f[7];
} rf_kp_rms_norm;

/* SOFTMAX (rf_softmax_f32): softmax(src0 * scale). */
typedef struct rf_kp_softmax {
    int unused_i[8];
    float scale;
    float unused_f[7];
} rf_kp_softmax;

/* SOFTCAP (rf_softcap_f32): cap * tanh(src0 / cap). */
typedef struct rf_kp_softcap {
    int unused_i[8];
    float cap;
    float unused_f[7];
} rf_kp_softcap;

/* MOE_WEIGHTS (rf_moe_weights_f32). */
typedef struct rf_kp_moe_weights {
    int over_chosen;     /* 1: softmax over the k chosen logits; 0: the chosen entries of the softmax over all E;
                            2: the softmax of the k chosen logits alone (abi.h MOE_WEIGHTS iparams[0]) */
    int unused_i[7];
    float unused_f[8];
} rf_kp_moe_weights;

/* The parameter members of rf_kargs and rf_fusion_launch: an anonymous union of the raw view and
 * every family (a.mv, a.mmq, l->norm, ...). The raw view comes first: zero-initialising the block
 * zeroes all 64 bytes. */
#define RF_KERNEL_PARAMS_UNION          \
    union {                             \
        struct {                        \
            int iparams[8];             \
            float fparams[8];           \
        };                              \
        rf_kp_mv mv;                    \
        rf_kp_mv_proj mv_proj;          \
        rf_kp_mvn_proj mvn_proj;        \
        rf_kp_mmq mmq;                  \
        rf_kp_norm norm;                \
        rf_kp_rope rope;                \
        rf_kp_moe_group moe_group;      \
        rf_kp_stamp stamp;              \
        rf_kp_attention attention;      \
        rf_kp_scale scale;              \
        rf_kp_rms_norm rms_norm;        \
        rf_kp_softmax softmax;          \
        rf_kp_softcap softcap;          \
        rf_kp_moe_weights moe_weights;  \
    }

/* Every struct is the 64 bytes of the raw view, and each member sits at the old slot's offset. */
#ifdef __cplusplus
#define RF_KP_ASSERT(cond, what) static_assert(cond, what)
#else
#define RF_KP_ASSERT(cond, what) _Static_assert(cond, what)
#endif
/* NVRTC has no __builtin_offsetof: there the offsets go unchecked, as nvcc, hipcc, gcc and g++
 * check the same structs. */
#ifdef __CUDACC_RTC__
#define RF_KP_OFFSET_ASSERT(cond, what) static_assert(true, "")
#else
#define RF_KP_OFFSET_ASSERT(cond, what) RF_KP_ASSERT(cond, what)
#endif
#define RF_KP_SIZE(T) RF_KP_ASSERT(sizeof(T) == 64, #T " is not the 64 bytes of iparams[8], fparams[8]")
#define RF_KP_I(T, m, i) RF_KP_OFFSET_ASSERT(__builtin_offsetof(T, m) == 4 * (i), #T "." #m " is not at iparams[" #i "]")
#define RF_KP_F(T, m, i) RF_KP_OFFSET_ASSERT(__builtin_offsetof(T, m) == 32 + 4 * (i), #T "." #m " is not at fparams[" #i "]")

RF_KP_SIZE(rf_kp_mv);
RF_KP_I(rf_kp_mv, form, 0);
RF_KP_I(rf_kp_mv, n_rot, 1);
RF_KP_I(rf_kp_mv, head_dim, 2);
RF_KP_I(rf_kp_mv, append, 3);
RF_KP_I(rf_kp_mv, geglu, 5);
RF_KP_I(rf_kp_mv, prefetch_head_blocks, 6);
RF_KP_I(rf_kp_mv, no_weight_prefetch, 7);
RF_KP_F(rf_kp_mv, freq_base, 0);
RF_KP_F(rf_kp_mv, freq_scale, 1);

RF_KP_SIZE(rf_kp_mv_proj);
RF_KP_I(rf_kp_mv_proj, prefetch_head_blocks, 0);
RF_KP_I(rf_kp_mv_proj, n_rot, 1);
RF_KP_I(rf_kp_mv_proj, head_dim, 2);
RF_KP_I(rf_kp_mv_proj, n_segments, 3);
RF_KP_I(rf_kp_mv_proj, pool_segment[0], 4);
RF_KP_I(rf_kp_mv_proj, pool_segment[1], 5);
RF_KP_I(rf_kp_mv_proj, pool_type[0], 6);
RF_KP_I(rf_kp_mv_proj, pool_type[1], 7);
RF_KP_F(rf_kp_mv_proj, freq_base, 0);
RF_KP_F(rf_kp_mv_proj, freq_scale, 1);

RF_KP_SIZE(rf_kp_mvn_proj);
RF_KP_I(rf_kp_mvn_proj, pool_b_row_bytes, 0);
RF_KP_I(rf_kp_mvn_proj, n_rot, 1);
RF_KP_I(rf_kp_mvn_proj, head_dim, 2);
RF_KP_I(rf_kp_mvn_proj, n_segments, 3);
RF_KP_I(rf_kp_mvn_proj, pool_segment[0], 4);
RF_KP_I(rf_kp_mvn_proj, pool_segment[1], 5);
RF_KP_I(rf_kp_mvn_proj, pool_type[0], 6);
RF_KP_I(rf_kp_mvn_proj, pool_type[1], 7);
RF_KP_F(rf_kp_mvn_proj, freq_base, 0);
RF_KP_F(rf_kp_mvn_proj, freq_scale, 1);

RF_KP_SIZE(rf_kp_mmq);
RF_KP_I(rf_kp_mmq, pool_row_bytes, 0);
RF_KP_I(rf_kp_mmq, no_row_prefetch, 1);
RF_KP_I(rf_kp_mmq, prefetch_window, 2);
RF_KP_I(rf_kp_mmq, bulk_copy, 3);
RF_KP_I(rf_kp_mmq, pool_type, 4);
RF_KP_I(rf_kp_mmq, out_col_bytes[0], 5);
RF_KP_I(rf_kp_mmq, out_col_bytes[1], 6);
RF_KP_I(rf_kp_mmq, append_segment, 7);

RF_KP_SIZE(rf_kp_norm);
RF_KP_I(rf_kp_norm, weight_is_model, 0);
RF_KP_I(rf_kp_norm, cluster_blocks, 1);
RF_KP_I(rf_kp_norm, prefetch_add, 2);
RF_KP_F(rf_kp_norm, eps, 0);

RF_KP_SIZE(rf_kp_rope);
RF_KP_I(rf_kp_rope, mode, 0);
RF_KP_I(rf_kp_rope, n_rot, 1);
RF_KP_I(rf_kp_rope, pool_type, 2);
RF_KP_F(rf_kp_rope, freq_base, 0);
RF_KP_F(rf_kp_rope, freq_scale, 1);
RF_KP_F(rf_kp_rope, norm_eps, 2);

RF_KP_SIZE(rf_kp_moe_group);
RF_KP_I(rf_kp_moe_group, n_experts, 0);
RF_KP_I(rf_kp_moe_group, tile_cols, 1);
RF_KP_I(rf_kp_moe_group, tile_entries, 2);

RF_KP_SIZE(rf_kp_stamp);
RF_KP_I(rf_kp_stamp, n_stamps, 0);

RF_KP_SIZE(rf_kp_attention);
RF_KP_I(rf_kp_attention, window, 0);
RF_KP_I(rf_kp_attention, decode_rows, 1);
RF_KP_I(rf_kp_attention, bidirectional, 2);
RF_KP_F(rf_kp_attention, scale, 0);
RF_KP_F(rf_kp_attention, soft_cap, 1);

RF_KP_SIZE(rf_kp_scale);
RF_KP_F(rf_kp_scale, factor, 0);
RF_KP_SIZE(rf_kp_rms_norm);
RF_KP_F(rf_kp_rms_norm, eps, 0);
RF_KP_SIZE(rf_kp_softmax);
RF_KP_F(rf_kp_softmax, scale, 0);
RF_KP_SIZE(rf_kp_softcap);
RF_KP_F(rf_kp_softcap, cap, 0);
RF_KP_SIZE(rf_kp_moe_weights);
RF_KP_I(rf_kp_moe_weights, over_chosen, 0);

#endif
