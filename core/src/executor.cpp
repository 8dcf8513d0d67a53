// Executor: assigns nodes to backends, plans memory, inserts cross-backend copies and runs.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "rocmforge/error.h"
#include "rocmforge/graph.h"
#include "rocmforge/log.h"
#include "rocmforge/memory_plan.h"

namespace rf {
namespace {

constexpr uint64_t kAlign = 256;

const char *op_name(int op) { return rf_op_name(op); }

Tensor *root_of(Tensor *t) { return t->kind == TensorKind::View ? t->view_src : t; }

// A node reading persistent state (a KV pool: persistent, not a weight) from another backend's
// memory would copy all of it through the host on every run, though it changes every step and
// belongs where its readers run. Refused: a config error when op_overrides moved the node.
[[noreturn]] void refuse_state_copy(const rf_node &n, const Tensor &state, const Backend &runs_on, bool overridden) {
    const std::string node = std::string("node ") + (n.label ? n.label : "") + " on '" + runs_on.name() + "'";
    const std::string why = ", but it reads '" + std::string(state.label()) + "', state that lives on '" +
                            state.home->name() + "' and changes every step: copying all of it there on every run is refused";
    if (overridden)
        throw UsageError("op_overrides." + std::string(op_name(n.op)) + " puts " + node + why +
                         " (the KV cache follows op_overrides.attention)");
    throw Error(std::string(op_name(n.op)) + " " + node + why + " (no backend can run it where that state lives)");
}

} // namespace

// Where one node runs and which of its sources must be copied there first.
struct Executor::Step {
    Backend *backend = nullptr;
    std::vector<std::pair<int, Tensor *>> copies; // (src slot, copy tensor on `backend`)
};

struct Executor::Impl {
    Runtime &rt;
    bool wait = true; // this run()'s: synchronize every backend at the end
    Backend *home = nullptr; // before the priority order for nodes without weights (not the first backend)
    struct Arena {
        rf_buffer_desc buf{};
    };
    std::map<Backend *, Arena> arenas;
    std::map<Backend *, uint64_t> arena_need; // bytes the last plan needs per backend
    std::deque<Tensor> copy_tensors; // per run

    // The last plan, reused while graphs keep the same structure (decode steps): backend per
    // node, home and arena offset per graph tensor. Only plans without cross-backend copies.
    struct CachedPlan {
        bool valid = false;
        std::vector<int64_t> signature;
        std::vector<Backend *> node_backend;
        std::vector<Backend *> tensor_home;
        std::vector<int64_t> tensor_offset; // -1: no arena memory (zero-copy input or unused)
    } cache;
    std::vector<int64_t> signature_scratch; // the signature of the graph being run
    // The graph object run last, when its plan had no cross-backend copies. While the same graph
    // comes back unchanged (same id and version: nothing added, no mutable access), its plan,
    // arena bindings and node list still hold: run() only rebinds zero-copy inputs and views,
    // uploads the other inputs and runs the recorded segments.
    struct Rerun {
        bool valid = false;
        uint64_t graph_id = 0, version = 0;
        std::vector<Tensor *> host_inputs; // zero-copy inputs (data = host_data); uploads: below
        std::vector<Tensor *> views;
        std::vector<rf_node *> nodes;      // the graph's own nodes, in order
        struct Segment {
            Backend *backend;
            int first, count;
        };
        std::vector<Segment> segments;
        uint64_t reruns = 0; // completed reruns since the above was recorded
    } rerun;
    // Inputs with arena memory as the last bind placed them, in runs of inputs that are adjacent
    // in one backend's arena: a run goes up in one upload from a staging copy (one blocking copy
    // instead of one per input), a lone input directly.
    struct UploadRun {
        Backend *backend;
        std::vector<Tensor *> tensors; // ascending offsets, each starting where the last one's padding ends
        uint64_t lo, hi;                // arena range from the first tensor's start to the last one's end
    };
    std::vector<UploadRun> upload_runs;
    std::vector<uint8_t> upload_staging;

    static uint64_t padded(const Tensor *t) { return (t->nbytes() + kAlign - 1) / kAlign * kAlign; }

