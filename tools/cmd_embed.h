#pragma once
// rocmforge embed: argv[0] is the subcommand name.
int cmd_embed(int argc, char **argv);
