/* ROCmForge C API: load a GGUF model, tokenize, decode batches, sample, generate.
 * Shaped like llama.h. Every call that can fail returns a rocmforge_status; the message of the
 * last failure on the calling thread is rocmforge_last_error(). No exception leaves the library.
 * Threading, ownership and the versioning promise: docs/EMBEDDING.md. */
#ifndef ROCMFORGE_H
#define ROCMFORGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ROCMFORGE_BUILDING_LIBRARY)
#define ROCMFORGE_API __attribute__((visibility("default")))
#else
#define ROCMFORGE_API
#endif

/* API version: the major changes only with the soname (librocmforge.so.N); a minor adds calls
 * and appends fields to the end of parameter structs. */
#define ROCMFORGE_API_VERSION_MAJOR 0
#define ROCMFORGE_API_VERSION_MINOR 4

typedef int32_t rocmforge_token;
typedef int32_t rocmforge_seq_id;
typedef struct rocmforge_model rocmforge_model;
typedef struct rocmforge_context rocmforge_context;
typedef struct rocmforge_sampler rocmforge_sampler;

typedef enum rocmforge_status {
    ROCMFORGE_OK = 0,
    ROCMFORGE_ERR_INVALID_ARGUMENT = 1, /* null pointer, value out of range, unknown name */
    ROCMFORGE_ERR_FILE = 2,             /* missing, unreadable or malformed file */
    ROCMFORGE_ERR_UNSUPPORTED = 3,      /* valid input this version cannot handle */
    ROCMFORGE_ERR_BACKEND = 4,          /* no backend could start, or a backend failed */
    ROCMFORGE_ERR_OUT_OF_MEMORY = 5,
    ROCMFORGE_ERR_CONTEXT_FULL = 6,     /* the KV cache cannot take the batch; nothing changed */
    ROCMFORGE_ERR_BUFFER_TOO_SMALL = 7, /* the needed size is in the call's count output */
    ROCMFORGE_ERR_CANCELLED = 8,        /* a callback asked to stop */
    ROCMFORGE_ERR_INTERNAL = 9
} rocmforge_status;

/* The message of the last failed call on this thread ("" when none); valid until the next call
 * on this thread. */
ROCMFORGE_API const char *rocmforge_last_error(void);
ROCMFORGE_API const char *rocmforge_status_name(rocmforge_status status);
/* "0.1.0" */
ROCMFORGE_API const char *rocmforge_version(void);
/* API 0.3: the API version the library was built with, (MAJOR << 16) | MINOR: a program that
 * loads the library at run time (the Python package, through ctypes) checks it has the calls
 * and fields it uses. */
ROCMFORGE_API uint32_t rocmforge_api_version(void);

/* ---- logging -------------------------------------------------------------------------- */
typedef enum rocmforge_log_level {
    ROCMFORGE_LOG_DEBUG = 0,
    ROCMFORGE_LOG_INFO = 1,
    ROCMFORGE_LOG_WARN = 2,
    ROCMFORGE_LOG_ERROR = 3
} rocmforge_log_level;

/* Receives every library message at or above the level (no trailing newline), from any thread.
 * NULL restores the default: warnings and errors to stderr. Nothing is written to stdout. */
typedef void (*rocmforge_log_callback)(rocmforge_log_level level, const char *text, void *user_data);
ROCMFORGE_API void rocmforge_log_set(rocmforge_log_callback callback, void *user_data);
ROCMFORGE_API void rocmforge_log_set_level(rocmforge_log_level min_level);

/* ---- model ---------------------------------------------------------------------------- */
/* Return false to cancel the load (ROCMFORGE_ERR_CANCELLED). */
typedef bool (*rocmforge_progress_callback)(float progress, void *user_data);

