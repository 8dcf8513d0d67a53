#pragma once
// rocmforge bench-inference: argv[0] is the subcommand name.
int cmd_bench_inference(int argc, char **argv);
