#include "text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocmforge/error.h"

namespace rf {

std::string read_text_file(const std::string &path, const std::string &option) {
    std::error_code ec;
    // An ifstream opens a directory without complaint and then reads nothing.
    if (std::filesystem::is_directory(path, ec))
        throw UsageError(option + " FILE: '" + path + "' is a directory, not a text file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(option + " FILE: cannot open '" + path + "': " + std::strerror(errno));
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw UsageError(option + " FILE: error reading '" + path + "'");
    return ss.str();
}

} // namespace rf
