/* ROCmForge kernel-pack ABI (part of plugin ABI 2.0; docs/PLUGINS.md, "Writing a kernel pack").
 *
 * A kernel pack is a shared object whose rf_plugin_info has kind RF_PLUGIN_KERNEL_PACK and whose
 * vtable is an rf_kernel_pack_vtable: the GPU code object it carries (embedded in the .so) for
 * exactly one arch, its checksum and kernel names, and the fusions it offers. The HIP backend
 * loads the packs of the device arch at init, verifies them (arch, ABI, kernel-argument version,
 * checksum, every named kernel present in the code object) and refuses a bad one there, never
 * in the middle of a run. During compute() each fusion may claim a run of consecutive nodes
 * before the backend's own kernels (and its built-in fusions) are considered.
 *
 * Kernels take one argument, an rf_kargs by value (rocmforge/kernel_args.h). A claim does not
 * write device addresses: it says which node tensor goes into which rf_kargs slot
 * (rf_tensor_ref) and the backend builds the block, so the pack never depends on how the backend
 * lays out its memory.
 *
 * q8_1 activation columns (ABI 2.4). The backend's integer matmuls read their activations as
 * q8_1 columns, one per activation row x of K elements (K % 32 == 0): K int8 quants, then per 32
 * elements a float pair (d, d * s), s the sum of those 32 quants; columns RF_Q8_1_COLUMN_BYTES(K)
 * apart. Quantized as the CPU backend quantizes a matmul's activations, in blocks of 32 elements
 * (legacy weight formats) or 256 (K-quants): amax = max |x| over the block, d = amax / 127,
 * q = rint(x * (127 / amax)) (round half to even; 0 when amax is 0); with blocks of 256, each
 * of the 8 pairs holds the block's d. A launch that produces the matmul's input may write these
 * columns too (rf_fusion_launch.q8_of) and save the backend its own quantizing launch.
 *
 * Matmul fusions (ABI 2.6). A launch that replaces a decode matmul's own (its product with a
 * SwiGLU, a rope, ...) reads the matmul's activations as the backend's kernels do: the backend
 * quantizes them into q8_1 columns (or finds the copy it made for an earlier node) and lends them
 * (rf_fusion_launch.act_in); rf_pack_device.matmul_form says which form the backend would run the
 * matmul in, so a claim replaces only launches of the kernel family it was written for; and
 * rf_fusion_launch.kernel picks the kernel per claim (by weight type, by column count).
 *
 * Several launches per claim (ABI 2.7). A fusion with claim_launches fills up to
 * RF_FUSION_MAX_LAUNCHES launches for one run of nodes, run in that order (a layer's projections
 * on the tensor-core tiles: one launch per weight type, then the rotations). The launches may
 * share scratch the backend lends for the claim (lent_bytes of the first launch; tensor
 * references with node RF_BIND_LENT name it), e.g. for a product whose own bytes a later output
 * of the run reuses. rf_pack_device.matmul_tiles tells the launch the backend would make for a
 * MATMUL on its tensor-core tiles, so a claim that joins matrices keeps the backend's tile choice
 * (and with it every output bit).
 *
 * Backend options (ABI 2.10). A pack reads its tuning knobs (weight prefetch, the fused norm's
 * block shape) from rf_pack_device.options, which the backend fills from its validated
 * backend_options, never from the environment: two backend instances may differ. A pack given
 * none (a 2.9 backend, whose rf_pack_device ends before the member, or a NULL pointer) uses the
 * defaults rf_pack_options names; a 2.9 pack ignores the member.
 *
 * Named kernel parameters (ABI 2.11). rf_fusion_launch's (and rf_kargs') 8 integers and 8 floats
 * are a union of the raw iparams[8], fparams[8] and one struct per launch family of the in-tree
 * kernels (rocmforge/kernel_params.h: l->mv for the decode matrix-vector kernels, l->mv_proj,
 * l->mvn_proj, l->mmq, l->norm, l->rope, ...), each member at the slot it names; rf_matmul_tiles
 * names its tuning members likewise (tuning). Packs should write the named members. The bytes are
 * those of 2.10, so a 2.10 pack (raw slots) is served as before and RF_KARGS_VERSION is unchanged.
 * A pack of a newer minor is served too: every member appended since writes or reads only where
 * rf_pack_device.struct_size and launch_size say the backend has it.
 */