typedef struct rocmforge_model_params {
    /* JSON config file (README.md, section Config; its backend_options: docs/OPTIONS.md); NULL:
     * $ROCMFORGE_CONFIG, else built-in defaults. */
    const char *config_path;
    /* Backends in priority order, comma-separated ("hip,cpu"; "hip:1,cpu": device 1 of hip); NULL:
     * the config's. Naming one makes it required: the load fails if it cannot start. The model
     * goes on the first. */
    const char *backends;
    int32_t device;          /* GPU index for the hip backend; -1: the backend's default */
    int32_t n_threads;       /* CPU threads; 0: all cores */
    bool use_mmap;           /* serve weights from the mapped file where the backend can */
    rocmforge_progress_callback progress_callback;
    void *progress_callback_user_data;
    /* API 0.2: backend options over the config's "backend_options" (docs/OPTIONS.md), a JSON
     * object of the same shape: {"cpu": {"simd": "avx2"}, "hip:1": {...}}; NULL: none. Each is
     * checked against its backend's options like the config's: an unknown backend or key, a value
     * of the wrong type or out of range fails the load with ROCMFORGE_ERR_INVALID_ARGUMENT and a
     * message naming the key and what it accepts (rocmforge_last_error()). */
    const char *backend_options;
    /* API 0.3: plugin folders searched before the config's plugin_dirs, ':'-separated (a program
     * run from a build tree names build/backends/cpu here); NULL: none. Like the config's, each
     * must exist (else ROCMFORGE_ERR_INVALID_ARGUMENT) and every shared object in it is tried. */
    const char *plugin_dirs;
} rocmforge_model_params;

ROCMFORGE_API rocmforge_model_params rocmforge_model_default_params(void);
/* path NULL: the default model (share/rocmforge/models/default.gguf or $ROCMFORGE_DEFAULT_MODEL). */
ROCMFORGE_API rocmforge_status rocmforge_model_load(const char *path, const rocmforge_model_params *params,
                                                    rocmforge_model **out_model);
/* Frees a model (NULL is ignored). Its contexts must be freed first. */
ROCMFORGE_API void rocmforge_model_free(rocmforge_model *model);

ROCMFORGE_API int32_t rocmforge_model_n_vocab(const rocmforge_model *model);
ROCMFORGE_API int32_t rocmforge_model_n_ctx_train(const rocmforge_model *model);
ROCMFORGE_API int32_t rocmforge_model_n_embd(const rocmforge_model *model);
ROCMFORGE_API int32_t rocmforge_model_n_layer(const rocmforge_model *model);
ROCMFORGE_API int32_t rocmforge_model_n_head(const rocmforge_model *model);
ROCMFORGE_API uint64_t rocmforge_model_n_params(const rocmforge_model *model);
ROCMFORGE_API uint64_t rocmforge_model_size(const rocmforge_model *model); /* weight bytes */
/* Writes NUL-terminated strings; *out_len (may be NULL) gets the length without the NUL. */
ROCMFORGE_API rocmforge_status rocmforge_model_desc(const rocmforge_model *model, char *buf, size_t buf_size,
                                                    size_t *out_len);
/* A GGUF metadata value as text (numbers in decimal, arrays as "[n items]"). */
ROCMFORGE_API rocmforge_status rocmforge_model_meta_val_str(const rocmforge_model *model, const char *key, char *buf,
                                                            size_t buf_size, size_t *out_len);
/* Name of the backend holding the weights ("cpu", "hip"). */
ROCMFORGE_API const char *rocmforge_model_backend(const rocmforge_model *model);

/* ---- vocabulary and tokenization ------------------------------------------------------ */
#define ROCMFORGE_TOKEN_NULL (-1)
ROCMFORGE_API rocmforge_token rocmforge_token_bos(const rocmforge_model *model);
ROCMFORGE_API rocmforge_token rocmforge_token_eos(const rocmforge_model *model);
ROCMFORGE_API bool rocmforge_token_is_eog(const rocmforge_model *model, rocmforge_token token);

/* add_special: BOS/EOS as the vocabulary asks; parse_special: control tokens written in the
 * text become single tokens. Too small a buffer: ROCMFORGE_ERR_BUFFER_TOO_SMALL with the needed
 * count in *out_n_tokens. */
ROCMFORGE_API rocmforge_status rocmforge_tokenize(const rocmforge_model *model, const char *text, size_t text_len,
                                                  rocmforge_token *tokens, size_t n_tokens_max, bool add_special,
                                                  bool parse_special, size_t *out_n_tokens);
/* The bytes of one token (may be part of a UTF-8 character). special: show control tokens. */
ROCMFORGE_API rocmforge_status rocmforge_token_to_piece(const rocmforge_model *model, rocmforge_token token,
                                                        char *buf, size_t buf_size, bool special, size_t *out_len);
/* The text of a token sequence, NUL-terminated. remove_special: drop leading BOS / trailing EOS;
 * unparse_special: write control tokens as text. */
ROCMFORGE_API rocmforge_status rocmforge_detokenize(const rocmforge_model *model, const rocmforge_token *tokens,
                                                    size_t n_tokens, char *buf, size_t buf_size, bool remove_special,
                                                    bool unparse_special, size_t *out_len);

