#pragma once
// rocmforge bench: argv[0] is the subcommand name.
int cmd_bench(int argc, char **argv);
