#include "api_fixture.h"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace api_test {

std::string model_path() {
    const char *p = std::getenv("RF_TEST_MODEL");
    if (!p) throw std::runtime_error("RF_TEST_MODEL is not set (run through meson test)");
    return p;
}

rocmforge_model *model() {
    static std::unique_ptr<rocmforge_model, void (*)(rocmforge_model *)> m(nullptr, rocmforge_model_free);
    if (!m) {
        rocmforge_model *raw = nullptr;
        if (rocmforge_model_load(model_path().c_str(), nullptr, &raw) != ROCMFORGE_OK)
            throw std::runtime_error(std::string("loading the default model: ") + rocmforge_last_error());
        m.reset(raw);
    }
    return m.get();
}

std::string temp_file(const std::string &name) {
    auto dir = std::filesystem::temp_directory_path() / ("rf_api_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

} // namespace api_test