#ifndef ROCMFORGE_PACK_ABI_H
#define ROCMFORGE_PACK_ABI_H

#include "abi.h"
#include "kernel_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rf_tensor_ref.node for an empty slot (a zeroed rf_ktensor). */
#define RF_BIND_NONE (-1)
/* rf_tensor_ref.which for the node's dst (0..RF_MAX_SRC-1: src[which]). */
#define RF_BIND_DST (-1)
/* rf_tensor_ref.node in an rf_kargs_word (ABI 2.7): the scratch the backend lends the claim
 * (rf_fusion_launch.lent_bytes); which is ignored. */
#define RF_BIND_LENT (-2)

/* One tensor of a claimed node: node is relative to the claim's first node (0 = graph node
 * `first`, up to the claim's count - 1). */
typedef struct rf_tensor_ref {
    int16_t node;
    int16_t which;
} rf_tensor_ref;

/* Bytes of one q8_1 column of K elements (K % 32 == 0), 16-byte aligned. */
#define RF_Q8_1_COLUMN_BYTES(K) (((K) + (K) / 32 * 8 + 15) / 16 * 16)

/* A 64-bit integer member of the argument block set from a tensor's device address (ABI 2.6):
 * for kernels with more operands than rf_kargs has tensor slots, which read the others' addresses
 * from integer members (the in-tree packs' joined projections read up to ten). The backend writes
 * the address of `tensor`'s data plus `value` into the member `field` names, or `value` alone
 * where tensor.node is RF_BIND_NONE. A dst member only while dst is unbound (dst.node =
 * RF_BIND_NONE); an aux member the launch does not use for its q8_1 stride. */
enum rf_kargs_field {
    RF_KFIELD_NONE = 0,     /* an unused entry */
    RF_KFIELD_AUX0 = 1,     /* aux[0..3]: RF_KFIELD_AUX0 + i */
    RF_KFIELD_DST_NE0 = 5,  /* dst.ne[0..3]: RF_KFIELD_DST_NE0 + i */
    RF_KFIELD_DST_NB0 = 9,  /* dst.nb[0..3]: RF_KFIELD_DST_NB0 + i */
    /* ABI 2.7: the data address of dst or src[i] (RF_KFIELD_SRC0_DATA + i), which may be bound to
     * a tensor: the kernel sees that tensor's shape and strides at another address (a product
     * moved to lent scratch). */
    RF_KFIELD_DST_DATA = 13,
    RF_KFIELD_SRC0_DATA = 14,
    RF_KFIELD_END = 14 + RF_KMAX_SRC
};
typedef struct rf_kargs_word {
    int32_t field;        /* rf_kargs_field */
    rf_tensor_ref tensor; /* whose address; RF_BIND_NONE: none */
    long long value;      /* added to the address, or the member's value */
} rf_kargs_word;
#define RF_FUSION_MAX_WORDS 12

/* What a claim fills: the launch geometry and how the kernel's rf_kargs is bound. The backend
 * resets it with rf_fusion_launch_init before each claim, so a pack writes only what it uses.
 * rf_kargs.scratch is NULL for pack kernels unless the backend lends the q8_1 columns (below),
 * and shared_bytes is at most 48 KiB (the default limit; larger would need the function
 * attribute). */
