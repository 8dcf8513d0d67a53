// Decode attention on the GPU (few tokens a sequence): ops.cpp's dispatch tries it before the
// per-token kernel.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// A sliding window (Gemma, gpt-oss) or a score soft cap (Gemma): not every kernel has them.
bool attention_limited(const rf_node &n);
// Decode attention (few tokens, kernels/attention_decode.hip): split-context kernels that share
// each K/V row among the query heads of a GQA group. Head sizes 64 and 128 take, on NVIDIA,
// rf_attention_stream_d{64,128}_g{1,2,4,8} (attention_stream.hip: long chunks streamed with an
// online softmax; a short context in one chunk on the 16-warp _w forms, or the _w8 / _w4 ones
// where the launch has more blocks than multiprocessors), on AMD rf_attention_dec{64,128} (chunks of 64
// positions, 32 for D = 128: fewer chunks mean less merging, and a chunk's loads are all in flight
// at once); other even sizes rf_attention_decode, whose chunk (32..128 positions) shrinks until the
// grid has >= 2 blocks per SM. All take the sinks; the window only the streaming kernels, the
// soft cap only their head sizes 96 and 256. Returns -1 when the shape is not covered (the
// per-token kernel runs instead).
int attention_decode(Backend &b, const rf_node &n, std::string &err);

} // namespace rf_hip
