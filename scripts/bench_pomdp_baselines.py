#!/usr/bin/env python3
"""Time the gradient step of the reference recurrent SAC / SAC-Discrete
(twni2016/pomdp-baselines, `ModelFreeOffPolicy_Separate_RNN.update`) on CPU.

The reference is NOT vendored: it is imported from a checkout given by --repo
(git clone https://github.com/twni2016/pomdp-baselines, then git checkout 28cb5dd).

    .venv/bin/python -m scripts.bench_pomdp_baselines --repo ../pomdp-baselines \
        --algo sacd --obs-dim 4 --action-dim 4 --threads 1 --json out.json

What is timed: `agent.update(batch)` exactly as `policies/learner.py::Learner.update`
calls it (critic loss + Adam step, actor loss + Adam step, soft target update,
alpha loss + Adam step, and the `.item()` syncs the reference does). Batch sampling
from the replay buffer and numpy->torch conversion are NOT timed: a small pool of
synthetic batches is built up front with the shapes `SeqReplayBuffer.random_episodes`
returns (obs, act, rew, term, obs2, mask; each [T, B, dim]; discrete actions stored as
an index in a [T, B, 1] float array, which `update` one-hot encodes) and converted with
the reference's own `ptu.np_to_pytorch_batch`.

Defaults follow configs/pomdp/{cartpole,pendulum}/v/rnn.yml of the reference
(batch 32, sampled_seq_len -1 -> 200, rnn 128, embeddings a/o/r 8/32/8,
dqn/policy [128,128], lr 3e-4, gamma 0.9, tau 0.005, auto entropy tuning).

--breakdown adds a second, instrumented pass (module forward hooks + full backward
hooks, wrapped optimizer.step and soft update) and reports the share of wall time in
each part; hooks add a little overhead, so its total is reported separately.
"""

import argparse
import codecs
import json
import os
import subprocess
import sys
import time
import types

import numpy as np


def _install_import_shims(repo):
    """Make the reference importable without its full environment.

    1. torchkit/pytorch_utils.py (and learner.py/main.py) start with
       `# -*- coding: future_fstrings -*-`, which needs the `future-fstrings` codec package
       on Python < 3.6 only. Python 3.11 parses f-strings natively, so we register the
       codec name as an alias of utf-8 instead of installing the package.
    2. utils/helpers.py does `from gym.spaces import Box, Discrete, Tuple` at import time;
       the classes are only used by env helpers, never by the update. Stub `gym`.
    3. policies/models/policy_rnn.py does `from utils import logger`; utils/logger.py
       imports `dateutil` and `collections.Set` (removed in Python 3.10). The update never
       logs, so stub `utils.logger` with no-op functions.
    """

    def _search(name):
        if name.replace("-", "_") == "future_fstrings":
            return codecs.lookup("utf-8")
        return None

    codecs.register(_search)

    if "gym" not in sys.modules:
        gym = types.ModuleType("gym")
        spaces = types.ModuleType("gym.spaces")
        for cls in ("Box", "Discrete", "Tuple"):
            setattr(spaces, cls, type(cls, (), {}))
        gym.spaces = spaces
        sys.modules["gym"] = gym
        sys.modules["gym.spaces"] = spaces

    logger = types.ModuleType("utils.logger")
    for fn in ("log", "record_tabular", "dump_tabular", "add_figure"):
        setattr(logger, fn, lambda *a, **k: None)
    sys.modules["utils.logger"] = logger

    sys.path.insert(0, os.path.abspath(repo))
    import utils  # the reference's package (empty __init__)

    utils.logger = logger


def _git_commit(repo):
    try:
        return subprocess.check_output(
            ["git", "-C", repo, "rev-parse", "HEAD"], stderr=subprocess.DEVNULL, text=True
        ).strip()
    except Exception:
        p = os.path.join(repo, "COMMIT")
        return open(p).read().strip() if os.path.exists(p) else None


