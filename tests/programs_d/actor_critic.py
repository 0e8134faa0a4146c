"""PyTorch's examples/reinforcement_learning/actor_critic.py: a Policy of affine1, action_head
and value_head (F.softmax(action_scores, dim=-1)), Categorical(probs) and m.log_prob(action),
SavedAction namedtuples, finish_episode with the discounted returns built in Python,
torch.tensor(returns) normalised by (returns - returns.mean()) / (returns.std() + eps) with
eps = np.finfo(np.float32).eps.item(), ``-log_prob * advantage``,
F.smooth_l1_loss(value, torch.tensor([R])), torch.stack(...).sum() of both lists and an Adam
step; the running reward. A deterministic NumPy environment in place of gym's CartPole, and
the action drawn by NumPy from the policy's probabilities (m.sample() in the example).

    python actor_critic.py [torch|numbagrad]
"""
from collections import namedtuple

import numpy as np

from _common import BACKEND, numpy_init, show

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

args = {'gamma': 0.99, 'seed': 543, 'log_interval': 1}


class FakeEnv:
    """A pole on a cart, linearised: state (x, x_dot, theta, theta_dot); action 0 pushes left,
    1 right; reward 1 per step, the episode ends when the pole leans too far or after 6 steps."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed=None):
        self.state = self.rng.uniform(-0.05, 0.05, 4)
        self.t = 0
        return self.state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = 1.0 if action == 1 else -1.0
        theta_dot = theta_dot + 0.2 * theta - 0.05 * force
        theta = theta + 0.5 * theta_dot
        x_dot = x_dot + 0.1 * force
        x = x + 0.5 * x_dot
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.t += 1
        terminated = abs(theta) > 0.2
        reward = 1.0 if not terminated else 0.0
        return self.state.astype(np.float32), reward, terminated, self.t >= 6, {}


env = FakeEnv(args['seed'])
torch.manual_seed(args['seed'])
action_rng = np.random.default_rng(1)

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class Policy(nn.Module):
    """
    implements both actor and critic in one model
    """
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 32)

        # actor's layer
        self.action_head = nn.Linear(32, 2)

        # critic's layer
        self.value_head = nn.Linear(32, 1)

        # action & reward buffer
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        """
        forward of both actor and critic
        """
        x = F.relu(self.affine1(x))

        # actor: choses action to take from state s_t
        # by returning probability of each action
        action_prob = F.softmax(self.action_head(x), dim=-1)

        # critic: evaluates being in the state s_t
        state_values = self.value_head(x)

        # return values for both actor and critic as a tuple of 2 values:
        # 1. a list with the probability of each action over the action space
        # 2. the value from state s_t
        return action_prob, state_values


model = Policy()
numpy_init(torch, model)
optimizer = optim.Adam(model.parameters(), lr=3e-2)
eps = np.finfo(np.float32).eps.item()


def sample(m):
    """m.sample(), drawn by NumPy from the distribution's probabilities."""
    cdf = np.cumsum(m.probs.detach().numpy())
    return torch.tensor(int(np.searchsorted(cdf, action_rng.random() * cdf[-1])))


probs_seen = []


def select_action(state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    probs_seen.append(probs.detach().clone())

    # create a categorical distribution over the list of probabilities of actions
    m = Categorical(probs)

    # and sample an action using the distribution
    action = sample(m)

    # save to action buffer
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))

    # the action to take (left or right)
    return action.item()


episode_losses, episode_returns = [], []


def finish_episode():
    """
    Training code. Calculates actor and critic loss and performs backprop.
    """
    R = 0
    saved_actions = model.saved_actions
    policy_losses = [] # list to save actor (policy) loss
    value_losses = [] # list to save critic (value) loss
    returns = [] # list to save the true values

    # calculate the true value using rewards returned from the environment
    for r in model.rewards[::-1]:
        # calculate the discounted value
        R = r + args['gamma'] * R
        returns.insert(0, R)

    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    episode_returns.append(returns)

    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()

        # calculate actor (policy) loss
        policy_losses.append(-log_prob * advantage)

        # calculate critic (value) loss using L1 smooth loss
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))

    # reset gradients
    optimizer.zero_grad()

    # sum up all the values of policy_losses and value_losses
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    episode_losses.append(loss.item())

    # perform backprop
    loss.backward()
    optimizer.step()

    # reset rewards and action buffer
    del model.rewards[:]
    del model.saved_actions[:]


def main():
    running_reward = 10
    rewards, actions = [], []

    # run infinitely many episodes
    for i_episode in range(1, 4):

        # reset environment and episode reward
        state, _ = env.reset()
        ep_reward = 0

        # for each episode, only run 9999 steps so that we don't
        # infinite loop while learning
        for t in range(1, 10000):

            # select action from policy
            action = select_action(state)
            actions.append(action)

            # take the action
            state, reward, terminated, truncated, _ = env.step(action)

            model.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        # update cumulative reward
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        rewards.append(running_reward)

        # perform backprop
        finish_episode()

        # log results
        if i_episode % args['log_interval'] == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}'.format(
                  i_episode, ep_reward, running_reward))
    return rewards, actions


running, actions = main()
show('running_reward', running)
show('actions', actions)
show('probs_seen', probs_seen)
show('returns', episode_returns)
show('episode_losses', episode_losses)
show('action_head_weight', model.action_head.weight[:, :8])
show('value_head_bias', model.value_head.bias)
show('affine1_bias_grad', model.affine1.bias.grad[:8])
show('adam_exp_avg', optimizer.state[model.value_head.bias]['exp_avg'])
m = Categorical(probs_seen[0])
show('categorical', [m.log_prob(torch.tensor(1)), m.entropy(), m.probs])
