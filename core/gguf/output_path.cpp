#include "rocmforge/output_path.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

#include "rocmforge/error.h"

namespace fs = std::filesystem;

namespace rf {

void check_output_path(const std::string &path, const std::string &what) {
    auto fail = [&](const std::string &why) { throw UsageError(what + " '" + path + "': " + why); };
    if (path.empty()) throw UsageError(what + ": the path is empty");
    std::error_code ec;
    if (fs::is_directory(path, ec)) fail("is a directory (give a file name)");
    const fs::path parent = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
    if (!fs::is_directory(parent, ec)) fail("folder '" + parent.string() + "' does not exist");
    // Writers create PATH.tmp next to it and rename it over PATH: the folder must be writable.
    if (::access(parent.c_str(), W_OK | X_OK) != 0)
        fail("cannot write in folder '" + parent.string() + "': " + std::strerror(errno));
    if (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0)
        fail("cannot be written: " + std::string(std::strerror(errno)));
}

bool same_file(const std::string &a, const std::string &b) {
    struct stat sa {}, sb {};
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

} // namespace rf
