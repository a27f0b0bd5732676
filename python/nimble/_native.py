"""ctypes binding of libnimble_graph.so (replayer/include/nimble/nimble_graph.h)."""
import ctypes
import json
import os
from pathlib import Path


class NimbleError(RuntimeError):
    """nimble could not do what was asked; the message says why and what to do."""


_LIB_NAME = "libnimble_graph.so"


def _candidates():
    env = os.environ.get("NIMBLE_GRAPH_LIB")
    if env:  # an explicit choice is the only one
        yield Path(env)
        return
    here = Path(__file__).resolve().parent
    yield here / _LIB_NAME                       # installed with the package
    yield here.parent.parent / "build" / "lib" / _LIB_NAME  # a source checkout, built


_lib = None


def library():
    """The loaded C library (loaded once)."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_file():
            lib = ctypes.CDLL(str(path))
            break
    else:
        raise NimbleError(f"{_LIB_NAME} not found (looked at {', '.join(tried)}); build it with "
                          "`cmake -S . -B build && cmake --build build --target nimble_graph` "
                          "or set NIMBLE_GRAPH_LIB to its path")
    lib.nimble_graph_session_new.restype = ctypes.c_void_p
    lib.nimble_graph_session_new.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.nimble_graph_session_free.argtypes = [ctypes.c_void_p]
    lib.nimble_graph_mark.restype = ctypes.c_int
    lib.nimble_graph_mark.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t,
                                      ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                                      ctypes.POINTER(ctypes.c_uint8), ctypes.c_char_p, ctypes.c_size_t]
    lib.nimble_graph_rewire.restype = ctypes.c_int
    lib.nimble_graph_rewire.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_char_p,
                                        ctypes.c_char_p, ctypes.c_size_t]
    _lib = lib
    return lib


class Session:
    """Follows one or more stream captures: which operation issued each captured node."""

    def __init__(self):
        self._lib = library()
        err = ctypes.create_string_buffer(1024)
        self._handle = self._lib.nimble_graph_session_new(err, len(err))
        if not self._handle:
            raise NimbleError(err.value.decode())
        self._err = ctypes.create_string_buffer(1024)

    def mark(self, stream, extents):
        """`extents`: (address, size, written) of the storages the operation touched; empty for
        nodes of unknown origin. Returns how many captured nodes the mark attributed."""
        n = len(extents)
        addrs = (ctypes.c_uint64 * n)(*[e[0] for e in extents])
        sizes = (ctypes.c_uint64 * n)(*[e[1] for e in extents])
        written = (ctypes.c_uint8 * n)(*[1 if e[2] else 0 for e in extents])
        fresh = self._lib.nimble_graph_mark(self._handle, stream, n, addrs, sizes, written, self._err,
                                            len(self._err))
        if fresh < 0:
            raise NimbleError(self._err.value.decode())
        return fresh

    def rewire(self, graph, wiring):
        """Replaces the edges of the captured `graph` (a CUgraph as an int); returns the report."""
        size = 1 << 16
        report = ctypes.create_string_buffer(size)
        rc = self._lib.nimble_graph_rewire(self._handle, graph, wiring.encode(), report, size)
        if rc != 0:
            raise NimbleError(f"rewiring the captured graph ({wiring}) failed: {report.value.decode()}")
        return json.loads(report.value.decode())

    def close(self):
        if self._handle:
            self._lib.nimble_graph_session_free(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter teardown
            pass
