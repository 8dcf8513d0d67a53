// JSON config parser: any text is either a Config or an rf::UsageError. A Config that parses
// must print (to_json, the per-backend and profiler objects) and read back to the same config.
#include <string>

#include "check.h"
#include "rocmforge/error.h"
#include "rocmforge/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rf::Config config;
    try {
        config = rf::Config::from_json(std::string(reinterpret_cast<const char *>(data), size), "fuzz.json");
    } catch (const rf::UsageError &) {
        return 0;
    }
    for (const auto &name : config.backends) (void)config.backend_config_json(name);
    for (const auto &[name, json] : config.backend_json) (void)config.backend_config_json(name);
    (void)config.profiler_config_json();
    // `info` prints to_json() as the config in force: it must be a config meaning the same.
    const std::string printed = config.to_json();
    RF_FUZZ_CHECK(rf::Config::from_json(printed, "printed").to_json() == printed);
    return 0;
}
