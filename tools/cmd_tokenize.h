// `rocmforge tokenize -m MODEL (-p TEXT | -f FILE) [--ids] [--no-bos] [--no-parse-special]`
#pragma once
#include <cstdio>

// argv[0] is the subcommand name. Returns 0 on success; throws rf::UsageError for bad command
// lines and rf::Error for unreadable files / models.
int cmd_tokenize(int argc, char **argv);
// Same, writing the tokens to `out` (tests).
int cmd_tokenize_to(int argc, char **argv, std::FILE *out);
