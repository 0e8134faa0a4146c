"""Berkeley CS285 homework 2 (policy gradients), on a NumPy point-mass and a NumPy chain world:
``pytorch_util``'s ``build_mlp`` (activations looked up by name in a dict, ``nn.Sequential(*layers)``),
``from_numpy``/``to_numpy``; MLPPolicyPG with a ``logstd`` ``nn.Parameter`` and
``distributions.Normal(mean, torch.exp(self.logstd))`` (continuous) or
``distributions.Categorical(logits=...)`` (discrete), ``log_prob(...).sum(-1)`` for the
continuous policy, the loss ``-(log_prob * advantages).mean()``; reward-to-go by a Python loop
and by ``torch.flip``/``torch.cumsum`` over ``gamma ** torch.arange(T)``, the full discounted
return repeated per step; a ValueCritic trained by ``F.mse_loss`` on several gradient steps;
GAE by the homework's reversed loop with terminal flags, next to a vectorised version by
``torch.flip``; advantages normalised with ``std() + 1e-8``; Adam on both networks. Actions are
drawn from NumPy noise through the distributions' parameters (``mean + std * eps``, an inverse-CDF
categorical) so both libraries see the same trajectories.

    python cs285_policy_gradient.py [torch|numbagrad]
"""
from typing import Union

import numpy as np

from _common import BACKEND, numpy_init, show

if BACKEND == "torch":
    import torch
    from torch import distributions, nn, optim
    import torch.nn.functional as F
else:
    import numbagrad as torch
    from numbagrad import distributions, nn, optim
    import numbagrad.nn.functional as F

rng = np.random.default_rng(285)

# ---------------------------------------------------------------- infrastructure/pytorch_util.py
Activation = Union[str, nn.Module]

_str_to_activation = {
    'relu': nn.ReLU(),
    'tanh': nn.Tanh(),
    'leaky_relu': nn.LeakyReLU(),
    'sigmoid': nn.Sigmoid(),
    'selu': nn.SELU(),
    'softplus': nn.Softplus(),
    'identity': nn.Identity(),
}

device = None


def build_mlp(input_size: int, output_size: int, n_layers: int, size: int,
              activation: Activation = 'tanh', output_activation: Activation = 'identity'):
    """Builds a feedforward neural network"""
    if isinstance(activation, str):
        activation = _str_to_activation[activation]
    if isinstance(output_activation, str):
        output_activation = _str_to_activation[output_activation]
    layers = []
    in_size = input_size
    for _ in range(n_layers):
        layers.append(nn.Linear(in_size, size))
        layers.append(activation)
        in_size = size
    layers.append(nn.Linear(in_size, output_size))
    layers.append(output_activation)

    mlp = nn.Sequential(*layers)
    mlp.to(device)
    return mlp


def init_gpu(use_gpu=True, gpu_id=0):
    global device
    if torch.cuda.is_available() and use_gpu:
        device = torch.device("cuda:" + str(gpu_id))
    else:
        device = torch.device("cpu")


def from_numpy(data: Union[np.ndarray, dict], **kwargs):
    if isinstance(data, dict):
        return {k: from_numpy(v) for k, v in data.items()}
    data = torch.from_numpy(data, **kwargs)
    if data.dtype == torch.float64:
        data = data.float()
    return data.to(device)


def to_numpy(tensor: torch.Tensor):
    return tensor.to('cpu').detach().numpy()


init_gpu(use_gpu=False)


