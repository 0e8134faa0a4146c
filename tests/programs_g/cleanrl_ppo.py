"""CleanRL's ``ppo.py`` (PPO for discrete actions), scaled down, with gym's CartPole-v1 written
out in NumPy as a vector of environments that reset themselves, and the policy's
``probs.sample()`` drawn by inverse CDF from NumPy uniforms (the libraries' generators differ):
the Args dataclass with its derived batch sizes; ``layer_init`` by ``torch.nn.init.orthogonal_``
and ``constant_`` (checked for ``W W^T = std^2 I``, then redone with NumPy's normal draws by
``orthogonal_``'s own recipe: ``torch.linalg.qr``, the sign of ``torch.diag(r, 0)``, ``t_``); the
Agent's critic and actor MLPs with Tanh, ``Categorical(logits=...)`` with ``log_prob`` and
``entropy``; rollout storage in ``torch.zeros((num_steps, num_envs) + shape)`` written by
``obs[step] = next_obs``; the annealed learning rate set on ``optimizer.param_groups[0]["lr"]``;
GAE under ``no_grad`` by the reversed loop (``advantages[t] = lastgaelam = ...``); the flattened
batch; epochs of ``np.random.shuffle``d minibatches with ``b_actions.long()[mb_inds]``,
``logratio.exp()``, the approximate KLs and clip fractions, normalised advantages, the clipped
surrogate ``torch.max(pg_loss1, pg_loss2)``, the clipped value loss, the entropy bonus,
``clip_grad_norm_`` and Adam(eps=1e-5); the target-KL early stop; explained variance.

    python cleanrl_ppo.py [torch|numbagrad]
"""
import math
from dataclasses import dataclass

import numpy as np

from _common import BACKEND, show

if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.optim as optim
    from torch.distributions.categorical import Categorical
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.optim as optim
    from numbagrad.distributions.categorical import Categorical


@dataclass
class Args:
    exp_name: str = "ppo"
    seed: int = 1
    torch_deterministic: bool = True
    env_id: str = "CartPole-v1"
    total_timesteps: int = 768
    learning_rate: float = 2.5e-3
    num_envs: int = 4
    num_steps: int = 64
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float = 0.015

    # to be filled in runtime
    batch_size: int = 0
    minibatch_size: int = 0
    num_iterations: int = 0


class CartPoleVec:
    """gym's CartPole-v1 dynamics for ``n`` environments, resetting each one that ends (what
    ``gym.vector.SyncVectorEnv`` does), with gym's observation and action shapes."""

    class _Space:
        def __init__(self, shape, n=None):
            self.shape, self.n = shape, n

    def __init__(self, n, max_steps=100):
        self.n, self.max_steps = n, max_steps
        self.single_observation_space = self._Space((4,))
        self.single_action_space = self._Space((), 2)
        self.gravity, self.masscart, self.masspole, self.length = 9.8, 1.0, 0.1, 0.5
        self.total_mass = self.masspole + self.masscart
        self.polemass_length = self.masspole * self.length
        self.force_mag, self.tau = 10.0, 0.02
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4

    def reset(self, seed=None):
        self.rng = np.random.default_rng(seed)
        self.state = self.rng.uniform(-0.05, 0.05, (self.n, 4))
        self.steps = np.zeros(self.n, dtype=np.int64)
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state.T
        force = np.where(action == 1, self.force_mag, -self.force_mag)
        costheta, sintheta = np.cos(theta), np.sin(theta)
        temp = (force + self.polemass_length * theta_dot ** 2 * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * costheta ** 2 / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = np.stack([x, x_dot, theta, theta_dot], axis=1)
        self.steps += 1
        terminations = ((x < -self.x_threshold) | (x > self.x_threshold)
                        | (theta < -self.theta_threshold_radians)
                        | (theta > self.theta_threshold_radians))
        truncations = self.steps >= self.max_steps
        reward = np.ones(self.n, dtype=np.float32)
        ended = terminations | truncations
        if ended.any():  # (autoreset: the returned observation is the new episode's first)
            self.state[ended] = self.rng.uniform(-0.05, 0.05, (int(ended.sum()), 4))
            self.steps[ended] = 0
        return self.state.astype(np.float32), reward, terminations, truncations, {}


action_rng = np.random.default_rng(11)


def sample(probs):
    """``probs.sample()`` by inverse CDF on NumPy uniforms."""
    u = torch.from_numpy(action_rng.random(probs.probs.shape[0]).astype(np.float32))
    cdf = probs.probs.cumsum(-1)
    return (cdf < u[:, None]).sum(-1).clamp(max=probs.probs.shape[-1] - 1)


orth_rng = np.random.default_rng(12)


def orthogonal_from_numpy_(tensor, gain=1):
    """``torch.nn.init.orthogonal_``'s algorithm on a normal matrix drawn by NumPy."""
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = torch.from_numpy(orth_rng.normal(size=(rows, cols)).astype(np.float32))

    if rows < cols:
        flattened.t_()

    # Compute the qr factorization
    q, r = torch.linalg.qr(flattened)
    # Make Q uniform according to https://arxiv.org/pdf/math-ph/0609050.pdf
    d = torch.diag(r, 0)
    ph = d.sign()
    q *= ph

    if rows < cols:
        q.t_()

    with torch.no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


orthogonality_errors = []


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    w = layer.weight.detach()
    small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    orthogonality_errors.append(float((small - std ** 2 * torch.eye(small.shape[0])).abs().max()))
    orthogonal_from_numpy_(layer.weight, std)
    return layer


class Agent(nn.Module):
    def __init__(self, envs):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(np.array(envs.single_observation_space.shape).prod(), 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, 64)),
            nn.Tanh(),
            layer_init(nn.Linear(64, envs.single_action_space.n), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action=None):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        if action is None:
            action = sample(probs)
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


