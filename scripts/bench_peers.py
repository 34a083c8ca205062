#!/usr/bin/env python3
"""PPO training throughput of rlm against the Python frameworks a researcher would use instead, same task and settings.

Usage: .venv/bin/python -m scripts.bench_peers [--rounds R] [--iterations K]
                                               [--only ours,ours-bf16,sb3,sb3-gru,memorax]
                                               [--rlm PATH] [--json FILE] [--markdown FILE] [--cpu N]
(`./rlm bench peers [options]` runs it with the build folder's rlm and writes build/bench/peers.{json,md}; the plain
`./rlm bench` does not, because this one installs packages.)

What is measured: environment steps per second of whole PPO iterations (rollout + advantages + all SGD epochs), one
torch thread, on POPGym RepeatPreviousEasy with the POPGym paper's batch geometry at 4 epochs:

  64 envs x 1,071 steps per env per iteration (68,544 steps = 21 whole 51-step episodes per env), minibatches of
  8,192 steps, 4 epochs, PreviousAction + Antialias observations flattened one-hot (10 floats), network
  Linear(10->128) + LayerNorm (no affine) -> Linear(128->128) + LeakyReLU -> recurrent 256 -> actor and critic MLPs
  [128, 128] LeakyReLU, Adam lr 5e-5 eps 1e-8, gamma 0.99, GAE lambda 1.0, clip 0.3, no entropy bonus, value weight 1,
  no gradient clipping.

After the rounds, scripts/ppo_gemm_ceiling.py times the matrix products of one iteration of ours alone: the steps/s
that no fp32 implementation using these GEMMs can pass here, and so the highest ratio this table can show (and, when
the ours-bf16 row ran, the same with bf16 operands).

Frameworks (each run is a fresh process; the runs alternate ours, sb3, sb3-gru, ... for --rounds rounds):
- ours: `rlm train --config configs/popgym/repeat_first.yaml env.id=popgym/RepeatPreviousEasy ...` with every setting
  above passed as an override, console and TensorBoard off, into a temporary runs_dir. Steady-state steps/s come from
  the run's metrics.jsonl: the env steps of iterations 2..K (differences of "step") over the sum of their
  "charts/iteration_seconds" (rollout start to the end of the update; checkpoint writing is outside it).
- ours-bf16: the same run with experiment.cpu_matmul=bf16 (src/nn/linear.hpp: the oneDNN products take bf16
  operands, everything else stays fp32). Only on CPUs that multiply bf16 natively (AVX512-BF16 or AMX-BF16 in
  /proc/cpuinfo), skipped elsewhere, where rlm refuses the option. Not the papers' setting; its own ratio column.
- sb3: sb3-contrib's RecurrentPPO (installed into .venv on demand, never upgrading torch), 64 popgym
  RepeatPreviousEasy envs wrapped PreviousAction -> Antialias -> FlattenObservation in a DummyVecEnv (make_vec_env,
  so each env is Monitor-wrapped as usual), one LSTM shared by actor and critic (shared_lstm=True,
  enable_critic_lstm=False; ours also has one memory whose output feeds both heads, src/agents/actor_critic.cpp), a
  features extractor with ours' feature map and preprocessor, net_arch pi/vf [128, 128] with LeakyReLU. Steady-state
  steps/s: a callback stamps the start of every rollout; iteration i is from its rollout start to the next one (the
  last to the return of learn()), iterations 2..K counted.
- sb3-gru: the same with the LSTM replaced by nn.GRU: a policy subclass puts a GRU, called with sb3's (h, c) state
  pair (c is carried untouched), where sb3 keeps its LSTM and rebuilds the optimizer. This removes the LSTM's fourth
  gate block (about 4/3 of the recurrent arithmetic), which is the one architectural difference sb3 forces.
- memorax (the JAX memory-RL library, 1.0.1): its PPO runs only on JAX environments, and its POPGym tasks
  (memorax.environments.popjym) import popjym, the JAX port of POPGym, which is not on PyPI, the only Python registry
  this project's machines reach (memorax itself resolves there, pip --dry-run on 2026-11-25: jax/jaxlib 0.10.2,
  flax 0.12.8, 105 packages; its other suites, gymnax, popgym_arcade, navix, ..., have no RepeatPreviousEasy). The
  script checks with `pip install --dry-run popjym` in the separate venv build/peers-venv and reports "memorax:
  skipped (reason)" when that fails; without popjym there is no memorax run of this task to time, and a hand-written
  JAX port of the task would time our port, not memorax's.

Settings that cannot be matched in sb3-contrib (listed in the output too, with their cost):
- Memory cell: RecurrentPPO builds nn.LSTM only (4 gate blocks and a cell state against the GRU's 3 blocks). The
  sb3-gru row removes this difference.
- Value gradient: with shared_lstm=True sb3 feeds the critic a detached copy of the LSTM output, so only the policy
  loss trains the LSTM; ours backpropagates both losses through the GRU. The backward pass through the memory is one
  pass either way; only the gradients differ.
- Minibatches: ours cuts the batch as RLlib does (floor(68,544 / 8,192) = 8 minibatches of whole episodes per epoch,
  the remaining 3,008 steps not trained on); sb3 cuts the env-major rollout, rotated by a random offset every epoch,
  into consecutive 8,192-step slices: 9 minibatches (the last of 3,008 steps), every step trained on, sequences cut at
  the slice edges. So sb3 does 4.6% more SGD work per epoch and 9 Adam steps instead of 8; its rate is not corrected
  for this.
- Loss details: ours has RLlib's adaptive KL penalty (coefficient 0.2, target 0.01) and clips the squared value error
  at 10; sb3 has no KL penalty (its target_kl stops epochs early, so it is off to keep the work fixed) and clips the
  value prediction around the old value instead (off: clip_range_vf=None). Ours normalises advantages once over the
  batch, sb3 per minibatch. Each of these is a few elementwise ops per minibatch.
- Gradient clipping: ours has none (algo.ppo.grad_clip 0; it still computes the global norm for its log); sb3 always
  calls clip_grad_norm_, given max_grad_norm=1e10 so it never clips (the norm is computed, as in ours).
- Rollout length: ours collects complete episodes (every env at least algo.ppo.steps_per_env steps, then the running
  episode is finished); sb3 a fixed n_steps. With 51-step episodes, ours' steps_per_env = n_steps - 50 and n_steps a
  multiple of 51 give both exactly n_steps / 51 whole episodes per env (the script checks ours' step count).
- Initialisation: sb3's orthogonal gains (sqrt 2, 0.01, 1) against ours' (1, N(0, 0.01^2) last layers); no effect on
  speed.
The environments themselves are part of what is compared: sb3 steps popgym's Python envs, ours its C++ port.

Where the time goes (observations, not settings): sb3's training minibatches hold sequences that start at episode
starts, so its _process_sequence sees a nonzero episode_start and steps the LSTM one time step at a time in a Python
loop instead of one call; ours' training sequences never reset inside, so its GRU (src/memory/gru.cpp) needs no
such cut. On the CPU the loop costs sb3 little: PyTorch goes through ATen's RNN cell kernels either way (on the
2-core VM, 1 thread, 161 sequences x 51 steps forward + backward: nn.LSTM 137 ms in one call, 125 ms looped; nn.GRU
149 ms and 150 ms). The same check shows PyTorch's CPU GRU slower than its LSTM despite 3/4 of the arithmetic, so
the sb3-gru row is not faster than the sb3 row. The table's rollout and update columns show which half of the
iteration a ratio comes from. With the GRU swapped in, sb3's network has 413,829 parameters, the count of ours
(src/agents/actor_critic.cpp with these sizes), which checks the match.
"""
import argparse
import glob
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV_ID = "popgym/RepeatPreviousEasy"
EPISODE_LENGTH = 51  # RepeatPreviousEasy episode length in popgym 1.0.7 (one 52-card deck)
FRAMEWORKS = ["ours", "ours-bf16", "sb3", "sb3-gru", "memorax"]
# rlm's rows (the rest are peers): each one's experiment.cpu_matmul, the operand type of its GEMM ceiling, and the
# summary key of its ratio to each peer.
OURS = {
    "ours": {"cpu_matmul": "fp32", "dtype": "float32", "ratio_key": "ours_over_peer"},
    "ours-bf16": {"cpu_matmul": "bf16", "dtype": "bfloat16", "ratio_key": "ours_bf16_over_peer"},
}
LABELS = {
    "ours": "rlm (ours), GRU",
    "ours-bf16": "rlm (ours), GRU, cpu_matmul bf16",
    "sb3": "sb3-contrib RecurrentPPO, LSTM",
    "sb3-gru": "sb3-contrib RecurrentPPO, GRU swapped in",
    "memorax": "memorax 1.0.1 PPO, GRU",
}
MEMORAX_VERSION = "1.0.1"
SB3_PACKAGES = ["sb3-contrib"]  # pulls stable-baselines3
TORCH_PACKAGES = ("torch", "triton")  # and nvidia-*, cuda-*: never installed or upgraded by this script

