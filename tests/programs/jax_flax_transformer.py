"""A small flax transformer encoder (2 layers, width 256, 4 heads, 128 tokens, batch 8), jitted,
XLA's defaults. TASK=train (default): forward, backward and an optax AdamW step per iteration;
TASK=infer: the forward pass only."""
import os
from corpus_common import STEPS, step_done, mark_loop_start
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax

TASK = os.environ.get("TASK", "train")


class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.LayerNorm()(x)
        x = x + nn.SelfAttention(num_heads=4)(h)
        h = nn.LayerNorm()(x)
        return x + nn.Dense(256)(nn.gelu(nn.Dense(1024)(h)))


class Encoder(nn.Module):
    @nn.compact
    def __call__(self, tokens):
        x = nn.Embed(1000, 256)(tokens)
        for _ in range(2):
            x = Block()(x)
        return nn.Dense(1000)(nn.LayerNorm()(x))


model = Encoder()
key = jax.random.PRNGKey(0)
params = model.init(key, jnp.zeros((8, 128), jnp.int32))
tx = optax.adamw(1e-3)
opt_state = tx.init(params)


@jax.jit
def infer(params, tokens):
    return model.apply(params, tokens)


@jax.jit
def train_step(params, opt_state, tokens):
    def loss_fn(p):
        logits = model.apply(p, tokens)
        return optax.softmax_cross_entropy_with_integer_labels(logits[:, :-1], tokens[:, 1:]).mean()
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


mark_loop_start()
for i in range(STEPS):
    key, k = jax.random.split(key)
    tokens = jax.random.randint(k, (8, 128), 0, 1000)
    if TASK == "infer":
        step_done(i, infer(params, tokens))
    else:
        params, opt_state, loss = train_step(params, opt_state, tokens)
        step_done(i, float(loss))
