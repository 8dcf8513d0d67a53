// AVX-512 VNNI kernels (compiled with target attributes; selected at run time).
#include "kernels.h"

namespace rfcpu {
void init_kernels_avx512(KernelSet *ks) { ks->level = SimdLevel::Avx512Vnni; }
} // namespace rfcpu