/* ---- chat templates ------------------------------------------------------------------- */
typedef struct rocmforge_chat_message {
    const char *role; /* "system", "user", "assistant" */
    const char *content;
} rocmforge_chat_message;

/* Formats the messages as the template expects. tmpl: a template name ("chatml", "llama2",
 * "llama3", "mistral", "gemma", "phi3"), the Jinja text of a template, or NULL for the model's
 * tokenizer.chat_template. The template is recognised by its markers, not executed.
 * add_assistant: end with the opening of an assistant turn. */
ROCMFORGE_API rocmforge_status rocmforge_chat_apply_template(const rocmforge_model *model, const char *tmpl,
                                                             const rocmforge_chat_message *messages, size_t n_messages,
                                                             bool add_assistant, char *buf, size_t buf_size,
                                                             size_t *out_len);

/* ---- context -------------------------------------------------------------------------- */
typedef enum rocmforge_cache_type {
    ROCMFORGE_CACHE_F16 = 0,
    ROCMFORGE_CACHE_F32 = 1,
    ROCMFORGE_CACHE_Q8_0 = 2
} rocmforge_cache_type;

typedef struct rocmforge_context_params {
    uint32_t n_ctx;     /* KV cache tokens, all sequences together; 0: the model's trained context (at most 4096) */
    uint32_t n_batch;   /* most tokens per forward graph (larger batches are split) */
    uint32_t n_seq_max; /* sequence ids 0 .. n_seq_max-1 */
    rocmforge_cache_type type_k;
    rocmforge_cache_type type_v;
} rocmforge_context_params;

ROCMFORGE_API rocmforge_context_params rocmforge_context_default_params(void);
/* ROCMFORGE_ERR_OUT_OF_MEMORY when the KV cache cannot fit the backend's free memory. */
ROCMFORGE_API rocmforge_status rocmforge_context_init(rocmforge_model *model, const rocmforge_context_params *params,
                                                      rocmforge_context **out_ctx);
ROCMFORGE_API void rocmforge_context_free(rocmforge_context *ctx);
ROCMFORGE_API uint32_t rocmforge_n_ctx(const rocmforge_context *ctx);
ROCMFORGE_API const rocmforge_model *rocmforge_context_model(const rocmforge_context *ctx);

/* ---- batches and decoding ------------------------------------------------------------- */
/* Each token is appended to its sequence at the next position (positions are implicit). */
typedef struct rocmforge_batch {
    int32_t n_tokens;
    rocmforge_token *token;
    rocmforge_seq_id *seq_id;
    int8_t *logits; /* non-zero: return this token's logits */
} rocmforge_batch;

/* A batch with room for n_tokens_max tokens (n_tokens = 0); free with rocmforge_batch_free. */
ROCMFORGE_API rocmforge_batch rocmforge_batch_init(int32_t n_tokens_max);
ROCMFORGE_API void rocmforge_batch_free(rocmforge_batch batch);

/* Runs the batch. On success the logits of the marked tokens are readable until the next
 * decode on this context. ROCMFORGE_ERR_CONTEXT_FULL leaves the cache as it was. */
ROCMFORGE_API rocmforge_status rocmforge_decode(rocmforge_context *ctx, const rocmforge_batch *batch);
/* n_vocab floats for batch index i of the last decode (negative i counts from the end); NULL
 * with a message when that token was not marked. */
ROCMFORGE_API float *rocmforge_get_logits_ith(rocmforge_context *ctx, int32_t i);

/* ---- KV cache, per sequence ----------------------------------------------------------- */
ROCMFORGE_API rocmforge_status rocmforge_kv_seq_clear(rocmforge_context *ctx, rocmforge_seq_id seq);
/* Removes positions [p0, p1) (p1 < 0: to the end). Only a tail can go (RoPE fixes positions):
 * p1 must be < 0 or >= the sequence's length, else ROCMFORGE_ERR_UNSUPPORTED. */
ROCMFORGE_API rocmforge_status rocmforge_kv_seq_rm(rocmforge_context *ctx, rocmforge_seq_id seq, int32_t p0, int32_t p1);
/* Makes dst hold the first n_tokens positions of src (n_tokens < 0: all of them); dst's
 * previous content is dropped. */
ROCMFORGE_API rocmforge_status rocmforge_kv_seq_cp(rocmforge_context *ctx, rocmforge_seq_id src, rocmforge_seq_id dst,
                                                   int32_t n_tokens);
/* Positions stored for seq (the next token's position), or -1 for a bad argument. */
ROCMFORGE_API int32_t rocmforge_kv_seq_length(const rocmforge_context *ctx, rocmforge_seq_id seq);

