// Text <-> tokens through the model's tokenizer.
#include <cstring>

#include "api_objects.h"
#include "api_status.h"

namespace {

rocmforge_status check_token(const rocmforge_model *model, rocmforge_token token, const char *fn) {
    const int n_vocab = model->session.tokenizer->n_vocab();
    if (token < 0 || token >= n_vocab)
        return rf::api::fail(ROCMFORGE_ERR_INVALID_ARGUMENT, std::string(fn) + ": token id " + std::to_string(token) +
                                                                 " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")");
    return ROCMFORGE_OK;
}

} // namespace

extern "C" {

rocmforge_status rocmforge_tokenize(const rocmforge_model *model, const char *text, size_t text_len, rocmforge_token *tokens,
                                    size_t n_tokens_max, bool add_special, bool parse_special, size_t *out_n_tokens) {
    RF_API_REQUIRE(model);
    RF_API_REQUIRE(text);
    RF_API_REQUIRE(out_n_tokens);
    return rf::api::api_call([&] {
        const std::vector<int32_t> ids = model->session.tokenizer->encode(std::string_view(text, text_len), add_special, parse_special);
        *out_n_tokens = ids.size();
        if (ids.size() > n_tokens_max || (!tokens && !ids.empty()))
            return rf::api::fail(ROCMFORGE_ERR_BUFFER_TOO_SMALL, "rocmforge_tokenize: the text has " + std::to_string(ids.size()) +
                                                                     " tokens, the buffer holds " + std::to_string(tokens ? n_tokens_max : 0));
        if (!ids.empty()) std::memcpy(tokens, ids.data(), ids.size() * sizeof(int32_t));
        return ROCMFORGE_OK;
    });
}

rocmforge_status rocmforge_token_to_piece(const rocmforge_model *model, rocmforge_token token, char *buf, size_t buf_size,
                                          bool special, size_t *out_len) {
    RF_API_REQUIRE(model);
    if (const rocmforge_status st = check_token(model, token, __func__)) return st;
    return rf::api::api_call([&] { return rf::api::copy_out(model->session.tokenizer->token_to_piece(token, special), buf, buf_size, out_len); });
}

rocmforge_status rocmforge_detokenize(const rocmforge_model *model, const rocmforge_token *tokens, size_t n_tokens, char *buf,
                                      size_t buf_size, bool remove_special, bool unparse_special, size_t *out_len) {
    RF_API_REQUIRE(model);
    if (n_tokens > 0) RF_API_REQUIRE(tokens);
    for (size_t i = 0; i < n_tokens; ++i)
        if (const rocmforge_status st = check_token(model, tokens[i], __func__)) return st;
    return rf::api::api_call([&] {
        const std::vector<int32_t> ids(tokens, tokens + n_tokens);
        return rf::api::copy_out(model->session.tokenizer->decode(ids, remove_special, unparse_special), buf, buf_size, out_len);
    });
}

} // extern "C"
