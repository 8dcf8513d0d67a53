#pragma once
// rocmforge perplexity: argv[0] is the subcommand name.
int cmd_perplexity(int argc, char **argv);
