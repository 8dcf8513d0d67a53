// Persistent worker pool that runs a schedule: a sequence of phases, each split into parts.
//
// There is no barrier in the classic sense. Threads claim parts of the current phase from a
// shared cursor; whoever completes the last part of a phase advances the cursor to the next one.
// So a worker that the OS has descheduled never holds up the others: its parts are simply
// claimed by the threads that run. The only wait is for a part that a thread has already
// claimed. Waiting threads spin briefly (phases are often microseconds apart), then sleep on a
// futex so that they give their core back on an oversubscribed machine.
//
// The cursor packs (generation, phase, next part) in one 64-bit word and parts are claimed with
// a compare-exchange, so a worker that wakes up late with a stale view of an old schedule can
// never claim a part of a newer one: run() returns as soon as the last part is done, without
// waiting for late workers to notice.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace rfcpu {

class ThreadPool {
public:
    // Runs part `part` (of n_parts) of phase `phase`; `tid` (< size()) names the thread's scratch.
    using PartFn = void (*)(void *arg, int32_t phase, int64_t part, int64_t n_parts, int tid);

    static constexpr int64_t kMaxParts = (int64_t(1) << 20) - 16; // parts of one phase
    static constexpr int32_t kMaxPhases = (1 << 20) - 2;         // phases of one schedule

    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

    int size() const { return n_; }
    // parts[p] in [1, kMaxParts] for p < n_phases (n_phases <= kMaxPhases). The caller works
    // too; returns when every part of every phase has completed. With phase_end_ns, the thread
    // that completes phase p's last part writes steady_clock_ns() there first (for profilers).
    void run(int32_t n_phases, const int64_t *parts, PartFn fn, void *arg, uint64_t *phase_end_ns = nullptr);

    // std::chrono::steady_clock in nanoseconds since its epoch.
    static uint64_t steady_clock_ns();

private:
    void worker_main(int tid);
    // Claims and runs parts until the schedule of generation `gen` is finished (returns 0) or
    // only parts claimed by other threads remain in the current phase (returns the cursor seen).
    uint64_t work(uint64_t gen, int tid);
    // Spins up to spin_cycles TSC cycles for the cursor to leave `seen`, then sleeps on the futex.
    void wait_for_change(uint64_t seen, uint64_t spin_cycles);
    void advance(uint64_t cur);
    int64_t parts_of(int32_t phase) const;

    int n_;
    std::vector<std::thread> workers_;
    // Schedule of the current generation. Written before the cursor publishes it; read only
    // after a successful claim (which proves the schedule is still the current one).
    PartFn fn_ = nullptr;
    void *arg_ = nullptr;
    uint64_t *phase_end_ns_ = nullptr;
    int32_t n_phases_ = 0;
    // Part counts, copied here so a stale reader never dereferences the caller's memory.
    // Grown by replacement; replaced arrays stay alive (a stale reader may still look at one).
    std::atomic<int64_t *> parts_{nullptr};
    size_t parts_cap_ = 0;
    std::vector<std::unique_ptr<int64_t[]>> parts_storage_;

    alignas(64) std::atomic<uint64_t> cursor_;
    alignas(64) std::atomic<int64_t> done_{0};  // completed parts of the current phase
    alignas(64) std::atomic<uint32_t> wake_seq_{0}; // futex word: bumped on every cursor change
    std::atomic<int> sleepers_{0};
    std::atomic<bool> stop_{false};
};

} // namespace rfcpu
