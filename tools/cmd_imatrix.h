#pragma once
// rocmforge imatrix: argv[0] is the subcommand name.
int cmd_imatrix(int argc, char **argv);