# The setting both sides get; ours receives each as a config override, sb3 as the matching argument.
SETTINGS = {
    "num_envs": 64,
    "steps_per_env": 1071,
    "minibatch_size": 8192,
    "epochs": 4,
    "torch_threads": 1,
    "feature_size": 128,
    "preprocessor_size": 128,
    "memory_hidden_size": 256,
    "head_sizes": [128, 128],
    "lr": 5e-5,
    "adam_eps": 1e-8,
    "gamma": 0.99,
    "gae_lambda": 1.0,
    "clip_param": 0.3,
    "entropy_coeff": 0.0,
    "vf_loss_coeff": 1.0,
    "seed": 0,
}

UNMATCHED = [
    "memory cell (sb3 row): sb3-contrib's RecurrentPPO only builds nn.LSTM: 4 gate blocks and a cell state against the "
    "GRU's 3 blocks, about 4/3 of the recurrent arithmetic; the sb3-gru row swaps in nn.GRU",
    "value gradient: sb3 with shared_lstm=True gives the critic a detached LSTM output (only the policy loss trains "
    "the LSTM); ours backpropagates both losses through its shared GRU (same passes, different gradients)",
    "KL penalty: ours RLlib's adaptive penalty (0.2, target 0.01); sb3 has none (target_kl, an early stop, is off)",
    "value clip: ours clips the squared value error at 10; sb3 clips the prediction around the old value (off)",
    "advantage normalisation: ours once per batch; sb3 per minibatch",
    "gradient clipping: ours none; sb3 always clips, given max_grad_norm=1e10 so it never does (norm still computed)",
    "rollout: ours complete episodes (>= steps_per_env, then the episode is finished); sb3 fixed n_steps; equal here "
    "because n_steps is a multiple of the 51-step episode and ours' steps_per_env = n_steps - 50",
    "initialisation gains (orthogonal sqrt 2 / 0.01 / 1 in sb3, 1 / N(0, 0.01^2) in ours): no effect on speed",
    "environments: sb3 steps popgym's Python envs in a DummyVecEnv (Monitor-wrapped), ours its C++ port; this is "
    "part of what is compared",
]




