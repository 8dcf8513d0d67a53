// See launch_queue.h. Graph nodes form one chain (stream order); a node's parameters are
// replaced only when its recorded launch differs byte for byte from the graph's copy.
#include "launch_queue.h"

#include <cstring>

namespace rf_hip {

int launch_now(hipStream_t s, const LaunchRec &r, const char *what, std::string &err) {
    void *params[] = {const_cast<rf_kargs *>(&r.args)};
    if (hipError_t e = hipModuleLaunchKernel(r.f, r.grid[0], r.grid[1], r.grid[2], r.threads, 1, 1, r.smem, s, params, nullptr)) {
        err = gpu_error(what, e) + " grid " + std::to_string(r.grid[0]) + "x" + std::to_string(r.grid[1]) + "x" +
              std::to_string(r.grid[2]);
        return RF_ERR_DEVICE;
    }
    return RF_OK;
}

int LaunchQueue::launch_all(hipStream_t s, std::string &err) {
    ++stats_.direct_flushes;
    for (const auto &r : cur_) {
        if (!r.f) {
            if (hipError_t e = hipEventRecord(r.event, s)) {
                err = gpu_error("event record", e);
                return RF_ERR_DEVICE;
            }
            continue;
        }
        if (int rc = launch_now(s, r, "launch", err)) return rc;
    }
    return RF_OK;
}

uint64_t LaunchQueue::kernel_signature(const std::vector<LaunchRec> &list) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t w) { h = (h ^ w) * 0x9E3779B97F4A7C15ull, h ^= h >> 29; };
    for (const auto &r : list) {
        if (!r.f) continue; // event records: not part of the kernel sequence
        mix(uint64_t(reinterpret_cast<uintptr_t>(r.f)));
        mix(uint64_t(r.threads) << 32 | r.smem);
        mix(r.beside_prev ? 1 : 0); // the graph's shape
    }
    return h;
}

bool LaunchQueue::same_kernels(const std::vector<LaunchRec> &a, const std::vector<LaunchRec> &b) const {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].f != b[i].f || a[i].threads != b[i].threads || a[i].smem != b[i].smem || a[i].event != b[i].event ||
            a[i].beside_prev != b[i].beside_prev)
            return false;
    return true;
}

#if defined(RF_HIP_NVIDIA)
namespace {
rf_cuda::KernelNodeParams node_params(const LaunchRec &r, void **params) {
    rf_cuda::KernelNodeParams p{};
    p.func = r.f;
    p.gridDimX = r.grid[0]; p.gridDimY = r.grid[1]; p.gridDimZ = r.grid[2];
    p.blockDimX = r.threads; p.blockDimY = 1; p.blockDimZ = 1;
    p.sharedMemBytes = r.smem;
    p.kernelParams = params;
    return p;
}
} // namespace

void LaunchQueue::drop_graph() {
    Slot &sl = slots_[slot_];
    if (sl.exec) hipGraphExecDestroy(sl.exec);
    if (sl.graph) hipGraphDestroy(sl.graph);
    sl.exec = nullptr;
    sl.graph = nullptr;
    sl.nodes.clear();
    sl.have_graph = false;
}

bool LaunchQueue::build_graph(std::string &err) {
    drop_graph();
    Slot &sl = slots_[slot_];
    if (hipError_t e = hipGraphCreate(&sl.graph, 0)) { err = gpu_error("graph create", e); return false; }
    sl.nodes.resize(cur_.size());
    const bool typed = programmatic_ && rf_cuda::api.cuGraphAddDependencies;
    const rf_cuda::GraphEdgeData edge = {1, 0, 1, {0, 0, 0, 0, 0}}; // programmatic port and type
    // Kernels chain to kernels; event nodes hang off them. `open`: the kernels no later kernel
    // depends on yet, the last added last (one, but for a kernel run beside the one before it);
    // `preds`: what the last kernel depends on (its side-by-side successor depends on the same).
    std::vector<hipGraphNode_t> open, preds;
    bool forked = false;
    // A driver that refuses the fork (several programmatic edges from one kernel) gets chains
    // from then on; programmatic edges stay.
    auto refused = [&](const char *what, hipError_t e) {
        err = gpu_error(what, e);
        if (forked) beside_ = false;
        else programmatic_ = false; // the next build uses plain edges
        drop_graph();
        return false;
    };
    for (size_t i = 0; i < cur_.size(); ++i) {
        if (!cur_[i].f) { // an event record: after the kernels before it, nothing waits for it
            if (hipError_t e = rf_cuda::api.cuGraphAddEventRecordNode(&sl.nodes[i], sl.graph, open.empty() ? nullptr : open.data(),
                                                                      open.size(), cur_[i].event)) {
                err = gpu_error("graph add event record node", e);
                drop_graph();
                return false;
            }
            continue;
        }
        void *params[] = {&cur_[i].args};
        const auto p = node_params(cur_[i], params);
        const bool programmatic_edge = typed && !cur_[i].plain_edge;
        const bool beside = beside_ && cur_[i].beside_prev && !open.empty();
        forked = forked || beside;
        // Beside the previous kernel: after what that one waits for (the kernels before it). A
        // programmatic edge from the most recent of them (the kernel this one overlaps), plain
        // edges from the others, given when the node is made.
        const std::vector<hipGraphNode_t> &from = beside ? preds : open;
        const size_t n_plain = programmatic_edge && !from.empty() ? from.size() - 1 : from.size();
        if (hipError_t e = rf_cuda::api.cuGraphAddKernelNode(&sl.nodes[i], sl.graph, n_plain ? from.data() : nullptr, n_plain, &p)) {
            err = gpu_error("graph add kernel node", e);
            drop_graph();
            return false;
        }
        if (n_plain < from.size())
            if (hipError_t e = rf_cuda::api.cuGraphAddDependencies(sl.graph, &from.back(), &sl.nodes[i], &edge, 1))
                return refused("graph add programmatic edge", e);
        if (beside) {
            open.push_back(sl.nodes[i]);
        } else {
            preds = from;
            open.assign(1, sl.nodes[i]);
        }
    }
    if (hipError_t e = hipGraphInstantiateWithFlags(&sl.exec, sl.graph, 0)) return refused("graph instantiate", e);
    sl.have_graph = true;
    ++stats_.graph_builds;
    return true;
}

