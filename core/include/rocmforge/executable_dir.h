// Where the running code lives: plugins, kernel packs and the default model are looked up
// relative to it, and to the paths compiled in at install time (install_paths.h).
#pragma once
#include <string>
#include <vector>

namespace rf {

// The folder of /proc/self/exe; the current folder when that cannot be read.
std::string executable_dir();
// The folder of the file holding this code: librocmforge.so's folder in a program that links
// it, the executable's folder when the core is linked statically.
std::string module_dir();

// Folders that may hold the installed plugins: lib/rocmforge next to this code (relocated or
// DESTDIR trees), then the compiled-in <prefix>/<libdir>/rocmforge and <prefix>/<libdir>.
std::vector<std::string> installed_plugin_dirs();
// The same for share/rocmforge (the default model lives in its models/ folder).
std::vector<std::string> installed_data_dirs();

} // namespace rf