def minibatch_difference(steps_per_env):
    """The unmatched-settings line on minibatches, with this batch's numbers."""
    batch, size = SETTINGS["num_envs"] * steps_per_env, SETTINGS["minibatch_size"]
    ours = max(1, batch // size)
    ours_steps = min(batch, ours * size)
    sb3 = -(-batch // size)
    return (f"minibatches: ours RLlib's, max(1, floor({batch:,}/{size:,})) = {ours} minibatch(es) of whole episodes "
            f"per epoch ({batch - ours_steps:,} steps left out); sb3 consecutive {size:,}-step slices of the rotated "
            f"env-major rollout, {sb3} minibatches (the last of {batch - (sb3 - 1) * size:,} steps), all steps "
            f"trained: {100 * (batch / ours_steps - 1):.1f}% more SGD work and {sb3} Adam steps instead of {ours} per "
            "epoch, not corrected for")


def unmatched_settings(steps_per_env):
    return UNMATCHED[:2] + [minibatch_difference(steps_per_env)] + UNMATCHED[2:]


# ---------------------------------------------------------------------------------------------------------------
# Machine and threads


def single_thread_environment():
    """The environment every run gets: one BLAS/OpenMP thread, one XLA CPU thread."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        env[name] = "1"
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    env["PYTHONHASHSEED"] = "0"
    return env


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_description():
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def cpu_has_native_bf16():
    """Whether rlm accepts experiment.cpu_matmul=bf16 here (the CPU flags it checks, src/nn/linear.cpp)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pinned(command, cpu):
    if cpu is None:
        return command
    if shutil.which("taskset") is None:
        sys.exit("bench_peers: --cpu needs taskset (util-linux)")
    return ["taskset", "-c", str(cpu)] + command


# ---------------------------------------------------------------------------------------------------------------
# Installing the peers


def pip_dry_run(python, packages):
    """What `pip install packages` would install, as (name, version) pairs; raises CalledProcessError with pip's
    message when the packages do not resolve."""
    result = subprocess.run(
        [python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", *packages],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(result.stdout)
    return [(item["metadata"]["name"], item["metadata"]["version"]) for item in report.get("install", [])]


def touches_torch(name):
    name = name.lower().replace("_", "-")
    return name in TORCH_PACKAGES or name.startswith("nvidia-") or name.startswith("cuda-")


def ensure_sb3():
    """Installs sb3-contrib (and stable-baselines3) into this Python if missing, without touching torch."""
    try:
        import sb3_contrib  # noqa: F401
        import stable_baselines3  # noqa: F401

        return
    except ImportError:
        pass
    print(f"[bench_peers] installing {' '.join(SB3_PACKAGES)} into {sys.prefix}", flush=True)
    plan = pip_dry_run(sys.executable, SB3_PACKAGES)
    if any(touches_torch(name) for name, _ in plan):
        # Install what the plan wants except torch and its CUDA libraries, each pinned and without dependencies.
        keep = [f"{name}=={version}" for name, version in plan if not touches_torch(name)]
        print(f"[bench_peers] pip would change torch; installing {' '.join(keep)} with --no-deps", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *keep], check=True)
    else:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *SB3_PACKAGES], check=True)


def peers_venv_python(venv):
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"[bench_peers] creating {venv} for the JAX peer", flush=True)
        subprocess.run([shutil.which("python3") or sys.executable, "-m", "venv", venv], check=True)
    return python


def memorax_skip_reason(venv):
    """None when memorax can run RepeatPreviousEasy here, else why not. memorax's POPGym tasks need popjym."""
    try:
        python = peers_venv_python(venv)
        pip_dry_run(python, ["popjym"])
    except subprocess.CalledProcessError as error:
        message = (error.stderr or "").strip().splitlines()
        last = message[-1] if message else f"pip exited {error.returncode}"
        return (
            f"memorax {MEMORAX_VERSION}'s POPGym tasks (memorax.environments.popjym) import popjym, the JAX port of "
            f"POPGym, and pip cannot get it ({last.removeprefix('ERROR: ')}); its other env suites have no "
            "RepeatPreviousEasy"
        )
    except OSError as error:
        return f"could not create the venv {venv}: {error}"
    return (
        "popjym now resolves on the package index, but this script has no memorax runner yet (its PPO config would "
        "need num_steps 1071, update_epochs 4 and num_minibatches 8 over 64 envs with a GRU 256)"
    )