typedef struct rf_fusion_launch {
    uint32_t grid[3];      /* blocks in x, y, z (each >= 1) */
    uint32_t threads;      /* threads per block, 1..1024 */
    uint32_t shared_bytes; /* dynamic shared memory, bytes */
    rf_tensor_ref dst;     /* -> rf_kargs.dst */
    rf_tensor_ref src[RF_KMAX_SRC]; /* -> rf_kargs.src[] */
    long long aux[4];      /* copied to rf_kargs.aux */
    /* Copied to rf_kargs' parameters: the kernel family's named struct (l->mv, l->mmq, l->norm,
     * ...; rocmforge/kernel_params.h, ABI 2.11) or the raw iparams[8], fparams[8] (the same bytes). */
    RF_KERNEL_PARAMS_UNION;
    /* ABI 2.4; write these only where rf_pack_device.launch_size says the backend's struct has
     * them. The launch can also write the q8_1 columns (one per row, see above) of the tensor
     * q8_of names (f32, rows of K elements, K % 32 == 0). The backend decides whether it wants
     * them (the node after the claim is a matmul that reads them): if so, rf_kargs.scratch is
     * the first column, aux[q8_aux_stride] the column stride in bytes and aux[q8_aux_block] the
     * block size, 32 or 256; if not, scratch is NULL and aux[q8_aux_block] 0, and the kernel must
     * write no column. q8_of.node = RF_BIND_NONE (the default): no columns. */
    rf_tensor_ref q8_of;
    int32_t q8_aux_stride, q8_aux_block; /* aux[] indices, 0..3, different */
    /* ABI 2.6 (write them only where launch_size has them, as above). The activation rows the
     * kernel reads through rf_kargs.scratch: act_in names the tensor (f32 rows of K elements, the
     * input of the matmul the launch replaces), act_in_block how: 32 or 256, its q8_1 columns
     * quantized in blocks of that size (the block the backend's own kernels use for the weight
     * type, pm_act_block in plugins/packs), which the backend makes before the launch or reuses;
     * RF_ACT_IN_F32, the f32 rows themselves. scratch is then the first column (row) and
     * aux[q8_aux_stride] the stride in bytes between columns (rows); q8_aux_stride = -1: no
     * stride (a tensor of one row only). A launch reads act_in or writes q8_of, not both (scratch
     * holds one). act_in.node = RF_BIND_NONE (the default): none. */
    rf_tensor_ref act_in;
    int32_t act_in_block;
    /* The kernel of this launch: NULL (the default) the fusion's own `kernel`, else another name
     * of the pack's kernel list (a fusion whose kernel depends on the claim: weight type, column
     * count). A name the pack does not list makes the claim invalid. */
    const char *kernel;
    /* Integer members set from tensor addresses (rf_kargs_word above), in order; entries whose
     * field is RF_KFIELD_NONE are skipped. */
    rf_kargs_word words[RF_FUSION_MAX_WORDS];
    /* ABI 2.7 (write it only where launch_size has it). In the first launch of a claim: bytes of
     * scratch the backend lends to every launch of the claim (16-byte aligned; RF_BIND_LENT); 0:
     * none. Ignored in later launches. */
    uint64_t lent_bytes;
    /* ABI 2.8 (write it only where launch_size has it). Non-zero in launch k >= 1 of a claim: it
     * reads nothing launch k - 1 writes and writes nothing launch k - 1 reads or writes (a layer's
     * V projection on other tiles than K and Q: the same activations, its own outputs), so the
     * backend may run it beside launch k - 1, both after what came before them, what follows
     * after both. A permission, not a request: run in order, the results are the same. */
    uint32_t beside_previous;
} rf_fusion_launch;

/* The most launches one claim_launches fills (ABI 2.7). */
#define RF_FUSION_MAX_LAUNCHES 4

/* rf_fusion_launch.act_in_block: the f32 rows as they are (F16 weights dot them directly). */
#define RF_ACT_IN_F32 1


/* Every tensor slot empty, one block of one thread, parameters 0. */
static inline void rf_fusion_launch_init(rf_fusion_launch *l) {
    unsigned char *p = (unsigned char *)l;
    size_t i;
    for (i = 0; i < sizeof *l; ++i) p[i] = 0;
    l->grid[0] = l->grid[1] = l->grid[2] = 1;
    l->threads = 1;
    l->dst.node = RF_BIND_NONE;
    for (i = 0; i < RF_KMAX_SRC; ++i) l->src[i].node = RF_BIND_NONE;
    l->q8_of.node = RF_BIND_NONE;
    l->act_in.node = RF_BIND_NONE;
}

