// Folder of the running executable: where plugins, kernel packs and the default model are
// looked up relative to.
#pragma once
#include <string>

namespace rf {

// The folder of /proc/self/exe; the current folder when that cannot be read.
std::string executable_dir();

} // namespace rf
