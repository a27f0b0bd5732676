"""Hand-written Triton kernels in a model's forward pass, as people write them after the Triton
tutorials: a matmul autotuned over a few tile configurations (Triton times each candidate at the
first call, with CUDA events and a cache-flushing fill between runs), a row softmax, and PyTorch
ops between them. Kernels come from Triton's own launcher (cuLaunchKernelEx or cuLaunchKernel on
modules loaded at run time), not from PyTorch's. An MLP block on a batch of 256 rows, fp16."""
from corpus_common import STEPS, step_done, mark_loop_start, torch_setup
torch = torch_setup()
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
        triton.Config({"BM": 128, "BN": 64, "BK": 32}, num_warps=4, num_stages=3),
        triton.Config({"BM": 64, "BN": 128, "BK": 64}, num_warps=8, num_stages=3),
    ],
    key=["M", "N", "K"],
)
@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a_tile = tl.load(a + rows[:, None] * sam + (k0 + ks)[None, :] * sak,
                         mask=(rows[:, None] < M) & ((k0 + ks)[None, :] < K), other=0.0)
        b_tile = tl.load(b + (k0 + ks)[:, None] * sbk + cols[None, :] * sbn,
                         mask=((k0 + ks)[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a_tile, b_tile)
    tl.store(c + rows[:, None] * scm + cols[None, :] * scn, acc.to(tl.float16),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def row_softmax_kernel(x, y, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    keep = offsets < n_cols
    values = tl.load(x + row * stride + offsets, mask=keep, other=-float("inf")).to(tl.float32)
    values = values - tl.max(values, axis=0)
    e = tl.exp(values)
    tl.store(y + row * stride + offsets, (e / tl.sum(e, axis=0)).to(tl.float16), mask=keep)


def matmul(a, b):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    return c


def softmax(x):
    y = torch.empty_like(x)
    row_softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


g = torch.Generator(device="cuda").manual_seed(11)
w1 = (torch.randn(1024, 2048, device="cuda", generator=g) / 32).half()
w2 = (torch.randn(2048, 1024, device="cuda", generator=g) / 45).half()
norm = torch.nn.LayerNorm(1024).cuda().half()
mark_loop_start()
with torch.inference_mode():
    for i in range(STEPS):
        x = torch.randn(256, 1024, device="cuda", generator=g).half()
        h = softmax(matmul(norm(x), w1))
        y = x + matmul(h * 2048.0, w2)
        step_done(i, y)
