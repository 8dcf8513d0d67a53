// Continuous batching: one thread owns the InferenceContext. Each step runs one batch holding
// the next token of every decoding request plus a bounded chunk of prompt tokens of the
// requests still in prefill, so new prompts never stall running streams for long. Requests
// join at the next step once a sequence slot is free and the KV pool can hold their whole
// prompt + max_tokens beside what the running ones may still need (bench-memory's admission
// rule: nothing admitted is ever cut short or evicted); others wait in a bounded FIFO queue.
// With the context's prefix caching on, a request's first prompt chunk starts after the cached
// pages its prompt begins with (looked up then, so a request admitted beside another with the
// same prompt, as the choices of n > 1, finds the pages the other has filled by that step).
// Admission still counts the whole prompt: cached pages nobody holds count as free, so a hit
// only ever needs fewer pages than admission reserved.
// Speculative decoding (serve --draft-model / --draft-ngram): a speculating sequence's row in a
// step is its token followed by its drafts, all sequences verified in the step's one batch.
#pragma once
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api_error.h"
#include "metrics.h"
#include "rocmforge/grammar.h"
#include "rocmforge/inference.h"
#include "rocmforge/sampler.h"
#include "rocmforge/speculative.h"
#include "rocmforge/tokenizer.h"
#include "token_logprobs.h"

namespace rf::serve {

using Clock = std::chrono::steady_clock;

struct StreamEvent {
    enum class Kind { Text, Done, Error } kind = Kind::Text;
    int choice = 0;            // GenerationRequest::choice of the sequence it comes from
    std::string text;          // Text
    std::vector<TokenLogprob> logprobs; // Text: the tokens that text begins (when asked for)
    bool prompt = false;       // Text: logprobs of the prompt's tokens (echo), text ""
    std::string finish_reason; // Done: "stop" or "length"
    int64_t prompt_tokens = 0, completion_tokens = 0;
    // Done: whether the sequence decoded speculatively, its drafted and accepted tokens.
    bool speculative = false;
    int64_t draft_n = 0, draft_n_accepted = 0;
    ApiError error; // Error: the request ended without a result
};

// Events of one request (all its choices), from the scheduler thread to the connection thread
// that waits on them; cancel() goes the other way (client gone, or one choice failed) and ends
// every sequence of the request.
class RequestChannel {
public:
    void push(StreamEvent e);
    // The next event, or nullopt after `timeout`.
    std::optional<StreamEvent> pop(std::chrono::milliseconds timeout);
    void cancel() { cancelled_ = true; }
    bool cancelled() const { return cancelled_; }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<StreamEvent> events_;
    std::atomic<bool> cancelled_{false};
};

struct GenerationRequest {
    int choice = 0; // its index among the request's choices, echoed in its events
    std::vector<int32_t> prompt;
    SamplerParams sampling;
    int64_t max_tokens = 16;
    std::vector<std::string> stop;
    int top_logprobs = -1; // >= 0: each generated token's logprob with this many alternatives
    bool prompt_logprobs = false; // and each prompt token's (echo), sent once prefill is done
    // The grammar the output follows (structured output), nullptr: none. The sequence samples
    // from whole rows then, with the tokens the grammar refuses masked.
    std::shared_ptr<const grammar::TokenGrammar> grammar;
    Clock::time_point deadline;
};

struct SchedulerOptions {
    size_t max_queue = 64;       // waiting requests beyond the running ones; more get 429
    int64_t prefill_chunk = 256; // most prompt tokens per step, all prefilling requests together
    // Greedy and top-k requests without penalties or logprobs: their candidates chosen where the
    // logits are and only they read back (InferenceContext::set_output_top_k). automatic: where
    // that pays (a GPU); off: never (whole rows); always: on any backend (serve --candidates).
    enum class Candidates { off, automatic, always } candidates = Candidates::automatic;
    // Speculative decoding for the requests that allow it (Scheduler::speculates): drafts per
    // sequence, all verified in the step's one batch (scheduler_speculative.cpp).
    SpeculativeParams speculative;
};

class Scheduler {
public:
    Scheduler(InferenceContext &ctx, const Tokenizer &tokenizer, Metrics &metrics, const SchedulerOptions &options);
    ~Scheduler();

