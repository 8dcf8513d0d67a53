/* Several sequences in one decode: a shared prompt decoded once on sequence 0, copied to the
 * others (rocmforge_kv_seq_cp), then each step samples every sequence and decodes all the new
 * tokens in one batch.
 * usage: batched [MODEL.gguf] [PROMPT] [N_SEQ] [N]   (no model: the installed default model) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocmforge/rocmforge.h>

#define MAX_SEQ 8

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, rocmforge_last_error());
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 && argv[1][0] ? argv[1] : NULL;
    const char *prompt = argc > 2 ? argv[2] : "And God said";
    const int n_seq = argc > 3 ? atoi(argv[3]) : 4;
    const int n_predict = argc > 4 ? atoi(argv[4]) : 24;
    if (n_seq < 1 || n_seq > MAX_SEQ) return fprintf(stderr, "N_SEQ must be 1..%d\n", MAX_SEQ), 1;

    rocmforge_model *model = NULL;
    if (rocmforge_model_load(path, NULL, &model) != ROCMFORGE_OK) return fail("load");
    rocmforge_context_params cp = rocmforge_context_default_params();
    cp.n_seq_max = (uint32_t)n_seq;
    rocmforge_context *ctx = NULL;
    if (rocmforge_context_init(model, &cp, &ctx) != ROCMFORGE_OK) return fail("context");

    rocmforge_batch batch = rocmforge_batch_init(256);
    size_t n_tokens = 0;
    if (rocmforge_tokenize(model, prompt, strlen(prompt), batch.token, 256, true, true, &n_tokens) != ROCMFORGE_OK)
        return fail("tokenize");
    batch.n_tokens = (int32_t)n_tokens; /* seq_id 0 everywhere (calloc); logits: the last token */
    batch.logits[n_tokens - 1] = 1;
    if (rocmforge_decode(ctx, &batch) != ROCMFORGE_OK) return fail("prompt");
    for (int s = 1; s < n_seq; ++s)
        if (rocmforge_kv_seq_cp(ctx, 0, s, -1) != ROCMFORGE_OK) return fail("copy");

    rocmforge_sampler *samplers[MAX_SEQ];
    char text[MAX_SEQ][1024] = {{0}};
    int row[MAX_SEQ]; /* batch index holding each sequence's logits */
    for (int s = 0; s < n_seq; ++s) {
        rocmforge_sampler_params sp = rocmforge_sampler_default_params();
        sp.seed = 100 + (uint32_t)s; /* one stream per sequence */
        if (rocmforge_sampler_init(&sp, &samplers[s]) != ROCMFORGE_OK) return fail("sampler");
        row[s] = (int)n_tokens - 1; /* all start from the prompt's last logits */
    }
    for (int n = 0; n < n_predict; ++n) {
        batch.n_tokens = 0;
        for (int s = 0; s < n_seq; ++s) {
            rocmforge_token t;
            if (rocmforge_sampler_sample(samplers[s], ctx, row[s], &t) != ROCMFORGE_OK) return fail("sample");
            rocmforge_sampler_accept(samplers[s], t);
            char piece[64];
            size_t len = 0;
            if (rocmforge_token_to_piece(model, t, piece, sizeof piece, false, &len) != ROCMFORGE_OK) return fail("piece");
            const size_t used = strlen(text[s]);
            if (used + len < sizeof text[s]) memcpy(text[s] + used, piece, len), text[s][used + len] = '\0';
            row[s] = batch.n_tokens;
            batch.token[batch.n_tokens] = t;
            batch.seq_id[batch.n_tokens] = s;
            batch.logits[batch.n_tokens++] = 1;
        }
        if (rocmforge_decode(ctx, &batch) != ROCMFORGE_OK) return fail("decode"); /* n_seq tokens at once */
    }
    for (int s = 0; s < n_seq; ++s) {
        printf("--- sequence %d ---\n%s%s\n", s, prompt, text[s]);
        rocmforge_sampler_free(samplers[s]);
    }
    rocmforge_batch_free(batch);
    rocmforge_context_free(ctx);
    rocmforge_model_free(model);
    return 0;
}
