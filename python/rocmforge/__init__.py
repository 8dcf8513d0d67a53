"""ROCmForge from Python: a ctypes binding over librocmforge.so.0 (the C API,
core/include/rocmforge/rocmforge.h), shaped like llama-cpp-python.

    from rocmforge import Llama
    with Llama("model.gguf", n_ctx=2048) as llm:
        out = llm("Once upon a time", max_tokens=32, seed=1)
        print(out["choices"][0]["text"])

Where the library is found, threads, lifetimes and errors: docs/EMBEDDING.md, section Python.
"""

from ._library import load_library
from .errors import (BackendError, BufferTooSmallError, CancelledError, ContextFullError, FileError,
                     InternalError, InvalidArgumentError, LibraryNotFoundError, OutOfMemoryError, RocmforgeError,
                     UnsupportedError)
from .llama import ClosedError, Llama

try:
    from ._paths import VERSION as __version__  # the meson project's version
except ImportError:
    __version__ = "source tree"


def library_version():
    """The loaded librocmforge's version ("0.1.0") and API version ((major, minor))."""
    lib = load_library()
    v = lib.lib.rocmforge_api_version()
    return lib.lib.rocmforge_version().decode(), (v >> 16, v & 0xFFFF)


__all__ = ["Llama", "load_library", "library_version", "RocmforgeError", "LibraryNotFoundError",
           "InvalidArgumentError", "FileError", "UnsupportedError", "BackendError", "OutOfMemoryError",
           "ContextFullError", "BufferTooSmallError", "CancelledError", "InternalError", "ClosedError"]
