// Checks on a file a command will write, made before the work that produces it: a long
// quantization or a profiled run must not end with "cannot create", and an output must not
// silently replace the input it is made from.
#pragma once
#include <string>

namespace rf {

// Throws UsageError "<what> '<path>': ..." when `path` is a directory, names a folder that does
// not exist, or cannot be written (the file, or its folder, where writers create the temporary
// file they rename into place). Creates nothing.
void check_output_path(const std::string &path, const std::string &what);

// True when both paths exist and are the same file (same device and inode: also through
// symbolic or hard links).
bool same_file(const std::string &a, const std::string &b);

} // namespace rf
