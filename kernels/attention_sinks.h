// gpt-oss's attention sinks (ATTENTION's src5: f32 [Hq] logits): every attention kernel finds
// their device address in aux[3] (0: none; the decode kernels' other aux slots are taken). A
// head's sink takes part in its softmax's max and adds exp(sink - max) to the denominator, with
// no value row, as ggml's flash attention does.
#pragma once
#include "compat.h"

RF_DEV const float *attention_sinks(const rf_kargs &a) { return (const float *)a.aux[3]; }

// The factor that normalises a head's output o, accumulated relative to its scores' max m with
// sum l, once the sink joins: M = max(m, sink), l_total = l exp(m - M) + exp(sink - M), output
// o exp(m - M) / l_total. No score (m = -inf): 0.
RF_DEV float attention_sink_factor(float m, float l, float sink) {
    const float M = fmaxf(m, sink);
    if (M == -__int_as_float(0x7f800000)) return 0.f;
    const float e = __expf(m - M);
    return e / (l * e + __expf(sink - M));
}
