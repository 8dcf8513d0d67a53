// Progress lines shared by `rocmforge quantize` and `rocmforge mkmodel`.
#include <fmt/format.h>

#include "rocmforge/model_writer.h"
#include "rocmforge/types.h"

namespace rf {

std::string format_mib(uint64_t bytes) { return fmt::format("{:.2f} MiB", double(bytes) / (1024.0 * 1024.0)); }

std::string describe_tensor_event(const TensorWriteEvent &ev) {
    std::string shape = "[";
    for (size_t d = 0; d < ev.ne.size(); ++d) shape += (d ? ", " : "") + std::to_string(ev.ne[d]);
    shape += "]";
    const int width = int(std::to_string(ev.count).size());
    const std::string head = fmt::format("[{:>{}}/{}] {:<32}", ev.index, width, ev.count, ev.name);
    if (ev.src_type < 0)
        return fmt::format("{} {:<10} {:<14} {:>12}", head, type_name(ev.dst_type), shape,
                           format_mib(ev.dst_bytes));
    return fmt::format("{} {:>6} -> {:<10} {:<14} {:>12} -> {:>12}", head, type_name(ev.src_type),
                       type_name(ev.dst_type), shape, format_mib(ev.src_bytes),
                       format_mib(ev.dst_bytes));
}

} // namespace rf