def sb3_versions():
    import sb3_contrib
    import stable_baselines3
    import torch

    return {"torch": torch.__version__, "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__}


# ---------------------------------------------------------------------------------------------------------------
# Ours


def ours_overrides(runs_dir, iterations, steps_per_env):
    s = SETTINGS
    return [
        f"env.id={ENV_ID}",
        f"env.num_envs={s['num_envs']}",
        "env.num_threads=1",
        "env.previous_action=true",
        "env.antialias=true",
        # complete_episodes: at least this many steps per env, then the running 51-step episode is finished
        f"algo.ppo.steps_per_env={steps_per_env - (EPISODE_LENGTH - 1)}",
        f"algo.ppo.minibatch_size={s['minibatch_size']}",
        f"algo.ppo.epochs={s['epochs']}",
        f"algo.total_steps={iterations * s['num_envs'] * steps_per_env}",
        f"algo.ppo.lr={s['lr']}",
        f"algo.ppo.adam_eps={s['adam_eps']}",
        f"algo.ppo.gamma={s['gamma']}",
        f"algo.ppo.gae_lambda={s['gae_lambda']}",
        f"algo.ppo.clip_param={s['clip_param']}",
        f"algo.ppo.entropy_coeff={s['entropy_coeff']}",
        f"algo.ppo.vf_loss_coeff={s['vf_loss_coeff']}",
        "algo.ppo.grad_clip=0",
        "model.memory.type=gru",
        f"model.memory.hidden_size={s['memory_hidden_size']}",
        f"model.ppo.feature_size={s['feature_size']}",
        f"model.ppo.preprocessor_size={s['preprocessor_size']}",
        f"model.ppo.head_sizes=[{', '.join(str(h) for h in s['head_sizes'])}]",
        "model.ppo.activation=leaky_relu",
        "model.ppo.head_activation=leaky_relu",
        "model.ppo.postprocessor_size=0",
        "model.ppo.embedding=none",
        f"experiment.torch_threads={s['torch_threads']}",
        "experiment.device=cpu",
        f"experiment.seed={s['seed']}",
        "experiment.name=bench_peers",
        f"experiment.runs_dir={runs_dir}",
        "logging.console=false",
        "logging.tensorboard=false",
        "checkpoint.every=1000000",
        "checkpoint.keep_last=1",
    ]


def run_ours(rlm, iterations, steps_per_env, workdir, cpu, cpu_matmul="fp32"):
    runs_dir = tempfile.mkdtemp(prefix="ours-", dir=workdir)
    command = [rlm, "train", "--config", os.path.join(ROOT, "configs", "popgym", "repeat_first.yaml"),
               *ours_overrides(runs_dir, iterations, steps_per_env), f"experiment.cpu_matmul={cpu_matmul}"]
    log_path = os.path.join(runs_dir, "rlm.log")
    cpu_before, start = children_cpu_seconds(), time.perf_counter()
    with open(log_path, "w") as log:
        status = subprocess.run(pinned(command, cpu), stdout=log, stderr=subprocess.STDOUT,
                                env=single_thread_environment(), cwd=runs_dir).returncode
    wall, cpu_seconds = time.perf_counter() - start, children_cpu_seconds() - cpu_before
    if status != 0:
        with open(log_path) as f:
            raise RuntimeError(f"rlm train exited {status}:\n{f.read()[-3000:]}\ncommand: {' '.join(command)}")
    metrics = glob.glob(os.path.join(runs_dir, "**", "metrics.jsonl"), recursive=True)
    if len(metrics) != 1:
        raise RuntimeError(f"expected one metrics.jsonl under {runs_dir}, found {metrics}")
    rows = [json.loads(line) for line in open(metrics[0]) if line.strip()]
    records, previous_step = [], 0
    for row in rows:
        records.append({
            "steps": row["step"] - previous_step,
            "seconds": row["charts/iteration_seconds"],
            "rollout_seconds": row["charts/rollout_seconds"],
        })
        previous_step = row["step"]
    expected = SETTINGS["num_envs"] * steps_per_env
    odd = [r["steps"] for r in records if r["steps"] != expected]
    if odd:
        print(f"[bench_peers] warning: ours collected {odd} steps in some iterations, expected {expected}", flush=True)
    shutil.rmtree(runs_dir, ignore_errors=True)
    return {"iterations": records, "process_wall_seconds": wall, "process_cpu_seconds": cpu_seconds,
            "source": "metrics.jsonl: step differences / charts/iteration_seconds"}


# ---------------------------------------------------------------------------------------------------------------
# sb3-contrib (runs in a child process of this script: `--worker sb3|sb3-gru`)


def make_sb3_classes():
    """The pieces sb3 needs for our network: the feature map + preprocessor extractor, and the GRU-swapped policy."""
    import torch
    from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    class FeatureMapAndPreprocessor(BaseFeaturesExtractor):
        """Ours' network before the memory: Linear + LayerNorm without affine, then Linear + LeakyReLU."""

        def __init__(self, observation_space, feature_size, preprocessor_size):
            super().__init__(observation_space, features_dim=preprocessor_size)
            inputs = int(observation_space.shape[0])
            self.layers = torch.nn.Sequential(
                torch.nn.Linear(inputs, feature_size),
                torch.nn.LayerNorm(feature_size, elementwise_affine=False),
                torch.nn.Linear(feature_size, preprocessor_size),
                torch.nn.LeakyReLU(),
            )

        def forward(self, observations):
            return self.layers(observations)

    class GruInLstmSlot(torch.nn.GRU):
        """nn.GRU with nn.LSTM's calling convention as sb3-contrib uses it: the state goes in and out as (h, c);
        c is passed through untouched, so the rollout buffer's copy of it stays zero."""

        def forward(self, inputs, state):
            hidden, cell = state
            outputs, hidden = super().forward(inputs, hidden)
            return outputs, (hidden, cell)

    class GruRecurrentPolicy(RecurrentActorCriticPolicy):
        """RecurrentActorCriticPolicy with its (shared) LSTM replaced by a GRU of the same size."""

        def __init__(self, observation_space, action_space, lr_schedule, *args, **kwargs):
            super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)
            if not self.shared_lstm or self.lstm_critic is not None:
                raise ValueError("the GRU swap covers the shared memory only (shared_lstm=True, no critic LSTM)")
            lstm = self.lstm_actor
            self.lstm_actor = GruInLstmSlot(lstm.input_size, lstm.hidden_size, num_layers=lstm.num_layers)
            # The optimizer was built over the LSTM's parameters: build it again over the GRU's.
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    class IterationClock(BaseCallback):
        """Stamps each rollout's start and end; PPO iteration i runs from rollout start i to rollout start i+1."""

        def __init__(self):
            super().__init__()
            self.rollout_starts, self.rollout_ends = [], []

        def _on_rollout_start(self):
            self.rollout_starts.append(time.perf_counter())

        def _on_rollout_end(self):
            self.rollout_ends.append(time.perf_counter())

        def _on_step(self):
            return True

    return FeatureMapAndPreprocessor, GruRecurrentPolicy, IterationClock


