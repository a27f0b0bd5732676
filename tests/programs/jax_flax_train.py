"""A flax CNN trained with optax under jit. XLA_FLAGS chooses XLA's settings (scripts/gpu/corpus.py
runs it with autotuning off, with XLA's defaults, and with command buffers off)."""
import os
from corpus_common import STEPS, step_begins, step_done, mark_loop_start
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(32, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = nn.relu(nn.Conv(64, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(128)(x))
        return nn.Dense(10)(x)


model = CNN()
key = jax.random.PRNGKey(0)
params = model.init(key, jnp.ones((32, 32, 32, 3)))
tx = optax.adam(1e-3)
opt_state = tx.init(params)


@jax.jit
def train_step(params, opt_state, x, y):
    def loss_fn(p):
        logits = model.apply(p, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


mark_loop_start()
for i in range(STEPS):
    step_begins(i)
    key, kx, ky = jax.random.split(key, 3)
    x = jax.random.normal(kx, (32, 32, 32, 3))
    y = jax.random.randint(ky, (32,), 0, 10)
    params, opt_state, loss = train_step(params, opt_state, x, y)
    step_done(i, float(loss))
