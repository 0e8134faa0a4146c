"""pytorch/examples reinforcement_learning/reinforce.py on a numpy corridor world: a policy
network, Categorical over its softmax, log_prob of the sampled actions, normalized discounted
returns and Adam. A first part scores fixed episodes (same numbers in both libraries).

    python reinforce.py [torch|numbagrad]
"""
import sys

import numpy as np

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numbagrad"
if BACKEND == "torch":
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.optim as optim
    from torch.distributions import Categorical
else:
    import numbagrad as torch
    import numbagrad.nn as nn
    import numbagrad.nn.functional as F
    import numbagrad.optim as optim
    from numbagrad.distributions import Categorical

torch.manual_seed(543)
rng = np.random.default_rng(543)
gamma = 0.99
eps = np.finfo(np.float32).eps.item()


class Corridor:
    """States 0..n-1 as one-hot vectors; action 1 moves right, 0 left; reaching n-1 pays 1."""

    def __init__(self, n=6, max_steps=40):
        self.n, self.max_steps = n, max_steps

    def obs(self):
        o = np.zeros(self.n)
        o[self.pos] = 1.0
        return o

    def reset(self):
        self.pos, self.t = 0, 0
        return self.obs()

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        self.t += 1
        done = self.pos == self.n - 1 or self.t >= self.max_steps
        reward = 1.0 if self.pos == self.n - 1 else -0.01
        return self.obs(), reward, done


class Policy(nn.Module):
    def __init__(self, n_obs=6, n_actions=2):
        super().__init__()
        self.affine1 = nn.Linear(n_obs, 32)
        self.dropout = nn.Dropout(p=0.0)
        self.affine2 = nn.Linear(32, n_actions)
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
policy.load_state_dict({k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.3)
                                            .astype(np.float32))
                        for k, v in policy.state_dict().items()})
optimizer = optim.Adam(policy.parameters(), lr=3e-2)


def discounted(rewards):
    R, returns = 0, []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    return (returns - returns.mean()) / (returns.std() + eps)


def finish_episode():
    returns = discounted(policy.rewards)
    policy_loss = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


# Fixed episodes: actions given, not sampled, so both libraries see the same numbers.
env = Corridor()
fixed = [[1, 1, 0, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1]]
for ep, actions in enumerate(fixed):
    state = env.reset()
    for a in actions:
        probs = policy(torch.from_numpy(state).float().unsqueeze(0))
        m = Categorical(probs)
        policy.saved_log_probs.append(m.log_prob(torch.tensor([a])))
        if a == actions[0]:
            ent = m.entropy()
        state, reward, done = env.step(a)
        policy.rewards.append(reward)
    print(f"fixed_returns{ep}", *discounted(policy.rewards).tolist())
    print(f"fixed_entropy{ep}", ent.item())
    print(f"fixed_loss{ep}", finish_episode())
    print(f"fixed_grad{ep}", *[p.grad.norm().item() for p in policy.parameters()])

# Training with sampled actions (the random streams differ between the libraries), from a
# policy that first prefers walking left, so that it has something to learn.
with torch.no_grad():
    policy.affine2.bias.copy_(torch.tensor([1.5, -1.5]))
steps = []
for i_episode in range(150):
    state, ep_steps = env.reset(), 0
    for t in range(1, 10000):
        probs = policy(torch.from_numpy(state).float().unsqueeze(0))
        m = Categorical(probs)
        action = m.sample()
        policy.saved_log_probs.append(m.log_prob(action))
        state, reward, done = env.step(action.item())
        policy.rewards.append(reward)
        ep_steps = t
        if done:
            break
    finish_episode()
    steps.append(ep_steps)
print("~steps", *[float(np.mean(steps[i:i + 25])) for i in range(0, 150, 25)])
