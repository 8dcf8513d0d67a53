// C++ convenience over the C API (rocmforge.h), header-only: owning handles, exceptions for
// failed calls, std::string and std::vector in place of buffers. Nothing here is part of the
// library's ABI: it compiles into the embedding program.
#pragma once
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "rocmforge/rocmforge.h"

namespace rocmforge {

// A failed call: its status and rocmforge_last_error()'s message.
class Error : public std::runtime_error {
public:
    Error(rocmforge_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
    rocmforge_status status() const { return status_; }

private:
    rocmforge_status status_;
};

inline void check(rocmforge_status status) {
    if (status != ROCMFORGE_OK) throw Error(status, rocmforge_last_error());
}

class Model {
public:
    // path empty: the default model.
    explicit Model(const std::string &path = "", rocmforge_model_params params = rocmforge_model_default_params()) {
        rocmforge_model *m = nullptr;
        check(rocmforge_model_load(path.empty() ? nullptr : path.c_str(), &params, &m));
        model_.reset(m);
    }
    rocmforge_model *get() const { return model_.get(); }

    std::vector<rocmforge_token> tokenize(const std::string &text, bool add_special = true, bool parse_special = true) const {
        std::vector<rocmforge_token> tokens(text.size() + 2);
        size_t n = 0;
        rocmforge_status st = rocmforge_tokenize(get(), text.data(), text.size(), tokens.data(), tokens.size(), add_special,
                                                 parse_special, &n);
        if (st == ROCMFORGE_ERR_BUFFER_TOO_SMALL) {
            tokens.resize(n);
            st = rocmforge_tokenize(get(), text.data(), text.size(), tokens.data(), tokens.size(), add_special, parse_special, &n);
        }
        check(st);
        tokens.resize(n);
        return tokens;
    }

    std::string detokenize(const std::vector<rocmforge_token> &tokens, bool remove_special = false) const {
        return read_string([&](char *buf, size_t size, size_t *len) {
            return rocmforge_detokenize(get(), tokens.data(), tokens.size(), buf, size, remove_special, false, len);
        });
    }

    std::string description() const {
        return read_string([&](char *buf, size_t size, size_t *len) { return rocmforge_model_desc(get(), buf, size, len); });
    }

    // The conversation in the model's chat format (or the named one).
    std::string chat(const std::vector<rocmforge_chat_message> &messages, bool add_assistant = true,
                     const char *format = nullptr) const {
        return read_string([&](char *buf, size_t size, size_t *len) {
            return rocmforge_chat_apply_template(get(), format, messages.data(), messages.size(), add_assistant, buf, size, len);
        });
    }

private:
    // Calls f(buf, size, &len) with a buffer grown to fit.
    template <class F>
    static std::string read_string(F f) {
        std::string s(256, '\0');
        size_t len = 0;
        rocmforge_status st = f(s.data(), s.size(), &len);
        if (st == ROCMFORGE_ERR_BUFFER_TOO_SMALL) {
            s.resize(len + 1);
            st = f(s.data(), s.size(), &len);
        }
        check(st);
        s.resize(len);
        return s;
    }
    struct Free {
        void operator()(rocmforge_model *m) const { rocmforge_model_free(m); }
    };
    std::unique_ptr<rocmforge_model, Free> model_;
};

class Context {
public:
    explicit Context(const Model &model, rocmforge_context_params params = rocmforge_context_default_params()) {
        rocmforge_context *c = nullptr;
        check(rocmforge_context_init(model.get(), &params, &c));
        ctx_.reset(c);
    }
    rocmforge_context *get() const { return ctx_.get(); }

    // Streams the continuation of prompt (on sequence 0) to on_text; returning false stops.
    // Returns the number of tokens generated.
    int generate(const std::string &prompt, int n_predict, const std::function<bool(const std::string &)> &on_text,
                 rocmforge_sampler_params sampling = rocmforge_sampler_default_params()) {
        auto forward = [](const char *text, size_t len, void *user) {
            return (*static_cast<const std::function<bool(const std::string &)> *>(user))(std::string(text, len));
        };
        int32_t n = 0;
        check(rocmforge_generate(get(), prompt.c_str(), &sampling, n_predict, forward,
                                 const_cast<std::function<bool(const std::string &)> *>(&on_text), &n));
        return n;
    }

private:
    struct Free {
        void operator()(rocmforge_context *c) const { rocmforge_context_free(c); }
    };
    std::unique_ptr<rocmforge_context, Free> ctx_;
};

class Sampler {
public:
    explicit Sampler(rocmforge_sampler_params params = rocmforge_sampler_default_params()) {
        rocmforge_sampler *s = nullptr;
        check(rocmforge_sampler_init(&params, &s));
        sampler_.reset(s);
    }
    // Samples from batch index i of the last decode and records the token.
    rocmforge_token sample(Context &ctx, int32_t i) {
        rocmforge_token t = 0;
        check(rocmforge_sampler_sample(sampler_.get(), ctx.get(), i, &t));
        rocmforge_sampler_accept(sampler_.get(), t);
        return t;
    }

private:
    struct Free {
        void operator()(rocmforge_sampler *s) const { rocmforge_sampler_free(s); }
    };
    std::unique_ptr<rocmforge_sampler, Free> sampler_;
};

} // namespace rocmforge
