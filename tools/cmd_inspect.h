// `rocmforge inspect MODEL [--json]`: prints a GGUF file's header, metadata and tensor table.
#pragma once

// argv[0] is the subcommand name. Returns 0 on success, 2 on usage errors, 1 on data errors;
// may throw rf::Error.
int cmd_inspect(int argc, char **argv);
