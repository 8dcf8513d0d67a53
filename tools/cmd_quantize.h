// `rocmforge quantize IN OUT TYPE [options]`: llama-quantize's job (same mixes, same per-tensor
// types, same reference quantizers).
#pragma once

// argv[0] is the subcommand name. Returns 0 on success, 2 on usage errors, 1 on data errors;
// may throw rf::Error.
int cmd_quantize(int argc, char **argv);