/* rf_pack_device.matmul_form: how the backend runs a MATMUL node on its own. */
enum rf_matmul_form {
    RF_MATMUL_OTHER = 0,   /* any other path (tiles, tensor cores, CPU): no dp4a decode kernel */
    RF_MATMUL_VECTOR = 1,  /* one activation row: the vector kernels (q8_1 for quantized weights,
                            * the f32 row for F16) */
    RF_MATMUL_COLUMNS = 2, /* 2..n activation rows on the dp4a column kernels (q8_1 columns,
                            * up to 8 per launch, wider batches in chunks of 8) */
};
/* (A MATMUL on the backend's tensor-core tiles is RF_MATMUL_OTHER: packs before 2.7 take any other
 * form for their vector or column kernels. rf_pack_device.matmul_tiles says which it is.) */

/* rf_matmul_tiles.tuning: the members of rf_kp_mmq at the same slots (the first is unused). */
typedef struct rf_kp_mmq_tuning {
    int32_t unused_i0;
    int32_t no_row_prefetch;
    int32_t prefetch_window;
    int32_t bulk_copy;
} rf_kp_mmq_tuning;
RF_KP_ASSERT(__builtin_offsetof(rf_kp_mmq_tuning, no_row_prefetch) == __builtin_offsetof(rf_kp_mmq, no_row_prefetch) &&
                 __builtin_offsetof(rf_kp_mmq_tuning, prefetch_window) == __builtin_offsetof(rf_kp_mmq, prefetch_window) &&
                 __builtin_offsetof(rf_kp_mmq_tuning, bulk_copy) == __builtin_offsetof(rf_kp_mmq, bulk_copy) &&
                 sizeof(rf_kp_mmq_tuning) == 16,
             "rf_kp_mmq_tuning is not rf_kp_mmq's first four slots");

/* The launch the backend would make for a MATMUL on its tensor-core tiles (ABI 2.7,
 * rf_pack_device.matmul_tiles). The in-tree kernels (rf_mmq_<type>_<cols>_k<split>,
 * kernels/matmul_mmq.hip) take one argument block for up to three matrices of the same K and
 * activations (grid z): weights src[0] (then src[2], src[3]), activations src[1] (their q8_1
 * columns through scratch, column stride aux[0]), outputs dst (then aux[1] / aux[2] with row
 * strides iparams[5] / iparams[6]); a joined launch computes every output as separate ones only
 * between matmuls whose tiles name the same kernel. */
typedef struct rf_matmul_tiles {
    const char *kernel;     /* valid while the backend lives */
    uint32_t grid[2];       /* x: row tiles x split blocks, y: column chunks (one matrix) */
    uint32_t threads;
    uint32_t rows_per_tile; /* weight rows per tile: grid x = ceil(rows / rows_per_tile) x split */
    uint32_t split;         /* blocks of a cluster splitting K */
    /* The kernel's tuning members the backend sets: rf_kp_mmq's no_row_prefetch, prefetch_window
     * and bulk_copy (ABI 2.11 names; the raw iparams[1..3], [0] unused). */
    union {
        int32_t iparams[4];
        rf_kp_mmq_tuning tuning;
    };
} rf_matmul_tiles;

/* rf_pack_options.weight_prefetch: which decode launches pull their weight rows into L2 before
 * the launch before them ends (rf_kernel_start; iparams[7] = 0 in the in-tree kernels). */
enum rf_pack_prefetch {
    RF_PACK_PREFETCH_SMALL = 0, /* one-column launches of matrices up to prefetch_max_bytes (the default) */
    RF_PACK_PREFETCH_NONE = 1,  /* none */
    RF_PACK_PREFETCH_ALL = 2,   /* every one */
};

/* The backend's options that the in-tree packs read (ABI 2.10, rf_pack_device.options), set from
 * its validated backend_options (docs/OPTIONS.md, the hip keys of the same names). Read-only;
 * members may be appended: check struct_size. A pack given none (an older backend, a NULL
 * pointer) uses the defaults noted here. */
