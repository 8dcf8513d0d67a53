// The graphs rocmforge-pack-check offers a pack's fusions: small runs of the node patterns
// ROCmForge's models produce (and some that look alike but must not be claimed), with the
// shapes, broadcasts and in-place results the executor creates.
#pragma once
#include <deque>
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace pack_check {

struct Case {
    std::string name;
    std::deque<rf_tensor> tensors; // stable addresses: nodes point at them
    std::vector<rf_node> nodes;
    std::vector<rf_tensor *> inputs; // random values (f32, f16), rows of random values quantized (weights)
    // Inputs with these exact i32 values instead (the slots of a SET_ROWS).
    std::vector<std::pair<rf_tensor *, std::vector<int32_t>>> int_inputs;
    // Tensors that share another's bytes (an in-place result): index into tensors -> index of the owner.
    std::vector<std::pair<size_t, size_t>> aliases;
    // The q8_1 block (32 or 256) in which the columns a claim offers to write (ABI 2.4) are lent,
    // as the backend lends them for a matmul that reads them next; 0: none lent.
    int q8_block = 0;
    // Largest relative difference (to max(1, |value|)) of a covered node's result from the unfused
    // graph's: 1e-6 for elementwise kernels; matmuls sum their products in another order.
    double tolerance = 1e-6;
};

// A deque: the nodes point into each case's tensors, so cases are never copied (a vector's
// growth would copy them: std::deque's move constructor is not noexcept).
std::deque<Case> make_cases();

} // namespace pack_check
