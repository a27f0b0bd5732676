"""A CuPy reaction-diffusion simulation as numerical scripts write it: Gray-Scott on a 512x512
periodic grid, the diffusion taken implicitly in Fourier space (cupy.fft.rfft2/irfft2: cuFFT,
its plans cached by CuPy), the reaction terms in an ElementwiseKernel, a seeded perturbation
from cupy.random (cuRAND) every 25 steps, and the mean concentration reduced every step."""
from corpus_common import STEPS, step_done, mark_loop_start
import cupy as cp

N, DT, DU, DV, FEED, KILL = 512, 1.0, 0.16, 0.08, 0.035, 0.065
react = cp.ElementwiseKernel(
    "float32 u, float32 v, float32 dt, float32 feed, float32 kill", "float32 du, float32 dv",
    "float uvv = u * v * v; du = u + dt * (-uvv + feed * (1.0f - u)); dv = v + dt * (uvv - (feed + kill) * v);",
    "gray_scott_react")
k = cp.fft.fftfreq(N).astype(cp.float32) * 2 * cp.pi * N / 4
k2 = k[:, None] ** 2 + cp.fft.rfftfreq(N).astype(cp.float32)[None, :] ** 2 * (2 * cp.pi * N / 4) ** 2
implicit_u = (1.0 / (1.0 + DT * DU * k2 / N)).astype(cp.complex64)
implicit_v = (1.0 / (1.0 + DT * DV * k2 / N)).astype(cp.complex64)
rng = cp.random.RandomState(3)
u = cp.ones((N, N), dtype=cp.float32)
v = cp.zeros((N, N), dtype=cp.float32)
u[N // 2 - 16:N // 2 + 16, N // 2 - 16:N // 2 + 16] = 0.5
v[N // 2 - 16:N // 2 + 16, N // 2 - 16:N // 2 + 16] = 0.25
mark_loop_start()
for i in range(STEPS):
    if i % 25 == 0:
        v += 0.01 * rng.standard_normal((N, N), dtype=cp.float32)
    u, v = react(u, v, cp.float32(DT), cp.float32(FEED), cp.float32(KILL))
    u = cp.fft.irfft2(cp.fft.rfft2(u) * implicit_u, s=(N, N)).astype(cp.float32)
    v = cp.fft.irfft2(cp.fft.rfft2(v) * implicit_v, s=(N, N)).astype(cp.float32)
    step_done(i, u.mean(), v.mean())