args = Args()
args.batch_size = int(args.num_envs * args.num_steps)
args.minibatch_size = int(args.batch_size // args.num_minibatches)
args.num_iterations = args.total_timesteps // args.batch_size
show("sizes", [args.batch_size, args.minibatch_size, args.num_iterations])

# TRY NOT TO MODIFY: seeding
np.random.seed(args.seed)
torch.manual_seed(args.seed)
device = torch.device("cpu")

# env setup
envs = CartPoleVec(args.num_envs)

agent = Agent(envs).to(device)
show("orthogonal_init_ok", float(max(orthogonality_errors) < 1e-4))
show("actor_last_layer", agent.actor[4].weight[:, :4])
show("bias_const", agent.critic[0].bias[:4])
optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

# ALGO Logic: Storage setup
obs = torch.zeros((args.num_steps, args.num_envs) + envs.single_observation_space.shape).to(device)
actions = torch.zeros((args.num_steps, args.num_envs) + envs.single_action_space.shape).to(device)
logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)
dones = torch.zeros((args.num_steps, args.num_envs)).to(device)
values = torch.zeros((args.num_steps, args.num_envs)).to(device)

# TRY NOT TO MODIFY: start the game
global_step = 0
next_obs, _ = envs.reset(seed=args.seed)
next_obs = torch.Tensor(next_obs).to(device)
next_done = torch.zeros(args.num_envs).to(device)

for iteration in range(1, args.num_iterations + 1):
    # Annealing the rate if instructed to do so.
    if args.anneal_lr:
        frac = 1.0 - (iteration - 1.0) / args.num_iterations
        lrnow = frac * args.learning_rate
        optimizer.param_groups[0]["lr"] = lrnow

    episode_ends = 0
    for step in range(0, args.num_steps):
        global_step += args.num_envs
        obs[step] = next_obs
        dones[step] = next_done

        # ALGO LOGIC: action logic
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(next_obs)
            values[step] = value.flatten()
        actions[step] = action
        logprobs[step] = logprob

        # TRY NOT TO MODIFY: execute the game and log data.
        next_obs, reward, terminations, truncations, infos = envs.step(action.cpu().numpy())
        next_done = np.logical_or(terminations, truncations)
        episode_ends += int(next_done.sum())
        rewards[step] = torch.tensor(reward).to(device).view(-1)
        next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)

    # bootstrap value if not done
    with torch.no_grad():
        next_value = agent.get_value(next_obs).reshape(1, -1)
        advantages = torch.zeros_like(rewards).to(device)
        lastgaelam = 0
        for t in reversed(range(args.num_steps)):
            if t == args.num_steps - 1:
                nextnonterminal = 1.0 - next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - dones[t + 1]
                nextvalues = values[t + 1]
            delta = rewards[t] + args.gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + args.gamma * args.gae_lambda * nextnonterminal * lastgaelam
        returns = advantages + values

    # flatten the batch
    b_obs = obs.reshape((-1,) + envs.single_observation_space.shape)
    b_logprobs = logprobs.reshape(-1)
    b_actions = actions.reshape((-1,) + envs.single_action_space.shape)
    b_advantages = advantages.reshape(-1)
    b_returns = returns.reshape(-1)
    b_values = values.reshape(-1)

    # Optimizing the policy and value network
    b_inds = np.arange(args.batch_size)
    clipfracs = []
    epochs_run = 0
    for epoch in range(args.update_epochs):
        np.random.shuffle(b_inds)
        for start in range(0, args.batch_size, args.minibatch_size):
            end = start + args.minibatch_size
            mb_inds = b_inds[start:end]

            _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[mb_inds], b_actions.long()[mb_inds])
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()

            with torch.no_grad():
                # calculate approx_kl http://joschu.net/blog/kl-approx.html
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

            mb_advantages = b_advantages[mb_inds]
            if args.norm_adv:
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

            # Policy loss
            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()

            # Value loss
            newvalue = newvalue.view(-1)
            if args.clip_vloss:
                v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
                v_clipped = b_values[mb_inds] + torch.clamp(
                    newvalue - b_values[mb_inds],
                    -args.clip_coef,
                    args.clip_coef,
                )
                v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
                v_loss_max = torch.max(v_loss_unclipped, v_loss_clipped)
                v_loss = 0.5 * v_loss_max.mean()
            else:
                v_loss = 0.5 * ((newvalue - b_returns[mb_inds]) ** 2).mean()

            entropy_loss = entropy.mean()
            loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef

            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
        epochs_run += 1

        if args.target_kl is not None and approx_kl > args.target_kl:
            break

    y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
    var_y = np.var(y_true)
    explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y

    # TRY NOT TO MODIFY: record rewards for plotting purposes
    print("SPS: -", "global_step:", global_step)
    show(f"iter{iteration}_episodes", episode_ends)
    show(f"iter{iteration}_actions_taken", b_actions.sum())
    show(f"iter{iteration}_advantages", b_advantages[:6])
    show(f"iter{iteration}_returns_mean", b_returns.mean())
    show(f"iter{iteration}_losses", [v_loss.item(), pg_loss.item(), entropy_loss.item(),
                                     old_approx_kl.item(), approx_kl.item()])
    show(f"iter{iteration}_clipfrac", np.mean(clipfracs))
    show(f"iter{iteration}_explained_variance", explained_var)
    show(f"iter{iteration}_epochs_lr", [epochs_run, optimizer.param_groups[0]["lr"]])
show("actor_weight", agent.actor[2].weight[0, :6])
show("critic_weight", agent.critic[4].weight[0, :6])