    void group_uploads(const std::vector<Tensor *> &order) {
        upload_runs.clear();
        std::vector<Tensor *> inputs;
        for (Tensor *t : order)
            if (t->kind == TensorKind::Input && t->plan.placed) inputs.push_back(t);
        std::stable_sort(inputs.begin(), inputs.end(), [](const Tensor *a, const Tensor *b) {
            return a->home != b->home ? std::less<const Backend *>()(a->home, b->home) : a->plan.offset < b->plan.offset;
        });
        for (Tensor *t : inputs) {
            UploadRun *r = upload_runs.empty() ? nullptr : &upload_runs.back();
            if (r && r->backend == t->home && t->plan.offset == r->tensors.back()->plan.offset + padded(r->tensors.back())) {
                r->tensors.push_back(t);
                r->hi = t->plan.offset + t->nbytes();
            } else {
                upload_runs.push_back({t->home, {t}, t->plan.offset, t->plan.offset + t->nbytes()});
            }
        }
    }

    void upload_inputs() {
        for (const auto &r : upload_runs) {
            if (r.tensors.size() == 1) {
                Tensor *t = r.tensors.front();
                t->home->upload(t->t.data, t->host_data, t->nbytes());
                continue;
            }
            // The padding between the inputs goes up too: those bytes belong to the inputs' ranges.
            upload_staging.resize(r.hi - r.lo);
            for (Tensor *t : r.tensors)
                std::memcpy(upload_staging.data() + (t->plan.offset - r.lo), t->host_data, t->nbytes());
            r.backend->upload(r.tensors.front()->t.data, upload_staging.data(), r.hi - r.lo);
        }
    }

    // op_overrides per op id (nullptr: none), looked up once instead of per node.
    Backend *override_backend[RF_OP_COUNT] = {};

    explicit Impl(Runtime &r) : rt(r) {
        for (int op = 0; op < RF_OP_COUNT; ++op) override_backend[op] = rt.override_backend(op);
    }
    Backend *override_for(int op) const { return op >= 0 && op < RF_OP_COUNT ? override_backend[op] : nullptr; }
    ~Impl() {
        for (auto &[b, a] : arenas) b->free(a.buf);
    }

    // Both sides can read each other's pointers when both are host memory.
    static bool same_memory(const Backend *a, const Backend *b) {
        return a == b || (a && b && a->host_memory() && b->host_memory());
    }

    Backend *choose_backend(const rf_node &n, const Graph::NodeRefs &r, const char *&why) {
        if (n.op == RF_OP_SET_ROWS) {
            Backend *ov = override_for(n.op);
            if (ov && !same_memory(ov, r.dst->home))
                throw UsageError(std::string("op_overrides puts set_rows on '") + ov->name() + "', but node " +
                                 (n.label ? n.label : "") + " appends in place to '" + r.dst->label() + "' on '" +
                                 r.dst->home->name() + "': the KV cache lives where attention runs, so override attention instead");
            why = "in place on the pool's backend";
            return r.dst->home;
        }
        if (Backend *b = override_for(n.op)) {
            if (!b->supports(n))
                throw UsageError(std::string("op_overrides puts ") + op_name(n.op) + " on '" + b->name() +
                                 "', which does not support node " + (n.label ? n.label : ""));
            why = "op_overrides";
            return b;
        }
        // Where the weights (or the KV pool) live, if that backend can run it.
        for (Tensor *src : r.src) {
            if (!src) continue;
            Tensor *s = root_of(src);
            if (s->kind == TensorKind::Persistent && s->home && s->home->supports(n)) {
                why = "where its weights live";
                return s->home;
            }
        }
        if (home && home->supports(n)) {
            why = "the model's backend";
            return home;
        }
        for (Backend *b : rt.backends())
            if (b->supports(n)) {
                why = "first backend in priority order that supports it";
                return b;
            }
        std::string types;
        for (int i = 0; i < RF_MAX_SRC; ++i)
            if (n.src[i]) types += std::string(types.empty() ? "" : ", ") + "src" + std::to_string(i) + " type " + std::to_string(n.src[i]->type);
        throw Error(std::string("no backend supports op ") + op_name(n.op) + " (" + (n.label ? n.label : "") + ", " + types + ")");
    }

