// Model loading and the queries on a loaded model (hyperparameters, metadata, special tokens).
#include <filesystem>

#include "api_objects.h"
#include "api_status.h"
#include "rocmforge/default_model.h"

namespace {

std::vector<std::string> split_names(const char *list) {
    std::vector<std::string> names;
    std::string item;
    for (const char *p = list;; ++p) {
        if (*p == ',' || *p == '\0') {
            if (!item.empty()) names.push_back(item);
            item.clear();
            if (*p == '\0') break;
        } else if (*p != ' ') {
            item += *p;
        }
    }
    return names;
}

// Folder names keep their spaces: only ':' separates them (as in $ROCMFORGE_PLUGIN_PATH).
std::vector<std::string> split_folders(const char *list) {
    std::vector<std::string> dirs;
    std::string item;
    for (const char *p = list;; ++p) {
        if (*p == ':' || *p == '\0') {
            if (!item.empty()) dirs.push_back(item);
            item.clear();
            if (*p == '\0') break;
        } else {
            item += *p;
        }
    }
    return dirs;
}

// The config the params describe: file or defaults, backends, threads, the hip device, backend
// options.
rf::Config config_from(const rocmforge_model_params &p) {
    rf::Config c = rf::Config::resolve(p.config_path ? p.config_path : "");
    if (p.backends) {
        const auto names = split_names(p.backends);
        if (names.empty()) throw rf::UsageError("rocmforge_model_load: params.backends names no backend");
        c.require_backends(names);
    }
    if (p.n_threads < 0) throw rf::UsageError("rocmforge_model_load: params.n_threads must be >= 0");
    if (p.n_threads > 0) c.n_threads = p.n_threads;
    if (p.device >= 0) c.device = p.device; // the GPU the hip backend runs on
    if (p.backend_options) c.merge_backend_options(p.backend_options, "rocmforge_model_params.backend_options");
    if (p.plugin_dirs) {
        // Ahead of the config's: the caller knows where its own plugins are. Checked here so the
        // message names the parameter rather than the config file.
        const auto dirs = split_folders(p.plugin_dirs);
        for (const auto &dir : dirs) {
            std::error_code ec;
            if (!std::filesystem::is_directory(dir, ec))
                throw rf::UsageError("rocmforge_model_load: params.plugin_dirs names '" + dir +
                                     "', which does not exist or is not a folder");
        }
        c.plugin_dirs.insert(c.plugin_dirs.begin(), dirs.begin(), dirs.end());
    }
    return c;
}

const rf::ModelHparams &hp(const rocmforge_model *m) { return m->session.model->hparams(); }

} // namespace

extern "C" {

rocmforge_model_params rocmforge_model_default_params(void) {
    rocmforge_model_params p{};
    p.device = -1;
    p.use_mmap = true;
    return p;
}

rocmforge_status rocmforge_model_load(const char *path, const rocmforge_model_params *params, rocmforge_model **out_model) {
    RF_API_REQUIRE(out_model);
    *out_model = nullptr;
    const rocmforge_model_params p = params ? *params : rocmforge_model_default_params();
    std::string file;
    if (const rocmforge_status st = rf::api::api_call([&] {
            file = path ? std::string(path) : rf::model_path_or_default("");
            std::error_code ec;
            if (!std::filesystem::is_regular_file(file, ec))
                return rf::api::fail(ROCMFORGE_ERR_FILE, "model file '" + file + "' does not exist or is not a file");
            return ROCMFORGE_OK;
        }, ROCMFORGE_ERR_FILE); st != ROCMFORGE_OK)
        return st;

    std::unique_ptr<rf::Runtime> runtime;
    if (const rocmforge_status st = rf::api::api_call([&] {
            runtime = rf::Runtime::create(config_from(p));
            return ROCMFORGE_OK;
        }, ROCMFORGE_ERR_BACKEND); st != ROCMFORGE_OK)
        return st;

    bool cancelled = false;
    rf::ModelLoadOptions options;
    options.use_mmap = p.use_mmap;
    if (p.progress_callback)
        options.progress = [&](float progress) {
            cancelled = !p.progress_callback(progress, p.progress_callback_user_data);
            return !cancelled;
        };
    const rocmforge_status st = rf::api::api_call([&] {
        auto model = std::make_unique<rocmforge_model>();
        model->session = rf::Session::load(file, std::move(runtime), options);
        *out_model = model.release();
        return ROCMFORGE_OK;
    }, ROCMFORGE_ERR_FILE);
    if (cancelled) return rf::api::fail(ROCMFORGE_ERR_CANCELLED, rocmforge_last_error());
    return st;
}

void rocmforge_model_free(rocmforge_model *model) { delete model; }

int32_t rocmforge_model_n_vocab(const rocmforge_model *m) { return m ? (int32_t)hp(m).n_vocab : 0; }
int32_t rocmforge_model_n_ctx_train(const rocmforge_model *m) { return m ? (int32_t)hp(m).n_ctx_train : 0; }
int32_t rocmforge_model_n_embd(const rocmforge_model *m) { return m ? (int32_t)hp(m).n_embd : 0; }
int32_t rocmforge_model_n_layer(const rocmforge_model *m) { return m ? (int32_t)hp(m).n_layer : 0; }
int32_t rocmforge_model_n_head(const rocmforge_model *m) { return m ? (int32_t)hp(m).n_head : 0; }
uint64_t rocmforge_model_n_params(const rocmforge_model *m) { return m ? m->session.model->n_params() : 0; }
uint64_t rocmforge_model_size(const rocmforge_model *m) { return m ? m->session.model->weight_bytes() : 0; }

const char *rocmforge_model_backend(const rocmforge_model *m) {
    return m ? m->session.model->backend().name().c_str() : "";
}

rocmforge_status rocmforge_model_desc(const rocmforge_model *model, char *buf, size_t buf_size, size_t *out_len) {
    RF_API_REQUIRE(model);
    return rf::api::api_call([&] { return rf::api::copy_out(model->session.model->description(), buf, buf_size, out_len); });
}

rocmforge_status rocmforge_model_meta_val_str(const rocmforge_model *model, const char *key, char *buf, size_t buf_size,
                                              size_t *out_len) {
    RF_API_REQUIRE(model);
    RF_API_REQUIRE(key);
    return rf::api::api_call([&] {
        const rf::gguf::Value *v = model->session.model->file().find(key);
        if (!v) return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, std::string("the model has no metadata key '") + key + "'");
        std::string text; // built step by step: GCC 12 warns (-Wrestrict) on "[" + to_string() + "..."
        if (v->is_string()) text = v->s;
        else if (v->is_array()) text.append("[").append(std::to_string(v->arr.size())).append(" items]");
        else text = v->to_string();
        return rf::api::copy_out(text, buf, buf_size, out_len);
    });
}

rocmforge_token rocmforge_token_bos(const rocmforge_model *m) { return m ? m->session.tokenizer->bos() : ROCMFORGE_TOKEN_NULL; }
rocmforge_token rocmforge_token_eos(const rocmforge_model *m) { return m ? m->session.tokenizer->eos() : ROCMFORGE_TOKEN_NULL; }
bool rocmforge_token_is_eog(const rocmforge_model *m, rocmforge_token token) {
    return m && token >= 0 && token < m->session.tokenizer->n_vocab() && m->session.tokenizer->is_eog(token);
}

} // extern "C"
