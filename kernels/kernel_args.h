/* The kernel argument block lives with the public headers (rocmforge/kernel_args.h: kernel packs
 * built outside this tree use it); the kernels include it by this name. pack_tool.py's embed
 * inlines it, so NVRTC/hipRTC still need no include path. */
#include "../core/include/rocmforge/kernel_args.h"
