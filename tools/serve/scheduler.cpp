#include "scheduler.h"
#include "scheduler_active.h"

#include <algorithm>

#include "rocmforge/parallel_for.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/runtime.h"
#include "stop_matcher.h"

namespace rf::serve {

void RequestChannel::push(StreamEvent e) {
    {
        std::lock_guard lock(mutex_);
        events_.push_back(std::move(e));
    }
    cv_.notify_one();
}

std::optional<StreamEvent> RequestChannel::pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
    StreamEvent e = std::move(events_.front());
    events_.pop_front();
    return e;
}

Scheduler::Scheduler(InferenceContext &ctx, const Tokenizer &tokenizer, Metrics &metrics, const SchedulerOptions &options)
    : ctx_(ctx), tok_(tokenizer), metrics_(metrics), options_(options) {
    if (options_.speculative.drafter == SpeculativeParams::Drafter::model)
        drafter_.emplace(*options_.speculative.draft_context, SamplerParams{});
    metrics_.kv_pages_total = ctx_.cache().pages().n_pages();
    free_slots_ = ctx_.params().n_seq_max;
    thread_ = std::thread([this] { run(); });
}

Scheduler::~Scheduler() {
    shutdown(std::chrono::milliseconds(0));
    join();
}

std::shared_ptr<RequestChannel> Scheduler::submit(std::vector<GenerationRequest> sequences) {
    auto channel = std::make_shared<RequestChannel>();
    {
        std::lock_guard lock(mutex_);
        if (stopping_ || waiting_.size() + sequences.size() > options_.max_queue + (size_t)free_slots_) return nullptr;
        const auto now = Clock::now();
        for (GenerationRequest &r : sequences) waiting_.push_back({std::move(r), channel, now});
        metrics_.queue_depth = (int64_t)waiting_.size();
    }
    cv_.notify_one();
    return channel;
}

void Scheduler::shutdown(std::chrono::milliseconds grace) {
    {
        std::lock_guard lock(mutex_);
        if (!stopping_) grace_end_ = Clock::now() + grace;
        stopping_ = true;
    }
    cv_.notify_one();
}

void Scheduler::run_exclusive(std::function<void()> job) {
    std::packaged_task<void()> task(std::move(job));
    std::future<void> done = task.get_future();
    {
        std::lock_guard lock(mutex_);
        if (exited_) throw ApiError{503, "the server is shutting down", "server_error", ""};
        jobs_.push_back(std::move(task));
    }
    cv_.notify_all();
    done.get();
}

void Scheduler::join() {
    if (thread_.joinable()) thread_.join();
}

bool Scheduler::fits_in_pool(const std::vector<Active> &running, const GenerationRequest &r) const {
    const KvPageTable &pages = ctx_.cache().pages();
    int64_t committed_pages = 0, committed_tokens = pages.stats().tokens;
    for (const Active &a : running) {
        committed_pages += pages.pages_needed(a.seq, a.tokens_left());
        committed_tokens += a.tokens_left();
    }
    const int64_t need = (int64_t)r.prompt.size() + r.max_tokens;
    const int64_t need_pages = (need + pages.page_size() - 1) / pages.page_size();
    return pages.free_pages() - committed_pages >= need_pages && committed_tokens + need <= ctx_.params().n_ctx;
}

