/* See pack_match.h. */
#include "pack_match.h"

#include <math.h>

void pm_quantize_q8_1(const float *x, int64_t n, int block, unsigned char *col) {
    int64_t b, i;
    float *pairs = (float *)(col + n);
    for (b = 0; b < n; b += block) {
        float amax = 0.f, d, f;
        for (i = b; i < b + block && i < n; ++i) amax = fmaxf(amax, fabsf(x[i]));
        d = amax / 127.f;
        f = amax > 0.f ? 127.f / amax : 0.f;
        for (i = b; i < b + block && i < n; i += 32) {
            int64_t j;
            int sum = 0;
            for (j = i; j < i + 32; ++j) {
                const int q = amax > 0.f ? (int)rintf(x[j] * f) : 0;
                col[j] = (unsigned char)(signed char)q;
                sum += q;
            }
            pairs[2 * (i / 32)] = d;
            pairs[2 * (i / 32) + 1] = d * (float)sum;
        }
    }
}