    void ensure_arena(Backend *b, uint64_t bytes) {
        Arena &a = arenas[b];
        if (a.buf.size >= bytes) return;
        b->free(a.buf);
        a.buf = {};
        // Grow with headroom so slightly larger graphs next step reuse it.
        a.buf = b->alloc(bytes + bytes / 8);
        spdlog::debug("executor: arena on {} is now {} bytes", b->name(), a.buf.size);
    }
};

// Everything the plan depends on: ops and params, each graph tensor's kind, type, shape and view
// geometry, and the identity of persistent tensors. Equal signatures give equal plans.
// Writes the signature into `sig` (resized; a reused buffer is not cleared first).
static void graph_signature(const Graph &g, std::vector<int64_t> &sig) {
    constexpr size_t kPerTensor = 8, kPerNode = 2 + RF_MAX_PARAMS + RF_MAX_SRC;
    sig.resize(g.tensors().size() * kPerTensor + g.nodes().size() * kPerNode);
    int64_t *p = sig.data();
    for (const Tensor &t : g.tensors()) {
        *p++ = static_cast<int64_t>(t.kind) | (int64_t(t.t.type) << 8);
        for (int d = 0; d < 4; ++d) *p++ = t.t.ne[d];
        *p++ = t.view_src ? t.view_src->graph_index : -2;
        *p++ = static_cast<int64_t>(t.view_offset);
        *p++ = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.home));
    }
    auto id = [](const Tensor *t) -> int64_t {
        if (!t) return -1;
        if (t->graph_index >= 0) return t->graph_index;
        return static_cast<int64_t>(reinterpret_cast<uintptr_t>(t)); // persistent: by identity
    };
    const auto &nodes = g.nodes();
    const auto &refs = g.node_refs();
    for (size_t i = 0; i < nodes.size(); ++i) {
        const rf_node &n = nodes[i];
        *p++ = n.op;
        for (int k = 0; k < RF_MAX_PARAMS; ++k) *p++ = n.iparams[k];
        *p++ = id(refs[i].dst);
        for (const Tensor *src : refs[i].src) *p++ = id(src);
    }
}

Executor::Executor(Runtime &runtime, Backend *home) : impl_(std::make_unique<Impl>(runtime)) {
    // The first backend already comes first: only another one needs the extra check per node.
    if (home != runtime.primary()) impl_->home = home;
}
Executor::~Executor() = default;

uint64_t Executor::arena_bytes(const Backend *b) const {
    auto it = impl_->arenas.find(const_cast<Backend *>(b));
    return it == impl_->arenas.end() ? 0 : it->second.buf.size;
}

void Executor::run(Graph &g, bool wait) {
    Impl &I = *impl_;
    I.wait = wait;
    if (I.rerun.valid && I.rerun.graph_id == g.id_ && I.rerun.version == g.version_) {
        rerun(g);
        return;
    }
    I.rerun.valid = false;
    const int n_nodes = static_cast<int>(g.nodes_.size());
    I.copy_tensors.clear();
    for (auto &t : g.tensors_) t.plan = {};
    std::vector<int64_t> &signature = I.signature_scratch;
    graph_signature(g, signature);
    std::vector<Step> steps(n_nodes);
    std::vector<Tensor *> order; // graph tensors with arena memory or zero-copy inputs
    const bool cached = I.cache.valid && I.cache.signature == signature;
    if (cached) {
        int k = 0;
        for (auto &t : g.tensors_) {
            t.home = I.cache.tensor_home[k];
            if (I.cache.tensor_offset[k] >= 0) {
                t.plan.offset = static_cast<uint64_t>(I.cache.tensor_offset[k]);
                t.plan.placed = true;
                order.push_back(&t);
            } else if (t.kind == TensorKind::Input) {
                order.push_back(&t);
            }
            ++k;
        }
        for (int i = 0; i < n_nodes; ++i) steps[i].backend = I.cache.node_backend[i];
    } else {
        plan(g, steps, order);
    }
    bind_and_execute(g, steps, order);
    if (!cached) {
        bool has_copies = false;
        for (const auto &st : steps) has_copies |= !st.copies.empty();
        I.cache.valid = !has_copies;
        if (I.cache.valid) {
            std::swap(I.cache.signature, signature); // the old one becomes the next scratch
            I.cache.node_backend.clear();
            for (const auto &st : steps) I.cache.node_backend.push_back(st.backend);
            I.cache.tensor_home.clear();
            I.cache.tensor_offset.clear();
            for (const auto &t : g.tensors_) {
                I.cache.tensor_home.push_back(t.home);
                I.cache.tensor_offset.push_back(t.plan.placed ? static_cast<int64_t>(t.plan.offset) : -1);
            }
        }
    }
    if (!I.cache.valid) return;
    // Record what a rerun of this graph object needs (see Impl::Rerun).
    Impl::Rerun &R = I.rerun;
    R.graph_id = g.id_;
    R.version = g.version_;
    R.host_inputs.clear();
    R.views.clear();
    R.nodes.clear();
    R.segments.clear();
    R.reruns = 0;
    for (Tensor *t : order)
        if (t->kind == TensorKind::Input && !t->plan.placed) R.host_inputs.push_back(t);
    for (auto &t : g.tensors_)
        if (t.kind == TensorKind::View) R.views.push_back(&t);
    R.nodes.reserve(n_nodes);
    for (auto &n : g.nodes_) R.nodes.push_back(&n);
    for (int i = 0; i < n_nodes;) {
        int j = i;
        while (j < n_nodes && steps[j].backend == steps[i].backend) ++j;
        R.segments.push_back({steps[i].backend, i, j - i});
        i = j;
    }
    R.valid = true;
}