# ---------------------------------------------------------------- policies.py
class MLPPolicyPG(nn.Module):
    def __init__(self, ac_dim, ob_dim, discrete, n_layers, layer_size, learning_rate):
        super().__init__()
        if discrete:
            self.logits_net = build_mlp(input_size=ob_dim, output_size=ac_dim,
                                        n_layers=n_layers, size=layer_size).to(device)
            parameters = self.logits_net.parameters()
        else:
            self.mean_net = build_mlp(input_size=ob_dim, output_size=ac_dim,
                                      n_layers=n_layers, size=layer_size).to(device)
            self.logstd = nn.Parameter(torch.zeros(ac_dim, dtype=torch.float32, device=device))
            parameters = list(self.mean_net.parameters()) + [self.logstd]
        self.optimizer = optim.Adam(parameters, learning_rate)
        self.discrete = discrete

    @torch.no_grad()
    def get_action(self, obs: np.ndarray) -> np.ndarray:
        """Takes a single observation (as a numpy array) and returns a single action."""
        dist = self(from_numpy(obs[None]))
        if self.discrete:
            # dist.sample(), by inverse CDF on a NumPy uniform
            cdf = torch.cumsum(dist.probs, -1)
            action = (cdf < float(rng.random())).sum(-1).clamp(max=cdf.shape[-1] - 1)
        else:
            # dist.sample() == mean + std * eps, eps from NumPy
            action = dist.mean + dist.stddev * from_numpy(rng.normal(size=dist.mean.shape))
        return to_numpy(action)[0]

    def forward(self, obs: torch.FloatTensor):
        if self.discrete:
            logits = self.logits_net(obs)
            return distributions.Categorical(logits=logits)
        mean = self.mean_net(obs)
        std = torch.exp(self.logstd)
        return distributions.Normal(mean, std)

    def update(self, obs: np.ndarray, actions: np.ndarray, advantages: np.ndarray) -> dict:
        """Implements the policy gradient actor update."""
        obs = from_numpy(obs)
        actions = from_numpy(actions)
        advantages = from_numpy(advantages)

        dist = self(obs)
        if self.discrete:
            log_prob = dist.log_prob(actions)
        else:
            log_prob = dist.log_prob(actions).sum(dim=-1)
        loss = -(log_prob * advantages).mean()

        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"Actor Loss": to_numpy(loss), "Entropy": to_numpy(dist.entropy().mean())}


# ---------------------------------------------------------------- critics.py
class ValueCritic(nn.Module):
    """Value network, which takes an observation and outputs a value for that observation."""

    def __init__(self, ob_dim, n_layers, layer_size, learning_rate):
        super().__init__()
        self.network = build_mlp(input_size=ob_dim, output_size=1, n_layers=n_layers,
                                 size=layer_size).to(device)
        self.optimizer = optim.Adam(self.network.parameters(), learning_rate)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.network(obs).squeeze(-1)

    def update(self, obs: np.ndarray, q_values: np.ndarray) -> dict:
        obs = from_numpy(obs)
        q_values = from_numpy(q_values)
        loss = F.mse_loss(self(obs), q_values)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"Baseline Loss": to_numpy(loss)}


# ---------------------------------------------------------------- pg_agent.py pieces
def _discounted_return(rewards, gamma):
    """The full discounted return of a trajectory, the same for every step."""
    total = sum(gamma ** t * r for t, r in enumerate(rewards))
    return [total] * len(rewards)


def _discounted_reward_to_go(rewards, gamma):
    """Reward-to-go by a loop from the back."""
    out = np.zeros(len(rewards))
    running = 0.0
    for t in reversed(range(len(rewards))):
        running = rewards[t] + gamma * running
        out[t] = running
    return out


def discounted_cumsum_torch(rewards: torch.Tensor, gamma: float) -> torch.Tensor:
    """sum_{t'>=t} gamma^(t'-t) r_t' through flip/cumsum."""
    discounts = gamma ** torch.arange(len(rewards), dtype=rewards.dtype)
    return torch.flip(torch.cumsum(torch.flip(rewards * discounts, dims=[0]), dim=0), dims=[0]) / discounts


def estimate_advantage(obs, rewards, q_values, terminals, critic, gamma, gae_lambda, normalize=True):
    with torch.no_grad():
        values = to_numpy(critic(from_numpy(obs)))
    if gae_lambda is None:
        advantages = q_values - values
    else:
        batch_size = obs.shape[0]
        values = np.append(values, [0])
        advantages = np.zeros(batch_size + 1)
        for i in reversed(range(batch_size)):
            if terminals[i]:
                delta = rewards[i] - values[i]
                advantages[i] = delta
            else:
                delta = rewards[i] + gamma * values[i + 1] - values[i]
                advantages[i] = delta + gamma * gae_lambda * advantages[i + 1]
        advantages = advantages[:-1]
    if normalize:
        advantages = (advantages - np.mean(advantages)) / (np.std(advantages) + 1e-8)
    return advantages


# ---------------------------------------------------------------- environments
class PointMass:
    """Move a point to the origin; reward -|x|^2 - 0.01|a|^2."""
    ob_dim, ac_dim = 2, 2

    def reset(self):
        self.x = rng.uniform(-1, 1, 2)
        return self.x.copy()

    def step(self, a):
        a = np.clip(a, -1, 1)
        self.x = self.x + 0.1 * a
        r = -float(self.x @ self.x) - 0.01 * float(a @ a)
        return self.x.copy(), r


