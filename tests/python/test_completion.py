"""Completions through rocmforge.Llama: the same text as `rocmforge generate` for the same
settings, streaming, stop strings, the response shapes, tokens."""

import pytest

import rocmforge

PROMPT = "In the beginning"
# A sampled run with every stage of the chain on.
SAMPLED = dict(temperature=0.9, top_k=30, top_p=0.9, min_p=0.02, repeat_penalty=1.15, frequency_penalty=0.3,
               presence_penalty=0.2, repeat_last_n=32, seed=1234)


def text_of(result):
    return result["choices"][0]["text"]


def test_greedy_equals_cli(llm, cli_generate):
    ours = llm(PROMPT, max_tokens=40, temperature=0)
    assert text_of(ours) == cli_generate(PROMPT, 40, temperature=0, seed=0)
    assert len(text_of(ours)) > 0


def test_seeded_sampling_equals_cli(llm, cli_generate):
    ours = text_of(llm(PROMPT, max_tokens=48, **SAMPLED))
    assert ours == cli_generate(PROMPT, 48, **SAMPLED)
    # The defaults are the CLI's defaults too (only the seed given).
    assert text_of(llm("And God said", max_tokens=32, seed=7)) == cli_generate("And God said", 32, seed=7)


def test_seed_reproducible_and_seeds_differ(llm):
    a = text_of(llm(PROMPT, max_tokens=48, **SAMPLED))
    assert text_of(llm(PROMPT, max_tokens=48, **SAMPLED)) == a
    others = {text_of(llm(PROMPT, max_tokens=48, **dict(SAMPLED, seed=s))) for s in (1, 2, 3)}
    assert others != {a}


def test_llama_seed_is_the_default_seed(model_path):
    with rocmforge.Llama(model_path, seed=99) as seeded:
        a = text_of(seeded(PROMPT, max_tokens=32))
        assert text_of(seeded(PROMPT, max_tokens=32)) == a
        assert text_of(seeded(PROMPT, max_tokens=32, seed=99)) == a


def test_stream_concatenates_to_the_completion(llm):
    whole = llm(PROMPT, max_tokens=48, **SAMPLED)
    chunks = list(llm(PROMPT, max_tokens=48, stream=True, **SAMPLED))
    assert len(chunks) > 2
    assert "".join(text_of(c) for c in chunks) == text_of(whole)
    assert [c["choices"][0]["finish_reason"] for c in chunks[:-1]] == [None] * (len(chunks) - 1)
    assert chunks[-1]["choices"][0]["finish_reason"] == whole["choices"][0]["finish_reason"]
    assert all(c["object"] == "text_completion" and c["id"] == chunks[0]["id"] for c in chunks)


def test_response_shape_and_usage(llm):
    out = llm(PROMPT, max_tokens=8, temperature=0)
    assert out["object"] == "text_completion" and out["id"].startswith("cmpl-")
    assert isinstance(out["created"], int) and out["model"] == llm.model_path
    choice = out["choices"][0]
    assert set(choice) == {"text", "index", "logprobs", "finish_reason"}
    assert choice["index"] == 0 and choice["logprobs"] is None and choice["finish_reason"] == "length"
    n_prompt = len(llm.tokenize(PROMPT.encode(), add_bos=True, special=True))
    assert out["usage"] == {"prompt_tokens": n_prompt, "completion_tokens": 8, "total_tokens": n_prompt + 8}
    # The text is the detokenized completion.
    assert llm.create_completion(PROMPT, max_tokens=8, temperature=0)["choices"][0]["text"] == choice["text"]


def test_token_prompt_and_echo(llm):
    tokens = llm.tokenize(PROMPT.encode(), add_bos=True, special=True)
    by_text = llm(PROMPT, max_tokens=12, temperature=0)
    assert text_of(llm(tokens, max_tokens=12, temperature=0)) == text_of(by_text)
    assert text_of(llm(PROMPT, max_tokens=12, temperature=0, echo=True)) == PROMPT + text_of(by_text)


def test_stop_strings(llm):
    full = text_of(llm(PROMPT, max_tokens=48, temperature=0))
    words = full.split()
    assert len(words) > 4
    stop = " " + words[3]
    cut = full.index(stop)
    out = llm(PROMPT, max_tokens=48, temperature=0, stop=[stop, "never appears"])
    assert text_of(out) == full[:cut]
    assert out["choices"][0]["finish_reason"] == "stop"
    chunks = list(llm(PROMPT, max_tokens=48, temperature=0, stop=stop, stream=True))
    assert "".join(text_of(c) for c in chunks) == full[:cut]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    # A stop string that never comes changes nothing.
    assert text_of(llm(PROMPT, max_tokens=48, temperature=0, stop="@@@")) == full


def test_max_tokens_none_runs_to_the_end(model_path):
    # A context of 48 tokens: the generation ends at the end-of-generation token or a full cache.
    with rocmforge.Llama(model_path, n_ctx=48) as small:
        out = small(PROMPT, max_tokens=None, temperature=0)
        n_prompt = out["usage"]["prompt_tokens"]
        assert out["choices"][0]["finish_reason"] in ("stop", "length")
        if out["choices"][0]["finish_reason"] == "length":
            assert n_prompt + out["usage"]["completion_tokens"] >= 48
        assert small(PROMPT, max_tokens=0, temperature=0)["choices"] == out["choices"]


def test_chat_completion_equals_cli(model_path, cli_generate):
    messages = [{"role": "system", "content": "You answer in the words of the King James Bible."},
                {"role": "user", "content": "Who made the heaven and the earth?"}]
    with rocmforge.Llama(model_path, chat_format="chatml") as chat:
        prompt = chat.apply_chat_template(messages)
        assert prompt.endswith("<|im_start|>assistant\n")
        out = chat.create_chat_completion(messages, max_tokens=24, seed=5)
        assert out["object"] == "chat.completion" and out["id"].startswith("chatcmpl-")
        message = out["choices"][0]["message"]
        assert message["role"] == "assistant"
        assert message["content"] == cli_generate(prompt, 24, seed=5)
        chunks = list(chat.create_chat_completion(messages, max_tokens=24, seed=5, stream=True))
        assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
        assert chunks[-1]["choices"][0]["delta"] == {}
        assert chunks[-1]["choices"][0]["finish_reason"] == out["choices"][0]["finish_reason"]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == message["content"]
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)


def test_tokenize_detokenize(llm):
    text = b"And God said, Let there be light: and there was light."
    with_bos = llm.tokenize(text)
    without = llm.tokenize(text, add_bos=False)
    assert with_bos[0] == llm.token_bos() and with_bos[1:] == without
    assert llm.detokenize(with_bos) == text
    assert llm.detokenize([]) == b""
    assert llm.tokenize("light") == llm.tokenize(b"light")
    assert all(0 <= t < llm.n_vocab() for t in with_bos)


def test_model_queries(llm):
    assert llm.n_ctx() > 0 and llm.n_vocab() > 0
    assert llm.backend in ("cpu", "hip")
    assert llm.metadata_value("general.architecture") == "llama"
    assert llm.metadata_value("no.such.key") is None
    assert llm.chat_template is None  # the default model ships without one
    version, api = rocmforge.library_version()
    assert version == rocmforge.__version__ and api >= (0, 4)