void Executor::rerun(Graph &g) {
    Impl &I = *impl_;
    Impl::Rerun &R = I.rerun;
    R.valid = false; // until this run completes
    // Unchanged since the last run when no address the rebinding sets moved: the backends are
    // then told so (compute_same), from the second rerun on; the first gave them this node array.
    bool moved = false;
    for (Tensor *t : R.host_inputs) {
        void *d = const_cast<void *>(t->host_data);
        moved |= t->t.data != d;
        t->t.data = d;
    }
    for (Tensor *t : R.views) {
        void *d = t->view_src->t.data ? static_cast<uint8_t *>(t->view_src->t.data) + t->view_offset : nullptr;
        moved |= t->t.data != d || t->home != t->view_src->home;
        t->home = t->view_src->home;
        t->t.data = d;
    }
    I.upload_inputs();
    const bool same = R.reruns > 0 && !moved;
    for (const auto &seg : R.segments) {
        rf_graph sub{static_cast<int32_t>(seg.count), R.nodes.data() + seg.first};
        if (same) seg.backend->compute_same(sub);
        else seg.backend->compute(sub);
    }
    ++R.reruns;
    if (I.wait)
        for (Backend *b : I.rt.backends()) b->synchronize();
    R.valid = true;
}

void Executor::plan(Graph &g, std::vector<Step> &steps, std::vector<Tensor *> &order) {
    Impl &I = *impl_;
    const auto &nodes = g.nodes_;
    const auto &refs = g.refs_;
    const int n_nodes = static_cast<int>(nodes.size());

    // Every assignment and copy with its reason, at debug level (-vv, ROCMFORGE_LOG=debug).
    const bool debug = spdlog::should_log(spdlog::level::debug);
    // 1. Assign backends; intermediates live where they are produced.
    for (int i = 0; i < n_nodes; ++i) {
        const char *why = "";
        steps[i].backend = I.choose_backend(nodes[i], refs[i], why);
        Tensor *dst = refs[i].dst;
        if (dst->kind == TensorKind::Intermediate) dst->home = steps[i].backend;
        if (debug)
            spdlog::debug("sched: node {:4d} {:10s} {:28s} -> {} ({})", i, op_name(nodes[i].op),
                          nodes[i].label ? nodes[i].label : "", steps[i].backend->name(), why);
    }
    // Inputs live on their first consumer's backend.
    for (int i = 0; i < n_nodes; ++i)
        for (Tensor *src : refs[i].src)
            if (src) {
                Tensor *r = root_of(src);
                if (r->kind == TensorKind::Input && !r->home) r->home = steps[i].backend;
            }

    // 2. Copies at backend boundaries.
    for (int i = 0; i < n_nodes; ++i) {
        for (int s = 0; s < RF_MAX_SRC; ++s) {
            Tensor *src = refs[i].src[s];
            if (!src) continue;
            Tensor *r = root_of(src);
            if (Impl::same_memory(r->home, steps[i].backend)) continue;
            if (r->kind == TensorKind::Persistent && !(r->t.flags & RF_TENSOR_WEIGHT))
                refuse_state_copy(nodes[i], *r, *steps[i].backend, I.override_for(nodes[i].op) != nullptr);
            if (!src->contiguous()) throw Error("cross-backend copy of a non-contiguous tensor");
            I.copy_tensors.emplace_back();
            Tensor *c = &I.copy_tensors.back();
            c->kind = TensorKind::Intermediate;
            c->t = src->t;
            c->t.data = nullptr;
            c->home = steps[i].backend;
            c->name = std::string(src->label()) + "@" + steps[i].backend->name();
            c->view_src = src; // remembered for the copy; not a view
            steps[i].copies.emplace_back(s, c);
            if (debug)
                spdlog::debug("sched: copy {} {} -> {} for node {}", src->label(), r->home ? r->home->name() : "host",
                              steps[i].backend->name(), i);
        }
    }

    // 3. Memory plan: every intermediate, input and copy gets an offset in its backend's arena;
    //    a tensor's bytes are recycled after its last reader.
    auto touch = [&](Tensor *t, int i) {
        if (t->plan.first < 0) {
            t->plan.first = i;
            order.push_back(t);
        }
        t->plan.last = std::max(t->plan.last, i);
    };
    for (int i = 0; i < n_nodes; ++i) {
        for (auto &[slot, c] : steps[i].copies) touch(c, i);
        for (Tensor *src : refs[i].src) {
            if (!src) continue;
            Tensor *r = root_of(src);
            r->plan.readers++;
            if (r->kind != TensorKind::Persistent) touch(r, i);
        }
        if (refs[i].dst->kind == TensorKind::Intermediate) touch(refs[i].dst, i);
    }
    // Inputs are uploaded before the first node runs, so their bytes must be reserved from node 0
    // (otherwise an earlier node's intermediate could share, and overwrite, the uploaded data).
    for (auto *t : order)
        if (t->kind == TensorKind::Input) t->plan.first = 0;
    // Sorted by first use (stable). `order` lists tensors as first touched, so only the inputs,
    // now used from node 0, are out of place: a stable partition is that stable sort. (Placing
    // the inputs before node 0's tensors would let one upload cover all of them, but it moves the
    // GPU arena layout, which the GPU's multi-sequence decode results were seen to depend on.)
    std::stable_partition(order.begin(), order.end(), [](const Tensor *t) { return t->plan.first == 0; });
    // Tensors nobody reads are results: they stay valid after run().
    for (auto *t : order)
        if (t->kind == TensorKind::Intermediate && t->plan.readers == 0 && !t->view_src) t->plan.last = n_nodes;

    // One planner per backend (few: a linear search beats a map).
    std::vector<std::pair<Backend *, MemoryPlanner>> planners;
    auto planner = [&](Backend *b) -> MemoryPlanner & {
        for (auto &[pb, p] : planners)
            if (pb == b) return p;
        return planners.emplace_back(b, MemoryPlanner{}).second;
    };
    // Tensors by the node after which they die, in `order` within each node (a counting sort).
    std::vector<int> dies_start(n_nodes + 2, 0);
    for (auto *t : order) ++dies_start[t->plan.last + 1];
    for (int i = 0; i <= n_nodes; ++i) dies_start[i + 1] += dies_start[i];
    std::vector<Tensor *> dies_after(order.size());
    {
        std::vector<int> fill(dies_start.begin(), dies_start.end() - 1);
        for (auto *t : order) dies_after[fill[t->plan.last]++] = t;
    }
    auto padded = [](const Tensor *t) { return (t->nbytes() + kAlign - 1) / kAlign * kAlign; };
    // Walk nodes: allocate at first def, free after last use.
    size_t next = 0;
    for (int i = 0; i <= n_nodes; ++i) {
        while (next < order.size() && order[next]->plan.first == i) {
            Tensor *t = order[next++];
            if (t->kind == TensorKind::Input && t->home->host_memory()) continue; // zero-copy
            t->plan.offset = planner(t->home).allocate(padded(t));
            t->plan.placed = true;
        }
        if (i < n_nodes)
            for (int k = dies_start[i]; k < dies_start[i + 1]; ++k) {
                Tensor *t = dies_after[k];
                if (t->plan.placed) planner(t->home).release(t->plan.offset, padded(t));
            }
    }
    I.arena_need.clear(); // what this plan needs, not what earlier plans needed
    for (auto &[b, p] : planners) I.arena_need[b] = std::max<uint64_t>(p.peak(), kAlign);
}

