// `rocmforge mkmodel --shape NAME --type TYPE --vocab VOCAB.gguf -o OUT.gguf --seed S`: a seeded
// random-weight model with a real model's tensor layout, for tests and benchmarks.
#pragma once

// argv[0] is the subcommand name. Returns 0 on success, 2 on usage errors, 1 on data errors;
// may throw rf::Error.
int cmd_mkmodel(int argc, char **argv);
