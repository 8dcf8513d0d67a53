// Pieces shared by the AVX2 and AVX-512 kernel files that use no target-specific
// instructions: activation-column addressing, weight prefetch, the K-quant scale unpacking
// (plain integer code, inlined into the target functions that call it) and the column-tile
// dispatch. Target-specific helpers live in kernels_x86_target.h.
#pragma once
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rfcpu::x86 {

// Block b of activation column c (columns are `stride` bytes apart).
template <class B>
inline const B *col_block(const void *act, size_t stride, int c, int64_t b) {
    return reinterpret_cast<const B *>(static_cast<const uint8_t *>(act) + size_t(c) * stride) + b;
}

// Decode streams each weight row once from DRAM; the hardware prefetcher alone leaves too few
// misses in flight. Prefetch the block
// this far ahead, into L1 (prefetches past the end of a tensor are harmless).
constexpr int kPrefetchBytes = 3072;
template <int kBlockBytes>
inline void prefetch_ahead(const void *block) {
    const char *p = static_cast<const char *>(block) + kPrefetchBytes;
    for (int o = 0; o < kBlockBytes; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
}

// 8 six-bit scales and 8 mins of a q4_K/q5_K block as bytes [sc0..7, m0..7] (ggml's unpacking).
inline void unpack_q4k_scales_mins(const uint8_t *scales, uint32_t u[4]) {
    std::memcpy(u, scales, 12);
    u[3] = ((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & 0x03030303) << 4);
    const uint32_t aux = u[1] & 0x3f3f3f3f;
    u[1] = (u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & 0x03030303) << 4);
    u[2] = aux;
    u[0] &= 0x3f3f3f3f;
}

// 16 six-bit Q3_K scales as bytes, still biased by +32 (ggml's unpacking of the 12-byte area).
inline void unpack_q3k_scales(const uint8_t *scales, uint32_t aux[4]) {
    std::memcpy(aux, scales, 12);
    const uint32_t tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4);
    aux[3] = ((aux[1] >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4);
    aux[0] = (aux[0] & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4);
    aux[1] = (aux[1] & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4);
}

// Column-count dispatch for kernels with 4 column instantiations: tiles of up to 4 columns.
template <template <int> class K>
void dispatch_tiles_of_4(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    while (nc > 0) {
        const int n = nc < 4 ? nc : 4;
        switch (n) {
        case 1: K<1>::run(k, w, act, st, out, os); break;
        case 2: K<2>::run(k, w, act, st, out, os); break;
        case 3: K<3>::run(k, w, act, st, out, os); break;
        default: K<4>::run(k, w, act, st, out, os); break;
        }
        nc -= n;
        act = static_cast<const uint8_t *>(act) + size_t(n) * st;
        out += size_t(n) * os;
    }
}

// Column-count dispatch for kernels with one instantiation per tile width 1..8 (kMaxCols).
template <template <int> class K>
void dispatch_up_to_8(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    switch (nc) {
    case 1: K<1>::run(k, w, act, st, out, os); break;
    case 2: K<2>::run(k, w, act, st, out, os); break;
    case 3: K<3>::run(k, w, act, st, out, os); break;
    case 4: K<4>::run(k, w, act, st, out, os); break;
    case 5: K<5>::run(k, w, act, st, out, os); break;
    case 6: K<6>::run(k, w, act, st, out, os); break;
    case 7: K<7>::run(k, w, act, st, out, os); break;
    default: K<8>::run(k, w, act, st, out, os); break;
    }
}

} // namespace rfcpu::x86