def make_popgym_env():
    import gymnasium
    from popgym.envs.repeat_previous import RepeatPreviousEasy
    from popgym.wrappers import Antialias, PreviousAction

    return gymnasium.wrappers.FlattenObservation(Antialias(PreviousAction(RepeatPreviousEasy())))


def sb3_worker(memory, iterations, steps_per_env):
    """One sb3-contrib RecurrentPPO run of `iterations` PPO iterations; returns the per-iteration records."""
    import torch

    torch.set_num_threads(SETTINGS["torch_threads"])
    torch.set_num_interop_threads(1)
    from sb3_contrib import RecurrentPPO
    from sb3_contrib.common.recurrent.policies import RecurrentActorCriticPolicy
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import DummyVecEnv

    extractor, gru_policy, clock_class = make_sb3_classes()
    s = SETTINGS
    envs = make_vec_env(make_popgym_env, n_envs=s["num_envs"], seed=s["seed"], vec_env_cls=DummyVecEnv)
    policy_kwargs = dict(
        features_extractor_class=extractor,
        features_extractor_kwargs=dict(feature_size=s["feature_size"], preprocessor_size=s["preprocessor_size"]),
        net_arch=dict(pi=list(s["head_sizes"]), vf=list(s["head_sizes"])),
        activation_fn=torch.nn.LeakyReLU,
        lstm_hidden_size=s["memory_hidden_size"],
        n_lstm_layers=1,
        shared_lstm=True,
        enable_critic_lstm=False,
        optimizer_kwargs=dict(eps=s["adam_eps"]),
    )
    model = RecurrentPPO(
        gru_policy if memory == "gru" else RecurrentActorCriticPolicy,
        envs,
        learning_rate=s["lr"],
        n_steps=steps_per_env,
        batch_size=s["minibatch_size"],
        n_epochs=s["epochs"],
        gamma=s["gamma"],
        gae_lambda=s["gae_lambda"],
        clip_range=s["clip_param"],
        clip_range_vf=None,
        normalize_advantage=True,
        ent_coef=s["entropy_coeff"],
        vf_coef=s["vf_loss_coeff"],
        max_grad_norm=1e10,
        target_kl=None,
        policy_kwargs=policy_kwargs,
        seed=s["seed"],
        device="cpu",
        verbose=0,
    )
    recurrent = type(model.policy.lstm_actor).__name__
    clock = clock_class()
    steps_per_iteration = s["num_envs"] * steps_per_env
    model.learn(total_timesteps=iterations * steps_per_iteration, callback=clock, log_interval=10**9)
    end = time.perf_counter()
    starts = clock.rollout_starts + [end]
    records = [
        {"steps": steps_per_iteration, "seconds": starts[i + 1] - starts[i],
         "rollout_seconds": clock.rollout_ends[i] - starts[i]}
        for i in range(len(clock.rollout_starts))
    ]
    parameters = sum(p.numel() for p in model.policy.parameters())
    return {"iterations": records, "recurrent_module": recurrent, "parameters": parameters,
            "source": "callback: rollout start to next rollout start (the last to the end of learn())",
            "versions": sb3_versions()}


