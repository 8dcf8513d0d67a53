// State of one CPU backend instance (one init() call): thread pool, kernel table, scratch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels.h"
#include "rocmforge/abi.h"
#include "simd.h"
#include "thread_pool.h"

namespace rfcpu {

// What buffer_from_host does with host memory it is offered (the mmap'd GGUF).
enum class WeightsMode {
    Auto, // copy into huge-page memory when it fits comfortably in available RAM, else map
    Copy, // always copy
    Map,  // always use the caller's memory as is
};

struct CpuBackend {
    int n_threads = 1;
    WeightsMode weights = WeightsMode::Auto;
    SimdLevel simd = SimdLevel::Scalar;
    SimdLevel detected = SimdLevel::Scalar;
    const KernelSet *ks = nullptr;
    std::unique_ptr<ThreadPool> pool;
    // Grow-only scratch for the graph being computed (64-byte aligned).
    uint8_t *scratch = nullptr;
    size_t scratch_size = 0;

    // set_observer (ABI 2.1): each compute() is reported to it, node by node, before returning.
    rf_exec_observer observer{};
    bool observing = false;
    uint64_t observed_calls = 0; // compute() calls since the observer was set

    ~CpuBackend();
    bool ensure_scratch(size_t bytes);
};

// Parses the config JSON; throws rf::Error with a message on bad input.
std::unique_ptr<CpuBackend> create_backend(const char *config_json);
// The keys create_backend reads, NULL-terminated (rf_backend_vtable::option_keys).
const char *const *option_keys();
// Each of those keys' type, default and valid values (rf_backend_vtable::option_descs).
const rf_option_desc *option_descs(int32_t *count);

// Runs every node of the graph on the pool. Returns an rf_status and fills *message on error.
// marks_ns (optional, n_nodes + 1 entries, steady clock ns): marks_ns[0] when the first node
// started, marks_ns[i + 1] when node i completed (a node without work: its predecessor's mark).
int run_graph(CpuBackend &be, const rf_graph &graph, std::string *message, uint64_t *marks_ns = nullptr);
// run_graph, then (when be.observing) node i reported to be.observer as one unit timed by its
// marks. Counts the call either way.
int run_graph_observed(CpuBackend &be, const rf_graph &graph, std::string *message);
// 1 if the node is supported, else 0 (and *why says why when non-null).
int node_supported(const CpuBackend &be, const rf_node &node, std::string *why);

// Device description: CPU model, SIMD arch, memory from /proc.
void fill_device_info(const CpuBackend &be, rf_device_info *out);
uint64_t available_memory_bytes();

} // namespace rfcpu
