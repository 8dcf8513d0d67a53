"""rocmforge.Llama: a GGUF model with one context, shaped like llama-cpp-python's Llama.

Threads and lifetimes (docs/EMBEDDING.md, section Python):
  * A Llama may be shared by threads. Its generations (create_completion, __call__,
    create_chat_completion) and embeddings (embed, create_embedding) take the object's lock, so calls from several threads on one object
    run one after the other, each with the result it would have alone. Separate Llama objects
    share no lock and run in parallel (the library releases the GIL while it computes).
  * A streamed generation (stream=True) holds the lock from its first chunk until it is
    exhausted or closed (leaving a `for` loop early closes it). Other threads wait for it; the
    same thread starting another generation on the object while its stream is open gets a
    RuntimeError instead of waiting on itself.
  * tokenize, detokenize, apply_chat_template and the model queries do not wait for a running
    generation.
  * close() (or leaving a `with` block) frees the model and its context. It waits for another
    thread's generation to end; a stream of the calling thread left open is ended (its next
    step raises ClosedError). Any later call raises ClosedError. An object never closed is
    freed when it is garbage-collected; an open stream keeps its Llama alive.
  * Ctrl-C (KeyboardInterrupt) during a generation stops it after the current step: the
    exception propagates, the lock is released and the object stays usable (the next call
    starts from a clear context).
"""

import codecs
import contextlib
import ctypes
import json
import os
import random
import threading
import time
import uuid

from . import errors
from . import _library
from ._text import StopMatcher, stop_list

_CACHE_TYPES = {"f16": 0, "f32": 1, "q8_0": 2}
_U32 = 2 ** 32


class ClosedError(errors.RocmforgeError, RuntimeError):
    """A call on a Llama after close()."""

    status = "closed"


def _bad(message):
    return errors.InvalidArgumentError(message)


def _int_arg(name, value, lo, hi=None, none_ok=False):
    if value is None and none_ok:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad("%s must be an integer, got %r" % (name, value))
    if value < lo or (hi is not None and value > hi):
        raise _bad("%s must be in %d..%s, got %d" % (name, lo, hi if hi is not None else "", value))
    return value