def run_sb3(memory, iterations, steps_per_env, workdir, cpu):
    result_path = tempfile.mktemp(prefix=f"sb3-{memory}-", suffix=".json", dir=workdir)
    command = [sys.executable, os.path.abspath(__file__), "--worker", f"sb3-{memory}", "--iterations",
               str(iterations), "--steps-per-env", str(steps_per_env), "--worker-result", result_path]
    cpu_before, start = children_cpu_seconds(), time.perf_counter()
    completed = subprocess.run(pinned(command, cpu), env=single_thread_environment(), capture_output=True, text=True)
    wall, cpu_seconds = time.perf_counter() - start, children_cpu_seconds() - cpu_before
    if completed.returncode != 0:
        output = (completed.stdout + completed.stderr)[-3000:]
        raise RuntimeError(f"sb3 worker exited {completed.returncode}:\n{output}")
    with open(result_path) as f:
        result = json.load(f)
    os.remove(result_path)
    result.update(process_wall_seconds=wall, process_cpu_seconds=cpu_seconds)
    return result


# ---------------------------------------------------------------------------------------------------------------
# Summaries


def trained_steps_per_iteration(framework, steps_per_env):
    """Real steps the SGD epochs go through per iteration (ours: RLlib's whole minibatches, about; sb3: all)."""
    batch, size = SETTINGS["num_envs"] * steps_per_env, SETTINGS["minibatch_size"]
    per_epoch = min(batch, max(1, batch // size) * size) if framework in OURS else batch
    return SETTINGS["epochs"] * per_epoch


def steady_state(records, trained_steps):
    """Env steps/s of iterations 2..K (all of them when K = 1), with the rollout's and the update's shares."""
    counted = records[1:] if len(records) > 1 else records
    steps = sum(r["steps"] for r in counted)
    seconds = sum(r["seconds"] for r in counted)
    rollout = sum(r["rollout_seconds"] for r in counted)
    update_per_iteration = (seconds - rollout) / len(counted)
    return {
        "steps_per_second": steps / seconds,
        "rollout_fraction": rollout / seconds,
        "rollout_steps_per_second": steps / rollout,
        "update_seconds_per_iteration": update_per_iteration,
        "update_microseconds_per_trained_step": 1e6 * update_per_iteration / trained_steps,
        "counted_iterations": len(counted),
    }


def summarise(runs, frameworks):
    summary = {}
    for name in frameworks:
        mine = [r for r in runs if r["framework"] == name]
        if not mine:
            continue
        rates = [r["steps_per_second"] for r in mine]
        summary[name] = {"runs": len(rates), "median": statistics.median(rates), "min": min(rates),
                         "max": max(rates)}
        for key in ("rollout_fraction", "rollout_steps_per_second", "update_seconds_per_iteration",
                    "update_microseconds_per_trained_step"):
            summary[name][key] = statistics.median(r[key] for r in mine)
    for ours, row in OURS.items():
        if ours in summary:
            for name, entry in summary.items():
                if name not in OURS:
                    entry[row["ratio_key"]] = summary[ours]["median"] / entry["median"]
    return summary


def settings_lines(steps_per_env, iterations, rounds):
    s = SETTINGS
    steps = s["num_envs"] * steps_per_env
    return [
        f"task: {ENV_ID} ({EPISODE_LENGTH}-step episodes), PreviousAction + Antialias, one-hot flattened (10 floats)",
        f"batch: {s['num_envs']} envs x {steps_per_env} steps = {steps:,} env steps per iteration "
        f"({steps_per_env // EPISODE_LENGTH} whole episodes per env); minibatches of {s['minibatch_size']:,} steps; "
        f"{s['epochs']} epochs",
        f"threads: {s['torch_threads']} torch thread, OMP/MKL/OpenBLAS 1, XLA single-threaded",
        f"network: Linear(10->{s['feature_size']}) + LayerNorm (no affine) -> Linear({s['feature_size']}->"
        f"{s['preprocessor_size']}) + LeakyReLU -> recurrent {s['memory_hidden_size']} (one, shared by actor and "
        f"critic) -> actor and critic MLPs {s['head_sizes']} LeakyReLU",
        f"optimisation: Adam lr {s['lr']} eps {s['adam_eps']}, gamma {s['gamma']}, GAE lambda {s['gae_lambda']}, "
        f"clip {s['clip_param']}, entropy {s['entropy_coeff']}, value weight {s['vf_loss_coeff']}, no gradient "
        "clipping",
        f"protocol: {rounds} round(s) of alternating runs, {iterations} PPO iterations each"
        + (", the first of each run is warm-up and not counted" if iterations > 1 else ", all counted (K = 1)"),
    ]


def gemm_ceiling(summary, steps_per_env):
    """scripts/ppo_gemm_ceiling.py's bound for each of our rows (fp32, and bf16 operands for ours-bf16), measured now,
    against the measured rates: {"float32": {...}, "bfloat16": {...}} (None: not this setting)."""
    if not any(name in summary for name in OURS) or steps_per_env != SETTINGS["steps_per_env"]:
        return None
    import ppo_gemm_ceiling  # here: it imports this module's settings
    ceilings = {}
    for ours, row in OURS.items():
        if ours not in summary:
            continue
        dtype, label = row["dtype"], row["cpu_matmul"]
        ceiling = ppo_gemm_ceiling.measure(SETTINGS["torch_threads"], repeats=20, dtype=dtype)
        rate = ceiling["ceiling_steps_per_second"]
        ceiling["ours_fraction"] = summary[ours]["median"] / rate
        if "sb3" in summary:
            ceiling["ceiling_over_sb3"] = rate / summary["sb3"]["median"]
        ceiling["text"] = (f"GEMM ceiling of {ours} on this CPU (scripts/ppo_gemm_ceiling.py --dtype {dtype}, its "
                           f"matrix products alone): {rate:,.0f} env steps/s; {ours} runs at "
                           f"{100 * ceiling['ours_fraction']:.0f}% of it"
                           + (f"; with these GEMMs at {label}, {ours} cannot exceed {ceiling['ceiling_over_sb3']:.2f}x "
                              "sb3-contrib (LSTM) here" if "ceiling_over_sb3" in ceiling else ""))
        print(ceiling["text"])
        ceilings[dtype] = ceiling
    return ceilings


def write_markdown(path, report):
    lines = [f"# PPO throughput against Python peers ({report['date']})", ""]
    m = report["machine"]
    lines.append(f"Machine: {m['cpu']}, {m['cores']} cores, load average at start "
                 f"{', '.join(f'{x:.2f}' for x in m['load_average'])}. Versions: "
                 + ", ".join(f"{k} {v}" for k, v in report["versions"].items()) + ".")
    lines += ["", "Settings:", ""] + [f"- {line}" for line in report["settings_text"]]
    lines += ["", f"Steady-state env steps/s: {report['measurement']}", ""]
    lines.append("| framework | runs | env steps/s (median) | min–max | ours / peer | ours bf16 / peer | rollout % "
                 "| rollout env steps/s | update s / iteration | update µs / trained step |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for name, entry in report["summary"].items():
        ratios = [entry.get(row["ratio_key"]) for row in OURS.values()]
        lines.append(f"| {LABELS[name]} | {entry['runs']} | {entry['median']:,.0f} | {entry['min']:,.0f}–"
                     f"{entry['max']:,.0f} | " + " | ".join(f"**{r:.2f}×**" if r else "–" for r in ratios)
                     + f" | {100 * entry['rollout_fraction']:.1f} | {entry['rollout_steps_per_second']:,.0f} | "
                     f"{entry['update_seconds_per_iteration']:.2f} | "
                     f"{entry['update_microseconds_per_trained_step']:.1f} |")
    for name in report["skipped"]:
        lines.append(f"| {LABELS[name]} | skipped | – | – | – | – | – | – | – | – |")
    for ceiling in (report.get("gemm_ceiling") or {}).values():
        lines += ["", ceiling["text"] + "."]
    lines += ["", "Trained steps: the real steps the SGD epochs go through per iteration (epochs x the steps of the "
              "minibatches; ours leaves RLlib's remainder out, sb3 trains on every step)."]
    if report["skipped"]:
        lines.append("")
        for name, reason in report["skipped"].items():
            lines.append(f"- {name}: skipped ({reason})")
    lines += ["", "Not matched:", ""] + [f"- {item}" for item in report["unmatched"]]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------------------------


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of runs (default 2)")
    parser.add_argument("--iterations", type=int, default=3,
                        help="PPO iterations per run; the first is warm-up when > 1 (default 3)")
    parser.add_argument("--only", default=",".join(FRAMEWORKS), help=f"comma list of {','.join(FRAMEWORKS)}")
    parser.add_argument("--rlm", default=os.path.join(ROOT, "build", "rlm"), help="the rlm binary (default build/rlm)")
    parser.add_argument("--json", default=os.path.join(ROOT, "build", "bench", "peers.json"),
                        help="the report as JSON (default build/bench/peers.json)")
    parser.add_argument("--markdown", default=os.path.join(ROOT, "build", "bench", "peers.md"),
                        help="the report as a Markdown table (default build/bench/peers.md)")
    parser.add_argument("--cpu", type=int, help="pin every run to this CPU with taskset")
    parser.add_argument("--peers-venv", default=os.path.join(ROOT, "build", "peers-venv"), help=argparse.SUPPRESS)
    # Smoke tests: fewer steps per env (rounded up to whole 51-step episodes).
    parser.add_argument("--steps-per-env", type=int, default=SETTINGS["steps_per_env"], help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=["sb3-lstm", "sb3-gru"], help=argparse.SUPPRESS)
    parser.add_argument("--worker-result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1 or args.iterations < 1 or args.steps_per_env < 1:
        parser.error("--rounds, --iterations and --steps-per-env must be positive")
    args.steps_per_env = -(-args.steps_per_env // EPISODE_LENGTH) * EPISODE_LENGTH
    # rlm refuses a minibatch larger than the guaranteed rollout, num_envs * algo.ppo.steps_per_env.
    smallest = SETTINGS["minibatch_size"] // SETTINGS["num_envs"] + EPISODE_LENGTH - 1
    smallest = -(-smallest // EPISODE_LENGTH) * EPISODE_LENGTH
    if args.steps_per_env < smallest:
        parser.error(f"--steps-per-env must be at least {smallest} (a minibatch must fit in ours' rollout)")
    args.rlm = os.path.abspath(args.rlm)  # each run starts in its own temporary folder
    args.only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in args.only if name not in FRAMEWORKS]
    if unknown:
        parser.error(f"--only: unknown {unknown}; choose from {FRAMEWORKS}")
    return args


def main():
    args = parse_arguments()
    if args.worker:
        result = sb3_worker(args.worker.split("-", 1)[1], args.iterations, args.steps_per_env)
        with open(args.worker_result, "w") as f:
            json.dump(result, f)
        return

    frameworks = [name for name in FRAMEWORKS if name in args.only]
    skipped = {}
    if "ours-bf16" in frameworks and not cpu_has_native_bf16():
        skipped["ours-bf16"] = "no AVX512-BF16 or AMX-BF16 on this CPU, where rlm refuses experiment.cpu_matmul=bf16"
        print(f"ours-bf16: skipped ({skipped['ours-bf16']})", flush=True)
        frameworks.remove("ours-bf16")
    if any(name in frameworks for name in OURS) and not os.access(args.rlm, os.X_OK):
        sys.exit(f"bench_peers: {args.rlm} is not an executable rlm (build it with ./rlm, or pass --rlm)")
    if "sb3" in frameworks or "sb3-gru" in frameworks:
        ensure_sb3()
    if "memorax" in frameworks:
        reason = memorax_skip_reason(args.peers_venv)
        if reason:
            skipped["memorax"] = reason
            print(f"memorax: skipped ({reason})", flush=True)
            frameworks.remove("memorax")

    import torch

    versions = {"torch": torch.__version__}
    if "sb3" in frameworks or "sb3-gru" in frameworks:
        versions.update(sb3_versions())
    machine = machine_description()
    settings_text = settings_lines(args.steps_per_env, args.iterations, args.rounds)
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, load average "
          f"{', '.join(f'{x:.2f}' for x in machine['load_average'])}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    for line in settings_text:
        print(line)
    print("not matched:")
    unmatched = unmatched_settings(args.steps_per_env)
    for item in unmatched:
        print(f"  - {item}")
    sys.stdout.flush()

    runs = []
    workdir = tempfile.mkdtemp(prefix="bench_peers-")
    try:
        for round_index in range(args.rounds):
            for name in frameworks:
                if name in OURS:
                    result = run_ours(args.rlm, args.iterations, args.steps_per_env, workdir, args.cpu,
                                      OURS[name]["cpu_matmul"])
                else:
                    memory = "gru" if name == "sb3-gru" else "lstm"
                    result = run_sb3(memory, args.iterations, args.steps_per_env, workdir, args.cpu)
                trained = trained_steps_per_iteration(name, args.steps_per_env)
                result.update(steady_state(result["iterations"], trained))
                result.update(framework=name, round=round_index + 1)
                rate, counted = result["steps_per_second"], result["counted_iterations"]
                runs.append(result)
                per_iteration = ", ".join(f"{r['steps'] / r['seconds']:,.0f}" for r in result["iterations"])
                extra = (f", {result['recurrent_module']}, {result['parameters']:,} parameters"
                         if "recurrent_module" in result else "")
                print(f"round {round_index + 1} {name:<9} {rate:>9,.0f} env steps/s over {counted} iteration(s) "
                      f"(per iteration: {per_iteration}; rollout {100 * result['rollout_fraction']:.1f}%; process "
                      f"{result['process_wall_seconds']:.1f} s wall, {result['process_cpu_seconds']:.1f} s CPU{extra})",
                      flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    summary = summarise(runs, frameworks)
    measurement = ("env steps of iterations 2..K over their wall time, per run (ours: metrics.jsonl step differences "
                   "over charts/iteration_seconds; sb3: a callback's rollout-start stamps); median over runs"
                   if args.iterations > 1 else "env steps over the wall time of the single iteration, warm-up included "
                   "(--iterations 2 or more leaves it out)")
    print()
    print(f"{'framework':<42} {'median steps/s':>14} {'min-max':>17} {'ours/peer':>9} {'bf16/peer':>9} "
          f"{'rollout steps/s':>15} {'update s/it':>11} {'update us/trained step':>22}")
    for name, entry in summary.items():
        ratios = [entry.get(row["ratio_key"]) for row in OURS.values()]
        print(f"{LABELS[name]:<42} {entry['median']:>14,.0f} {entry['min']:>8,.0f}-{entry['max']:<8,.0f} "
              + " ".join(f"{r:>8.2f}x" if r else f"{'-':>9}" for r in ratios)
              + f" {entry['rollout_steps_per_second']:>15,.0f} {entry['update_seconds_per_iteration']:>11.2f} "
              f"{entry['update_microseconds_per_trained_step']:>22.1f}")
    for name in skipped:
        print(f"{LABELS[name]:<42} skipped")
    print(f"measured: {measurement}")
    ceiling = gemm_ceiling(summary, args.steps_per_env)

    machine["load_average_end"] = os.getloadavg()
    report = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": machine,
        "versions": versions,
        "settings": dict(SETTINGS, steps_per_env=args.steps_per_env, env_id=ENV_ID, iterations=args.iterations,
                         rounds=args.rounds),
        "settings_text": settings_text,
        "measurement": measurement,
        "unmatched": unmatched,
        "skipped": skipped,
        "summary": summary,
        "gemm_ceiling": ceiling,
        "runs": runs,
    }
    for path in (args.json, args.markdown):
        if path:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    if args.markdown:
        write_markdown(args.markdown, report)
    print(f"wrote {args.json} and {args.markdown}")


if __name__ == "__main__":
    main()
