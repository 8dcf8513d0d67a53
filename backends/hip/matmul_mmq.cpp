#include "matmul_mmq.h"

namespace rf_hip {

bool mmq_usable(const Backend &, const rf_node &) { return false; }

int matmul_mmq(Backend &, const rf_node &, std::string &err) {
    err = "matmul_mmq: not implemented";
    return RF_ERR_UNSUPPORTED;
}

std::vector<std::string> mmq_kernel_names() { return {}; }

} // namespace rf_hip