def _make_np_batch(rng, algo, T, B, obs_dim, act_dim, onehot_obs):
    """Same keys/shapes/dtypes as SeqReplayBuffer.random_episodes (before ptu conversion)."""
    if onehot_obs:
        # POPGym-style one-hot observations; obs2[t] = obs[t+1] like a real trajectory.
        idx = rng.integers(0, obs_dim, size=(T + 1, B))
        seq = np.eye(obs_dim, dtype=np.float32)[idx]
    else:
        seq = rng.standard_normal((T + 1, B, obs_dim)).astype(np.float32)
    obs, obs2 = seq[:-1], seq[1:]
    if algo == "sacd":
        act = rng.integers(0, act_dim, size=(T, B, 1)).astype(np.float32)
    else:
        act = rng.uniform(-1, 1, size=(T, B, act_dim)).astype(np.float32)
    rew = rng.standard_normal((T, B, 1)).astype(np.float32)
    term = np.zeros((T, B, 1), dtype=np.float32)
    mask = np.ones((T, B, 1), dtype=np.float64)  # buffer builds masks as float64
    # a few windows end early (episode shorter than T): terminal, then masked padding
    for b in range(0, B, 4):
        end = int(rng.integers(T // 2, T))
        term[end - 1, b, 0] = 1.0
        mask[end:, b, 0] = 0.0
    return dict(obs=obs, act=act, rew=rew, term=term, obs2=obs2, mask=mask)


class _Breakdown:
    """Wall-clock accounting via hooks. Categories: rnn_fwd, rnn_bwd, heads_fwd, heads_bwd,
    optim_step, soft_update. Everything else (embedders, losses, cat/one_hot, zero_grad,
    autograd bookkeeping, distributions outside heads, .item()) is 'other'."""

    def __init__(self):
        self.t = {}
        self._start = {}

    def add(self, k, dt):
        self.t[k] = self.t.get(k, 0.0) + dt

    def fwd(self, module, cat):
        def pre(m, inp):
            self._start[(id(m), "f")] = time.perf_counter()

        def post(m, inp, out):
            self.add(cat + "_fwd", time.perf_counter() - self._start.pop((id(m), "f")))

        module.register_forward_pre_hook(pre)
        module.register_forward_hook(post)

    def bwd(self, module, cat):
        def pre(m, gout):
            self._start[(id(m), "b")] = time.perf_counter()

        def post(m, gin, gout):
            s = self._start.pop((id(m), "b"), None)
            if s is not None:
                self.add(cat + "_bwd", time.perf_counter() - s)

        module.register_full_backward_pre_hook(pre)
        module.register_full_backward_hook(post)

    def wrap(self, obj, name, cat):
        f = getattr(obj, name)

        def g(*a, **k):
            s = time.perf_counter()
            r = f(*a, **k)
            self.add(cat, time.perf_counter() - s)
            return r

        setattr(obj, name, g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", required=True, help="checkout of twni2016/pomdp-baselines")
    ap.add_argument("--algo", choices=["sacd", "sac"], default="sacd")
    ap.add_argument("--seq-model", choices=["gru", "lstm"], default="gru")
    ap.add_argument("--obs-dim", type=int, default=None, help="default: 4 (sacd), 1 (sac)")
    ap.add_argument("--action-dim", type=int, default=None, help="default: 4 (sacd), 1 (sac)")
    ap.add_argument("--onehot-obs", type=int, default=None,
                    help="1: one-hot observations (default for sacd), 0: gaussian")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=200, help="sampled_seq_len T")
    ap.add_argument("--hidden", type=int, default=128, help="rnn_hidden_size")
    ap.add_argument("--rnn-layers", type=int, default=1)
    ap.add_argument("--action-embedding", type=int, default=8)
    ap.add_argument("--observ-embedding", type=int, default=32)
    ap.add_argument("--reward-embedding", type=int, default=8)
    ap.add_argument("--dqn-layers", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--policy-layers", type=int, nargs="+", default=[128, 128])
    ap.add_argument("--lr", type=float, default=3e-4)
    ap.add_argument("--gamma", type=float, default=0.9)
    ap.add_argument("--tau", type=float, default=0.005)
    ap.add_argument("--target-entropy", type=float, default=0.7, help="sacd ratio")
    ap.add_argument("--updates", type=int, default=50, help="timed updates")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--validate-args", action="store_true",
                    help="keep torch>=1.8 default distribution arg validation ON. The "
                         "reference pins torch 1.7.1 (environments.yml), where it was off, "
                         "so by default we switch it off to match")
    ap.add_argument("--breakdown", type=int, default=0,
                    help="N extra instrumented updates for a time breakdown (0 = skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    if args.obs_dim is None:
        args.obs_dim = 4 if args.algo == "sacd" else 1
    if args.action_dim is None:
        args.action_dim = 4 if args.algo == "sacd" else 1
    onehot = (args.algo == "sacd") if args.onehot_obs is None else bool(args.onehot_obs)

    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if not args.validate_args:
        torch.distributions.Distribution.set_default_validate_args(False)

    _install_import_shims(args.repo)
    import torchkit.pytorch_utils as ptu

    ptu.set_gpu_mode(False)  # ptu.device = cpu
    from policies.models import AGENT_CLASSES

    agent_cls = AGENT_CLASSES["Policy_Separate_RNN"]  # learner: seq_model in {lstm,gru}, separate=True

    algo_kwargs = {
        # configs/pomdp/cartpole/v/rnn.yml
        "sacd": dict(entropy_alpha=None, automatic_entropy_tuning=True,
                     target_entropy=args.target_entropy, alpha_lr=3e-4),
        # configs/pomdp/pendulum/v/rnn.yml
        "sac": dict(entropy_alpha=0.2, automatic_entropy_tuning=True, alpha_lr=3e-4),
    }[args.algo]
    # Same call as Learner.init_agent: agent_class(encoder=..., obs_dim=..., action_dim=...,
    # image_encoder_fn=..., **policy_kwargs).to(ptu.device)
    agent = agent_cls(
        encoder=args.seq_model,
        obs_dim=args.obs_dim,
        action_dim=args.action_dim,
        image_encoder_fn=lambda: None,
        algo_name=args.algo,
        action_embedding_size=args.action_embedding,
        observ_embedding_size=args.observ_embedding,
        reward_embedding_size=args.reward_embedding,
        rnn_hidden_size=args.hidden,
        dqn_layers=args.dqn_layers,
        policy_layers=args.policy_layers,
        rnn_num_layers=args.rnn_layers,
        lr=args.lr,
        gamma=args.gamma,
        tau=args.tau,
        **{args.algo: algo_kwargs},
    ).to(ptu.device)

    rng = np.random.default_rng(args.seed)
    pool = [
        ptu.np_to_pytorch_batch(
            _make_np_batch(rng, args.algo, args.seq_len, args.batch_size,
                           args.obs_dim, args.action_dim, onehot))
        for _ in range(4)
    ]

    for i in range(args.warmup):
        agent.update(pool[i % len(pool)])
    t0 = time.perf_counter()
    for i in range(args.updates):
        out = agent.update(pool[i % len(pool)])
    dt = time.perf_counter() - t0

    n_params = sum(p.numel() for p in agent.critic.parameters()) + sum(
        p.numel() for p in agent.actor.parameters())
    res = {
        "impl": "pomdp-baselines",
        "commit": _git_commit(args.repo),
        "algo": args.algo,
        "seq_model": args.seq_model,
        "obs_dim": args.obs_dim,
        "action_dim": args.action_dim,
        "onehot_obs": onehot,
        "batch_size": args.batch_size,
        "seq_len": args.seq_len,
        "hidden": args.hidden,
        "rnn_layers": args.rnn_layers,
        "embeddings_a_o_r": [args.action_embedding, args.observ_embedding, args.reward_embedding],
        "dqn_layers": args.dqn_layers,
        "policy_layers": args.policy_layers,
        "trainable_params_critic_plus_actor": n_params,
        "validate_args": bool(args.validate_args),
        "updates": args.updates,
        "warmup": args.warmup,
        "seconds": round(dt, 4),
        "updates_per_second": round(args.updates / dt, 3),
        "ms_per_update": round(1000 * dt / args.updates, 3),
        "threads": torch.get_num_threads(),
        "torch_version": torch.__version__,
        "python": sys.version.split()[0],
        "last_losses": {k: float(v) for k, v in out.items()},
    }

    if args.breakdown > 0:
        bd = _Breakdown()
        for net in (agent.critic, agent.critic_target, agent.actor):
            bd.fwd(net.rnn, "rnn")
            bd.bwd(net.rnn, "rnn")
        for head in (agent.critic.qf1, agent.critic.qf2, agent.critic_target.qf1,
                     agent.critic_target.qf2, agent.actor.policy):
            bd.fwd(head, "heads")
            bd.bwd(head, "heads")
        for opt in (agent.critic_optimizer, agent.actor_optimizer,
                    agent.algo.alpha_entropy_optim):
            bd.wrap(opt, "step", "optim_step")
        bd.wrap(agent, "soft_target_update", "soft_update")
        for i in range(2):  # warm up the hooked graph
            agent.update(pool[i % len(pool)])
        bd.t.clear()
        t0 = time.perf_counter()
        for i in range(args.breakdown):
            agent.update(pool[i % len(pool)])
        tot = time.perf_counter() - t0
        parts = {k: v for k, v in sorted(bd.t.items())}
        parts["other"] = tot - sum(parts.values())
        res["breakdown"] = {
            "updates": args.breakdown,
            "ms_per_update_instrumented": round(1000 * tot / args.breakdown, 3),
            "ms_per_update": {k: round(1000 * v / args.breakdown, 3) for k, v in parts.items()},
            "share": {k: round(v / tot, 4) for k, v in parts.items()},
        }

    print(json.dumps(res, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
