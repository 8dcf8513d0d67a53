// The decorator: a backend vtable that forwards every slot to the real backend, except
// compute(), which times each node:
//  - backends with set_observer (ABI 2.1; the CPU and HIP backends): compute() is forwarded as
//    it is, whole, and the backend reports what it ran (kernels and fused groups as units, with
//    the nodes they cover and their times) to observed_calls.h; execution does not change
//    (unless an NVTX/ROCTX tool is attached: per-node ranges need the per-node paths below);
//  - other backends with timing events: the graph runs one node at a time, an event is recorded
//    between consecutive nodes and the elapsed times are read later in batches (when the core
//    synchronizes or downloads, which means the work is done), so the GPU never waits on the
//    profiler;
//  - other backends: host steady clock around each node, after the backend's synchronize.
// upload() and download() are timed too (host clock), as transfers of their backend.
// ROCMFORGE_DEBUG_SLOW_OP (slow_op.h) slows matching nodes after the inner compute().
// With sample_every N > 1 (CallSampler) the calls not picked run the whole graph in one inner
// compute(), timed the same way as one whole-graph sample.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "call_sampler.h"
#include "nvtx_ranges.h"
#include "observed_calls.h"
#include "profiler_state.h"
#include "rocmforge/abi.h"
#include "slow_op.h"

namespace rfprof {

class WrappedBackend {
public:
    // Sets itself as the inner backend's observer when it has set_observer.
    WrappedBackend(ProfilerState &state, const RangeMarker &ranges, const std::string &name,
                   const rf_backend_vtable *inner, void *inner_ctx, int sample_every = 1);
    // Does not touch the inner backend: the core shuts it down before the profiler.
    ~WrappedBackend() = default;
    WrappedBackend(const WrappedBackend &) = delete;
    WrappedBackend &operator=(const WrappedBackend &) = delete;

    const rf_backend_vtable *vtable() const { return &vt_; }
    bool uses_events() const { return use_events_; }

    bool observed() const { return observed_; }

    // Reads every pending event (waits for the device if it has not got there yet); an observed
    // backend gets its observer set again, which makes it report everything it ran.
    void resolve_pending();
    // Pending events whose backend is gone: counted as dropped, never read.
    void abandon_pending();

private:
    struct Batch {
        std::vector<void *> events;  // events[i]..events[i+1] bracket slots[i]
        std::vector<NodeSlot> slots;
        void *anchor;
        double anchor_us;
    };

    int compute(const rf_graph *graph, char *err, size_t err_len);
    int time_compute(const rf_graph *graph, char *err, size_t err_len); // compute() less the slow op
    int compute_host_clock(const rf_graph *graph, bool per_node, char *err, size_t err_len);
    int run_whole_host_clock(const rf_graph *graph, char *err, size_t err_len);
    int compute_observed(const rf_graph *graph, char *err, size_t err_len);
    int compute_with_events(const rf_graph *graph, bool per_node, char *err, size_t err_len);
    int run_nodes_with_events(const rf_graph *graph, Batch &b, char *err, size_t err_len);
    int run_whole_with_events(const rf_graph *graph, Batch &b, char *err, size_t err_len);
    int synchronize(char *err, size_t err_len);
    int upload(void *dst, const void *src, uint64_t size, char *err, size_t err_len);
    int download(void *dst, const void *src, uint64_t size, char *err, size_t err_len);
    bool ensure_anchor(char *err, size_t err_len);
    bool observe(); // set_observer(this): true when the backend accepted it
    void *take_event();
    void resolve_batch(Batch &b);
    bool has_slot(size_t offset) const; // inner vtable is long enough and the slot is set

    static WrappedBackend *self(void *ctx) { return static_cast<WrappedBackend *>(ctx); }
    static int s_init(const char *, void **, char *, size_t);
    static void s_shutdown(void *);
    static int s_device_info(void *, rf_device_info *);
    static int s_buffer_alloc(void *, uint64_t, rf_buffer_desc *, char *, size_t);
    static void s_buffer_free(void *, void *);
    static int s_upload(void *, void *, const void *, uint64_t, char *, size_t);
    static int s_download(void *, void *, const void *, uint64_t, char *, size_t);
    static int s_supports_op(void *, const rf_node *);
    static int s_compute(void *, const rf_graph *, char *, size_t);
    static int s_synchronize(void *, char *, size_t);
    static int s_event_create(void *, void **);
    static int s_event_record(void *, void *);
    static int s_event_elapsed_ms(void *, void *, void *, float *);
    static void s_event_destroy(void *, void *);
    static int s_buffer_from_host(void *, void *, uint64_t, rf_buffer_desc *, char *, size_t);
    static int s_set_observer(void *, const rf_exec_observer *, char *, size_t);
    static void s_ran(void *, uint64_t, const rf_exec_unit *, int32_t);
    static void s_chose(void *, uint64_t, const rf_unit_choice *, int32_t);

    ProfilerState &state_;
    const RangeMarker &ranges_;
    const rf_backend_vtable *inner_;
    void *inner_ctx_;
    rf_backend_vtable vt_{};
    int backend_id_ = 0;
    bool use_events_ = false;
    bool observed_ = false; // the inner backend reports to observed_calls_
    ObservedCalls observed_calls_;
    CallSampler sampler_;
    SlowOp slow_op_; // ROCMFORGE_DEBUG_SLOW_OP (slow_op.h)
    std::vector<void *> free_events_;
    std::vector<Batch> pending_;
    size_t pending_events_ = 0;
    void *anchor_ = nullptr;     // event recorded when the device was idle, at host time anchor_us_
    double anchor_us_ = 0;
};

} // namespace rfprof