void Scheduler::run() {
    std::vector<Active> running;
    std::vector<int> free_seqs;
    for (int s = ctx_.params().n_seq_max - 1; s >= 0; --s) free_seqs.push_back(s);
    for (;;) {
        if (running.empty()) ctx_.runtime().phase("idle");
        {
            std::unique_lock lock(mutex_);
            cv_.wait(lock, [&] { return stopping_ || !waiting_.empty() || !running.empty() || !jobs_.empty(); });
            // The jobs run here, outside the lock: new ones queued meanwhile wait for the next turn.
            std::deque<std::packaged_task<void()>> jobs;
            jobs.swap(jobs_);
            lock.unlock();
            for (auto &job : jobs) job();
            lock.lock();
            const auto now = Clock::now();
            // Waiting requests whose client left or whose time ran out leave the queue now.
            for (auto it = waiting_.begin(); it != waiting_.end();) {
                if (stopping_ || it->channel->cancelled() || now > it->request.deadline) {
                    if (it->channel->cancelled()) ++metrics_.cancelled;
                    StreamEvent e{StreamEvent::Kind::Error, it->request.choice};
                    e.error = stopping_ ? ApiError{503, "the server is shutting down", "server_error", ""}
                                        : ApiError{504, "the request timed out while waiting in the queue", "timeout_error", ""};
                    it->channel->push(std::move(e));
                    it = waiting_.erase(it);
                } else
                    ++it;
            }
            if (stopping_ && now >= grace_end_)
                for (Active &a : running) fail(a, {503, "the server is shutting down", "server_error", ""});
            // FIFO admission: the head waits for room rather than being overtaken.
            while (!waiting_.empty() && !free_seqs.empty() && fits_in_pool(running, waiting_.front().request)) {
                Waiting w = std::move(waiting_.front());
                waiting_.pop_front();
                Active a;
                a.request = std::move(w.request);
                a.channel = std::move(w.channel);
                a.submitted = w.submitted;
                a.seq = free_seqs.back();
                free_seqs.pop_back();
                a.sampler = std::make_unique<Sampler>(a.request.sampling);
                for (int32_t t : a.request.prompt) a.sampler->accept(t);
                a.decoder = std::make_unique<StreamDecoder>(tok_);
                a.stop = std::make_unique<StopMatcher>(a.request.stop);
                if (a.request.grammar) try {
                        a.matcher = std::make_unique<grammar::GrammarMatcher>(a.request.grammar);
                    } catch (const std::exception &e) { // the route checked the start: not expected
                        fail(a, {500, std::string("structured output: ") + e.what(), "server_error", ""});
                    }
                if (speculates(a.request)) start_speculation(a);
                metrics_.prompt_tokens += (int64_t)a.request.prompt.size();
                running.push_back(std::move(a));
            }
            metrics_.queue_depth = (int64_t)waiting_.size();
            free_slots_ = (int)free_seqs.size();
            if (stopping_ && running.empty() && waiting_.empty() && jobs_.empty()) {
                exited_ = true;
                break;
            }
        }
        step(running, free_seqs);
    }
    metrics_.running = 0;
}

