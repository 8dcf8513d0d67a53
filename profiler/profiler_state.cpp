#include "profiler_state.h"

#include <cstring>

#include <fmt/format.h>

#include "node_cost.h"

namespace rfprof {

const char *group_op_name(const OpGroup &g) {
    if (g.transfer) return g.transfer == kUpload ? "upload" : "download";
    return g.whole_graph_nodes > 0 ? "(whole graph)" : op_name(g.op);
}

bool ProfilerState::GroupKey::operator==(const GroupKey &o) const { return std::memcmp(this, &o, sizeof o) == 0; }

size_t ProfilerState::GroupKeyHash::operator()(const GroupKey &k) const {
    // Multiply-xorshift over the key's 8-byte words (the key is zero-initialised, so padding is
    // deterministic): runs for every timed node, so a word at a time rather than a byte.
    static_assert(sizeof(GroupKey) % sizeof(uint64_t) == 0, "GroupKey is hashed in whole words");
    const auto *p = reinterpret_cast<const unsigned char *>(&k);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof k; i += sizeof(uint64_t)) {
        uint64_t w;
        std::memcpy(&w, p + i, sizeof w);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
    }
    return size_t(h);
}

ProfilerState::ProfilerState(CeilingConfig ceilings, size_t max_events)
    : ceilings_(std::move(ceilings)), max_events_(max_events) {}

int ProfilerState::add_backend(const std::string &name, const rf_device_info &info, const std::string &timing) {
    std::lock_guard<std::mutex> lock(mu_);
    backends_.push_back({name, info, pick_ceiling(ceilings_, name, info), timing});
    return int(backends_.size()) - 1;
}

int ProfilerState::intern_label(std::string_view s) {
    auto it = label_index_.find(s);
    if (it != label_index_.end()) return it->second;
    labels_.emplace_back(s);
    const int id = int(labels_.size()) - 1;
    label_index_.emplace(labels_.back(), id);
    return id;
}

NodeSlot ProfilerState::slot_for(const rf_node &node, int backend) {
    std::lock_guard<std::mutex> lock(mu_);
    return slot_for_locked(node, backend);
}

void ProfilerState::slots_for(const rf_node *const *nodes, int32_t n, int backend, NodeSlot *out) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int32_t i = 0; i < n; ++i) out[i] = slot_for_locked(*nodes[i], backend);
}

NodeSlot ProfilerState::slot_for_locked(const rf_node &node, int backend) {
    GroupKey key;
    std::memset(&key, 0, sizeof key);
    key.op = node.op;
    key.backend = backend;
    const rf_tensor *ts[3] = {node.src[0], node.src[1], node.dst};
    for (int i = 0; i < 3; ++i) {
        if (!ts[i]) continue;
        key.types[i] = ts[i]->type;
        std::memcpy(key.ne[i], ts[i]->ne, sizeof key.ne[i]);
    }
    const NodeCost cost = node_cost(node);
    NodeSlot slot;
    slot.bytes = float(cost.bytes);
    slot.flops = float(cost.flops);
    auto it = group_index_.find(key);
    if (it != group_index_.end()) {
        slot.group = it->second;
    } else {
        OpGroup g;
        g.op = node.op;
        g.backend = backend;
        g.shapes = node_shapes(node);
        g.dtypes = node_dtypes(node);
        groups_.push_back(std::move(g));
        slot.group = int(groups_.size()) - 1;
        group_index_.emplace(key, slot.group);
    }
    slot.label = intern_label(node.label ? std::string_view(node.label) : std::string_view(op_name(node.op)));
    slot.phase = current_phase_;
    return slot;
}

// The pseudo-group `index[key]`, made from make() on first use (call with mu_ held).
template <class Make>
int ProfilerState::pseudo_group(std::unordered_map<int64_t, int> &index, int64_t key, Make make) {
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    groups_.push_back(make());
    const int id = int(groups_.size()) - 1;
    index.emplace(key, id);
    return id;
}