def _float_arg(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad("%s must be a number, got %r" % (name, value))
    return float(value)


def _neutral(name, value, neutral):
    # llama-cpp-python parameters this engine has no stage for: only their "off" value is taken.
    if value != neutral:
        raise NotImplementedError("rocmforge.Llama: %s=%r is not supported (only %r)" % (name, value, neutral))


def _seed_arg(value):
    if value is None or value == -1:
        return None
    return _int_arg("seed", value, 0, _U32 - 1)


class Llama:
    """A GGUF model loaded through librocmforge with one context of n_ctx tokens.

    model_path: the .gguf file; None: the library's default model (share/rocmforge/models).
    n_ctx: KV cache tokens; 0: the model's trained context, at most 4096 (as the CLI).
    n_batch: most tokens per forward graph. backend: "cpu", "hip", "hip:1,cpu", ... (naming one
    makes it required); None: the config's. config: a JSON config file (README, section Config).
    backend_options: a dict (or its JSON text) of the config's backend_options shape, over the
    config's: {"cpu": {"simd": "avx2"}} (docs/OPTIONS.md). n_threads: CPU threads
    (0 or None: all cores). seed: the sampling seed of calls that name none (None or -1: a new
    random seed per call). chat_format: the template create_chat_completion uses ("chatml",
    "llama3", ... or a Jinja text); None: the file's tokenizer.chat_template. library: where
    librocmforge.so.0 is (rocmforge.load_library). type_k / type_v: KV cache types.

    Raises FileError for a missing or malformed file, InvalidArgumentError for a bad option,
    OutOfMemoryError when the model or its cache does not fit, BackendError when no backend
    starts. Threads and lifetimes: the module docstring.
    """

    def __init__(self, model_path=None, *, n_ctx=0, n_batch=512, backend=None, config=None, seed=None,
                 n_threads=0, backend_options=None, device=-1, use_mmap=True, chat_format=None,
                 type_k="f16", type_v="f16", library=None):
        self._model = None
        self._ctx = None
        self._closed = True
        self._lock = threading.Lock()      # one generation at a time on the context
        self._handle_lock = threading.Lock()  # model queries against close()
        self._owner = None                 # thread holding _lock for a generation

        if model_path is not None and not isinstance(model_path, (str, bytes, os.PathLike)):
            raise _bad("model_path must be a path, got %r" % (model_path,))
        n_ctx = _int_arg("n_ctx", n_ctx, 0, _U32 - 1)
        n_batch = _int_arg("n_batch", n_batch, 1, _U32 - 1)
        n_threads = _int_arg("n_threads", 0 if n_threads is None else n_threads, 0, 2 ** 31 - 1)
        device = _int_arg("device", device, -1, 2 ** 31 - 1)
        self._seed = _seed_arg(seed)
        for name, v in (("backend", backend), ("chat_format", chat_format)):
            if v is not None and not isinstance(v, str):
                raise _bad("%s must be a string, got %r" % (name, v))
        if config is not None and not isinstance(config, (str, os.PathLike)):
            raise _bad("config must be a path, got %r" % (config,))
        if isinstance(backend_options, dict):
            backend_options = json.dumps(backend_options)
        elif backend_options is not None and not isinstance(backend_options, str):
            raise _bad("backend_options must be a dict or its JSON text, got %r" % (backend_options,))
        cache = []
        for name, v in (("type_k", type_k), ("type_v", type_v)):
            if v not in _CACHE_TYPES:
                raise _bad("%s must be one of %s, got %r" % (name, ", ".join(_CACHE_TYPES), v))
            cache.append(_CACHE_TYPES[v])

        self._lib = _library.load_library(library)
        lib = self._lib.lib
        self.model_path = None if model_path is None else os.fsdecode(model_path)
        self.chat_format = chat_format

        mp = lib.rocmforge_model_default_params()
        keep = []  # the bytes the params point at, alive for the call

        def c_str(v):
            if v is None:
                return None
            b = os.fsencode(v) if not isinstance(v, str) else v.encode("utf-8")
            keep.append(b)
            return b

        mp.config_path = c_str(os.fspath(config) if config is not None else None)
        mp.backends = c_str(backend)
        mp.device = device
        mp.n_threads = n_threads
        mp.use_mmap = bool(use_mmap)
        mp.backend_options = c_str(backend_options)
        mp.plugin_dirs = c_str(":".join(self._lib.plugin_dirs) if self._lib.plugin_dirs else None)
        model, ctx = ctypes.c_void_p(), ctypes.c_void_p()
        path = None if model_path is None else os.fsencode(model_path)
        cp = lib.rocmforge_context_default_params()
        cp.n_ctx = n_ctx
        cp.n_batch = n_batch
        cp.n_seq_max = 1
        cp.type_k, cp.type_v = cache
        try:
            self._lib.check(lib.rocmforge_model_load(path, ctypes.byref(mp), ctypes.byref(model)))
            self._lib.check(lib.rocmforge_context_init(model, ctypes.byref(cp), ctypes.byref(ctx)))
        except BaseException:
            # A failed context, or Ctrl-C arriving as a load returns: the handles the library
            # wrote are freed here, as nothing else owns them yet.
            lib.rocmforge_context_free(ctx)
            lib.rocmforge_model_free(model)
            raise
        self._model, self._ctx, self._closed = model, ctx, False
        self._n_vocab = lib.rocmforge_model_n_vocab(model)
        self._n_ctx = lib.rocmforge_n_ctx(ctx)

    # ---- lifetime ---------------------------------------------------------------------------

    def close(self):
        """Frees the model and its context (idempotent). Threads and lifetimes: the module
        docstring."""
        if self._closed:
            return
        if self._owner == threading.get_ident():
            # This thread's stream is suspended at a yield: nothing of ours runs in the library.
            self._free()
            return
        with self._lock:
            self._free()

    def _free(self):
        with self._handle_lock:
            if self._closed:
                return
            self._closed = True
            lib = self._lib.lib
            lib.rocmforge_context_free(self._ctx)
            lib.rocmforge_model_free(self._model)
            self._ctx = self._model = None

    def __enter__(self):
        self._require_open()
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:
            pass  # interpreter shutdown: the library may be gone already

    def __repr__(self):
        state = "closed" if self._closed else "n_ctx=%d, backend=%s" % (self._n_ctx, self.backend)
        return "rocmforge.Llama(%r, %s)" % (self.model_path, state)

    def _require_open(self):
        if self._closed:
            raise ClosedError("this rocmforge.Llama is closed")

    @contextlib.contextmanager
    def _model_call(self):
        with self._handle_lock:
            self._require_open()
            yield

    @contextlib.contextmanager
    def _generation(self):
        if self._owner == threading.get_ident():
            raise RuntimeError("a streamed generation of this rocmforge.Llama is still open on this thread: "
                               "exhaust or close() it before starting another")
        with self._lock:
            self._owner = threading.get_ident()
            try:
                self._require_open()
                yield
            finally:
                self._owner = None

    # ---- model queries ----------------------------------------------------------------------

    def n_ctx(self):
        return self._n_ctx

    def n_vocab(self):
        return self._n_vocab

    def token_bos(self):
        with self._model_call():
            return self._lib.lib.rocmforge_token_bos(self._model)

    def token_eos(self):
        with self._model_call():
            return self._lib.lib.rocmforge_token_eos(self._model)

    @property
    def backend(self):
        """The backend holding the weights ("cpu", "hip")."""
        with self._model_call():
            return self._lib.lib.rocmforge_model_backend(self._model).decode()

    @property
    def description(self):
        with self._model_call():
            return self._string_out(lambda buf, size, n: self._lib.lib.rocmforge_model_desc(self._model, buf, size, n))

    def metadata_value(self, key):
        """A GGUF metadata value as text, or None when the file has no such key."""
        if not isinstance(key, str):
            raise _bad("key must be a string, got %r" % (key,))
        kb = key.encode("utf-8")
        with self._model_call():
            try:
                return self._string_out(
                    lambda buf, size, n: self._lib.lib.rocmforge_model_meta_val_str(self._model, kb, buf, size, n))
            except errors.InvalidArgumentError:
                return None

    @property
    def chat_template(self):
        """The file's tokenizer.chat_template (Jinja text), or None."""
        return self.metadata_value("tokenizer.chat_template")

    def _string_out(self, call, size=256):
        n = ctypes.c_size_t()
        while True:
            buf = ctypes.create_string_buffer(size)
            status = call(buf, size, ctypes.byref(n))
            if status == errors.ERR_BUFFER_TOO_SMALL and n.value + 1 > size:
                size = n.value + 1
                continue
            self._lib.check(status)
            return buf.raw[:n.value].decode("utf-8", "replace")

    # ---- tokens -----------------------------------------------------------------------------

    def tokenize(self, text, add_bos=True, special=False):
        """Token ids of `text` (bytes, or str as UTF-8). add_bos: BOS (and EOS) as the vocabulary
        asks; special: control tokens written in the text become single tokens."""
        data = self._text_bytes(text, "text")
        with self._model_call():
            return self._tokenize(data, add_bos, special)

    def _tokenize(self, data, add_special, parse_special):
        lib = self._lib.lib
        n = ctypes.c_size_t()
        cap = len(data) + 8
        while True:
            buf = (_library.c_token * cap)()
            status = lib.rocmforge_tokenize(self._model, data, len(data), buf, cap, bool(add_special),
                                            bool(parse_special), ctypes.byref(n))
            if status == errors.ERR_BUFFER_TOO_SMALL and n.value > cap:
                cap = n.value
                continue
            self._lib.check(status)
            return list(buf[:n.value])

    def detokenize(self, tokens, special=False):
        """The bytes of a token sequence. special: control tokens (BOS, EOS, <|im_end|>, ...) are
        written as text; without it they are left out."""
        ids = self._token_ids(tokens)
        arr = (_library.c_token * max(len(ids), 1))(*ids)
        with self._model_call():
            lib = self._lib.lib
            n = ctypes.c_size_t()
            size = 16 * len(ids) + 16
            while True:
                buf = ctypes.create_string_buffer(size)
                status = lib.rocmforge_detokenize(self._model, arr, len(ids), buf, size, not special, bool(special),
                                                  ctypes.byref(n))
                if status == errors.ERR_BUFFER_TOO_SMALL and n.value + 1 > size:
                    size = n.value + 1
                    continue
                self._lib.check(status)
                return buf.raw[:n.value]

    def _piece(self, token, buf):
        lib = self._lib.lib
        n = ctypes.c_size_t()
        status = lib.rocmforge_token_to_piece(self._model, token, buf, len(buf), False, ctypes.byref(n))
        if status == errors.ERR_BUFFER_TOO_SMALL:
            buf = ctypes.create_string_buffer(n.value + 1)
            status = lib.rocmforge_token_to_piece(self._model, token, buf, len(buf), False, ctypes.byref(n))
        self._lib.check(status)
        return buf.raw[:n.value]

    @staticmethod
    def _text_bytes(text, name):
        if isinstance(text, str):
            return text.encode("utf-8")
        if isinstance(text, (bytes, bytearray)):
            return bytes(text)
        raise _bad("%s must be str or bytes, got %s" % (name, type(text).__name__))

    @staticmethod
    def _token_ids(tokens):
        try:
            ids = list(tokens)
        except TypeError:
            raise _bad("tokens must be a list of token ids, got %r" % (tokens,)) from None
        for t in ids:
            if isinstance(t, bool) or not isinstance(t, int):
                raise _bad("tokens must be integers, got %r" % (t,))
            if not -2 ** 31 <= t < 2 ** 31:
                raise _bad("token id %d does not fit a 32-bit token id" % t)
        return ids

    # ---- chat -------------------------------------------------------------------------------

    def apply_chat_template(self, messages, add_generation_prompt=True):
        """The prompt text of `messages` ([{"role": ..., "content": ...}]) in this Llama's chat
        format (chat_format, else the file's template). UnsupportedError when the file has no
        template and no chat_format was given."""
        if not isinstance(messages, (list, tuple)) or not messages:
            raise _bad("messages must be a non-empty list of {'role': ..., 'content': ...}")
        keep = []
        arr = (_library.ChatMessage * len(messages))()
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise _bad("messages[%d] must be a dict with a string 'role', got %r" % (i, m))
            content = m.get("content")
            if content is None:
                content = ""
            if not isinstance(content, str):
                raise _bad("messages[%d]['content'] must be a string, got %r" % (i, content))
            role, text = m["role"].encode("utf-8"), content.encode("utf-8")
            keep += [role, text]
            arr[i].role, arr[i].content = role, text
        tmpl = self.chat_format.encode("utf-8") if self.chat_format is not None else None
        with self._model_call():
            lib = self._lib.lib
            return self._string_out(lambda buf, size, n: lib.rocmforge_chat_apply_template(
                self._model, tmpl, arr, len(messages), bool(add_generation_prompt), buf, size, n), size=4096)

    # ---- generation -------------------------------------------------------------------------

    def _sampler_params(self, temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty,
                        presence_penalty, repeat_last_n, seed):
        sp = self._lib.lib.rocmforge_sampler_default_params()
        sp.temperature = _float_arg("temperature", temperature)
        sp.top_k = _int_arg("top_k", top_k, -2 ** 31, 2 ** 31 - 1)
        sp.top_p = _float_arg("top_p", top_p)
        sp.min_p = _float_arg("min_p", min_p)
        sp.repeat_penalty = _float_arg("repeat_penalty", repeat_penalty)
        sp.frequency_penalty = _float_arg("frequency_penalty", frequency_penalty)
        sp.presence_penalty = _float_arg("presence_penalty", presence_penalty)
        sp.repeat_last_n = _int_arg("repeat_last_n", repeat_last_n, -1, 2 ** 31 - 1)
        seed = _seed_arg(seed)
        if seed is None:
            seed = self._seed
        sp.seed = seed if seed is not None else random.SystemRandom().getrandbits(32)
        # The library's own range checks, before anything is generated.
        sampler = ctypes.c_void_p()
        self._lib.check(self._lib.lib.rocmforge_sampler_init(ctypes.byref(sp), ctypes.byref(sampler)))
        self._lib.lib.rocmforge_sampler_free(sampler)
        return sp

    def _prompt_tokens(self, prompt):
        if isinstance(prompt, (list, tuple)):
            tokens = self._token_ids(prompt)
        else:
            data = self._text_bytes(prompt, "prompt")
            with self._model_call():
                # As `rocmforge generate` tokenizes: BOS as the vocabulary asks, special tokens parsed.
                tokens = self._tokenize(data, True, True)
        if not tokens:
            raise _bad("the prompt has no tokens")
        return tokens

    def _run(self, tokens, sp, max_tokens, stops, state):
        """Generates from `tokens` on sequence 0, as rf::generate does for one sequence (the same
        sampler calls in the same order, so the same text as `rocmforge generate` for the same
        seed), yielding text as it is complete UTF-8 and not held back by a stop string. Fills
        state["finish_reason"] and state["completion_tokens"]. The caller holds the lock."""
        self._require_open()  # a stream resumed after close() before its first token
        lib = self._lib.lib
        check = self._lib.check
        check(lib.rocmforge_kv_seq_clear(self._ctx, 0))
        sampler = ctypes.c_void_p()
        try:
            check(lib.rocmforge_sampler_init(ctypes.byref(sp), ctypes.byref(sampler)))
            n = len(tokens)
            batch = _library.Batch(n, (_library.c_token * n)(*tokens), (ctypes.c_int32 * n)(), (ctypes.c_int8 * n)())
            batch.logits[n - 1] = 1
            for t in tokens:
                lib.rocmforge_sampler_accept(sampler, t)
            status = lib.rocmforge_decode(self._ctx, ctypes.byref(batch))
            if status == errors.ERR_CONTEXT_FULL:
                raise errors.ContextFullError("the prompt has %d tokens, more than the context's %d (Llama(n_ctx=...)): %s"
                                              % (n, self._n_ctx, self._lib.last_error()))
            check(status)
            step = _library.Batch(1, (_library.c_token * 1)(), (ctypes.c_int32 * 1)(), (ctypes.c_int8 * 1)(1))
            decoder = codecs.getincrementaldecoder("utf-8")("replace")
            stop = StopMatcher(stops)
            token = _library.c_token()
            piece_buf = ctypes.create_string_buffer(256)
            state["finish_reason"] = "length"
            n_generated = 0
            while max_tokens is None or n_generated < max_tokens:
                check(lib.rocmforge_sampler_sample(sampler, self._ctx, -1, ctypes.byref(token)))
                t = token.value
                lib.rocmforge_sampler_accept(sampler, t)
                if lib.rocmforge_token_is_eog(self._model, t):
                    state["finish_reason"] = "stop"
                    break
                n_generated += 1
                state["completion_tokens"] = n_generated
                text = stop.push(decoder.decode(self._piece(t, piece_buf)))
                if text:
                    yield text
                    if self._closed:
                        raise ClosedError("this rocmforge.Llama was closed during a streamed generation")
                if stop.stopped:
                    state["finish_reason"] = "stop"
                    return
                if max_tokens is not None and n_generated >= max_tokens:
                    break  # the last token needs no forward pass
                step.token[0] = t
                status = lib.rocmforge_decode(self._ctx, ctypes.byref(step))
                if status == errors.ERR_CONTEXT_FULL:
                    break  # "length", as a full cache ends `rocmforge generate`
                check(status)
            text = stop.push(decoder.decode(b"", final=True))
            if not stop.stopped:
                text += stop.flush()
            else:
                state["finish_reason"] = "stop"
            if text:
                yield text
        finally:
            lib.rocmforge_sampler_free(sampler)

    def _prepare(self, prompt, max_tokens, temperature, top_p, top_k, min_p, repeat_penalty, frequency_penalty,
                 presence_penalty, repeat_last_n, seed, stop):
        self._require_open()
        if max_tokens is not None:
            max_tokens = _int_arg("max_tokens", max_tokens, -2 ** 31, 2 ** 31 - 1)
            if max_tokens <= 0:
                max_tokens = None  # llama-cpp-python: until end of generation or a full context
        stops = stop_list(stop)
        if stops is None:
            raise _bad("stop must be a string or a list of strings, got %r" % (stop,))
        sp = self._sampler_params(temperature, top_k, top_p, min_p, repeat_penalty, frequency_penalty,
                                  presence_penalty, repeat_last_n, seed)
        tokens = self._prompt_tokens(prompt)
        return tokens, sp, max_tokens, stops

    def create_completion(self, prompt, suffix=None, max_tokens=16, temperature=0.8, top_p=0.95, min_p=0.05,
                          typical_p=1.0, logprobs=None, echo=False, stop=None, frequency_penalty=0.0,
                          presence_penalty=0.0, repeat_penalty=1.0, top_k=40, stream=False, seed=None,
                          repeat_last_n=64, mirostat_mode=0, logit_bias=None, grammar=None, model=None):
        """A completion of `prompt` (str, bytes or token ids) as an OpenAI text_completion dict:
        {id, object, created, model, choices: [{text, index, logprobs, finish_reason}], usage}.
        finish_reason: "stop" (end-of-generation token or a stop string, which is not included)
        or "length" (max_tokens, or the context is full). max_tokens None or <= 0: until one of
        those. Sampling as `rocmforge generate` (--temp, --top-k, --top-p, --min-p,
        --repeat-penalty, --frequency-penalty, --presence-penalty, --repeat-last-n, --seed): the
        same text for the same values. seed None: the Llama's seed. stream=True: a generator of
        chunks of the same shape, each with the next piece of text, the last with the
        finish_reason. The prompt is tokenized with special tokens parsed, as the CLI does."""
        _neutral("suffix", suffix, None)
        _neutral("typical_p", typical_p, 1.0)
        _neutral("logprobs", logprobs or None, None)
        _neutral("mirostat_mode", mirostat_mode, 0)
        _neutral("logit_bias", logit_bias or None, None)
        _neutral("grammar", grammar, None)
        tokens, sp, max_tokens, stops = self._prepare(prompt, max_tokens, temperature, top_p, top_k, min_p,
                                                      repeat_penalty, frequency_penalty, presence_penalty,
                                                      repeat_last_n, seed, stop)
        head = {"id": "cmpl-" + uuid.uuid4().hex, "object": "text_completion", "created": int(time.time()),
                "model": model or self.model_path or "default"}
        prefix = prompt if echo and isinstance(prompt, str) else (
            self.detokenize(tokens).decode("utf-8", "replace") if echo else "")
        if stream:
            return self._stream_completion(head, prefix, tokens, sp, max_tokens, stops)
        state = {"completion_tokens": 0}
        with self._generation():
            text = "".join(self._run(tokens, sp, max_tokens, stops, state))
        out = dict(head)
        out["choices"] = [{"text": prefix + text, "index": 0, "logprobs": None,
                           "finish_reason": state["finish_reason"]}]
        out["usage"] = _usage(len(tokens), state["completion_tokens"])
        return out

    __call__ = create_completion

    def _stream_completion(self, head, prefix, tokens, sp, max_tokens, stops):
        def chunk(text, finish):
            c = dict(head)
            c["choices"] = [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish}]
            return c

        state = {"completion_tokens": 0}
        with self._generation():
            if prefix:
                yield chunk(prefix, None)
            for text in self._run(tokens, sp, max_tokens, stops, state):
                yield chunk(text, None)
            yield chunk("", state["finish_reason"])

    def create_chat_completion(self, messages, temperature=0.8, top_p=0.95, top_k=40, min_p=0.05, typical_p=1.0,
                               stream=False, stop=None, seed=None, max_tokens=None, presence_penalty=0.0,
                               frequency_penalty=0.0, repeat_penalty=1.0, repeat_last_n=64, logprobs=None,
                               mirostat_mode=0, logit_bias=None, grammar=None, model=None):
        """An assistant turn after `messages`, formatted with the chat template
        (apply_chat_template), as an OpenAI chat.completion dict: {id, object, created, model,
        choices: [{index, message: {role, content}, logprobs, finish_reason}], usage}.
        stream=True: chat.completion.chunk dicts, the first with delta {"role": "assistant"},
        then {"content": ...}, the last with an empty delta and the finish_reason. The other
        parameters as create_completion's."""
        _neutral("typical_p", typical_p, 1.0)
        _neutral("logprobs", logprobs or None, None)
        _neutral("mirostat_mode", mirostat_mode, 0)
        _neutral("logit_bias", logit_bias or None, None)
        _neutral("grammar", grammar, None)
        prompt = self.apply_chat_template(messages, add_generation_prompt=True)
        tokens, sp, max_tokens, stops = self._prepare(prompt, max_tokens, temperature, top_p, top_k, min_p,
                                                      repeat_penalty, frequency_penalty, presence_penalty,
                                                      repeat_last_n, seed, stop)
        head = {"id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion", "created": int(time.time()),
                "model": model or self.model_path or "default"}
        if stream:
            return self._stream_chat(head, tokens, sp, max_tokens, stops)
        state = {"completion_tokens": 0}
        with self._generation():
            text = "".join(self._run(tokens, sp, max_tokens, stops, state))
        out = dict(head)
        out["choices"] = [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None,
                           "finish_reason": state["finish_reason"]}]
        out["usage"] = _usage(len(tokens), state["completion_tokens"])
        return out

    def _stream_chat(self, head, tokens, sp, max_tokens, stops):
        head = dict(head, object="chat.completion.chunk")

        def chunk(delta, finish):
            c = dict(head)
            c["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            return c

        state = {"completion_tokens": 0}
        with self._generation():
            yield chunk({"role": "assistant"}, None)
            for text in self._run(tokens, sp, max_tokens, stops, state):
                yield chunk({"content": text}, None)
            yield chunk({}, state["finish_reason"])

    # ---- embeddings -------------------------------------------------------------------------

    def embed(self, input, normalize=True, truncate=True, return_count=False, pooling=None):
        """The embedding of `input` (a str, or a list of them): the hidden states after the
        model's final norm of its tokens (BOS as the vocabulary asks), pooled: `pooling` "mean",
        "cls" (first token) or "last"; None: the GGUF's <arch>.pooling_type, else mean. A str
        gives one list of n_embd floats, a list one such list per text, in order. normalize:
        scaled to length 1 (as OpenAI's; llama-cpp-python's default is False). truncate: a text
        longer than the context keeps its first n_ctx tokens; else it raises. return_count:
        (embeddings, total tokens). Each text runs alone on the context's sequence, which is
        cleared before and after: nothing of a generation before it matters."""
        single = isinstance(input, (str, bytes))
        texts = [input] if single else input
        if not isinstance(texts, (list, tuple)) or not texts:
            raise _bad("input must be a string or a non-empty list of strings, got %r" % (input,))
        if not (pooling is None or isinstance(pooling, str)) or pooling not in _POOLINGS:
            raise _bad("pooling must be one of mean, cls, last or None, got %r" % (pooling,))
        datas = [self._text_bytes(t, "input[%d]" % i) for i, t in enumerate(texts)]
        with self._generation():
            lib = self._lib.lib
            n_embd = lib.rocmforge_model_n_embd(self._model)
            out = (ctypes.c_float * n_embd)()
            vectors, total = [], 0
            for i, data in enumerate(datas):
                tokens = self._tokenize(data, True, False)
                if len(tokens) > self._n_ctx:
                    if not truncate:
                        raise _bad("input[%d] has %d tokens, more than the context of %d" % (i, len(tokens), self._n_ctx))
                    tokens = tokens[:self._n_ctx]
                if not tokens:
                    raise _bad("input[%d] has no tokens" % i)
                total += len(tokens)
                arr = (_library.c_token * len(tokens))(*tokens)
                self._lib.check(lib.rocmforge_kv_seq_clear(self._ctx, 0))
                self._lib.check(lib.rocmforge_embed(self._ctx, arr, len(tokens), 0, _POOLINGS[pooling], bool(normalize),
                                                    out, n_embd))
                vectors.append(list(out))
        result = vectors[0] if single else vectors
        return (result, total) if return_count else result

    def create_embedding(self, input, model=None, pooling=None):
        """OpenAI's embeddings response for `input` (a str or a list of them), normalised:
        {object: "list", data: [{object: "embedding", embedding, index}], model, usage}."""
        vectors, total = self.embed(input, return_count=True, pooling=pooling)
        if isinstance(input, (str, bytes)):
            vectors = [vectors]
        return {"object": "list",
                "data": [{"object": "embedding", "embedding": v, "index": i} for i, v in enumerate(vectors)],
                "model": model or self.model_path or "default",
                "usage": {"prompt_tokens": total, "total_tokens": total}}


# Llama.embed's pooling -> rocmforge_pooling.
_POOLINGS = {None: -1, "mean": 1, "cls": 2, "last": 3}


def _usage(n_prompt, n_completion):
    return {"prompt_tokens": n_prompt, "completion_tokens": n_completion, "total_tokens": n_prompt + n_completion}
