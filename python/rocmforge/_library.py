"""Finds librocmforge.so.0 and declares the C API (core/include/rocmforge/rocmforge.h) for ctypes.

Where the library is looked for, first hit wins:
  1. the path given to rocmforge.load_library(path): the library file, or a folder holding it
     (a meson build folder, whose library is api/librocmforge.so.0, or an install prefix's lib/);
  2. the path meson wrote into _paths.py: the build folder's library for the copy of the package
     in <build>/python, the installed library for the installed package;
  3. a copy next to the package (rocmforge/librocmforge.so.0);
  4. the dynamic loader's own search (LD_LIBRARY_PATH, the ld.so cache).
When the library is a build folder's, the build folder's plugin folders (backends/cpu, ...) are
handed to every model load (rocmforge_model_params.plugin_dirs), as the CLI finds them next to
itself; an installed library finds its plugins in <libdir>/rocmforge on its own.
"""

import ctypes
import os
import threading

from . import errors

SONAME = "librocmforge.so.0"
# The fields this package sets (plugin_dirs, the frequency and presence penalties) and
# rocmforge_api_version itself came with API 0.3; rocmforge_embed with 0.4.
API_MAJOR = 0
API_MINOR_NEEDED = 4

c_token = ctypes.c_int32


class ModelParams(ctypes.Structure):
    _fields_ = [
        ("config_path", ctypes.c_char_p),
        ("backends", ctypes.c_char_p),
        ("device", ctypes.c_int32),
        ("n_threads", ctypes.c_int32),
        ("use_mmap", ctypes.c_bool),
        ("progress_callback", ctypes.c_void_p),
        ("progress_callback_user_data", ctypes.c_void_p),
        ("backend_options", ctypes.c_char_p),
        ("plugin_dirs", ctypes.c_char_p),
    ]


class ContextParams(ctypes.Structure):
    _fields_ = [
        ("n_ctx", ctypes.c_uint32),
        ("n_batch", ctypes.c_uint32),
        ("n_seq_max", ctypes.c_uint32),
        ("type_k", ctypes.c_int),
        ("type_v", ctypes.c_int),
    ]


class Batch(ctypes.Structure):
    _fields_ = [
        ("n_tokens", ctypes.c_int32),
        ("token", ctypes.POINTER(c_token)),
        ("seq_id", ctypes.POINTER(ctypes.c_int32)),
        ("logits", ctypes.POINTER(ctypes.c_int8)),
    ]


class SamplerParams(ctypes.Structure):
    _fields_ = [
        ("temperature", ctypes.c_float),
        ("top_k", ctypes.c_int32),
        ("top_p", ctypes.c_float),
        ("min_p", ctypes.c_float),
        ("repeat_penalty", ctypes.c_float),
        ("repeat_last_n", ctypes.c_int32),
        ("seed", ctypes.c_uint32),
        ("frequency_penalty", ctypes.c_float),
        ("presence_penalty", ctypes.c_float),
    ]


class ChatMessage(ctypes.Structure):
    _fields_ = [("role", ctypes.c_char_p), ("content", ctypes.c_char_p)]


_P = ctypes.c_void_p  # opaque handles: rocmforge_model *, rocmforge_context *, rocmforge_sampler *
_STATUS = ctypes.c_int
_SIZE_P = ctypes.POINTER(ctypes.c_size_t)

# name: (restype, argtypes)
_PROTOTYPES = {
    "rocmforge_api_version": (ctypes.c_uint32, []),
    "rocmforge_last_error": (ctypes.c_char_p, []),
    "rocmforge_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "rocmforge_version": (ctypes.c_char_p, []),
    "rocmforge_model_default_params": (ModelParams, []),
    "rocmforge_model_load": (_STATUS, [ctypes.c_char_p, ctypes.POINTER(ModelParams), ctypes.POINTER(_P)]),
    "rocmforge_model_free": (None, [_P]),
    "rocmforge_model_n_vocab": (ctypes.c_int32, [_P]),
    "rocmforge_model_n_ctx_train": (ctypes.c_int32, [_P]),
    "rocmforge_model_n_embd": (ctypes.c_int32, [_P]),
    "rocmforge_model_desc": (_STATUS, [_P, ctypes.c_char_p, ctypes.c_size_t, _SIZE_P]),
    "rocmforge_model_meta_val_str": (_STATUS, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _SIZE_P]),
    "rocmforge_model_backend": (ctypes.c_char_p, [_P]),
    "rocmforge_token_bos": (c_token, [_P]),
    "rocmforge_token_eos": (c_token, [_P]),
    "rocmforge_token_is_eog": (ctypes.c_bool, [_P, c_token]),
    "rocmforge_tokenize": (_STATUS, [_P, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(c_token), ctypes.c_size_t,
                                     ctypes.c_bool, ctypes.c_bool, _SIZE_P]),
    "rocmforge_token_to_piece": (_STATUS, [_P, c_token, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_bool, _SIZE_P]),
    "rocmforge_detokenize": (_STATUS, [_P, ctypes.POINTER(c_token), ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.c_bool, ctypes.c_bool, _SIZE_P]),
    "rocmforge_chat_apply_template": (_STATUS, [_P, ctypes.c_char_p, ctypes.POINTER(ChatMessage), ctypes.c_size_t,
                                                ctypes.c_bool, ctypes.c_char_p, ctypes.c_size_t, _SIZE_P]),
    "rocmforge_context_default_params": (ContextParams, []),
    "rocmforge_context_init": (_STATUS, [_P, ctypes.POINTER(ContextParams), ctypes.POINTER(_P)]),
    "rocmforge_context_free": (None, [_P]),
    "rocmforge_n_ctx": (ctypes.c_uint32, [_P]),
    "rocmforge_decode": (_STATUS, [_P, ctypes.POINTER(Batch)]),
    "rocmforge_kv_seq_clear": (_STATUS, [_P, ctypes.c_int32]),
    "rocmforge_kv_seq_length": (ctypes.c_int32, [_P, ctypes.c_int32]),
    "rocmforge_sampler_default_params": (SamplerParams, []),
    "rocmforge_sampler_init": (_STATUS, [ctypes.POINTER(SamplerParams), ctypes.POINTER(_P)]),
    "rocmforge_sampler_free": (None, [_P]),
    "rocmforge_sampler_sample": (_STATUS, [_P, _P, ctypes.c_int32, ctypes.POINTER(c_token)]),
    "rocmforge_sampler_accept": (None, [_P, c_token]),
    "rocmforge_embed": (_STATUS, [_P, ctypes.POINTER(c_token), ctypes.c_int32, ctypes.c_int32, ctypes.c_int,
                                  ctypes.c_bool, ctypes.POINTER(ctypes.c_float), ctypes.c_size_t]),
}


