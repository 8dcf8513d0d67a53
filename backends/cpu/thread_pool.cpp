#include "thread_pool.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define RF_CPU_RELAX() _mm_pause()
#define RF_CYCLES() __rdtsc()
#else
#define RF_CPU_RELAX() ((void)0)
#define RF_CYCLES() uint64_t(std::chrono::steady_clock::now().time_since_epoch().count())
#endif

namespace rfcpu {

namespace {

// Cursor = generation (24 bits) | phase (20 bits) | next part (20 bits).
constexpr int kPartBits = 20, kPhaseBits = 20;
constexpr uint64_t kPartMask = (uint64_t(1) << kPartBits) - 1;
constexpr uint64_t kPhaseMask = (uint64_t(1) << kPhaseBits) - 1;
constexpr uint64_t kGenMask = (uint64_t(1) << (64 - kPartBits - kPhaseBits)) - 1;
constexpr int32_t kDonePhase = int32_t(kPhaseMask); // no schedule in progress

uint64_t make_cursor(uint64_t gen, uint64_t phase, uint64_t part) {
    return ((gen & kGenMask) << (kPartBits + kPhaseBits)) | ((phase & kPhaseMask) << kPartBits) | part;
}
uint64_t gen_of(uint64_t c) { return c >> (kPartBits + kPhaseBits); }
int32_t phase_of(uint64_t c) { return int32_t((c >> kPartBits) & kPhaseMask); }
int64_t part_of(uint64_t c) { return int64_t(c & kPartMask); }

// Spin budgets in TSC cycles (~1-3 GHz): a phase change inside a schedule is usually a few
// microseconds away; between schedules (host work, next token) it may take much longer.
constexpr uint64_t kSpinInPhase = 200000;
constexpr uint64_t kSpinIdle = 400000;

void futex_wait(std::atomic<uint32_t> *word, uint32_t expected) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t> *word) {
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

} // namespace

ThreadPool::ThreadPool(int n_threads)
    : n_(n_threads < 1 ? 1 : n_threads), cursor_(make_cursor(0, kDonePhase, 0)) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_seq_cst);
    cursor_.store(make_cursor(gen_of(cursor_.load()) + 1, kDonePhase, 0), std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    futex_wake_all(&wake_seq_);
    for (auto &t : workers_) t.join();
}

int64_t ThreadPool::parts_of(int32_t phase) const {
    // parts_[0] holds the array's capacity: a stale array may be shorter than `phase`.
    const int64_t *p = parts_.load(std::memory_order_acquire);
    if (!p || phase + 1 >= p[0]) return 0;
    return __atomic_load_n(p + 1 + phase, __ATOMIC_RELAXED);
}

uint64_t ThreadPool::steady_clock_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count());
}

void ThreadPool::run(int32_t n_phases, const int64_t *parts, PartFn fn, void *arg, uint64_t *phase_end_ns) {
    if (n_phases <= 0) return;
    if (n_ == 1) {
        for (int32_t p = 0; p < n_phases; ++p) {
            const int64_t n = std::clamp<int64_t>(parts[p], 1, kMaxParts);
            for (int64_t i = 0; i < n; ++i) fn(arg, p, i, n, 0);
            if (phase_end_ns) phase_end_ns[p] = steady_clock_ns();
        }
        return;
    }
    // Publish the schedule. No other thread reads these fields until the cursor names the new
    // generation, and late workers of the previous one cannot claim (see work()).
    if (size_t(n_phases) + 1 > parts_cap_) {
        parts_cap_ = std::max(size_t(n_phases) + 1, parts_cap_ * 2);
        parts_storage_.emplace_back(new int64_t[parts_cap_]);
        parts_storage_.back()[0] = int64_t(parts_cap_);
        parts_.store(parts_storage_.back().get(), std::memory_order_release);
    }
    int64_t *dst = parts_.load(std::memory_order_relaxed);
    for (int32_t p = 0; p < n_phases; ++p)
        __atomic_store_n(dst + 1 + p, std::clamp<int64_t>(parts[p], 1, kMaxParts), __ATOMIC_RELAXED);
    fn_ = fn;
    arg_ = arg;
    phase_end_ns_ = phase_end_ns;
    n_phases_ = n_phases;
    done_.store(0, std::memory_order_relaxed);
    const uint64_t gen = (gen_of(cursor_.load(std::memory_order_relaxed)) + 1) & kGenMask;
    cursor_.store(make_cursor(gen, 0, 0), std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&wake_seq_);

    for (;;) {
        const uint64_t seen = work(gen, 0);
        if (seen == 0) return;
        wait_for_change(seen, kSpinInPhase);
    }
}

