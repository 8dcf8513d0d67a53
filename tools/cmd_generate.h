#pragma once
// rocmforge generate: argv[0] is the subcommand name.
int cmd_generate(int argc, char **argv);
