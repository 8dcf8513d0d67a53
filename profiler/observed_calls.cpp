#include "observed_calls.h"

namespace rfprof {
namespace {
// Calls waiting for their report: bounds memory if a backend never reports.
constexpr size_t kMaxPendingCalls = 4096;
} // namespace

void ObservedCalls::begin() {
    in_compute_ = true;
    have_held_ = false;
    ++next_;
}

void ObservedCalls::end(int status, const rf_graph &graph, bool per_node, int backend) {
    in_compute_ = false;
    if (status != RF_OK) return;
    Call c{next_ - 1, per_node, {}};
    if (!spare_slots_.empty()) {
        c.slots.swap(spare_slots_.back());
        spare_slots_.pop_back();
    }
    if (!per_node) {
        c.slots.assign(1, state_.whole_graph_slot(graph.n_nodes, backend));
    } else {
        c.slots.resize(size_t(graph.n_nodes > 0 ? graph.n_nodes : 0));
        state_.slots_for(graph.nodes, graph.n_nodes, backend, c.slots.data());
    }
    if (have_held_) { // reported during compute(): record it now
        held_units_.resize(held_.size());
        for (size_t u = 0; u < held_.size(); ++u) {
            const HeldUnit &h = held_[u];
            held_units_[u] = {h.name.c_str(), h.count ? held_nodes_.data() + h.first : nullptr, h.count, h.start_ns, h.end_ns};
        }
        if (!held_units_.empty()) record_units(c, held_units_.data(), int32_t(held_units_.size()));
        have_held_ = false;
        recycle(c);
        return;
    }
    if (pending_.size() >= kMaxPendingCalls) {
        state_.add_dropped(pending_.front().slots.size());
        pending_.pop_front();
    }
    pending_.push_back(std::move(c));
}

void ObservedCalls::chose(uint64_t call, const rf_unit_choice *choices, int32_t n_units) {
    choices_call_ = call;
    choice_text_.resize(size_t(n_units > 0 ? n_units : 0) * 2);
    for (int32_t u = 0; choices && u < n_units; ++u) {
        choice_text_[2 * size_t(u)].assign(choices[u].kernels ? choices[u].kernels : "");
        choice_text_[2 * size_t(u) + 1].assign(choices[u].rule ? choices[u].rule : "");
    }
}

void ObservedCalls::ran(uint64_t call, const rf_exec_unit *units, int32_t n_units) {
    if (in_compute_ && call + 1 == next_) { // the call in progress: its slots come when it returns
        held_.clear();
        held_nodes_.clear();
        for (int32_t u = 0; units && u < n_units; ++u) {
            const rf_exec_unit &x = units[u];
            const int32_t count = x.nodes && x.n_nodes > 0 ? x.n_nodes : 0; // 0: dropped when recorded
            held_.push_back({held_nodes_.size(), count, x.start_ns, x.end_ns, x.name ? x.name : ""});
            held_nodes_.insert(held_nodes_.end(), x.nodes, x.nodes + count);
        }
        have_held_ = true;
        return;
    }
    // Reports come in call order; an older call never reported is not coming any more.
    while (!pending_.empty() && pending_.front().id < call) {
        state_.add_dropped(pending_.front().slots.size());
        pending_.pop_front();
    }
    if (pending_.empty() || pending_.front().id != call) return; // a call we did not see (or failed)
    Call c = std::move(pending_.front());
    pending_.pop_front();
    if (units && n_units > 0) record_units(c, units, n_units);
    recycle(c);
}

void ObservedCalls::recycle(Call &c) {
    if (spare_slots_.size() < 4) spare_slots_.push_back(std::move(c.slots));
}

void ObservedCalls::record_units(const Call &c, const rf_exec_unit *units, int32_t n_units) {
    if (!c.per_node) {
        const uint64_t start = units[0].start_ns, end = units[n_units - 1].end_ns;
        const double ts = state_.us_from_steady_ns(start);
        state_.record(c.slots[0], ts, end > start ? float(double(end - start) / 1000.0) : 0.0f);
        return;
    }
    const int32_t n_nodes = int32_t(c.slots.size());
    // What chose each unit, where the backend said so for this call (the same units in order).
    const bool chosen = choices_call_ == c.id && choice_text_.size() == size_t(n_units) * 2;
    choice_batch_.clear();
    timed_.clear();
    for (int32_t u = 0; u < n_units; ++u) {
        const rf_exec_unit &unit = units[u];
        bool valid = unit.nodes && unit.n_nodes > 0;
        for (int32_t k = 0; valid && k < unit.n_nodes; ++k) valid = unit.nodes[k] >= 0 && unit.nodes[k] < n_nodes;
        if (!valid) {
            state_.add_dropped(1);
            continue;
        }
        // A fused group's time lands on its first node; the others it computed read 0 at its end,
        // so every node is counted once and the group's time once.
        const double start = state_.us_from_steady_ns(unit.start_ns);
        const double end = state_.us_from_steady_ns(unit.end_ns);
        const float dur = end > start ? float(end - start) : 0.0f;
        timed_.push_back({c.slots[size_t(unit.nodes[0])], start, dur});
        if (chosen)
            choice_batch_.push_back({c.slots[size_t(unit.nodes[0])].group, unit.name ? unit.name : "",
                                     &choice_text_[2 * size_t(u)], &choice_text_[2 * size_t(u) + 1], dur});
        for (int32_t k = 1; k < unit.n_nodes; ++k) timed_.push_back({c.slots[size_t(unit.nodes[k])], start + dur, 0.0f});
    }
    state_.record_all(timed_.data(), timed_.size());
    if (!choice_batch_.empty()) state_.note_choices(choice_batch_.data(), choice_batch_.size());
}

void ObservedCalls::abandon() {
    uint64_t n = 0;
    for (const auto &c : pending_) n += c.slots.size();
    if (n) state_.add_dropped(n);
    pending_.clear();
}

void ObservedCalls::restart() {
    abandon();
    next_ = 0;
    in_compute_ = false;
    have_held_ = false;
}

} // namespace rfprof
