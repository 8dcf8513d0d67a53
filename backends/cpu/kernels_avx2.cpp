// AVX2 + FMA + F16C kernels (compiled with target attributes; selected at run time).
#include "kernels.h"

namespace rfcpu {
void init_kernels_avx2(KernelSet *ks) { ks->level = SimdLevel::Avx2; }
} // namespace rfcpu
