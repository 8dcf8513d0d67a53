"""The exceptions of the package: one class per C API status (rocmforge_status), all under
RocmforgeError, each carrying the library's message and its status code.

The classes also derive from the built-in exception a Python caller would expect for the same
failure (InvalidArgumentError is a ValueError, FileError an OSError, OutOfMemoryError a
MemoryError), so `except ValueError` keeps working around code that uses this package.
"""

OK = 0
ERR_INVALID_ARGUMENT = 1
ERR_FILE = 2
ERR_UNSUPPORTED = 3
ERR_BACKEND = 4
ERR_OUT_OF_MEMORY = 5
ERR_CONTEXT_FULL = 6
ERR_BUFFER_TOO_SMALL = 7
ERR_CANCELLED = 8
ERR_INTERNAL = 9


class RocmforgeError(Exception):
    """A failed call: `code` is the C API's rocmforge_status (an int; None for failures found
    before the library was reached, such as a missing library), `status` its name ("file
    error"), `message` the library's text (rocmforge_last_error())."""

    code = None
    status = "error"

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return "%s (%s)" % (self.message, self.status) if self.status else self.message


class LibraryNotFoundError(RocmforgeError, OSError):
    """librocmforge.so.0 could not be found or loaded, or is older than this package needs."""

    status = "library not found"


class InvalidArgumentError(RocmforgeError, ValueError):
    """A bad option or argument: null, out of range, unknown name, wrong type."""

    code = ERR_INVALID_ARGUMENT
    status = "invalid argument"


class FileError(RocmforgeError, OSError):
    """A missing, unreadable or malformed file."""

    code = ERR_FILE
    status = "file error"


class UnsupportedError(RocmforgeError):
    """Valid input this version cannot handle (a model without a chat template, ...)."""

    code = ERR_UNSUPPORTED
    status = "unsupported"


class BackendError(RocmforgeError):
    """No backend could start, or a backend failed."""

    code = ERR_BACKEND
    status = "backend error"


class OutOfMemoryError(RocmforgeError, MemoryError):
    """The model or the KV cache does not fit the backend's memory."""

    code = ERR_OUT_OF_MEMORY
    status = "out of memory"


class ContextFullError(RocmforgeError):
    """The prompt does not fit the context (n_ctx)."""

    code = ERR_CONTEXT_FULL
    status = "context full"


class BufferTooSmallError(RocmforgeError):
    code = ERR_BUFFER_TOO_SMALL
    status = "buffer too small"


class CancelledError(RocmforgeError):
    code = ERR_CANCELLED
    status = "cancelled"


class InternalError(RocmforgeError):
    code = ERR_INTERNAL
    status = "internal error"


_BY_CODE = {cls.code: cls for cls in (InvalidArgumentError, FileError, UnsupportedError, BackendError,
                                      OutOfMemoryError, ContextFullError, BufferTooSmallError, CancelledError,
                                      InternalError)}


def error_for(code, message):
    """The exception for a non-zero rocmforge_status."""
    cls = _BY_CODE.get(code)
    if cls is None:
        err = RocmforgeError(message, code)
        err.status = "status %d" % code
        return err
    return cls(message)