void Executor::bind_and_execute(Graph &g, std::vector<Step> &steps, std::vector<Tensor *> &order) {
    Impl &I = *impl_;
    const auto &nodes = g.nodes_;
    const int n_nodes = static_cast<int>(nodes.size());
    for (auto &[b, need] : I.arena_need) I.ensure_arena(b, need);
    Backend *arena_backend = nullptr; // the last arena looked up (tensors mostly share one)
    Impl::Arena *arena = nullptr;
    for (auto *t : order) {
        if (!t->plan.placed) {
            t->t.data = const_cast<void *>(t->host_data); // zero-copy input
            continue;
        }
        if (t->home != arena_backend) arena_backend = t->home, arena = &I.arenas[t->home];
        t->t.data = static_cast<uint8_t *>(arena->buf.base) + t->plan.offset;
        t->t.buffer = arena->buf.handle;
    }
    for (auto &t : g.tensors_)
        if (t.kind == TensorKind::View) {
            t.home = t.view_src->home;
            t.t.data = t.view_src->t.data ? static_cast<uint8_t *>(t.view_src->t.data) + t.view_offset : nullptr;
        }

    // 4. Upload inputs that do not live in host memory.
    I.group_uploads(order);
    I.upload_inputs();

    // 5. Run maximal segments of consecutive nodes on one backend; copies before a segment.
    // Nodes with copied sources run as patched copies; the others as they are in the graph.
    bool has_copies = false;
    for (const auto &st : steps) has_copies |= !st.copies.empty();
    std::vector<rf_node> patched;
    if (has_copies) patched.assign(nodes.begin(), nodes.end());
    auto node_at = [&](int k) -> rf_node * { return has_copies ? &patched[k] : const_cast<rf_node *>(&nodes[k]); };
    std::vector<rf_node *> ptrs;
    ptrs.reserve(n_nodes);
    std::vector<uint8_t> staging;
    int i = 0;
    while (i < n_nodes) {
        Backend *b = steps[i].backend;
        int j = i;
        while (j < n_nodes && steps[j].backend == b) {
            for (auto &[slot, c] : steps[j].copies) {
                Tensor *src = c->view_src;
                Backend *from = root_of(src)->home;
                staging.resize(src->nbytes());
                if (from) {
                    from->synchronize();
                    from->download(staging.data(), src->t.data, src->nbytes());
                } else {
                    std::memcpy(staging.data(), src->t.data, src->nbytes());
                }
                b->upload(c->t.data, staging.data(), src->nbytes());
                patched[j].src[slot] = &c->t;
            }
            ++j;
            // A copy into this segment could reuse memory that nodes earlier in the segment still
            // read: such a node starts a new segment, after the earlier ones have run.
            if (j < n_nodes && steps[j].backend == b && !steps[j].copies.empty()) break;
        }
        ptrs.clear();
        for (int k = i; k < j; ++k) ptrs.push_back(node_at(k));
        rf_graph sub{static_cast<int32_t>(ptrs.size()), ptrs.data()};
        b->compute(sub);
        i = j;
    }
    if (I.wait)
        for (Backend *b : I.rt.backends()) b->synchronize();
}

void Executor::read(const Tensor *t, void *dst, uint64_t bytes) {
    if (bytes > t->nbytes()) throw Error("read of " + std::to_string(bytes) + " bytes from tensor '" + t->label() + "' of " + std::to_string(t->nbytes()));
    const Tensor *r = t->kind == TensorKind::View ? t->view_src : t;
    if (!r->home || r->home->host_memory()) std::memcpy(dst, t->t.data, bytes);
    else r->home->download(dst, t->t.data, bytes);
}

} // namespace rf
