// Optional NVTX / ROCTX ranges around each node, so nsys / rocprof timelines show our labels.
// The libraries are dlopen'ed at run time when present; there is no link-time dependency.
#pragma once

namespace rfprof {

class RangeMarker {
public:
    // Tries libnvToolsExt / libnvtx3interop when an NVTX tool (nsys, ncu) is attached, then
    // libroctx64 when a rocprof tool is; `enabled` false: never loads.
    explicit RangeMarker(bool enabled);
    ~RangeMarker();
    RangeMarker(const RangeMarker &) = delete;
    RangeMarker &operator=(const RangeMarker &) = delete;

    bool active() const { return push_ != nullptr; }
    const char *library() const { return library_; }
    // The environment variable through which the attached tool was found.
    const char *tool_var() const { return tool_var_; }
    void push(const char *name) const {
        if (push_) push_(name);
    }
    void pop() const {
        if (pop_) pop_();
    }

private:
    void *handle_ = nullptr;
    const char *library_ = "";
    const char *tool_var_ = "";
    int (*push_)(const char *) = nullptr;
    int (*pop_)() = nullptr;
};

} // namespace rfprof