class Library:
    """The loaded librocmforge: `lib` the ctypes handle with the prototypes set, `path` where it
    was found, `plugin_dirs` the build folder's plugin folders (empty for an installed library)."""

    def __init__(self, path, lib):
        self.path = path
        self.lib = lib
        # A bare soname came through the loader's search: an installed library.
        self.plugin_dirs = _build_tree_plugin_dirs(path) if os.path.dirname(path) else []
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes

    def check(self, status):
        """Raises the exception of a non-zero status with the calling thread's last error."""
        if status != errors.OK:
            raise errors.error_for(status, self.last_error())

    def last_error(self):
        return (self.lib.rocmforge_last_error() or b"").decode("utf-8", "replace")


_lock = threading.Lock()
_loaded = None


def _build_tree_plugin_dirs(lib_path):
    # A meson build folder: <build>/api/librocmforge.so.0 next to <build>/meson-info. Its plugins
    # sit where the CLI finds them relative to build/tools.
    real = os.path.realpath(lib_path)
    api_dir = os.path.dirname(real)
    build = os.path.dirname(api_dir)
    if os.path.basename(api_dir) != "api" or not os.path.isdir(os.path.join(build, "meson-info")):
        return []
    dirs = [os.path.join(build, d) for d in ("backends/cpu", "backends/hip", "profiler", "plugins")]
    return [d for d in dirs if os.path.isdir(d)]


def _candidates_under(folder):
    return [os.path.join(folder, SONAME), os.path.join(folder, "api", SONAME), os.path.join(folder, "lib", SONAME)]


def _default_candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    try:
        from . import _paths  # written by meson: absent in the source tree

        lib = _paths.LIBRARY
        found.append(lib if os.path.isabs(lib) else os.path.normpath(os.path.join(here, lib)))
    except ImportError:
        pass
    found.append(os.path.join(here, SONAME))
    return found


def _open(path, tried):
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        tried.append("%s (%s)" % (path, e))
        return None
    if not hasattr(lib, "rocmforge_api_version"):
        raise errors.LibraryNotFoundError(
            "%s has no rocmforge_api_version: it is older than API %d.%d, which this package needs" %
            (path, API_MAJOR, API_MINOR_NEEDED))
    lib.rocmforge_api_version.restype = ctypes.c_uint32
    version = lib.rocmforge_api_version()
    major, minor = version >> 16, version & 0xFFFF
    if major != API_MAJOR or minor < API_MINOR_NEEDED:
        raise errors.LibraryNotFoundError("%s has API %d.%d; this package needs %d.%d or a later %d.x" %
                                          (path, major, minor, API_MAJOR, API_MINOR_NEEDED, API_MAJOR))
    return Library(path, lib)


def load_library(path=None):
    """Loads librocmforge (once per process) and returns it.

    path: the library file, or a folder holding it (a build folder or an install prefix);
    None: the default search (module docstring). A second call naming another library than the
    one loaded raises LibraryNotFoundError: a process holds one librocmforge."""
    global _loaded
    with _lock:
        if _loaded is not None:
            if path is not None and not _same_library(path, _loaded.path):
                raise errors.LibraryNotFoundError("librocmforge is already loaded from %s; cannot load %s as well" %
                                                  (_loaded.path, path))
            return _loaded
        tried = []
        if path is not None:
            path = os.fspath(path)
            if os.path.isdir(path):
                names = [c for c in _candidates_under(path) if os.path.exists(c)]
                if not names:
                    raise errors.LibraryNotFoundError("no %s in %s" % (SONAME, ", ".join(_candidates_under(path))))
            elif os.path.exists(path):
                names = [path]
            else:
                raise errors.LibraryNotFoundError("%s does not exist" % path)
        else:
            names = [c for c in _default_candidates() if os.path.exists(c)] + [SONAME]
        for name in names:
            found = _open(name, tried)
            if found is not None:
                _loaded = found
                return found
        raise errors.LibraryNotFoundError(
            "cannot load %s; tried:\n  %s\nFrom a build folder put <build>/python on PYTHONPATH or call "
            "rocmforge.load_library('<build>') (docs/EMBEDDING.md, section Python)" % (SONAME, "\n  ".join(tried)))


def _same_library(path, loaded):
    path = os.fspath(path)
    if os.path.isdir(path):
        return any(os.path.exists(c) and os.path.samefile(c, loaded) for c in _candidates_under(path))
    return os.path.exists(path) and os.path.exists(loaded) and os.path.samefile(path, loaded)
