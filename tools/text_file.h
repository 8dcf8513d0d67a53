// Reading the text a command works on (generate -f, perplexity -f, tokenize -f): the whole file,
// byte for byte, with a usage error that names the option for a missing file, a directory or
// an unreadable one.
#pragma once
#include <string>

namespace rf {

// Throws UsageError "<option> FILE: '<path>' ..." when the file cannot be read.
std::string read_text_file(const std::string &path, const std::string &option);

} // namespace rf
