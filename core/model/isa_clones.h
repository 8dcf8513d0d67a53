// RF_ISA_CLONES: a function compiled also for AVX2 and for AVX-512, the copy picked at load time
// (the binaries target the x86-64 baseline: 4-lane SSE), for the sampler's scans over the whole
// vocabulary, ~32k logits per drawn token. Every copy does the same operations in the same order
// (core is built with -ffp-contract=off, so no copy fuses a multiply-add): the same results on
// every machine. Elsewhere (other compilers, other architectures) it is empty.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RF_ISA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RF_ISA_CLONES
#endif
