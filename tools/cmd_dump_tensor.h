// `rocmforge dump-tensor MODEL TENSOR -o FILE`: writes one tensor, dequantized to raw
// little-endian float32 in GGUF (row-major, ne[0] fastest) order.
#pragma once

// argv[0] is the subcommand name. Returns 0 on success, 2 on usage errors, 1 on data errors;
// may throw rf::Error.
int cmd_dump_tensor(int argc, char **argv);
