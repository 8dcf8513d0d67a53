"""The thread-safety rules of rocmforge.Llama (its docstring, docs/EMBEDDING.md): calls on one
object serialize, each with its own result; separate objects do not wait for each other; a
thread cannot deadlock on its own open stream; close() ends an open stream."""

import threading

import pytest

import rocmforge

PROMPTS = ["In the beginning", "And God said", "The LORD is my shepherd", "And it came to pass"]


def text(llm, prompt, seed):
    return llm(prompt, max_tokens=24, seed=seed)["choices"][0]["text"]


def run_threads(targets):
    errors = []

    def guard(fn):
        try:
            fn()
        except BaseException as e:  # reported by the test thread
            errors.append(e)

    threads = [threading.Thread(target=guard, args=(fn,)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not [t for t in threads if t.is_alive()], "a thread hung"
    assert not errors, errors


def test_threads_on_one_object_get_their_own_results(llm):
    expected = {(p, s): text(llm, p, s) for p in PROMPTS for s in (1, 2)}
    got = {}

    def worker(prompt):
        for _ in range(2):
            for s in (1, 2):
                got.setdefault((prompt, s), set()).add(text(llm, prompt, s))
        # Streams too.
        chunks = llm(prompt, max_tokens=24, seed=1, stream=True)
        got.setdefault((prompt, "stream"), set()).add("".join(c["choices"][0]["text"] for c in chunks))

    run_threads([lambda p=p: worker(p) for p in PROMPTS])
    for (p, s), texts in got.items():
        assert texts == {expected[(p, 1 if s == "stream" else s)]}, (p, s)


def test_an_open_stream_holds_its_object_only(model_path, llm):
    reference = text(llm, "And God said", 3)
    with rocmforge.Llama(model_path) as other:
        stream = llm("In the beginning", max_tokens=24, seed=1, stream=True)
        next(stream)  # holds llm's lock from here until it is closed
        result = {}
        blocked = threading.Thread(target=lambda: result.setdefault("same", text(llm, "And God said", 3)))
        free = threading.Thread(target=lambda: result.setdefault("other", text(other, "And God said", 3)))
        blocked.start()
        free.start()
        free.join(timeout=60)
        assert result.get("other") == reference, "a separate object waited for another's stream"
        blocked.join(timeout=0.5)
        assert blocked.is_alive() and "same" not in result, "a second generation ran inside an open stream"
        rest = list(stream)  # the stream ends, the lock is released
        assert rest[-1]["choices"][0]["finish_reason"] is not None
        blocked.join(timeout=60)
        assert result.get("same") == reference


def test_separate_objects_run_at_the_same_time(model_path, llm):
    expected = {p: text(llm, p, 4) for p in PROMPTS}
    objects = [rocmforge.Llama(model_path) for _ in range(2)]
    try:
        got = {}
        run_threads([lambda o=o, i=i: [got.setdefault((i, p), text(o, p, 4)) for p in PROMPTS * 2]
                     for i, o in enumerate(objects)])
        for (i, p), t in got.items():
            assert t == expected[p], (i, p)
    finally:
        for o in objects:
            o.close()


def test_same_thread_cannot_wait_on_its_own_stream(llm):
    stream = llm("In the beginning", max_tokens=8, seed=1, stream=True)
    next(stream)
    with pytest.raises(RuntimeError, match="still open on this thread"):
        llm("And God said", max_tokens=4)
    # tokenize does not wait for the generation.
    assert llm.tokenize(b"light")
    stream.close()
    assert llm("And God said", max_tokens=4, seed=1)["usage"]["completion_tokens"] == 4


def test_close_ends_an_open_stream(model_path):
    m = rocmforge.Llama(model_path)
    stream = m("In the beginning", max_tokens=32, seed=1, stream=True)
    next(stream)
    m.close()
    with pytest.raises(rocmforge.ClosedError, match="closed during a streamed generation"):
        list(stream)
    with pytest.raises(rocmforge.ClosedError):
        m("x")
    # Closed before the first token (the echoed prompt is the first chunk).
    m = rocmforge.Llama(model_path)
    stream = m("In the beginning", max_tokens=8, seed=1, echo=True, stream=True)
    assert next(stream)["choices"][0]["text"] == "In the beginning"
    m.close()
    with pytest.raises(rocmforge.ClosedError):
        next(stream)


def test_close_waits_for_another_threads_generation(model_path):
    m = rocmforge.Llama(model_path)
    stream = m("In the beginning", max_tokens=24, seed=1, stream=True)
    first = next(stream)
    closer = threading.Thread(target=m.close)
    closer.start()
    closer.join(timeout=0.5)
    assert closer.is_alive(), "close() freed the model under another thread's generation"
    # This thread's stream is the other "thread" here: close() runs once it is done.
    rest = list(stream)
    closer.join(timeout=60)
    assert not closer.is_alive()
    assert first["choices"][0]["text"] and rest[-1]["choices"][0]["finish_reason"] is not None
    with pytest.raises(rocmforge.ClosedError):
        m.tokenize(b"x")
