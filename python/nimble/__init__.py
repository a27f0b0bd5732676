"""nimble's Python API: the Nimble speedup inside your own program.

    import nimble.torch
    fast = nimble.torch.Nimble(model)
    fast.prepare(example_input)       # capture once, infer dependencies, rewire, choose
    out = fast(new_input)             # replay the multi-stream graph

See docs/python.md.
"""
from ._native import NimbleError

__all__ = ["NimbleError", "torch"]
__version__ = "0.1.0"


def __getattr__(name):
    # nimble.torch imports PyTorch: only when asked for.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(name)
