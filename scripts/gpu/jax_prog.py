"""JAX: a jitted MLP forward and gradient step. XLA launches through the driver only; run with
XLA_FLAGS=--xla_gpu_enable_command_buffer= so kernels are launched one by one (not as CUDA graphs).
JAX has no profiler-range API of its own: cuProfilerStart/Stop are called from libcuda via ctypes."""
import ctypes

import jax
import jax.numpy as jnp

libcuda = ctypes.CDLL("libcuda.so.1")


def loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


@jax.jit
def train_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)


key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
params = {"w1": jax.random.normal(k1, (512, 1024)), "b1": jnp.zeros(1024),
          "w2": jax.random.normal(k2, (1024, 10)), "b2": jnp.zeros(10)}
x = jax.random.normal(k3, (256, 512))
y = jax.random.normal(k4, (256, 10))
for _ in range(5):
    params = train_step(params, x, y)
jax.block_until_ready(params)
libcuda.cuProfilerStart()
params = train_step(params, x, y)
jax.block_until_ready(params)
libcuda.cuProfilerStop()
print("jax_prog: w2[0,0]", float(params["w2"][0, 0]), "devices", jax.devices())
