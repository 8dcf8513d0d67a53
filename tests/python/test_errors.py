"""Bad input gives a Python exception of the status's class, carrying the C API's message and
code; a closed Llama refuses every call."""

import json
import os
import subprocess
import sys

import pytest

import rocmforge
from rocmforge import errors


def test_missing_file(tmp_path):
    missing = tmp_path / "no-such-model.gguf"
    with pytest.raises(rocmforge.FileError) as e:
        rocmforge.Llama(str(missing))
    assert e.value.code == errors.ERR_FILE == 2
    assert str(missing) in e.value.message and "does not exist" in e.value.message
    assert isinstance(e.value, OSError) and isinstance(e.value, rocmforge.RocmforgeError)


def test_not_a_model(tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_text("this is not a GGUF file, only some text long enough to be read")
    with pytest.raises(rocmforge.FileError) as e:
        rocmforge.Llama(junk)
    assert str(junk) in e.value.message


def test_bad_backend_options(model_path):
    with pytest.raises(rocmforge.InvalidArgumentError) as e:
        rocmforge.Llama(model_path, backend="cpu", backend_options={"cpu": {"simd": "avx9"}})
    assert e.value.code == 1 and isinstance(e.value, ValueError)
    assert "backend_options.cpu.simd" in e.value.message and "avx2" in e.value.message
    with pytest.raises(rocmforge.InvalidArgumentError, match="is not an option of backend 'cpu'"):
        rocmforge.Llama(model_path, backend_options=json.dumps({"cpu": {"smd": "scalar"}}))
    with pytest.raises(rocmforge.InvalidArgumentError, match="warpdrive"):
        rocmforge.Llama(model_path, backend="warpdrive")
    # Good ones load.
    with rocmforge.Llama(model_path, backend="cpu", backend_options={"cpu": {"simd": "scalar", "n_threads": 1}}) as m:
        assert m.backend == "cpu"


def test_bad_config_file(model_path, tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"backends": ["cpu"], "no_such_key": 1}')
    with pytest.raises(rocmforge.RocmforgeError) as e:
        rocmforge.Llama(model_path, config=str(config))
    assert "no_such_key" in e.value.message and e.value.code == errors.ERR_INVALID_ARGUMENT


def test_bad_python_values(model_path):
    for kwargs, fragment in [(dict(n_ctx=-1), "n_ctx"), (dict(n_ctx="big"), "n_ctx"), (dict(n_threads=-2), "n_threads"),
                             (dict(seed=2 ** 40), "seed"), (dict(type_k="q4"), "type_k"),
                             (dict(backend_options=[1]), "backend_options"), (dict(backend=3), "backend")]:
        with pytest.raises(rocmforge.InvalidArgumentError, match=fragment):
            rocmforge.Llama(model_path, **kwargs)
    with pytest.raises(rocmforge.InvalidArgumentError, match="model_path"):
        rocmforge.Llama(42)


def test_out_of_memory(model_path):
    with pytest.raises(rocmforge.OutOfMemoryError) as e:
        rocmforge.Llama(model_path, n_ctx=4000000000)
    assert e.value.code == errors.ERR_OUT_OF_MEMORY == 5 and "GiB free" in e.value.message
    assert isinstance(e.value, MemoryError)


def test_bad_sampling_values(llm):
    with pytest.raises(rocmforge.InvalidArgumentError, match=r"top_p must be in \(0, 1\]") as e:
        llm("x", top_p=1.5)
    assert e.value.code == 1
    with pytest.raises(rocmforge.InvalidArgumentError, match="frequency_penalty"):
        llm("x", frequency_penalty=3)
    with pytest.raises(rocmforge.InvalidArgumentError, match="repeat_penalty"):
        llm("x", repeat_penalty=0)
    with pytest.raises(rocmforge.InvalidArgumentError, match="temperature must be a number"):
        llm("x", temperature="hot")
    with pytest.raises(rocmforge.InvalidArgumentError, match="stop"):
        llm("x", stop=[1])
    with pytest.raises(rocmforge.InvalidArgumentError, match="prompt"):
        llm(3.5)
    # Raised at the call, not at the first chunk.
    with pytest.raises(rocmforge.InvalidArgumentError):
        llm("x", min_p=-1, stream=True)
    with pytest.raises(NotImplementedError, match="typical_p"):
        llm("x", typical_p=0.5)


def test_bad_tokens(llm):
    with pytest.raises(rocmforge.InvalidArgumentError, match="outside the vocabulary") as e:
        llm.detokenize([1, llm.n_vocab() + 5])
    assert e.value.code == 1
    with pytest.raises(rocmforge.InvalidArgumentError, match="outside the vocabulary"):
        llm([1, llm.n_vocab()], max_tokens=2)
    with pytest.raises(rocmforge.InvalidArgumentError, match="integers"):
        llm.detokenize([1, "a"])
    with pytest.raises(rocmforge.InvalidArgumentError, match="no tokens"):
        llm([], max_tokens=2)
    # The object is still usable.
    assert llm("In the beginning", max_tokens=4, temperature=0)["usage"]["completion_tokens"] == 4


def test_prompt_longer_than_the_context(model_path):
    with rocmforge.Llama(model_path, n_ctx=16) as small:
        with pytest.raises(rocmforge.ContextFullError) as e:
            small("And God said, Let there be light: and there was light. " * 4, max_tokens=4)
        assert e.value.code == errors.ERR_CONTEXT_FULL and "n_ctx" in e.value.message
        assert small("And God", max_tokens=4, temperature=0)["usage"]["completion_tokens"] == 4


def test_chat_errors(llm):
    with pytest.raises(rocmforge.UnsupportedError) as e:
        llm.create_chat_completion([{"role": "user", "content": "hi"}])
    assert e.value.code == errors.ERR_UNSUPPORTED and "chat_template" in e.value.message
    with pytest.raises(rocmforge.InvalidArgumentError, match="messages"):
        llm.create_chat_completion([])
    with pytest.raises(rocmforge.InvalidArgumentError, match="role"):
        llm.create_chat_completion([{"content": "hi"}])
    with pytest.raises(rocmforge.InvalidArgumentError, match="content"):
        llm.create_chat_completion([{"role": "user", "content": 5}])


def test_context_manager_and_close(model_path):
    with rocmforge.Llama(model_path) as m:
        assert m("And God", max_tokens=2, temperature=0)["usage"]["completion_tokens"] == 2
    for call in (lambda: m("And God", max_tokens=2), lambda: m.tokenize(b"x"), lambda: m.detokenize([1]),
                 lambda: m.create_chat_completion([{"role": "user", "content": "x"}]), lambda: m.__enter__()):
        with pytest.raises(rocmforge.ClosedError, match="closed"):
            call()
    m.close()  # again: nothing
    assert "closed" in repr(m)
    # An exception inside the block still frees the model.
    with pytest.raises(KeyError):
        with rocmforge.Llama(model_path) as m2:
            raise KeyError("x")
    with pytest.raises(rocmforge.ClosedError):
        m2.tokenize(b"x")


def test_library_not_found():
    # A fresh interpreter: this one has its library loaded already.
    code = ("import rocmforge\n"
            "try:\n"
            "    rocmforge.load_library('/nonexistent/librocmforge.so.0')\n"
            "except rocmforge.LibraryNotFoundError as e:\n"
            "    print('refused:', e.message)\n")
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, env=os.environ, check=True).stdout.decode()
    assert "refused: /nonexistent/librocmforge.so.0 does not exist" in out


def test_second_library_refused(tmp_path):
    rocmforge.load_library()  # the one loaded already: fine
    other = tmp_path / "librocmforge.so.0"
    other.write_bytes(b"")
    with pytest.raises(rocmforge.LibraryNotFoundError, match="already loaded"):
        rocmforge.load_library(other)
