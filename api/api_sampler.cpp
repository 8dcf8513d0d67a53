// Samplers over the logits of a decode, and rocmforge_generate (rf::generate on sequence 0).
#include "api_objects.h"
#include "api_status.h"
#include "rocmforge/generation.h"

namespace {

rf::SamplerParams to_sampler_params(const rocmforge_sampler_params &p) {
    rf::SamplerParams s;
    s.temperature = p.temperature;
    s.top_k = p.top_k;
    s.top_p = p.top_p;
    s.min_p = p.min_p;
    s.repeat_penalty = p.repeat_penalty;
    s.repeat_last_n = p.repeat_last_n;
    s.seed = p.seed;
    s.frequency_penalty = p.frequency_penalty;
    s.presence_penalty = p.presence_penalty;
    // The ranges `rocmforge generate` accepts for the same options (common_args.cpp).
    if (!(s.top_p > 0 && s.top_p <= 1)) throw rf::UsageError("sampler: top_p must be in (0, 1], got " + std::to_string(s.top_p));
    if (!(s.min_p >= 0 && s.min_p <= 1)) throw rf::UsageError("sampler: min_p must be in [0, 1], got " + std::to_string(s.min_p));
    if (!(s.repeat_penalty > 0)) throw rf::UsageError("sampler: repeat_penalty must be > 0, got " + std::to_string(s.repeat_penalty));
    if (s.repeat_last_n < -1) throw rf::UsageError("sampler: repeat_last_n must be >= -1, got " + std::to_string(s.repeat_last_n));
    if (s.temperature != s.temperature) throw rf::UsageError("sampler: temperature is NaN");
    if (!(s.frequency_penalty >= -2 && s.frequency_penalty <= 2))
        throw rf::UsageError("sampler: frequency_penalty must be in [-2, 2], got " + std::to_string(s.frequency_penalty));
    if (!(s.presence_penalty >= -2 && s.presence_penalty <= 2))
        throw rf::UsageError("sampler: presence_penalty must be in [-2, 2], got " + std::to_string(s.presence_penalty));
    return s;
}

} // namespace

extern "C" {

rocmforge_sampler_params rocmforge_sampler_default_params(void) {
    const rf::SamplerParams d;
    return {d.temperature, d.top_k, d.top_p, d.min_p, d.repeat_penalty, d.repeat_last_n, d.seed, d.frequency_penalty,
            d.presence_penalty};
}

rocmforge_sampler_params rocmforge_sampler_greedy_params(void) {
    rocmforge_sampler_params p = rocmforge_sampler_default_params();
    p.temperature = 0;
    return p;
}

rocmforge_status rocmforge_sampler_init(const rocmforge_sampler_params *params, rocmforge_sampler **out_sampler) {
    RF_API_REQUIRE(out_sampler);
    *out_sampler = nullptr;
    RF_API_REQUIRE(params);
    return rf::api::api_call([&] {
        *out_sampler = new rocmforge_sampler{rf::Sampler(to_sampler_params(*params))};
        return ROCMFORGE_OK;
    });
}

void rocmforge_sampler_free(rocmforge_sampler *sampler) { delete sampler; }

rocmforge_status rocmforge_sampler_sample(rocmforge_sampler *sampler, rocmforge_context *ctx, int32_t i,
                                          rocmforge_token *out_token) {
    RF_API_REQUIRE(sampler);
    RF_API_REQUIRE(ctx);
    RF_API_REQUIRE(out_token);
    const float *logits = rocmforge_get_logits_ith(ctx, i);
    if (!logits) return ROCMFORGE_ERR_INVALID_ARGUMENT; // the message is set
    return rf::api::api_call([&] {
        *out_token = sampler->sampler.sample(logits, ctx->model->session.model->hparams().n_vocab);
        return ROCMFORGE_OK;
    });
}

void rocmforge_sampler_accept(rocmforge_sampler *sampler, rocmforge_token token) {
    if (sampler) sampler->sampler.accept(token);
}

void rocmforge_sampler_reset(rocmforge_sampler *sampler) {
    if (sampler) sampler->sampler.reset();
}

rocmforge_status rocmforge_generate(rocmforge_context *ctx, const char *prompt, const rocmforge_sampler_params *sampling,
                                    int32_t n_predict, rocmforge_text_callback callback, void *user_data,
                                    int32_t *out_n_generated) {
    RF_API_REQUIRE(ctx);
    RF_API_REQUIRE(prompt);
    if (out_n_generated) *out_n_generated = 0;
    if (n_predict < -1) return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_generate: n_predict must be >= -1");
    bool stopped_by_callback = false;
    return rf::api::api_call([&] {
        rf::GenerationParams gp;
        gp.sampling = to_sampler_params(sampling ? *sampling : rocmforge_sampler_default_params());
        gp.n_predict = n_predict;
        rf::GenerationCallbacks cb;
        cb.on_text = [&](int, const std::string &text) {
            if (callback && !stopped_by_callback) stopped_by_callback = !callback(text.data(), text.size(), user_data);
        };
        cb.stop_requested = [&] { return stopped_by_callback; };
        // The context's logits are the generation's from here on: none is readable by index.
        ctx->logits = nullptr;
        ctx->logit_row.clear();
        const rf::GenerationStats st = rf::generate(*ctx->ctx, *ctx->model->session.tokenizer, {prompt}, gp, cb);
        if (out_n_generated) *out_n_generated = (int32_t)st.n_generated;
        if (!st.stop_note.empty() && !stopped_by_callback) spdlog::info("rocmforge_generate stopped: {}", st.stop_note);
        return ROCMFORGE_OK;
    }, ROCMFORGE_ERR_BACKEND);
}

} // extern "C"