// One step, pipelined with the device: the batch submitted by the step before is collected, its
// tokens drawn, the next batch built from them and submitted, and only then do the drawn tokens
// go out (stop strings, streaming, logprobs) while the device runs the next batch. A sequence
// that a stop string ends there has one row in that batch for nothing; one that ends by its
// end-of-generation token or max_tokens is known before and gets none.
void Scheduler::step(std::vector<Active> &running, std::vector<int> &free_seqs) {
    const std::vector<float> *logits = land(running);
    retire(running, free_seqs);
    expire(running);

    // Draws of the collected batch, several sequences at a time (each has its own sampler); the
    // prompt logprobs it completes (they read this batch's rows before the next is built).
    const int64_t n_vocab = ctx_.model().hparams().n_vocab;
    std::vector<int32_t> drawn(running.size(), -1);
    std::vector<int> rows(running.size(), -1);                    // output row of each draw
    std::vector<const float *> row_logits(running.size(), nullptr); // for logprobs (whole rows only)
    if (logits) {
        const bool whole_rows = !logits->empty();
        for (size_t k = 0; k < running.size(); ++k) {
            const Active &a = running[k];
            if (a.done || a.row < 0) continue;
            rows[k] = flight_.out_row[(size_t)a.row];
            if (whole_rows) row_logits[k] = logits->data() + (size_t)rows[k] * (size_t)n_vocab;
        }
        const size_t draws = running.size() - (size_t)std::count(rows.begin(), rows.end(), -1);
        rf::parallel_for(running.size(), whole_rows ? rf::draw_threads(draws) : 1, [&](size_t k) {
            if (rows[k] < 0 || running[k].spec) return; // verify() draws those
            if (running[k].matcher) drawn[k] = constrained_draw(running[k], *logits, (size_t)rows[k]);
            else drawn[k] = running[k].sampler->sample_row(*logits, ctx_.candidates(), (size_t)rows[k], n_vocab);
        });
        for (size_t k = 0; k < running.size(); ++k)
            if (!running[k].grammar_error.empty()) {
                fail(running[k], {500, running[k].grammar_error, "server_error", ""});
                drawn[k] = -1;
            }
        for (Active &a : running)
            if (!a.done) prompt_logprobs(a, logits->data(), flight_.out_row);
    }
    // Speculating sequences: their drafts verified and their tokens out before the next batch,
    // which needs how many were accepted (no overlap with the device for them).
    for (size_t k = 0; k < running.size(); ++k) {
        Active &a = running[k];
        if (!a.spec || rows[k] < 0 || a.done) continue;
        verify(a, *logits);
        if (!a.done) drawn[k] = a.next;
    }

    // Decided before on_token() counts the drawn tokens (goes_on reads the count before them).
    std::vector<char> feeds(running.size(), 0);
    for (size_t k = 0; k < running.size(); ++k)
        feeds[k] = drawn[k] >= 0 && (running[k].spec ? !running[k].done : goes_on(running[k], drawn[k]));
    launch(running, drawn, feeds);
    // While the device runs the batch just launched.
    for (size_t k = 0; k < running.size(); ++k)
        if (drawn[k] >= 0 && !running[k].done && !running[k].spec) on_token(running[k], drawn[k], row_logits[k]);
    {
        std::lock_guard lock(mutex_);
        free_slots_ = (int)free_seqs.size();
    }
    metrics_.running = (int64_t)running.size();
    const KvPoolStats pool = ctx_.cache().pages().stats();
    metrics_.kv_pages_used = pool.pages_used;
    metrics_.kv_pages_cached = pool.pages_cached;
    const PrefixCacheStats &prefix = ctx_.cache().pages().prefix_stats();
    metrics_.prefix_lookups = prefix.lookups;
    metrics_.prefix_hits = prefix.hits;
    metrics_.prefix_cached_tokens = prefix.cached_tokens;
}

// A draw under the sequence's grammar: the tokens it refuses masked, the drawn one moved past
// at once (so goes_on() knows when the grammar is complete). Per-sequence state only: runs on
// the draw threads. -1 with grammar_error set when the grammar cannot go on.
int32_t Scheduler::constrained_draw(Active &a, const std::vector<float> &logits, size_t row) {
    try {
        const grammar::TokenMask &mask = a.matcher->allowed();
        if (std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; })) {
            a.grammar_error = "structured output: no token of the vocabulary can continue the grammar here";
            return -1;
        }
        a.sampler->set_allowed(mask.data());
        const int32_t t = a.sampler->sample_row(logits, ctx_.candidates(), row, ctx_.model().hparams().n_vocab);
        a.sampler->set_allowed(nullptr);
        if (!a.matcher->accept(t)) a.grammar_error = "structured output: the sampler drew a token the grammar refuses";
        return a.grammar_error.empty() ? t : -1;
    } catch (const std::exception &e) {
        a.sampler->set_allowed(nullptr);
        a.grammar_error = std::string("structured output: ") + e.what();
        return -1;
    }
}

// The batch in flight, if any: waits for its logits (valid until the next collect()) and counts
// the step. Null when none was in flight or it failed (then its requests end with the error).
const std::vector<float> *Scheduler::land(std::vector<Active> &running) {
    if (!flight_.on) return nullptr;
    flight_.on = false;
    const std::vector<float> *logits = nullptr;
    try {
        logits = &ctx_.collect();
    } catch (const std::exception &e) {
        fail_running(running, e);
    }
    Metrics::StepCounts &c = flight_.prompt_tokens > 0 ? metrics_.mixed_steps : metrics_.decode_steps;
    ++c.steps;
    c.seconds += std::chrono::duration<double>(Clock::now() - flight_.t0).count();
    c.decode_rows += flight_.decode_rows;
    c.prompt_tokens += flight_.prompt_tokens;
    ctx_.runtime().phase("draw+stream");
    return logits;
}