bool LaunchQueue::patch_graph(std::string &err) {
    Slot &sl = slots_[slot_];
    for (size_t i = 0; i < cur_.size(); ++i) {
        const LaunchRec &c = cur_[i], &p = sl.prev[i];
        if (!c.f) continue; // event records: same_kernels() matched their events
        if (c.f == p.f && c.smem == p.smem && std::memcmp(c.grid, p.grid, sizeof c.grid) == 0 && std::memcmp(&c.args, &p.args, sizeof c.args) == 0)
            continue;
        void *params[] = {&cur_[i].args};
        const auto np = node_params(c, params);
        if (hipError_t e = rf_cuda::api.cuGraphExecKernelNodeSetParams(sl.exec, sl.nodes[i], &np)) {
            err = gpu_error("graph node update", e);
            return false;
        }
        ++stats_.node_updates;
    }
    return true;
}
bool LaunchQueue::launch_graph(hipStream_t s, std::string &err) {
    if (hipError_t e = hipGraphLaunch(slots_[slot_].exec, s)) { err = gpu_error("graph launch", e); return false; }
    return true;
}
#else
void LaunchQueue::drop_graph() { slots_[slot_].have_graph = false; }
bool LaunchQueue::launch_graph(hipStream_t, std::string &err) { err = "graphs not supported"; return false; }
bool LaunchQueue::build_graph(std::string &err) { err = "graphs not supported"; return false; }
bool LaunchQueue::patch_graph(std::string &err) { err = "graphs not supported"; return false; }
#endif

void LaunchQueue::drop_graphs() {
    const int keep = slot_;
    for (slot_ = 0; slot_ < kSlots; ++slot_) {
        drop_graph();
        slots_[slot_].set = -1;
        slots_[slot_].prev.clear();
        slots_[slot_].tag = 0;
    }
    slot_ = keep;
}

int LaunchQueue::find_slot(uint64_t sig) const {
    for (int i = 0; i < kSlots; ++i) {
        const Slot &sl = slots_[i];
        if (sl.set == set_ && sl.sig == sig && same_kernels(cur_, sl.prev)) return i;
    }
    return -1;
}

int LaunchQueue::take_slot() {
    int pick = 0;
    for (int i = 0; i < kSlots; ++i) {
        if (slots_[i].set < 0) { pick = i; break; }
        if (slots_[i].used < slots_[pick].used) pick = i;
    }
    slot_ = pick;
    drop_graph();
    return pick;
}

int LaunchQueue::replay_tagged(hipStream_t s, uint64_t tag, bool &done, std::string &err) {
    done = false;
    if (!graphs_ || tag == 0) return RF_OK;
    int at = -1;
    for (int i = 0; i < kSlots && at < 0; ++i)
        if (slots_[i].set == set_ && slots_[i].tag == tag && slots_[i].have_graph) at = i;
    if (at < 0) return RF_OK;
    slot_ = at;
    Slot &sl = slots_[slot_];
    sl.used = ++use_clock_;
    if (!launch_graph(s, err)) {
        drop_graph();
        return RF_ERR_DEVICE;
    }
    stats_.launches += sl.prev.size();
    ++stats_.graph_replays;
    done = true;
    return RF_OK;
}

int LaunchQueue::flush(hipStream_t s, std::string &err, uint64_t tag) {
    stats_.launches += cur_.size();
    // Small lists (single ops, tests) gain nothing from a graph. (Empty launches never get
    // here: add() drops them.)
    constexpr size_t kMinGraphNodes = 16;
    if (has_events_ && !graph_events_available()) return launch_all(s, err); // direct, graph state untouched
    size_t kernels = 0; // event records and stamp kernels do not count: observing must not change what is graphed
    for (const auto &r : cur_) kernels += r.f != nullptr && !r.mark;
    if (!graphs_ || kernels < kMinGraphNodes) return launch_all(s, err);
    // The slot of this kernel sequence (its second sighting or later), else a new one.
    const uint64_t sig = kernel_signature(cur_);
    const int found = find_slot(sig);
    const bool repeat = found >= 0;
    if (repeat) slot_ = found;
    else take_slot();
    Slot &sl = slots_[slot_];
    sl.set = set_;
    sl.sig = sig;
    sl.used = ++use_clock_;
    bool replay = false;
    std::string why;
    if (repeat && sl.have_graph) {
        replay = patch_graph(why);
        if (!replay) drop_graph();
    } else if (repeat) {
        replay = build_graph(why); // second sighting of this kernel sequence
    } else {
        drop_graph();
    }
    if (replay) {
        if (!launch_graph(s, err)) {
            drop_graph();
            return RF_ERR_DEVICE;
        }
        ++stats_.graph_replays;
        sl.prev.swap(cur_);
        sl.tag = tag;
        return RF_OK;
    }
    if (!why.empty()) { // a graph call failed: launch directly from now on
        graphs_ = false;
        drop_graphs();
    }
    const int rc = launch_all(s, err);
    sl.prev.swap(cur_);
    sl.tag = tag;
    return rc;
}

} // namespace rf_hip