typedef struct rf_pack_options {
    uint32_t struct_size;
    int32_t weight_prefetch;      /* rf_pack_prefetch; hip option prefetch (default SMALL) */
    int32_t norm_prefetch;        /* non-zero: the fused norm pulls its add's operands into L2 (1) */
    uint64_t prefetch_max_bytes;  /* RF_PACK_PREFETCH_SMALL's limit (8 MiB; prefetch_max_mb) */
    uint64_t prefetch_head_bytes; /* launches of several columns: bytes of the weights' head pulled
                                   * into L2 (4 MiB; prefetch_head_mb; 0: none) */
    int32_t norm_pieces;          /* the fused norm's float4 pieces per thread: 0 chosen per row (0), 1, 2, 4 */
    int32_t norm_cluster_blocks;  /* sm_90: the most cluster blocks sharing a norm row: 1 (none), 2, 4 (4), 8 */
} rf_pack_options;

/* The device a claim is for (read-only; more members may be appended: check struct_size). */
typedef struct rf_pack_device {
    uint32_t struct_size;
    const char *arch;        /* the device's arch as packs name it: "sm_90", "gfx1100" */
    int32_t multiprocessors; /* SMs / CUs */
    int32_t warp_size;       /* 32 or 64 */
    /* ABI 2.4: sizeof(rf_fusion_launch) as the backend knows it; a claim writes no member of
     * rf_fusion_launch at or beyond it. Absent (struct_size too small): a 2.3 backend, whose
     * launch ends before q8_of. */
    uint32_t launch_size;
    /* ABI 2.6 (check struct_size): the rf_matmul_form the backend would run `matmul` (a MATMUL
     * node of the claimed graph) in by itself; NULL where the backend offers no answer (claim no
     * matmul then). `backend` is the backend's own, for that call. */
    int32_t (*matmul_form)(const struct rf_pack_device *device, const rf_node *matmul);
    void *backend;
    /* ABI 2.7 (check struct_size): for a MATMUL the backend runs on its integer tensor-core tiles
     * (several activation rows, q8_1 columns), fills *tiles and returns 1; else 0. */
    int32_t (*matmul_tiles)(const struct rf_pack_device *device, const rf_node *matmul, rf_matmul_tiles *tiles);
    /* ABI 2.10 (check struct_size): the backend's options for the packs; NULL: the defaults. Packs
     * read options only here (never the environment), so each backend instance has its own. */
    const rf_pack_options *options;
} rf_pack_device;

/* Whether a ROPE node's (cos, sin) rows (abi.h ROPE src3) have the layout the in-tree kernels
 * read in place of its positions: dense f32 [2, n_rot/2, T] at an 8-byte aligned address. Where
 * they have not, the kernels get the positions and evaluate the angles (the same values). */
static inline int rf_rope_angles_readable(const rf_node *rope) {
    const rf_tensor *t = rope->src[3], *x = rope->src[0];
    return t && x && t->type == RF_TYPE_F32 && t->ne[0] == 2 && t->ne[1] == rope->iparams[1] / 2 && t->ne[2] == x->ne[2] &&
           t->ne[3] == 1 && t->nb[0] == 4 && t->nb[1] == 8 && t->nb[2] == 8 * t->ne[1] && (uintptr_t)t->data % 8 == 0;
}

/* Whether the backend's rf_fusion_launch has the member ending at byte `end` (offsetof + size). */
static inline int rf_pack_launch_has(const rf_pack_device *d, size_t end) {
    return d->struct_size >= offsetof(rf_pack_device, launch_size) + sizeof(uint32_t) && d->launch_size >= end;
}

/* The backend's form for a MATMUL node (ABI 2.6), or RF_MATMUL_OTHER where it cannot say: a
 * backend before 2.6, or one whose launch lacks act_in and kernel. */
static inline int32_t rf_pack_matmul_form(const rf_pack_device *d, const rf_node *matmul) {
    if (d->struct_size < offsetof(rf_pack_device, backend) + sizeof(void *) || !d->matmul_form ||
        !rf_pack_launch_has(d, offsetof(rf_fusion_launch, kernel) + sizeof(const char *)))
        return RF_MATMUL_OTHER;
    return d->matmul_form(d, matmul);
}