// Sequences that ended (called with nothing in flight): their pages return to the pool now.
void Scheduler::retire(std::vector<Active> &running, std::vector<int> &free_seqs) {
    for (size_t k = running.size(); k-- > 0;) {
        if (!running[k].done) continue;
        ctx_.clear_sequence(running[k].seq);
        if (drafter_) drafter_->clear(running[k].seq);
        free_seqs.push_back(running[k].seq);
        running.erase(running.begin() + (long)k);
    }
}

// Requests whose client left or whose time ran out end here.
void Scheduler::expire(std::vector<Active> &running) {
    const auto now = Clock::now();
    for (Active &a : running) {
        if (a.done) continue;
        if (a.channel->cancelled()) {
            a.done = true; // nobody to tell
            ++metrics_.cancelled;
        } else if (now > a.request.deadline)
            fail(a, {504, "the request timed out", "timeout_error", ""});
    }
}

// Builds and submits the next batch: the drawn token of every sequence that feeds it (feeds[k]),
// then prompt chunks within the step's budget. Sets each sequence's row in it (-1: none).
void Scheduler::launch(std::vector<Active> &running, const std::vector<int32_t> &drawn, const std::vector<char> &feeds) {
    draft(running, feeds);
    Batch batch;
    for (size_t k = 0; k < running.size(); ++k) {
        Active &a = running[k];
        a.row = -1;
        if (!feeds[k] || a.done) continue;
        a.row = (int)batch.size();
        batch.add(drawn[k], a.seq, true);
        if (a.spec) // its drafts' rows follow its token's
            for (int32_t d : a.spec->draft) batch.add(d, a.seq, true);
    }
    const int64_t decode_rows = (int64_t)batch.size();
    const std::vector<char> wait = wait_for_shared_prefill(running);
    int64_t budget = options_.prefill_chunk;
    for (size_t k = 0; k < running.size(); ++k) {
        Active &a = running[k];
        if (a.done || a.prefilled == a.request.prompt.size() || budget == 0 || wait[k]) continue;
        if (a.prefilled == 0 && !a.request.prompt_logprobs) // echo with logprobs scores every prompt token
            a.prefilled = (size_t)ctx_.map_cached_prefix(a.seq, a.request.prompt);
        const size_t n = (size_t)std::min<int64_t>(budget, (int64_t)(a.request.prompt.size() - a.prefilled));
        a.prompt_rows.clear();
        for (size_t i = 0; i < n; ++i) {
            const size_t pos = a.prefilled + i;
            const bool last = pos + 1 == a.request.prompt.size();
            if (last) a.row = (int)batch.size();
            else if (a.request.prompt_logprobs) a.prompt_rows.emplace_back((int)batch.size(), pos);
            batch.add(a.request.prompt[pos], a.seq, last || a.request.prompt_logprobs);
        }
        a.prefilled += n;
        budget -= (int64_t)n;
    }
    if (batch.size() == 0) return;
    choose_output(running);
    // Profiler phases (serve --profile): what decode-only steps, steps with prompt chunks and the
    // host's work between them (draws, the next batch) each cost.
    ctx_.runtime().phase((int64_t)batch.size() > decode_rows ? "mixed step" : "decode step");
    flight_.t0 = Clock::now();
    flight_.decode_rows = decode_rows;
    flight_.prompt_tokens = (int64_t)batch.size() - decode_rows;
    // Rows come back in batch order of the tokens marked for output.
    flight_.out_row.assign(batch.size(), -1);
    for (size_t i = 0, r = 0; i < batch.size(); ++i)
        if (batch.output[i]) flight_.out_row[i] = (int)r++;
    try {
        ctx_.submit(batch);
        flight_.on = true;
    } catch (const std::exception &e) {
        fail_running(running, e);
    }
}