NodeSlot ProfilerState::whole_graph_slot(int32_t n_nodes, int backend) {
    std::lock_guard<std::mutex> lock(mu_);
    NodeSlot slot{};
    slot.group = pseudo_group(whole_index_, (int64_t(backend) << 32) | uint32_t(n_nodes), [&] {
        OpGroup g;
        g.backend = backend;
        g.whole_graph_nodes = n_nodes;
        g.shapes = fmt::format("{} nodes", n_nodes);
        return g;
    });
    if (whole_label_ < 0) whole_label_ = intern_label("(whole graph)");
    slot.label = whole_label_;
    slot.phase = current_phase_;
    // bytes and FLOPs stay 0: summing every node's cost would put per-node work back on the
    // path this mode exists to keep cheap.
    return slot;
}

NodeSlot ProfilerState::transfer_slot(int backend, int direction, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    NodeSlot slot{};
    slot.group = pseudo_group(transfer_index_, (int64_t(backend) << 2) | direction, [&] {
        OpGroup g;
        g.backend = backend;
        g.transfer = direction;
        const std::string &b = backends_[size_t(backend)].name;
        // Built as std::string values and moved in: `"host -> " + b` and `g.dtypes = "-"` trip
        // GCC 12's false -Wrestrict in basic_string::_M_replace.
        g.shapes = direction == kUpload ? std::string("host -> ").append(b) : b + " -> host";
        g.dtypes = std::string("-");
        return g;
    });
    slot.label = intern_label(direction == kUpload ? "upload" : "download");
    slot.phase = current_phase_;
    slot.bytes = float(bytes);
    return slot;
}

void ProfilerState::count_call(int backend, bool per_node) {
    std::lock_guard<std::mutex> lock(mu_);
    BackendEntry &b = backends_[size_t(backend)];
    ++(per_node ? b.calls_per_node : b.calls_whole);
}

void ProfilerState::record(const NodeSlot &slot, double ts_us, float dur_us) {
    std::lock_guard<std::mutex> lock(mu_);
    record_locked(slot, ts_us, dur_us);
}

void ProfilerState::record_all(const Timed *samples, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) record_locked(samples[i].slot, samples[i].ts_us, samples[i].dur_us);
}

void ProfilerState::note_choices(const Choice *choices, size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) {
        const Choice &c = choices[i];
        if (c.group < 0 || size_t(c.group) >= groups_.size()) continue;
        std::vector<OpGroup::Choice> &list = groups_[size_t(c.group)].choices;
        OpGroup::Choice *hit = nullptr;
        for (OpGroup::Choice &x : list)
            if (x.kernels == *c.kernels && x.rule == *c.rule && x.unit == c.unit) { hit = &x; break; }
        if (!hit) hit = &list.emplace_back(OpGroup::Choice{c.unit, *c.kernels, *c.rule});
        ++hit->calls;
        hit->total_us += c.dur_us;
    }
}

void ProfilerState::record_locked(const NodeSlot &slot, double ts_us, float dur_us) {
    OpGroup &g = groups_[size_t(slot.group)];
    g.total_us += dur_us;
    g.bytes += slot.bytes;
    g.flops += slot.flops;
    g.samples_us.push_back(dur_us);
    if (events_.size() < max_events_)
        events_.push_back({slot.group, slot.label, slot.phase, dur_us, ts_us, slot.bytes, slot.flops});
    else ++events_not_stored_;
}

void ProfilerState::mark_phase(const char *name) {
    const double t = now_us();
    std::string n = name ? name : "(null)";
    std::lock_guard<std::mutex> lock(mu_);
    int id = -1;
    for (size_t i = 0; i < phase_names_.size(); ++i)
        if (phase_names_[i] == n) id = int(i);
    if (id < 0) {
        phase_names_.push_back(n);
        id = int(phase_names_.size()) - 1;
    }
    current_phase_ = id;
    marks_.push_back({id, t});
}

void ProfilerState::add_dropped(uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    dropped_ += n;
}

} // namespace rfprof