/* The backend's tile launch for a MATMUL (ABI 2.7), or 0 where it has none or cannot say. */
static inline int32_t rf_pack_matmul_tiles(const rf_pack_device *d, const rf_node *matmul, rf_matmul_tiles *tiles) {
    if (d->struct_size < offsetof(rf_pack_device, matmul_tiles) + sizeof(void *) || !d->matmul_tiles ||
        !rf_pack_launch_has(d, offsetof(rf_fusion_launch, lent_bytes) + sizeof(uint64_t)))
        return 0;
    return d->matmul_tiles(d, matmul, tiles);
}

/* One fusion: a pattern of consecutive nodes replaced by one launch of `kernel`. */
typedef struct rf_fusion {
    uint32_t struct_size; /* sizeof(rf_fusion) as the pack's header defines it */
    const char *name;     /* e.g. "mul_add": shown by `rocmforge info` and in errors */
    const char *kernel;   /* a name of the pack's kernel list, present in its code object */
    int32_t first_op;     /* enum rf_op of the node a match starts at: claim is called only there */
    /* Looks at graph->nodes[first..] and returns how many consecutive nodes (>= 1, at most
     * n_nodes - first) the launch it writes into *launch computes, or 0 to let the next fusion /
     * the backend handle node `first`. The launch must write every covered node's dst exactly as
     * the unfused nodes would (later nodes may read any of them). Pure: no device calls, no
     * global state; tensor data pointers are device addresses (compare them, never dereference
     * them). The executor reuses memory after a tensor's last reader, so a covered node's dst may
     * lie on an earlier covered node's input: check overlaps where the kernel's order of reads
     * and writes matters. Runs on the decode hot path: return early on the cheap checks. */
    int32_t (*claim)(const rf_graph *graph, int32_t first, const rf_pack_device *device, rf_fusion_launch *launch);
    /* Optional (NULL: none): the kernel's semantics on host memory, every block of the launch's
     * grid, over an argument block bound like the device one but with host pointers. Lets
     * rocmforge-pack-check compare a claim with the CPU backend running the unfused nodes on a
     * machine without the GPU. Returns RF_OK or an rf_status. */
    int32_t (*host_run)(const rf_kargs *args, const rf_fusion_launch *launch);
    /* ABI 2.7, optional (NULL: claim only). Where set, a 2.7 backend calls it instead of claim:
     * it fills launches[0 .. *n_launches - 1] (each reset with rf_fusion_launch_init; at most
     * max_launches) and returns the node count as claim does; the launches run in order and
     * host_run is called for each. `claim` stays what a 2.6 backend calls (it may decline). */
    int32_t (*claim_launches)(const rf_graph *graph, int32_t first, const rf_pack_device *device, rf_fusion_launch *launches,
                              int32_t max_launches, int32_t *n_launches);
} rf_fusion;

/* rf_kernel_pack_vtable.flags */
enum rf_pack_flags {
    /* The code object holds the HIP backend's base kernels (built from ROCmForge's kernels/):
     * every kernel the backend launches must be in it. The first such pack of the device arch
     * in the search order replaces the JIT compile. Third-party packs leave it unset. */
    RF_PACK_BASE_KERNELS = 1,
    /* Every kernel begins with rf_pack_kernel_start() (rocmforge/pack_kernel.h), so the backend
     * may chain it to the previous kernel with a programmatic (early-launch) edge. Unset: a
     * plain edge (the kernel starts after the previous one has finished). */
    RF_PACK_KERNELS_WAIT = 2,
};

typedef struct rf_kernel_pack_vtable {
    uint32_t struct_size;
    const char *arch;          /* the one arch the code object is for, e.g. "sm_90" */
    int32_t kargs_version;     /* RF_KARGS_VERSION the kernels were compiled against */
    uint32_t flags;            /* rf_pack_flags */
    const void *code;          /* code object: cubin (NVIDIA) or ELF hsaco (AMD) */
    uint64_t code_size;
    const char *code_sha256;   /* lowercase hex SHA-256 of the code_size bytes at code */
    int32_t n_kernels;
    const char *const *kernel_names; /* every kernel the pack promises (global symbols) */
    int32_t n_fusions;
    const rf_fusion *const *fusions; /* tried in this order */
} rf_kernel_pack_vtable;

#ifdef __cplusplus
}
#endif

#endif