// Prefix caching: which requests that have not started their prefill wait, because one before
// them in the batch order is still prefilling a prompt with the same first page (the choices of
// n > 1, clients sharing a system prompt). Its pages are cached once it is done, and the waiting
// one then maps them instead of computing them too. Decided from the state before this step's
// chunks: a prefill that ends in this step is cached when the step is collected.
std::vector<char> Scheduler::wait_for_shared_prefill(const std::vector<Active> &running) const {
    std::vector<char> wait(running.size(), 0);
    if (!ctx_.cache().pages().prefix_cache()) return wait;
    const size_t page = (size_t)ctx_.cache().pages().page_size();
    auto first_page = [&](const Active &a) { return a.request.prompt.size() > page ? a.request.prompt.data() : nullptr; };
    for (size_t k = 0; k < running.size(); ++k) {
        const Active &a = running[k];
        if (a.done || a.prefilled != 0 || a.request.prompt_logprobs || !first_page(a)) continue;
        for (size_t j = 0; j < k && !wait[k]; ++j) {
            const Active &b = running[j];
            wait[k] = !b.done && !wait[j] && b.prefilled < b.request.prompt.size() && first_page(b) &&
                      std::equal(first_page(a), first_page(a) + page, first_page(b));
        }
    }
    return wait;
}

// Candidates instead of whole logits rows for the next batch when every live sequence's sampler
// needs no more (greedy, or top-k) and none wants logprobs, which need the whole row; k is the
// largest any of them needs. (A change of k builds the decode graph again: once per change of
// the running mix, not per step.)
void Scheduler::choose_output(const std::vector<Active> &running) {
    using C = SchedulerOptions::Candidates;
    if (options_.candidates == C::off) return;
    const int64_t n_vocab = ctx_.model().hparams().n_vocab;
    int64_t k = 0;
    for (const Active &a : running) {
        if (a.done) continue;
        const int64_t need = candidates_needed(a.request.sampling, n_vocab);
        // Speculative sampling (not greedy) needs p over every token: whole rows.
        const bool spec_sampling = a.spec && a.request.sampling.temperature > 0;
        if (need == 0 || a.request.top_logprobs >= 0 || a.request.prompt_logprobs || a.matcher || spec_sampling) {
            k = 0;
            break;
        }
        k = std::max(k, need);
    }
    if (options_.candidates == C::automatic && !ctx_.candidates_pay_off(k)) k = 0;
    if (k != ctx_.output_top_k()) ctx_.set_output_top_k(k);
}

// Admission keeps the pool from filling, so a failed submit() or collect() is a backend failure:
// the requests of the batch end with it, the server goes on.
void Scheduler::fail_running(std::vector<Active> &running, const std::exception &e) {
    for (Active &a : running)
        if (!a.done) fail(a, {500, std::string("inference failed: ") + e.what(), "server_error", ""});
}

// Whether a sequence feeds its drawn token to the next batch: not when on_token() will end it
// for the token itself (end of generation) or for max_tokens. (A stop string is only known
// there, after the next batch is submitted.)
bool Scheduler::goes_on(const Active &a, int32_t token) const {
    if (a.matcher && a.matcher->finished()) return false; // nothing but the end can follow
    return a.request.max_tokens > 0 && !tok_.is_eog(token) && a.generated + 1 < a.request.max_tokens;
}