uint64_t ThreadPool::work(uint64_t gen, int tid) {
    uint64_t cur = cursor_.load(std::memory_order_acquire);
    for (;;) {
        if (gen_of(cur) != gen || phase_of(cur) == kDonePhase) return 0;
        const int32_t phase = phase_of(cur);
        const int64_t n = parts_of(phase), part = part_of(cur);
        if (part >= n) return cur; // every part claimed: wait for the phase to complete
        // Success proves (gen, phase) is still current, so n, fn_ and arg_ belong to it.
        if (!cursor_.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel, std::memory_order_acquire))
            continue;
        fn_(arg_, phase, part, n, tid);
        if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) advance(cur);
        cur = cursor_.load(std::memory_order_acquire);
    }
}

void ThreadPool::advance(uint64_t cur) {
    // Only the current generation's last part gets here, so phase_end_ns_ is this schedule's;
    // the store is published to run()'s caller by the cursor store below.
    if (phase_end_ns_) phase_end_ns_[phase_of(cur)] = steady_clock_ns();
    const int32_t next = phase_of(cur) + 1;
    done_.store(0, std::memory_order_relaxed);
    const uint64_t c = make_cursor(gen_of(cur), next < n_phases_ ? next : kDonePhase, 0);
    cursor_.store(c, std::memory_order_seq_cst);
    wake_seq_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) futex_wake_all(&wake_seq_);
}

void ThreadPool::wait_for_change(uint64_t seen, uint64_t spin_cycles) {
    const uint64_t t0 = RF_CYCLES();
    for (int i = 0;; ++i) {
        if (cursor_.load(std::memory_order_acquire) != seen) return;
        RF_CPU_RELAX();
        if ((i & 63) == 63 && RF_CYCLES() - t0 > spin_cycles) break;
    }
    // Sleep. The sleeper count is raised before the final check of the cursor, and advance()
    // bumps wake_seq_ before reading the count, so a change cannot slip between the two.
    for (;;) {
        const uint32_t seq = wake_seq_.load(std::memory_order_seq_cst);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        if (cursor_.load(std::memory_order_seq_cst) != seen) {
            sleepers_.fetch_sub(1, std::memory_order_seq_cst);
            return;
        }
        futex_wait(&wake_seq_, seq);
        sleepers_.fetch_sub(1, std::memory_order_seq_cst);
        if (cursor_.load(std::memory_order_acquire) != seen) return;
    }
}

void ThreadPool::worker_main(int tid) {
    for (;;) {
        // The cursor before stop_: the destructor stores stop_ before its new cursor, so a worker
        // that still reads stop_ false holds a cursor that store will change and is woken by it.
        // (Read the other way round, a worker could take the destructor's cursor as the one to
        // wait on after missing stop_, and sleep through the join: seen as example-simple hanging
        // at rocmforge_model_free under load, 1 run in ~2,000.)
        const uint64_t cur = cursor_.load(std::memory_order_acquire);
        if (stop_.load(std::memory_order_acquire)) return;
        if (phase_of(cur) == kDonePhase) {
            wait_for_change(cur, kSpinIdle);
            continue;
        }
        const uint64_t seen = work(gen_of(cur), tid);
        if (seen) wait_for_change(seen, kSpinInPhase);
    }
}

} // namespace rfcpu
