// rf::Session: a model ready to run (its runtime with the backends, the weights, the tokenizer)
// and the contexts made from it. The CLI and the C API (rocmforge.h) both load through here.
#pragma once
#include <memory>
#include <string>

#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "rocmforge/runtime.h"
#include "rocmforge/tokenizer.h"

namespace rf {

struct Session {
    std::unique_ptr<Runtime> runtime;
    std::unique_ptr<Model> model;
    std::unique_ptr<Tokenizer> tokenizer; // nullptr when loaded without one
    std::string path;
    double load_ms = 0;

    // Starts the backends `config` names, loads the model at `path` onto the first and, when
    // asked, its tokenizer (whose vocabulary must match the embedding rows). Throws rf::Error.
    static Session load(const std::string &path, const Config &config, const ModelLoadOptions &options = {},
                        bool load_tokenizer = true);
    // The same on a runtime already started.
    static Session load(const std::string &path, std::unique_ptr<Runtime> runtime, const ModelLoadOptions &options = {},
                        bool load_tokenizer = true);

    // A context on this model. Throws rf::OutOfMemoryError, before allocating, when the KV cache
    // would not fit in the memory its backend reports free.
    std::unique_ptr<InferenceContext> new_context(const ContextParams &params) const;
};

// The KV cache cannot fit in the memory of the backend it would live on.
class OutOfMemoryError : public Error {
public:
    using Error::Error;
};

} // namespace rf
