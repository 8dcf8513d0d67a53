#pragma once
// rocmforge bench-memory: argv[0] is the subcommand name.
int cmd_bench_memory(int argc, char **argv);
