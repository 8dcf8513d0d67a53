/* The C API in its smallest form: load a model, tokenize a prompt, decode it, then sample and
 * print one token at a time.
 * usage: simple [MODEL.gguf] [PROMPT] [N]   (no model: the installed default model) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocmforge/rocmforge.h>

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, rocmforge_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 && argv[1][0] ? argv[1] : NULL;
    const char *prompt = argc > 2 ? argv[2] : "In the beginning";
    const int n_predict = argc > 3 ? atoi(argv[3]) : 32;

    rocmforge_model *model = NULL;
    rocmforge_model_params mp = rocmforge_model_default_params();
    if (rocmforge_model_load(path, &mp, &model) != ROCMFORGE_OK) return fail("load");

    rocmforge_context *ctx = NULL;
    rocmforge_context_params cp = rocmforge_context_default_params();
    if (rocmforge_context_init(model, &cp, &ctx) != ROCMFORGE_OK) return fail("context");

    rocmforge_token tokens[256];
    size_t n_tokens = 0;
    if (rocmforge_tokenize(model, prompt, strlen(prompt), tokens, 256, true, true, &n_tokens) != ROCMFORGE_OK)
        return fail("tokenize");

    rocmforge_sampler_params sp = rocmforge_sampler_default_params();
    sp.seed = 42;
    rocmforge_sampler *sampler = NULL;
    if (rocmforge_sampler_init(&sp, &sampler) != ROCMFORGE_OK) return fail("sampler");

    /* The prompt in one batch; only its last token's logits are needed. */
    rocmforge_batch batch = rocmforge_batch_init(256);
    for (size_t i = 0; i < n_tokens; ++i) {
        batch.token[i] = tokens[i];
        batch.seq_id[i] = 0;
        batch.logits[i] = i + 1 == n_tokens;
        rocmforge_sampler_accept(sampler, tokens[i]);
    }
    batch.n_tokens = (int32_t)n_tokens;

    printf("%s", prompt);
    for (int n = 0; n < n_predict; ++n) {
        if (rocmforge_decode(ctx, &batch) != ROCMFORGE_OK) return fail("decode");
        rocmforge_token t;
        if (rocmforge_sampler_sample(sampler, ctx, -1, &t) != ROCMFORGE_OK) return fail("sample");
        rocmforge_sampler_accept(sampler, t);
        if (rocmforge_token_is_eog(model, t)) break;
        char piece[64];
        size_t len = 0;
        if (rocmforge_token_to_piece(model, t, piece, sizeof piece, false, &len) != ROCMFORGE_OK) return fail("piece");
        fwrite(piece, 1, len, stdout);
        fflush(stdout);
        /* The next step decodes the sampled token alone. */
        batch.token[0] = t;
        batch.seq_id[0] = 0;
        batch.logits[0] = 1;
        batch.n_tokens = 1;
    }
    printf("\n");

    rocmforge_batch_free(batch);
    rocmforge_sampler_free(sampler);
    rocmforge_context_free(ctx);
    rocmforge_model_free(model);
    return 0;
}