// Echo with logprobs: each prompt token's entry from the row before it (the first has none),
// sent as one event when the last prompt token is in, before the first generated token.
void Scheduler::prompt_logprobs(Active &a, const float *logits, const std::vector<int> &out_row) {
    if (!a.request.prompt_logprobs || a.prompt_lp_sent) return;
    const std::vector<int32_t> &prompt = a.request.prompt;
    if (a.prompt_lp.empty()) {
        TokenLogprob first;
        first.token = tok_.token_to_piece(prompt[0], /*special=*/true);
        first.no_logprob = true;
        a.prompt_lp.push_back(std::move(first));
    }
    const int64_t n_vocab = ctx_.model().hparams().n_vocab;
    for (const auto &[row, pos] : a.prompt_rows)
        a.prompt_lp.push_back(token_logprob(logits + (size_t)out_row[(size_t)row] * (size_t)n_vocab, n_vocab, prompt[pos + 1],
                                            a.request.top_logprobs, tok_));
    a.prompt_rows.clear();
    if (a.prompt_lp.size() == prompt.size()) { // this step fed the last prompt token
        StreamEvent e{StreamEvent::Kind::Text, a.request.choice};
        e.logprobs = std::move(a.prompt_lp);
        e.prompt = true;
        a.channel->push(std::move(e));
        a.prompt_lp.clear();
        a.prompt_lp_sent = true;
    }
}

void Scheduler::on_token(Active &a, int32_t token, const float *logits) {
    if (a.request.max_tokens == 0) return finish(a, "length"); // echo only: the prompt is scored, nothing drawn
    const auto now = Clock::now();
    if (a.last_token == Clock::time_point{})
        metrics_.ttft.observe(std::chrono::duration<double>(now - a.submitted).count());
    else
        metrics_.inter_token.observe(std::chrono::duration<double>(now - a.last_token).count());
    a.last_token = now;
    a.sampler->accept(token);
    if (tok_.is_eog(token)) return finish(a, "stop");
    ++a.generated;
    ++metrics_.completion_tokens;
    if (a.request.top_logprobs >= 0) {
        TokenLogprob lp = token_logprob(logits, ctx_.model().hparams().n_vocab, token, a.request.top_logprobs, tok_);
        lp.text_offset = a.piece_chars;
        a.pending.emplace_back(a.piece_bytes, std::move(lp));
        const std::string piece = tok_.decode_token(token); // what the decoder adds to the text
        a.piece_bytes += (int64_t)piece.size();
        a.piece_chars += utf8_chars(piece);
    }
    emit(a, a.stop->push(a.decoder->push(token)), false);
    if (a.stop->stopped()) return finish(a, "stop");
    if (a.matcher && a.matcher->finished()) return finish(a, "stop"); // the grammar is complete
    if (a.generated >= a.request.max_tokens) return finish(a, "length");
    a.next = token;
}

// Sends released text with the logprobs of the tokens it begins (all still held when the text
// ends without a stop string).
void Scheduler::emit(Active &a, const std::string &text, bool all_logprobs) {
    a.emitted_bytes += (int64_t)text.size();
    StreamEvent e{StreamEvent::Kind::Text, a.request.choice, text};
    while (!a.pending.empty() && (all_logprobs || a.pending.front().first < a.emitted_bytes)) {
        e.logprobs.push_back(std::move(a.pending.front().second));
        a.pending.pop_front();
    }
    if (!e.text.empty() || !e.logprobs.empty()) a.channel->push(std::move(e));
}

void Scheduler::finish(Active &a, const std::string &reason) {
    emit(a, a.stop->push(a.decoder->flush()), false);
    const std::string why = a.stop->stopped() ? "stop" : reason;
    emit(a, a.stop->flush(), !a.stop->stopped());
    StreamEvent e{StreamEvent::Kind::Done, a.request.choice};
    e.finish_reason = why;
    e.prompt_tokens = (int64_t)a.request.prompt.size();
    e.completion_tokens = a.generated;
    if (a.spec) {
        e.speculative = true;
        e.draft_n = a.spec->drafted;
        e.draft_n_accepted = a.spec->accepted;
    }
    a.channel->push(std::move(e));
    a.done = true;
}

void Scheduler::fail(Active &a, const ApiError &error) {
    if (a.done) return;
    StreamEvent e{StreamEvent::Kind::Error, a.request.choice};
    e.error = error;
    a.channel->push(std::move(e));
    a.done = true;
}

} // namespace rf::serve
