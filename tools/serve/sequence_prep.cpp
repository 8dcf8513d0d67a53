#include "sequence_prep.h"

#include <algorithm>

#include "api_error.h"
#include "rocmforge/error.h"
#include "token_logprobs.h"

namespace rf::serve {
namespace {

struct Prompt {
    std::vector<int32_t> tokens;
    std::string text;  // for echo
    std::string field; // names it in errors
};

std::vector<Prompt> tokenize(const CompletionRequest &r, const SequenceLimits &limits, const Tokenizer &tok) {
    std::vector<Prompt> out;
    if (r.chat) {
        std::string text;
        std::vector<int32_t> tokens = chat_prompt_tokens(r, limits.chat_template, tok, text);
        out.push_back({std::move(tokens), text, "messages"});
    }
    for (size_t i = 0; i < r.prompts.size() && !r.chat; ++i) {
        const PromptInput &p = r.prompts[i];
        Prompt q;
        q.field = r.prompts.size() == 1 ? "prompt" : "prompt[" + std::to_string(i) + "]";
        if (p.is_tokens) {
            for (size_t k = 0; k < p.tokens.size(); ++k) {
                if (p.tokens[k] >= tok.n_vocab())
                    throw bad_request("'" + q.field + "' holds token id " + std::to_string(p.tokens[k]) +
                                          " but the model's vocabulary has " + std::to_string(tok.n_vocab()) + " tokens",
                                      q.field);
                q.tokens.push_back((int32_t)p.tokens[k]);
            }
            if (r.echo) q.text = tok.decode(q.tokens);
        } else {
            q.tokens = tok.encode(p.text, /*add_special=*/true, /*parse_special=*/true);
            q.text = p.text;
        }
        out.push_back(std::move(q));
    }
    return out;
}

} // namespace

std::vector<int32_t> chat_prompt_tokens(const CompletionRequest &r, const ChatTemplate &tmpl, const Tokenizer &tok, std::string &text) {
    try {
        text = tmpl.apply({r.messages, r.tools_json, /*add_generation_prompt=*/true, r.template_kwargs_json});
    } catch (const UsageError &e) {
        throw bad_request(e.what(), "messages");
    }
    const int32_t bos = tok.bos();
    const std::string bos_text = bos == Tokenizer::kNoToken ? "" : tok.token_text(bos);
    if (tok.add_bos_default() && !bos_text.empty() && text.compare(0, bos_text.size(), bos_text) == 0) {
        std::vector<int32_t> ids = tok.encode(std::string_view(text).substr(bos_text.size()), /*add_special=*/true, /*parse_special=*/true);
        return ids;
    }
    return tok.encode(text, /*add_special=*/true, /*parse_special=*/true);
}

std::vector<int64_t> prompt_text_offsets(const std::vector<int32_t> &tokens, const std::string &echo, const Tokenizer &tok) {
    std::vector<int64_t> starts;
    std::string pieces;
    int64_t chars = 0;
    for (int32_t t : tokens) {
        starts.push_back(chars);
        const std::string piece = tok.decode_token(t);
        chars += utf8_chars(piece);
        pieces += piece;
    }
    const int64_t n_echo = utf8_chars(echo);
    const bool aligned = pieces.size() >= echo.size() && pieces.compare(pieces.size() - echo.size(), echo.size(), echo) == 0;
    const int64_t shift = aligned ? chars - n_echo : 0;
    for (int64_t &s : starts) s = std::clamp<int64_t>(s - shift, 0, n_echo);
    return starts;
}

PreparedSequences prepare_sequences(const CompletionRequest &r, const SequenceLimits &limits, const Tokenizer &tok,
                                    uint32_t seed, Clock::time_point deadline) {
    PreparedSequences out;
    const int64_t limit = limits.n_ctx_request;
    int choice = 0;
    const bool prompt_logprobs = r.echo && r.logprobs;
    for (const auto &[id, bias] : r.logit_bias)
        if (id >= tok.n_vocab())
            throw bad_request("'logit_bias' names token " + std::to_string(id) + " but the vocabulary has " +
                                  std::to_string(tok.n_vocab()) + " tokens",
                              "logit_bias");
    for (Prompt &p : tokenize(r, limits, tok)) {
        const int64_t n_prompt = (int64_t)p.tokens.size();
        if (n_prompt == 0) throw bad_request("'" + p.field + "' has no tokens", p.field);
        if (n_prompt >= limit)
            throw bad_request("'" + p.field + "': the prompt has " + std::to_string(n_prompt) +
                                  " tokens but a request may hold at most " + std::to_string(limit) + " (prompt + max_tokens)",
                              p.field);
        if (r.max_tokens && n_prompt + *r.max_tokens > limit)
            throw bad_request("max_tokens " + std::to_string(*r.max_tokens) + " + the prompt's " + std::to_string(n_prompt) +
                                  " tokens exceed the " + std::to_string(limit) + " tokens a request may hold",
                              "max_tokens");
        out.prompt_tokens += n_prompt;
        const std::vector<int64_t> offsets = prompt_logprobs ? prompt_text_offsets(p.tokens, p.text, tok) : std::vector<int64_t>{};
        for (int64_t j = 0; j < r.n; ++j, ++choice) {
            GenerationRequest g;
            g.choice = choice;
            g.prompt = p.tokens;
            g.max_tokens = r.max_tokens ? *r.max_tokens : std::min(limits.default_max_tokens, limit - n_prompt);
            g.sampling.temperature = r.temperature;
            g.sampling.top_p = r.top_p;
            g.sampling.top_k = r.top_k; // 0 unless given: OpenAI's sampling has neither top-k nor min-p
            g.sampling.min_p = r.min_p;
            g.sampling.repeat_penalty = r.repeat_penalty;
            g.sampling.frequency_penalty = r.frequency_penalty;
            g.sampling.presence_penalty = r.presence_penalty;
            g.sampling.repeat_last_n = r.repeat_last_n;
            g.sampling.seed = seed + (uint32_t)choice; // wraps: still one seed per choice
            g.sampling.logit_bias = r.logit_bias;
            g.stop = r.stop;
            g.top_logprobs = r.logprobs ? *r.logprobs : -1;
            g.prompt_logprobs = prompt_logprobs;
            g.deadline = deadline;
            out.sequences.push_back(std::move(g));
            out.echo.push_back(r.echo ? p.text : "");
            out.prompt_offsets.push_back(offsets);
        }
    }
    return out;
}

} // namespace rf::serve
