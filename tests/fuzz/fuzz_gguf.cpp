// GGUF reader (metadata and tensor table), then a model load on the CPU backend where the file
// parses. Every input must load or be refused with an rf::Error; a crash, a sanitizer report,
// any other exception or a broken reader promise is a finding.
#include <memory>

#include "check.h"
#include "input_file.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/log.h"
#include "rocmforge/model.h"
#include "rocmforge/runtime.h"

namespace {

// One CPU runtime for the whole run: plugin loading is the slow part and never sees the input.
rf::Runtime &cpu_runtime() {
    static const std::unique_ptr<rf::Runtime> runtime = [] {
        rf::Config config;
        config.backends = {"cpu"};
        config.backends_explicit = true;
        config.plugin_dirs = {RF_FUZZ_CPU_PLUGIN_DIR};
        config.n_threads = 1;
        return rf::Runtime::create(config);
    }();
    return *runtime;
}

// What the reader promises once open() returns: every value renders and every tensor's bytes
// lie inside the mapped file.
void check_file(const rf::gguf::File &f) {
    for (const auto &kv : f.metadata()) (void)kv.value.to_string();
    for (const auto &t : f.tensors()) {
        RF_FUZZ_CHECK(f.data_offset() <= f.file_size());
        RF_FUZZ_CHECK(t.offset <= f.file_size() - f.data_offset());
        RF_FUZZ_CHECK(t.nbytes <= f.file_size() - f.data_offset() - t.offset);
        RF_FUZZ_CHECK(f.find_tensor(t.name) == &t);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    spdlog::set_level(spdlog::level::off); // the refusals are expected; logging them costs time
    cpu_runtime();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string path = rf_fuzz::input_file(data, size);
    try {
        check_file(*rf::gguf::File::open(path));
    } catch (const rf::Error &) {
        return 0;
    }
    try {
        const auto model = rf::Model::load(path, cpu_runtime());
        (void)model->description();
    } catch (const rf::Error &) {
    }
    return 0;
}
