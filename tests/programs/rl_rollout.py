"""Proximal policy optimisation as small RL codebases write it (CleanRL's ppo.py): 16 cart-pole
environments simulated in NumPy on the host, a small actor-critic MLP on the GPU; every
environment step copies the observations to the GPU, samples actions there and copies them back
(.cpu().numpy(), a sync per step); after 128 such steps, generalised advantage estimation and 4
epochs of 8 shuffled minibatches with Adam and gradient clipping. One corpus step is one rollout
and its update: thousands of tiny kernels, nearly all host time."""
import numpy as np
from corpus_common import STEPS, step_done, mark_loop_start, final_state, torch_setup
torch = torch_setup()
nn = torch.nn

ENVS, ROLLOUT, EPOCHS, MINIBATCHES, GAMMA, LAMBDA, CLIP = 16, 128, 4, 8, 0.99, 0.95, 0.2


class CartPoles:
    """Vectorised cart-pole dynamics (Gym's CartPole-v1), reset where an episode ends."""

    def __init__(self, n, seed):
        self.rng = np.random.default_rng(seed)
        self.state = self.rng.uniform(-0.05, 0.05, (n, 4)).astype(np.float32)
        self.steps = np.zeros(n, dtype=np.int64)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(action == 1, 10.0, -10.0)
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        self.state = np.stack([x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot,
                               theta_dot + 0.02 * theta_acc], axis=1).astype(np.float32)
        self.steps += 1
        done = (np.abs(self.state[:, 0]) > 2.4) | (np.abs(self.state[:, 2]) > 0.2095) | (self.steps >= 500)
        reward = np.ones(len(done), dtype=np.float32)
        if done.any():
            self.state[done] = self.rng.uniform(-0.05, 0.05, (int(done.sum()), 4)).astype(np.float32)
            self.steps[done] = 0
        return self.state, reward, done


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor = nn.Sequential(nn.Linear(4, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 2))

    def value(self, x):
        return self.critic(x).squeeze(-1)

    def act(self, x, action=None):
        dist = torch.distributions.Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(x)


envs = CartPoles(ENVS, seed=1)
agent = Agent().cuda()
opt = torch.optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
obs_buf = torch.zeros(ROLLOUT, ENVS, 4, device="cuda")
act_buf = torch.zeros(ROLLOUT, ENVS, dtype=torch.long, device="cuda")
logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(ROLLOUT, ENVS, device="cuda") for _ in range(4))
obs = torch.as_tensor(envs.state, device="cuda")
done = torch.zeros(ENVS, device="cuda")

mark_loop_start()
for step in range(STEPS):
    for t in range(ROLLOUT):
        obs_buf[t], done_buf[t] = obs, done
        with torch.no_grad():
            action, logp, _, value = agent.act(obs)
        act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
        next_obs, reward, next_done = envs.step(action.cpu().numpy())
        rew_buf[t] = torch.as_tensor(reward, device="cuda")
        obs = torch.as_tensor(next_obs, device="cuda")
        done = torch.as_tensor(next_done.astype(np.float32), device="cuda")
    with torch.no_grad():
        next_value = agent.value(obs)
        advantages = torch.zeros_like(rew_buf)
        last = torch.zeros(ENVS, device="cuda")
        for t in reversed(range(ROLLOUT)):
            not_done = 1.0 - (done if t == ROLLOUT - 1 else done_buf[t + 1])
            following = next_value if t == ROLLOUT - 1 else val_buf[t + 1]
            delta = rew_buf[t] + GAMMA * following * not_done - val_buf[t]
            last = delta + GAMMA * LAMBDA * not_done * last
            advantages[t] = last
        returns = advantages + val_buf
    b_obs, b_act, b_logp = obs_buf.reshape(-1, 4), act_buf.reshape(-1), logp_buf.reshape(-1)
    b_adv, b_ret = advantages.reshape(-1), returns.reshape(-1)
    size = ROLLOUT * ENVS
    for epoch in range(EPOCHS):
        order = torch.randperm(size, device="cuda")
        for start in range(0, size, size // MINIBATCHES):
            mb = order[start:start + size // MINIBATCHES]
            _, new_logp, entropy, new_value = agent.act(b_obs[mb], b_act[mb])
            ratio = (new_logp - b_logp[mb]).exp()
            adv = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - CLIP, 1 + CLIP)).mean()
            value_loss = 0.5 * ((new_value - b_ret[mb]) ** 2).mean()
            loss = policy_loss - 0.01 * entropy.mean() + 0.5 * value_loss
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            opt.step()
    step_done(step, loss, rew_buf.sum())
final_state(*agent.parameters())
