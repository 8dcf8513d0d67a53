/* The embedding of a text through the C API, printed as a JSON array of floats (9 significant
 * digits): tests/serve/serve_embeddings.sh compares it with `rocmforge embed` and the server.
 * Usage: embed_print MODEL TEXT [mean|cls|last]. Plugins: $ROCMFORGE_PLUGIN_PATH. */
#include <rocmforge/rocmforge.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what) {
    fprintf(stderr, "embed_print: %s: %s\n", what, rocmforge_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: embed_print MODEL TEXT [mean|cls|last]\n");
        return 2;
    }
    rocmforge_pooling pooling = ROCMFORGE_POOLING_DEFAULT;
    if (argc == 4) {
        if (!strcmp(argv[3], "mean")) pooling = ROCMFORGE_POOLING_MEAN;
        else if (!strcmp(argv[3], "cls")) pooling = ROCMFORGE_POOLING_CLS;
        else if (!strcmp(argv[3], "last")) pooling = ROCMFORGE_POOLING_LAST;
        else {
            fprintf(stderr, "embed_print: unknown pooling '%s'\n", argv[3]);
            return 2;
        }
    }
    rocmforge_model_params mp = rocmforge_model_default_params();
    rocmforge_model *model = NULL;
    if (rocmforge_model_load(argv[1], &mp, &model) != ROCMFORGE_OK) return die("load");
    size_t n = 0;
    const size_t len = strlen(argv[2]);
    /* Too small on purpose the first time: the call says how many tokens it needs. */
    rocmforge_status st = rocmforge_tokenize(model, argv[2], len, NULL, 0, true, false, &n);
    if (st != ROCMFORGE_OK && st != ROCMFORGE_ERR_BUFFER_TOO_SMALL) return die("tokenize");
    rocmforge_token *tokens = malloc((n ? n : 1) * sizeof *tokens);
    if (rocmforge_tokenize(model, argv[2], len, tokens, n, true, false, &n) != ROCMFORGE_OK) return die("tokenize");
    rocmforge_context_params cp = rocmforge_context_default_params();
    rocmforge_context *ctx = NULL;
    if (rocmforge_context_init(model, &cp, &ctx) != ROCMFORGE_OK) return die("context");
    const size_t n_embd = (size_t)rocmforge_model_n_embd(model);
    float *v = malloc(n_embd * sizeof *v);
    if (rocmforge_embed(ctx, tokens, (int32_t)n, 0, pooling, true, v, n_embd) != ROCMFORGE_OK) return die("embed");
    printf("[");
    for (size_t i = 0; i < n_embd; ++i) printf("%s%.9g", i ? "," : "", (double)v[i]);
    printf("]\n");
    free(v);
    free(tokens);
    rocmforge_context_free(ctx);
    rocmforge_model_free(model);
    return 0;
}
