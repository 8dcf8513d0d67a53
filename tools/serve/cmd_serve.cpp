// rocmforge serve: the options, the model and its context, then three kinds of threads: the
// scheduler (owns the context), the acceptor with one thread per connection, and the main
// thread, which only waits for SIGINT / SIGTERM to shut down in order.
#include "cmd_serve.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "../chat_template_choice.h"
#include "../common_args.h"
#include "../draft_args.h"
#include "../text_file.h"
#include "api_routes.h"
#include "embeddings_route.h"
#include "http_server.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "scheduler.h"

namespace rf::serve {
namespace {

const char *kUsage =
    "usage: rocmforge serve [-m MODEL] [--host ADDR] [--port N] [--parallel N] [-c N] [options]\n\n"
    "OpenAI-compatible HTTP server (POST /v1/chat/completions, /v1/completions, /v1/embeddings,\n"
    "/tokenize, /detokenize, /apply-template; GET /v1/models, /props, /health, /metrics) decoding\n"
    "up to --parallel requests together (docs/SERVING.md).\n\n"
    "  --host ADDR          address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)\n"
    "  --port N             TCP port (default 8080; 0 picks a free one, printed at start)\n"
    "  --parallel N         sequences decoded together, one per choice of a request (1..256,\n"
    "                       default 4)\n"
    "  --queue N            sequences waiting beyond those (default 64; more get 429)\n"
    "  --api-key KEY        require Authorization: Bearer KEY (also $ROCMFORGE_API_KEY)\n"
    "  --chat-template NAME chatml, llama2, llama3, mistral, gemma, phi3, gpt-oss (default: the\n"
    "                       GGUF's Jinja template; for a file without one gpt-oss (harmony) for\n"
    "                       gpt-oss models, else chatml)\n"
    "  --chat-template-file FILE  a Jinja chat template instead of the GGUF's\n"
    "  --max-tokens N       max_tokens when a request gives none (default 256)\n"
    "  --timeout S          per-request limit in seconds, queue wait included (default 300)\n"
    "  --prefill-chunk N    prompt tokens per step beside the decodes (default 256)\n"
    "  --shutdown-grace S   on SIGINT/SIGTERM, seconds running requests may finish (default 5)\n"
    "  --candidates on|off|always  on (default): where the logits are on a GPU and every running\n"
    "                       request samples greedily or from its top-k without logprobs, only each\n"
    "                       row's candidates are read back (the same tokens); off: whole rows;\n"
    "                       always: candidates on any backend (the CPU too)\n"
    "  --no-prefix-cache    do not keep ended requests' full prompt pages for the next request\n"
    "                       with the same prefix (automatic prefix caching is on by default)\n"
    "  -c N                 KV pool in tokens, shared by all requests (default --parallel x the\n"
    "                       model's trained context, at most 4096 each)\n"
    "speculative decoding (requests without logprobs or a grammar; response \"timings\" has\n"
    "draft_n and draft_n_accepted):\n";

struct Options {
    ModelArgs model;
    std::string host = "127.0.0.1";
    uint16_t port = 8080;
    int parallel = 4;
    size_t queue = 64;
    std::string api_key;
    ChatTemplateOptions chat_template;
    int64_t max_tokens = 256, timeout_s = 300, prefill_chunk = 256, grace_s = 5;
    SchedulerOptions::Candidates candidates = SchedulerOptions::Candidates::automatic;
    bool prefix_cache = true;
    DraftArgs draft;
};

SchedulerOptions::Candidates parse_candidates(const std::string &opt, const std::string &value) {
    using C = SchedulerOptions::Candidates;
    if (value == "on") return C::automatic;
    if (value == "off") return C::off;
    if (value == "always") return C::always;
    throw UsageError("option " + opt + " needs on, off or always, got '" + value + "'");
}

Options parse(int argc, char **argv) {
    Options o;
    if (const char *key = std::getenv("ROCMFORGE_API_KEY")) o.api_key = key;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage, DraftArgs::help());
            std::exit(0);
        }
        if (o.model.parse(argc, argv, i) || o.draft.parse(argc, argv, i)) continue;
        if (a == "--host") o.host = take_value(argc, argv, i);
        else if (a == "--port") o.port = (uint16_t)parse_int_arg(a, take_value(argc, argv, i), 0, 65535);
        else if (a == "--parallel" || a == "-np") o.parallel = (int)parse_int_arg(a, take_value(argc, argv, i), 1, 256);
        else if (a == "--queue") o.queue = (size_t)parse_int_arg(a, take_value(argc, argv, i), 0, 100000);
        else if (a == "--api-key") o.api_key = take_value(argc, argv, i);
        else if (a == "--chat-template") o.chat_template.name = take_value(argc, argv, i);
        else if (a == "--chat-template-file") o.chat_template.file = take_value(argc, argv, i);
        else if (a == "--max-tokens") o.max_tokens = parse_int_arg(a, take_value(argc, argv, i), 1, INT32_MAX);
        else if (a == "--timeout") o.timeout_s = parse_int_arg(a, take_value(argc, argv, i), 1, 86400);
        else if (a == "--prefill-chunk") o.prefill_chunk = parse_int_arg(a, take_value(argc, argv, i), 1, 1 << 20);
        else if (a == "--shutdown-grace") o.grace_s = parse_int_arg(a, take_value(argc, argv, i), 0, 3600);
        else if (a == "--candidates") o.candidates = parse_candidates(a, take_value(argc, argv, i));
        else if (a == "--no-prefix-cache") o.prefix_cache = false;
        else throw UsageError("serve: unknown option '" + a + "' (see rocmforge serve --help)");
    }
    return o;
}

} // namespace
} // namespace rf::serve