    // Queues the sequences of one request, all or none, sharing one channel (each one's prompt +
    // max_tokens must fit the KV cache: the caller checks it against n_ctx()). nullptr when the
    // wait queue cannot take them all.
    std::shared_ptr<RequestChannel> submit(std::vector<GenerationRequest> sequences);
    // The most sequences one submit() can ever queue (slots + queue).
    size_t capacity() const { return options_.max_queue + (size_t)ctx_.params().n_seq_max; }
    // Stops: waiting requests end with a 503 error at once; running ones may finish until
    // `grace` has passed, then end with a 503 error. The thread exits when none is left.
    void shutdown(std::chrono::milliseconds grace);
    void join();
    int64_t n_ctx() const { return ctx_.params().n_ctx; }
    // Runs job on the scheduler thread between two steps, where nothing else drives the model's
    // backends (work outside the batching loop: the embeddings, on a context of their own), and
    // waits for it; the job's exception is rethrown here. ApiError 503 once the thread has ended.
    void run_exclusive(std::function<void()> job);

private:
    struct Active;
    void run();
    void step(std::vector<Active> &running, std::vector<int> &free_seqs);
    const std::vector<float> *land(std::vector<Active> &running);
    void retire(std::vector<Active> &running, std::vector<int> &free_seqs);
    void expire(std::vector<Active> &running);
    void launch(std::vector<Active> &running, const std::vector<int32_t> &drawn, const std::vector<char> &feeds);
    void choose_output(const std::vector<Active> &running);
    std::vector<char> wait_for_shared_prefill(const std::vector<Active> &running) const;
    bool goes_on(const Active &a, int32_t token) const;
    int32_t constrained_draw(Active &a, const std::vector<float> &logits, size_t row);
    void fail_running(std::vector<Active> &running, const std::exception &e);
    bool fits_in_pool(const std::vector<Active> &running, const GenerationRequest &r) const;
    void prompt_logprobs(Active &a, const float *logits, const std::vector<int> &out_row);
    void on_token(Active &a, int32_t token, const float *logits);
    void emit(Active &a, const std::string &text, bool all_logprobs);
    void finish(Active &a, const std::string &reason);
    void fail(Active &a, const ApiError &error);
    // Speculative decoding (scheduler_speculative.cpp).
    bool speculates(const GenerationRequest &r) const;
    void start_speculation(Active &a);
    void verify(Active &a, const std::vector<float> &logits);
    void draft(std::vector<Active> &running, const std::vector<char> &feeds);

    InferenceContext &ctx_;
    const Tokenizer &tok_;
    Metrics &metrics_;
    SchedulerOptions options_;
    struct Waiting {
        GenerationRequest request;
        std::shared_ptr<RequestChannel> channel;
        Clock::time_point submitted;
    };
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<Waiting> waiting_;
    bool stopping_ = false;
    bool exited_ = false; // run() has returned: run_exclusive() jobs would wait forever
    std::deque<std::packaged_task<void()>> jobs_; // run_exclusive()
    int free_slots_ = 0; // sequence slots not running a request (the queue limit comes on top)
    Clock::time_point grace_end_;
    // The batch submitted to the device and not collected yet (scheduler thread only).
    struct Flight {
        bool on = false;
        Clock::time_point t0;
        int64_t decode_rows = 0, prompt_tokens = 0;
        std::vector<int> out_row; // batch row -> logits row (-1: no output)
    } flight_;
    std::optional<ModelDrafter> drafter_; // --draft-model: on its own context, sequence ids as ours
    std::thread thread_;
};

} // namespace rf::serve