/* ---- sampling ------------------------------------------------------------------------- */
/* One chain, applied in llama.cpp's default order: repetition penalty -> top-k -> top-p ->
 * min-p -> temperature -> seeded draw. Each stage is off at its neutral value. */
typedef struct rocmforge_sampler_params {
    float temperature;      /* <= 0: greedy (argmax after the penalty) */
    int32_t top_k;          /* <= 0: off */
    float top_p;            /* >= 1: off */
    float min_p;            /* <= 0: off */
    float repeat_penalty;   /* 1: off */
    int32_t repeat_last_n;  /* tokens the penalties look back; 0: off; -1: all */
    uint32_t seed;
    /* API 0.3: OpenAI's penalties over the same recent tokens, applied with the repetition
     * penalty: a token seen c times there loses c * frequency_penalty + presence_penalty. Each in
     * [-2, 2] as `rocmforge generate --frequency-penalty / --presence-penalty` take them; 0: off. */
    float frequency_penalty;
    float presence_penalty;
} rocmforge_sampler_params;

ROCMFORGE_API rocmforge_sampler_params rocmforge_sampler_default_params(void);
ROCMFORGE_API rocmforge_sampler_params rocmforge_sampler_greedy_params(void);
ROCMFORGE_API rocmforge_status rocmforge_sampler_init(const rocmforge_sampler_params *params,
                                                      rocmforge_sampler **out_sampler);
ROCMFORGE_API void rocmforge_sampler_free(rocmforge_sampler *sampler);
/* Samples from the logits of batch index i of the last decode. Does not record the token:
 * call rocmforge_sampler_accept (prompt tokens too, for the repetition penalty). */
ROCMFORGE_API rocmforge_status rocmforge_sampler_sample(rocmforge_sampler *sampler, rocmforge_context *ctx, int32_t i,
                                                        rocmforge_token *out_token);
ROCMFORGE_API void rocmforge_sampler_accept(rocmforge_sampler *sampler, rocmforge_token token);
/* Forgets the history and restarts the random stream from the seed. */
ROCMFORGE_API void rocmforge_sampler_reset(rocmforge_sampler *sampler);

/* ---- generation ----------------------------------------------------------------------- */
/* Receives generated text as it completes (whole UTF-8 characters); return false to stop. */
typedef bool (*rocmforge_text_callback)(const char *text, size_t len, void *user_data);

/* The loop `rocmforge generate` runs: tokenizes prompt (special tokens parsed), appends it to
 * sequence 0 of ctx and generates up to n_predict tokens (-1: until end of generation or a full
 * cache), streaming them to callback. *out_n_generated (may be NULL) gets the count. A full
 * cache ends the generation early with ROCMFORGE_OK. */
ROCMFORGE_API rocmforge_status rocmforge_generate(rocmforge_context *ctx, const char *prompt,
                                                  const rocmforge_sampler_params *sampling, int32_t n_predict,
                                                  rocmforge_text_callback callback, void *user_data,
                                                  int32_t *out_n_generated);

/* ---- embeddings (API 0.4) ------------------------------------------------------------- */
/* How the hidden states of an input's tokens become one vector. DEFAULT: the GGUF's
 * <arch>.pooling_type, else MEAN. The values are llama.cpp's. */
typedef enum {
    ROCMFORGE_POOLING_DEFAULT = -1,
    ROCMFORGE_POOLING_MEAN = 1, /* the mean over every token */
    ROCMFORGE_POOLING_CLS = 2,  /* the first token */
    ROCMFORGE_POOLING_LAST = 3, /* the last token */
} rocmforge_pooling;

/* The embedding of n_tokens tokens (from rocmforge_tokenize): the hidden states after the
 * model's final norm, pooled, L2-normalised when normalize is true, into out (out_size floats,
 * at least rocmforge_model_n_embd; else ROCMFORGE_ERR_BUFFER_TOO_SMALL). The tokens run as
 * sequence seq, which must be empty and is empty again afterwards: nothing stays in the KV
 * cache. No tokens, more than the context's n_ctx, a bad token id or pooling value:
 * ROCMFORGE_ERR_INVALID_ARGUMENT. The logits of the last decode are invalid afterwards. */
ROCMFORGE_API rocmforge_status rocmforge_embed(rocmforge_context *ctx, const rocmforge_token *tokens, int32_t n_tokens,
                                               rocmforge_seq_id seq, rocmforge_pooling pooling, bool normalize,
                                               float *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* ROCMFORGE_H */