int cmd_serve(int argc, char **argv) {
    using namespace rf;
    using namespace rf::serve;
    Options o = parse(argc, argv);
    // Signals are taken by sigwait in this thread only: block them before any thread starts.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    signal(SIGPIPE, SIG_IGN); // a client gone mid-write is an error code, not a death

    Session lm = load_model(o.model);
    std::string template_notes;
    // Before the context: a template that does not parse stops the server here, with its reason.
    ChatTemplate chat_template = pick_chat_template(o.chat_template, lm.model->file(), *lm.tokenizer, template_notes);
    if (!template_notes.empty()) std::fprintf(stderr, "%s\n", template_notes.c_str());
    const ModelHparams &hp = lm.model->hparams();
    const int64_t per_request = std::min<int64_t>(hp.n_ctx_train > 0 ? hp.n_ctx_train : 4096, 4096);
    if (!o.model.ctx_given) o.model.n_ctx = per_request * o.parallel;
    ContextParams params = o.model.context_params(o.parallel);
    params.prefix_cache = o.prefix_cache && !hp.encoder; // an encoder serves embeddings only
    if (params.prefix_cache && hp.hybrid()) { // cached pages cannot restore a DeltaNet layer's state
        std::fprintf(stderr, "prefix cache off: %s keeps recurrent state that cached pages do not hold\n", hp.arch_name.c_str());
        params.prefix_cache = false;
    }
    const std::unique_ptr<InferenceContext> ctx = lm.new_context(params);
    std::fprintf(stderr, "%s; prefix cache %s\n", ctx->cache().summary().c_str(), params.prefix_cache ? "on" : "off");
    if (o.draft.enabled() && hp.encoder) throw UsageError("serve: speculative decoding needs a causal model, not an encoder");
    // A draft model of another vocabulary stops the server here (UsageError, exit code 2).
    LoadedDraft draft = load_draft(o.draft, lm, params);
    if (o.draft.enabled()) std::fprintf(stderr, "%s\n", draft_summary(o.draft).c_str());

    RouterConfig rc;
    rc.model_id = std::filesystem::path(lm.path).stem().string();
    rc.api_key = o.api_key;
    rc.chat_template = chat_template;
    // The format of the model's tool calls, from the markers of the template it is prompted with
    // (a built-in format shows no tools: generic).
    const std::string template_source = !o.chat_template.name.empty()  ? ""
                                        : !o.chat_template.file.empty() ? read_text_file(o.chat_template.file, "--chat-template-file")
                                                                        : lm.model->file().get_string("tokenizer.chat_template");
    rc.tool_call_format = detect_tool_call_format(template_source);
    // The built-in harmony format (gpt-oss) has no source to show its markers; its output is harmony.
    if (!rc.chat_template.is_jinja() && rc.chat_template.format() == ChatFormat::Harmony)
        rc.tool_call_format = ToolCallFormat::Harmony;
    rc.n_ctx_request = std::min(per_request, o.model.n_ctx);
    rc.default_max_tokens = o.max_tokens;
    rc.request_timeout = std::chrono::seconds(o.timeout_s);
    // /props shows the template text when it is the file's own, else what was picked.
    rc.props = {lm.path, lm.model->file().get_string("tokenizer.chat_template"), rc.n_ctx_request, o.parallel, o.max_tokens};
    if (!rc.chat_template.is_jinja() || !o.chat_template.name.empty() || !o.chat_template.file.empty())
        rc.props.chat_template = rc.chat_template.describe();
    std::fprintf(stderr, "chat template: %s; a request holds at most %lld tokens\n", rc.chat_template.describe().c_str(),
                 (long long)rc.n_ctx_request);
    std::fprintf(stderr, "tool calls: parsed in the %s format\n", tool_call_format_name(rc.tool_call_format));

    Metrics metrics;
    Scheduler scheduler(*ctx, *lm.tokenizer, metrics, {o.queue, o.prefill_chunk, o.candidates, speculative_params(o.draft, draft)});
    // Embeddings: up to 16 inputs per job, packed into graphs of -b tokens, on a context of
    // one request's size or one batch's, whichever is larger (docs/SERVING.md).
    ContextParams embed_params = o.model.context_params(16);
    embed_params.n_ctx = std::max(rc.n_ctx_request, embed_params.n_batch);
    EmbeddingService embeddings(*lm.model, *lm.runtime, *lm.tokenizer, scheduler, embed_params, rc.n_ctx_request);
    rc.embeddings = &embeddings;
    if (hp.encoder) rc.embedding_only_arch = hp.arch_name;
    ApiRouter router(rc, *lm.tokenizer, scheduler, metrics);
    HttpServer server(o.host, o.port, HttpLimits{}, [&](const HttpRequest &req, Exchange &ex) { router(req, ex); });
    std::fprintf(stderr, "listening on http://%s:%u (%d parallel, queue %zu%s)\n", o.host.c_str(), server.port(), o.parallel,
                 o.queue, o.api_key.empty() ? "" : ", API key required");
    std::thread acceptor([&] { server.accept_loop(); });

    int sig = 0;
    sigwait(&signals, &sig);
    std::fprintf(stderr, "%s: no new connections; running requests get %lld s to finish\n", sig == SIGINT ? "SIGINT" : "SIGTERM",
                 (long long)o.grace_s);
    server.stop_accepting();
    acceptor.join();
    scheduler.shutdown(std::chrono::seconds(o.grace_s));
    scheduler.join();
    // Every request has its final event; the connections only have to write it.
    if (!server.wait_connections(std::chrono::seconds(5))) {
        std::fprintf(stderr, "shutdown: some connections did not close in time\n");
        std::fflush(stderr);
        std::quick_exit(0); // their threads still use the server: do not run its destructor
    }
    std::fprintf(stderr, "shutdown complete\n");
    return 0;
}