class Chain:
    """Five states in a row, actions left/right, reward 1 at the right end."""
    ob_dim, ac_dim = 5, 2

    def reset(self):
        self.s = 0
        return np.eye(5)[self.s]

    def step(self, a):
        self.s = int(np.clip(self.s + (1 if int(a) == 1 else -1), 0, 4))
        return np.eye(5)[self.s], float(self.s == 4)


def sample_trajectories(env, policy, n, T):
    trajs = []
    for _ in range(n):
        obs, acs, rews = [], [], []
        ob = env.reset()
        for t in range(T):
            ac = policy.get_action(ob)
            obs.append(ob)
            acs.append(ac)
            ob, r = env.step(ac)
            rews.append(r)
        terminals = [0] * (T - 1) + [1]
        trajs.append(dict(observation=np.array(obs, dtype=np.float32), action=np.array(acs),
                          reward=np.array(rews), terminal=np.array(terminals)))
    return trajs


# ---- reward-to-go three ways
gamma = 0.95
rewards = rng.normal(size=12)
rtg_loop = _discounted_reward_to_go(rewards, gamma)
rtg_torch = discounted_cumsum_torch(torch.tensor(rewards), gamma)
show("reward_to_go_loop", rtg_loop)
show("reward_to_go_flip_cumsum", rtg_torch)
show("reward_to_go_agree", float(np.allclose(rtg_loop, to_numpy(rtg_torch))))
show("discounted_return", _discounted_return(rewards, gamma)[:2])

# ---- continuous policy with a GAE baseline
for discrete, env in [(False, PointMass()), (True, Chain())]:
    tag = "discrete" if discrete else "continuous"
    policy = MLPPolicyPG(env.ac_dim, env.ob_dim, discrete, n_layers=2, layer_size=16, learning_rate=5e-3)
    critic = ValueCritic(env.ob_dim, n_layers=2, layer_size=16, learning_rate=5e-3)
    numpy_init(torch, policy, seed=1)
    numpy_init(torch, critic, seed=2)
    show(f"{tag}_policy_params", sum(p.numel() for p in policy.parameters()))
    returns, actor_losses, baseline_losses, entropies = [], [], [], []
    for itr in range(8):
        trajs = sample_trajectories(env, policy, n=4, T=15)
        obs = np.concatenate([t["observation"] for t in trajs])
        actions = np.concatenate([t["action"] for t in trajs])
        if discrete:
            actions = actions.astype(np.int64)
        else:
            actions = actions.astype(np.float32)
        rews = np.concatenate([t["reward"] for t in trajs])
        terminals = np.concatenate([t["terminal"] for t in trajs])
        q_values = np.concatenate([to_numpy(discounted_cumsum_torch(torch.tensor(t["reward"]), gamma))
                                   for t in trajs]).astype(np.float32)
        advantages = estimate_advantage(obs, rews, q_values, terminals, critic, gamma, gae_lambda=0.97)
        info = policy.update(obs, actions, advantages.astype(np.float32))
        for _ in range(3):  # baseline_gradient_steps
            binfo = critic.update(obs, q_values)
        returns.append(float(np.mean([t["reward"].sum() for t in trajs])))
        actor_losses.append(float(info["Actor Loss"]))
        entropies.append(float(info["Entropy"]))
        baseline_losses.append(float(binfo["Baseline Loss"]))
    show(f"{tag}_returns", returns)
    show(f"{tag}_actor_losses", actor_losses)
    show(f"{tag}_entropies", entropies)
    show(f"{tag}_baseline_losses", baseline_losses)
    if not discrete:
        show("continuous_logstd", policy.logstd)

    # GAE by the reversed loop, and by flip/cumsum on the TD residuals of one trajectory
    t0 = trajs[0]
    with torch.no_grad():
        v = critic(from_numpy(t0["observation"])).double()
    r = torch.tensor(t0["reward"])
    v_next = torch.cat([v[1:], torch.zeros(1, dtype=v.dtype)])
    deltas = r + gamma * v_next - v
    gae_vec = discounted_cumsum_torch(deltas, gamma * 0.97)
    gae_loop = estimate_advantage(t0["observation"], t0["reward"], None, t0["terminal"], critic, gamma, 0.97,
                                  normalize=False)
    show(f"{tag}_gae_vectorised", gae_vec[:5])
    show(f"{tag}_gae_agree", float(np.allclose(to_numpy(gae_vec), gae_loop, atol=1e-5)))
