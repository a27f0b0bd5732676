"""A CuPy loop: elementwise kernels, a reduction and a matrix product per step."""
from corpus_common import STEPS, step_done, mark_loop_start
import cupy as cp

rng = cp.random.RandomState(0)
w = rng.standard_normal((512, 512), dtype=cp.float32)
mark_loop_start()
for i in range(STEPS):
    x = rng.standard_normal((256, 512), dtype=cp.float32)
    h = cp.tanh(x @ w)
    h = h * 0.5 + cp.sin(h)
    step_done(i, h.sum(axis=1))
