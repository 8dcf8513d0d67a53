// An invariant a target checks beyond "no crash": a violation aborts, which libFuzzer reports as
// a crash and saves the input.
#pragma once
#include <cstdio>
#include <cstdlib>

#define RF_FUZZ_CHECK(cond)                                                                     \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                       \
        }                                                                                       \
    } while (0)
