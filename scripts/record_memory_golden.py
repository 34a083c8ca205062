#!/usr/bin/env python3
"""Records golden traces of memory cells, run through the authors' own code, for the C++ memory tests.

Usage (project venv; the checkouts are the authors' repositories, as clones or exported trees):
  .venv/bin/python -m scripts.record_memory_golden --ffm PROROKLAB_FFM --shm THAIHUNGLE_SHM --popgym PROROKLAB_POPGYM
      --sam THAIHUNGLE_SAM [--ffm-commit SHA] [--shm-commit SHA] [--popgym-commit SHA] [--sam-commit SHA]
      [--only CASE[,CASE]] [--out DIR]
Only the checkouts the selected cases read are required.
A checkout that is a git work tree gives its own commit; an exported tree (git archive) needs --<repo>-commit.
Needs torch, numpy and gymnasium (popgym's BaseModel builds gymnasium spaces). ray, gym and opt_einsum are not
needed: the authors' files import them, so this script puts minimal stand-ins in sys.modules (ray's TorchModelV2
and typing names; gym and opt_einsum only when they are not installed, and nothing of theirs is called).
Writes tests/data/memory_golden/<case>.pt and <case>.json (see tests/data/memory_golden/README.md).

Cases (each with a fixed seed; sizes of the runs they come from):
  ffm_outer_ffm_paper        proroklab/ffm models/ffm_outer.py FFM (+ aggregations.py OuterLaplaceAggregation), as
                             models/ray_ffm.py RayFFM builds it: input 128, d 256, m 32, context 8 reals (4 complex)
  ffm_standalone_shm_table1  proroklab/ffm standalone/ffm/ffm.py FFM (+ ffa.py FFA), as thaihungle/SHM
                             ray_ffm.py builds it: input 64, d (post_size) 1024, m 128, c 4 complex
  ffm_shmcopy_shm_table1     thaihungle/SHM popgym/baselines/models/ffm.py (a byte-identical copy of the above), same
                             sizes, seed, parameters and inputs: the script asserts its data equals the case above
  shm_table1                 thaihungle/SHM popgym/baselines/ray_models/ray_shm.py SHMAgent.forward_memory (input
                             LayerNorm .. out Linear): input 64, H 128, post_size 1024, L 128 thetas
  gru_shm_table1, gru_popgym proroklab/popgym popgym/baselines/ray_models/ray_gru.py GRU.forward_memory (nn.GRU,
                             batch_first): input 64 / hidden 256 and input 128 / hidden 256
  stm_rl_a3c                 thaihungle/SAM baselines/sam/stm_rl.py STM as a3c.py builds and calls it (M^r = None,
                             Glorot weights_init): input 256, output 256, d 96, 8 slots, nr 96; alpha3 set to 0.05

What each case records (flat dict of tensors, torch.save; T = 32 steps, B = 4 columns, inputs [T, B, D]):
  param/<name>, input, starts, prefix_input, state_in/<i>, output, state_out/<i>, projection (when small),
  grad/param/<name>, grad/input, grad/state_in/<i> for loss = (output * projection).sum().
The authors' forward has no reset input, so RLlib's semantics are emulated: each column is cut at its episode starts
and every segment runs through their batched forward with batch 1, the first from state_in (unless the column starts
at t = 0), the later ones from the authors' initial state (zeros; STM's learned one); the outputs are concatenated.
state_in is the state after a random 7-step prefix (prefix_input) run from the initial state.
Tensors over 65,536 elements (16,384 for STM) are not stored: a parameter (and the projection) is overwritten before
recording with a splitmix64 fill that C++ regenerates from the seed and bound in the json (fill_values below); a
gradient that large is stored as 4096 sampled entries (grad_index/, grad_sample/) plus its float64 sum of squares
(grad_sumsq/). A few large
results are sampled the same way (SAMPLED_RESULTS); SHM's pre-`out` read is stored whole instead of its output.
Deterministic: two runs write identical files.
"""
import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import math
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = "record_memory_golden.py"
T, B = 32, 4
PREFIX = 7
BIG = 65536  # tensors with more elements are regenerated (parameters, projection) or sampled (gradients)
SAMPLE = 4096
# Episode starts [t, column]: columns 0 and 2 start at t = 0, columns 1 and 3 carry state_in in; later starts inside.
STARTS = {0: (0, 11), 1: (5, 20), 2: (0,), 3: (29,)}

REPOS = {  # argparse name -> (GitHub repo, a file that must exist in its checkout)
    "ffm": ("proroklab/ffm", "models/ffm_outer.py"),
    "shm": ("thaihungle/SHM", "popgym/baselines/ray_models/ray_shm.py"),
    "popgym": ("proroklab/popgym", "popgym/baselines/ray_models/ray_gru.py"),
    "sam": ("thaihungle/SAM", "baselines/sam/stm_rl.py"),
}


def fail(message):
    sys.exit(f"{PROG}: {message}")


# ----------------------------------------------------------------------------------------------------------------------
# Deterministic fill (C++ regenerates it): value[i] = float32(bound * (2 * (splitmix64(seed + i) >> 40) / 2^24 - 1)),
# computed in float64 and rounded once, i the flat row-major index, all uint64 arithmetic wrapping.

def splitmix64(x):
    """splitmix64 of a numpy uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def fill_values(seed, bound, shape):
    n = math.prod(shape)
    with np.errstate(over="ignore"):
        r = splitmix64(np.uint64(seed) + np.arange(n, dtype=np.uint64))
    u = (r >> np.uint64(40)).astype(np.float64)
    v = bound * (2.0 * u / 16777216.0 - 1.0)
    return torch.from_numpy(v.astype(np.float32)).reshape(shape)


def _fill_scalar(seed, bound, i):  # plain-Python reference of one value, to check the vectorised version
    mask = (1 << 64) - 1
    x = (seed + i + 0x9E3779B97F4A7C15) & mask
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return float(np.float32(bound * (2.0 * (z >> 40) / 2**24 - 1.0)))


# ----------------------------------------------------------------------------------------------------------------------
# Importing the authors' files from a checkout.

def install_stubs():
    """Minimal stand-ins for the imports of the authors' files that play no part in the cells (our code, not theirs)."""
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        if "." in name:
            parent, child = name.rsplit(".", 1)
            setattr(sys.modules[parent], child, m)
        sys.modules[name] = m
        return m

    class TorchModelV2:
        """ray.rllib.models.torch.torch_modelv2.TorchModelV2 stand-in: stores what RLlib's ModelV2 stores."""

        def __init__(self, obs_space, action_space, num_outputs, model_config, name):
            self.obs_space, self.action_space = obs_space, action_space
            self.num_outputs, self.model_config, self.name = num_outputs, model_config, name
            self.view_requirements = {}

    # ray is always stubbed (a real ray 2.x would only add RLlib's bookkeeping); nothing of RLlib runs here.
    for name in ("ray", "ray.rllib", "ray.rllib.utils", "ray.rllib.models", "ray.rllib.models.torch"):
        module(name)
    module("ray.rllib.utils.typing", ModelConfigDict=dict, TensorType=torch.Tensor)
    module("ray.rllib.models.torch.torch_modelv2", TorchModelV2=TorchModelV2)
    # Imported by proroklab/ffm's models/ffm_outer.py and aggregations.py but unused by the classes recorded here.
    for name, attrs in (("gym", {}), ("opt_einsum", {"contract": None})):
        try:
            importlib.import_module(name)
        except ImportError:
            module(name, **attrs)


@contextlib.contextmanager
def packages(root_name, directories):
    """Makes `root_name` and its subpackages (dotted name -> directory) resolve into a checkout, without running their
    __init__.py, for the duration of the block; whatever was imported under that name before is put back after."""
    saved = {k: v for k, v in sys.modules.items() if k == root_name or k.startswith(root_name + ".")}
    for k in saved:
        del sys.modules[k]
    for name, directory in directories.items():
        m = types.ModuleType(name)
        m.__path__ = [directory]
        m.__package__ = name
        sys.modules[name] = m
        if "." in name:
            parent, child = name.rsplit(".", 1)
            setattr(sys.modules[parent], child, m)
    try:
        yield
    finally:
        for k in [k for k in sys.modules if k == root_name or k.startswith(root_name + ".")]:
            del sys.modules[k]
        sys.modules.update(saved)


def load_file(name, path, extra_sys_path=None):
    """Imports one file of a checkout as module `name` (extra_sys_path: the checkout root its absolute imports need)."""
    if extra_sys_path:
        sys.path.insert(0, extra_sys_path)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        if extra_sys_path:
            sys.path.remove(extra_sys_path)


def popgym_tree(root):
    """popgym package directories of a checkout (proroklab/popgym and thaihungle/SHM both have popgym/ at the top)."""
    base = os.path.join(root, "popgym")
    return {"popgym": base, "popgym.baselines": os.path.join(base, "baselines"),
            "popgym.baselines.ray_models": os.path.join(base, "baselines", "ray_models")}


def rllib_model(cls, input_size, custom):
    """Builds one of popgym's BaseModel subclasses as RLlib would (model_config max_seq_len 1024, custom config)."""
    import gymnasium

    obs_space = gymnasium.spaces.Box(-1.0, 1.0, (4,))
    action_space = gymnasium.spaces.Discrete(2)
    config = {"preprocessor_input_size": 128, "preprocessor_output_size": input_size, **custom}
    return cls(obs_space, action_space, 2, {"max_seq_len": 1024, "custom_model_config": config}, "golden")


# ----------------------------------------------------------------------------------------------------------------------
# The cases. Each returns a dict: module (the authors' cell), params [(name, Parameter)], bounds {name: (bound, why)},
# D, O, state (description per state tensor), initial(n) -> state tensors in the recorded layout, run(x, states) ->
# (y [1, L, O], final states) calling the authors' forward on one column (batch first), and the json texts.

def ffm_outer_case(ck):
    root = ck["ffm"]["path"]
    outer = load_file("_golden_ffm_outer", os.path.join(root, "models", "ffm_outer.py"), extra_sys_path=root)
    D, d, m, ctx = 128, 256, 32, 8
    # models/ray_ffm.py RayFFM.__init__ with MODEL_CONFIG hidden_size 256, memory_size 32, context_size 8,
    # record_stats True, agg_kwargs {} and the FFM paper's preprocessor_output_size 128 (ppo.py h = 128).
    ctor = dict(input_size=D, hidden_size=d, memory_size=m, output_size=d, context_size=ctx, stats=True)
    core = outer.FFM(**ctor)
    c = ctx // 2

    def initial(n):  # RayFFM.initial_state: zeros [1, m, context_size // 2, 2] (view_as_real) per env
        return [torch.zeros(n, m, c, 2)]

    def run(x, states):
        memory = torch.view_as_complex(states[0]).unsqueeze(1)  # RayFFM.forward_memory: view_as_complex -> [1, 1, m, c]
        out, [s] = core(x, [memory])
        return out, [torch.view_as_real(s[:, -1])], {}

    return dict(
        module=core, params=list(core.named_parameters()), prefix="core.",
        bounds={"pre.weight": (1 / math.sqrt(D), "nn.Linear default init: kaiming_uniform(a=sqrt(5)) = "
                                                 "U(+-1/sqrt(fan_in)), fan_in 128")},
        D=D, O=d, initial=initial, run=run,
        sources=[src(ck, "ffm", "models/ffm_outer.py", "FFM"),
                 src(ck, "ffm", "aggregations.py", "OuterLaplaceAggregation"),
                 src(ck, "ffm", "models/ray_ffm.py", "RayFFM (constructor arguments, state layout)")],
        ctor=ctor,
        ctor_note="FFM(input_size=preprocessor_output_size 128, hidden_size=256, memory_size=32, output_size=256, "
                  "context_size=8, stats=True) as RayFFM builds it; the aggregator is OuterLaplaceAggregation("
                  "d_model=32, context_size=8 // 2 = 4, max_len=1024, min_period=1, max_period=1024) with its defaults "
                  "(dtype torch.double for the index buffers, init_method linspace, fudge 0.01, forgotten_at 0.01).",
        state=["state 0: view_as_real of the complex64 memory S [B, m=32, c=4] -> float32 [B, 32, 4, 2] "
               "(last dim re, im). Theirs: RayFFM keeps [B, 1, m, c, 2] float per env (view_as_real), "
               "FFM/OuterLaplaceAggregation take [B, 1, m, c] complex64 and return the per-step states "
               "[B, T, m, c] complex64; state_out is the last step."],
        semantics_extra=(
            "Their batched path (T > 1, T < max_len 1024) is the closed form of OuterLaplaceAggregation."
            "batched_recurrent_update: gamma^t = exp(complex(clamp(a, -limit, -1e-8), b) * t) with t from float64 "
            "buffers, so complex64 * float64 promotes to complex128; z = cumsum(gamma^(T-1-k) * x_k) and "
            "S_t = gamma^-(T-1-t) * z_t + gamma^(t+1) * S_in, all complex128, cast to complex64 at the end. The "
            "clamp on a is functional only (no write-back). The T == 1 shortcut (single_step_update, complex64) is "
            "never taken here: every segment has at least 3 steps. stats=True only stores detached copies."),
        mapping=[
            "pre.weight [576, 128], pre.bias [576] -> rlm Ffm pre.weight / pre.bias, same layout: output rows "
            "[v: m=32 | thru: d=256 | gate: m + d = 288], the gate sigmoided then split [in_gate: 32 | out_gate: 256]",
            "ffa.a [1, 1, 32] -> rlm Ffm a [32] (reshape); stores -alpha, clamped to [-limit, -1e-8] in the forward, "
            "limit = ln(DBL_MAX)/1024 - 0.01 = 0.683147",
            "ffa.b [1, 1, 4] -> rlm Ffm b [4] (reshape); omega, gamma = exp(a_i + i b_j) (exp(+i omega t))",
            "mix.weight [256, 256], mix.bias [256] -> rlm Ffm mix.weight / mix.bias; input index (i*c + j)*2 + "
            "{0: Re, 1: Im} of S[i, j] (view_as_real then flatten: rlm flatten 'interleaved')",
            "ln_out: LayerNorm(256, elementwise_affine=False, eps 1e-5), no parameters; rlm torch::layer_norm",
            "buffers ffa.one, ffa.inner_idx, ffa.outer_idx, ffa.state_offset (float64 time indices) are not "
            "parameters and are not recorded",
            "rlm options: memory_size 32, context_size 4, output_size (hidden_size) 256, init code, flatten "
            "interleaved, clamp_writeback false; double_precision true matches their complex128 closed form more "
            "closely (false: complex64 scan, expect ~1e-6 relative differences)",
            "state: rlm Ffm state [B, m, c] complex64 = torch.view_as_complex(state_in/0)",
        ])


def ffm_standalone_case(ck, which):
    if which == "ffm":  # proroklab/ffm standalone/ffm/{ffm,ffa}.py, loaded as a package without its __init__.py
        directory = os.path.join(ck["ffm"]["path"], "standalone", "ffm")
        with packages("_golden_ffm_standalone", {"_golden_ffm_standalone": directory}):
            ffm_mod = importlib.import_module("_golden_ffm_standalone.ffm")
        files = ("standalone/ffm/ffm.py", "standalone/ffm/ffa.py")
    else:  # thaihungle/SHM's copy popgym/baselines/models/{ffm,ffa}.py (its models/__init__.py imports just those two)
        tree = popgym_tree(ck["shm"]["path"])
        with packages("popgym", tree):
            ffm_mod = importlib.import_module("popgym.baselines.models.ffm")
        files = ("popgym/baselines/models/ffm.py", "popgym/baselines/models/ffa.py")
    D, d, m, c = 64, 1024, 128, 4
    # thaihungle/SHM ray_ffm.py: FFM(input_size=preprocessor_output_size, hidden_size=cfg hidden_size,
    # memory_size=cfg mem_size, context_size=4, output_size=cfg post_size); train_popgym.py config_ffm:
    # preprocessor_output_size 64, hidden_size 64, mem_size args.m (paper: 128), post_size 1024.
    ctor = dict(input_size=D, hidden_size=64, memory_size=m, context_size=c, output_size=d)
    core = ffm_mod.FFM(**ctor)

    def initial(n):  # FFM.initial_state(n): zeros [n, 1, m, c] complex64
        return [torch.view_as_real(core.initial_state(n).squeeze(1))]

    def run(x, states):
        out, s = core(x, torch.view_as_complex(states[0]).unsqueeze(1))
        return out, [torch.view_as_real(s[:, -1])], {}

    repo = which
    return dict(
        module=core, params=list(core.named_parameters()), prefix="core.",
        bounds={"pre.weight": (1 / math.sqrt(D), "nn.Linear default init U(+-1/sqrt(fan_in)), fan_in 64"),
                "mix.weight": (1 / math.sqrt(2 * m * c), "nn.Linear default init U(+-1/sqrt(fan_in)), fan_in 1024")},
        D=D, O=d, initial=initial, run=run,
        sources=[src(ck, repo, files[0], "FFM"), src(ck, repo, files[1], "FFA"),
                 src(ck, "shm", "popgym/baselines/ray_models/ray_ffm.py", "RayFFM (constructor arguments)"),
                 src(ck, "shm", "train_popgym.py", "config_ffm (sizes; --m default 72, paper and rlm config 128)")],
        ctor=ctor,
        ctor_note="FFM(input_size=64, hidden_size=64 (unused by the cell), memory_size=128, context_size=4, "
                  "output_size=1024) as thaihungle/SHM ray_ffm.py builds it under train_popgym.py config_ffm with "
                  "--m 128 (the paper's m; the script's default is 72) and --post_size 1024; FFA(memory_size=128, "
                  "context_size=4, min_period=1, max_period=1024) with its defaults (max_len 1024, dtype double).",
        state=["state 0: view_as_real of the complex64 memory S [B, m=128, c=4] -> float32 [B, 128, 4, 2]. Theirs: "
               "FFM.initial_state is [B, 1, m, c] complex64 (SHM's RayFFM passes state[0].to(complex64).squeeze(1)); "
               "FFM.forward returns the per-step states [B, T, m, c]; state_out is the last step."],
        semantics_extra=(
            "Their batched path is FFA.batched_recurrent_update: gamma^t = exp(complex(a, b) * t) with t from "
            "float64 buffers (complex128), z = cumsum(gamma^(T-1-k) x_k), S_t = gamma^-(T-1-t) z_t + gamma^(t+1) S_in "
            "in complex128, cast to complex64. log_gamma(clamp=True) also writes the clamp back into a.data; with "
            "the linspace init a is inside [-limit, -1e-8], so the write-back changes nothing here. The T == 1 "
            "shortcut (single_step_update, complex64, unclamped a) is never taken: every segment has >= 3 steps."),
        mapping=[
            "pre.weight [2304, 64], pre.bias [2304] -> rlm Ffm pre, same layout: rows [v: 128 | thru: 1024 | "
            "gate: 1152], gate sigmoided then split [in_gate: 128 | out_gate: 1024]",
            "ffa.a [1, 1, 128] -> rlm Ffm a [128] (reshape)",
            "ffa.b [1, 1, 4] -> rlm Ffm b [4] (reshape)",
            "mix.weight [1024, 1024], mix.bias [1024] -> rlm Ffm mix; input index (i*c + j)*2 + {0: Re, 1: Im} "
            "(view_as_real(S).reshape(B, T, -1): rlm flatten 'interleaved')",
            "ln_out: LayerNorm(1024, elementwise_affine=False), no parameters",
            "buffers ffa.one, ffa.inner_idx, ffa.outer_idx, ffa.state_offset not recorded",
            "rlm options: memory_size 128, context_size 4, output_size 1024, init code, clamp_writeback true "
            "(no effect on these values), double_precision true is closest to their complex128 closed form",
            "state: rlm Ffm state [B, m, c] complex64 = torch.view_as_complex(state_in/0)",
        ])


def shm_case(ck):
    with packages("popgym", popgym_tree(ck["shm"]["path"])):
        ray_shm = importlib.import_module("popgym.baselines.ray_models.ray_shm")
    D, H, O = 64, 128, 1024
    # train_popgym.py config_shm: preprocessor_output_size 64, embedding_size 128, mem_size args.m (README and paper:
    # 128), post_size 1024, hidden_size args.h (unused by the cell).
    custom = {"hidden_size": 64, "mem_size": H, "post_size": O, "embedding_size": 128}
    model = rllib_model(ray_shm.SHMAgent, D, custom)
    base = {"feature_map", "embedding", "embedding_strength", "pre", "post", "actor", "critic", "core"}
    params = [(n, p) for n, p in model.named_parameters() if n.split(".")[0] not in base]
    t_starts = torch.zeros(1, dtype=torch.long)

    def initial(n):  # SHMAgent.initial_state: zeros [1, H, H] per env
        return [torch.zeros(n, H, H)]

    def run(x, states):
        seq_lens = torch.full((1,), x.shape[1], dtype=torch.long)
        reads = []
        hook = model.out.register_forward_pre_hook(lambda module, args: reads.append(args[0]))
        try:
            z, [M] = model.forward_memory(x, [states[0].unsqueeze(1)], t_starts, seq_lens)
        finally:
            hook.remove()
        return z, [M.squeeze(1)], {"read": reads[0]}  # read: y, the input of their out Linear

    return dict(
        module=model, params=params, prefix="",
        bounds={"out.weight": (1 / math.sqrt(H), "nn.Linear default init U(+-1/sqrt(fan_in)), fan_in 128")},
        D=D, O=O, initial=initial, run=run,
        sources=[src(ck, "shm", "popgym/baselines/ray_models/ray_shm.py", "SHMAgent (forward_memory)"),
                 src(ck, "shm", "popgym/baselines/ray_models/base_model.py", "BaseModel (constructor only)"),
                 src(ck, "shm", "train_popgym.py", "config_shm (sizes)")],
        ctor={"model_config": {"max_seq_len": 1024, "custom_model_config": {
            "preprocessor_input_size": 128, "preprocessor_output_size": D, **custom}}},
        ctor_note="SHMAgent(obs_space Box(4), Discrete(2), num_outputs 2, model_config) built through popgym's "
                  "BaseModel with a stand-in ray TorchModelV2; MODEL_CONFIG mem_size overridden to 128 (train_popgym "
                  "--m 128 as in the README/paper), post_size 1024, preprocessor_output_size 64; L = 2**add_space = "
                  "128. Only the cell's parameters are recorded (key, query, value, vc_net, eta, theta_matrix, "
                  "shortcut, out, norm), not BaseModel's feature_map / embedding / actor / critic.",
        state=["state 0: the memory M [B, H=128, H=128] float32 (theirs: [B, 1, H, H] per RLlib state, "
               "SHMAgent.initial_state zeros [1, H, H]); state_out is M after the last step (their M[:, -1])."],
        semantics_extra=(
            "Recorded is SHMAgent.forward_memory, from its input z (the output of BaseModel's pre, width 64) to "
            "z = self.out(y) (width 1024): x = norm(z) (LayerNorm(64), affine, eps 1e-5); K = relu(key x), "
            "Q = relu(query x), each divided by (1e-5 + its sum); eta = sigmoid(eta x) [.., 1]; vc = vc_net x; "
            "theta = theta_matrix[idx] with idx = torch.empty(B, T).uniform_(0, 1).long() = 0 always (row 0; the "
            "uniform_ call still consumes the global torch generator); C = 1 + tanh(theta_i vc_j); V = value x; "
            "M_t = M_{t-1} * C_t + (eta V)_i K_j (naive loop); y = M_t Q + shortcut(x); z = out(y). No clamp. "
            "Around it in their model (not recorded): BaseModel.forward runs feature_map (Linear(obs, 128) "
            "orthogonal + LayerNorm(128) without affine), the sine positional embedding mix "
            "x (1 - s) + PE(t) s (MODEL_CONFIG embedding 'sine', embedding_size 128, s = embedding_strength "
            "clamped to [0, 1]), pre = Linear(128, 64) + ReLU, then forward_memory, then post = Linear(1024, 64) + "
            "ReLU and the actor/critic heads."),
        mapping=[
            "norm.weight [64], norm.bias [64] -> rlm Shm norm.weight / norm.bias",
            "key.weight, query.weight, value.weight, vc_net.weight [128, 64] each and eta.weight [1, 64] -> rlm Shm "
            "projections.weight [4*128 + 1 = 513, 64] = cat([key, query, value, vc_net, eta], dim 0) "
            "(rows 0-127 k, 128-255 q, 256-383 v, 384-511 vc, 512 eta); no biases",
            "theta_matrix [L=128, H=128] -> rlm Shm theta_table [128, 128] (calibration random_theta, "
            "theta_sampling index0_compat: row 0 only; only row 0 gets a gradient)",
            "shortcut.weight [128, 64], shortcut.bias [128] -> rlm Shm shortcut",
            "out.weight [1024, 128], out.bias [1024] -> rlm Shm out (forward_affine returns it as the output layer)",
            "C[i, j] = 1 + tanh(theta[i] vc[j]): theta along the rows (value index i), vc along the columns (key "
            "index j); update U[i, j] = eta v[i] k[j]; read y[i] = sum_j M[i, j] q[j]",
            "rlm options: memory_size (hidden_size) 128, output_size 1024, num_thetas 128, calibration "
            "random_theta, theta_sampling index0_compat, state_clamp 0, shortcut true",
            "state: rlm Shm state [B, H, H] = state_in/0",
        ])


def gru_case(ck, D, H, runs):
    with packages("popgym", popgym_tree(ck["popgym"]["path"])):
        ray_gru = importlib.import_module("popgym.baselines.ray_models.ray_gru")
    model = rllib_model(ray_gru.GRU, D, {"hidden_size": H})
    core = model.core
    t_starts = torch.zeros(1, dtype=torch.long)

    def initial(n):  # GRU.initial_state: zeros [1, hidden_size] per env
        return [torch.zeros(n, H)]

    def run(x, states):
        seq_lens = torch.full((1,), x.shape[1], dtype=torch.long)
        z, [h] = model.forward_memory(x, [states[0].unsqueeze(1)], t_starts, seq_lens)
        return z, [h.squeeze(1)], {}

    bound = 1 / math.sqrt(H)
    why = f"nn.GRU default init U(+-1/sqrt(hidden_size)), hidden_size {H}"
    return dict(
        module=core, params=list(core.named_parameters()), prefix="core.",
        bounds={n: (bound, why) for n, _ in core.named_parameters()},
        D=D, O=H, initial=initial, run=run,
        sources=[src(ck, "popgym", "popgym/baselines/ray_models/ray_gru.py", "GRU (forward_memory; core nn.GRU)"),
                 src(ck, "popgym", "popgym/baselines/ray_models/base_model.py", "BaseModel (constructor only)")],
        ctor={"core": f"torch.nn.GRU({D}, {H}, 1, batch_first=True)",
              "model_config": {"max_seq_len": 1024, "custom_model_config": {
                  "preprocessor_input_size": 128, "preprocessor_output_size": D, "hidden_size": H}}},
        ctor_note=f"popgym GRU model (MODEL_CONFIG num_recurrent_layers 1, benchmark False) built through BaseModel "
                  f"with a stand-in ray TorchModelV2: self.core = nn.GRU(preprocessor_output_size {D}, hidden_size "
                  f"{H}, 1, batch_first=True). Sizes of {runs}. thaihungle/SHM's ray_gru.py is byte-identical.",
        state=[f"state 0: h [B, {H}] float32 (theirs: [B, 1, H] per RLlib state, permuted to nn.GRU's [1, B, H])."],
        semantics_extra=("GRU.forward_memory permutes the state to [num_layers, B, H], runs the torch nn.GRU "
                         "(gate order r, z, n) and permutes back; the output is h_t at every step."),
        mapping=[
            f"weight_ih_l0 [{3 * H}, {D}], weight_hh_l0 [{3 * H}, {H}], bias_ih_l0 [{3 * H}], bias_hh_l0 [{3 * H}] "
            "-> rlm Gru gru.weight_ih_l0 / gru.weight_hh_l0 / gru.bias_ih_l0 / gru.bias_hh_l0 (torch::nn::GRU, "
            "same shapes, rows [r | z | n])",
            "state: rlm Gru state [B, H] = state_in/0",
        ])


def stm_case(ck):
    directory = os.path.join(ck["sam"]["path"], "baselines", "sam")
    with packages("_golden_sam", {"_golden_sam": directory}):
        stm_rl = importlib.import_module("_golden_sam.stm_rl")
        utils = importlib.import_module("_golden_sam.utils")
    D, O, d, nq, nr, no, mlp = 256, 256, 96, 8, 96, 64, 128
    # baselines/sam/a3c.py A3CSAM: STM(256, 256, num_slot=8, mlp_size=128, slot_size=96, out_att_size=64, step=1,
    # rel_size=96, rd=True), then self.apply(weights_init) over the whole agent (Glorot, zero biases).
    ctor = dict(input_size=D, output_size=O, num_slot=nq, mlp_size=mlp, slot_size=d, out_att_size=no, step=1,
                rel_size=nr, rd=True)
    cell = stm_rl.STM(**ctor)
    cell.apply(utils.weights_init)
    with torch.no_grad():  # ours: alpha3 starts at 0, which would leave the M^r -> M^i transfer (G1) out of the trace
        cell.alpha30.fill_(0.05)

    def initial(n):  # create_new_state: (read_heads zeros [n, 256], item_memory_state_bias repeated, rel bias repeated)
        return [cell.create_new_state(n)[1]]

    def run(x, states):
        hx, cx = torch.zeros(x.shape[0], O), states[0]
        ys = []
        for t in range(x.shape[1]):  # a3c.py: out, (hx, cx, _) = self.sam(h2, (hx, cx, None)), one step per call
            y, (hx, cx, _) = cell(x[:, t], (hx, cx, None))
            ys.append(y)
        return torch.stack(ys, 1), [cx], {}

    def glorot(fan_in, fan_out):
        return (math.sqrt(6.0 / (fan_in + fan_out)),
                f"A3C weights_init (utils.py): U(+-sqrt(6 / (fan_in {fan_in} + fan_out {fan_out})))")

    return dict(
        module=cell, params=list(cell.named_parameters()), prefix="sam.", big=16384,
        bounds={"input_projector.fc1.weight": glorot(D, d), "input_projector2.fc1.weight": glorot(D, d),
                "input_gate_projector.weight": glorot(d, 2 * d), "memory_gate_projector.weight": glorot(d, 2 * d),
                "rel_projector.weight": glorot(d * d, nr), "rel_projector2.weight": glorot(nq * d, d),
                "rel_projector3.weight": glorot(nq * nr, no), "out.weight": glorot(mlp, O),
                "rel_memory_state_bias": (1 / math.sqrt(2 * d + nq),
                                          "STM.__init__: U(+-1/sqrt(2 slot_size + num_slot)), unused in this path")},
        D=D, O=O, initial=initial, run=run,
        sources=[src(ck, "sam", "baselines/sam/stm_rl.py", "STM"),
                 src(ck, "sam", "baselines/sam/utils.py", "weights_init"),
                 src(ck, "sam", "baselines/sam/a3c.py", "A3CSAM (constructor arguments, call with M^r = None)")],
        ctor=ctor,
        ctor_note="STM(256, 256, num_slot=8, mlp_size=128, slot_size=96, out_att_size=64, step=1, rel_size=96, "
                  "rd=True) as A3CSAM builds it (defaults learn_init_mem=True, mlp_hid=-1: every MLP is one Linear), "
                  "then utils.weights_init applied to it (A3CSAM applies it to the whole agent): every Linear "
                  "W ~ U(+-sqrt(6/(fan_in + fan_out))), b = 0; LayerNorms and the memory biases keep their init. "
                  "These are also the sizes of rlm's configs/stm_popgym.yaml (input 256, d 96, 8 slots, nr 96, "
                  "output 256).",
        state=["state 0: the item memory M^i [B, d=96, d=96] float32 (their cx). Their state tuple is (hx, cx, M^r): "
               "hx (the previous output, [B, 256]) is carried but never read by compute, and the Atari agent passes "
               "M^r = None at every step, so M^i is the only state that carries information. The initial state "
               "is learned: create_new_state repeats item_memory_state_bias (a parameter, which therefore gets "
               "gradient from every segment that starts from it)."],
        semantics_extra=(
            "This is the paper's RL (A3C) path of stm_rl.py: each step calls STM.forward(x_t, (hx, cx, None)) as "
            "a3c.py does; with M^r None, compute() skips the M^r read (input_projector2/3, alpha1, alpha2 unused), "
            "the SAM input is the gated item memory R = sigmoid(gates) * tanh(f1 f1^T) + sigmoid(.) * M^i_{t-1}, "
            "qkv = LayerNorm([3 nq])(qkv_projector(R)) per row, R0 = op_att(q, k, v) [B, nq, d, d], "
            "M^i_t = R + alpha3 * rel_projector2(R0 as [B, d, nq*d]), M^r = R0 (not carried), "
            "o = layernorm2(rel_projector3(rel_projector(R0 per slot) flattened)), y = out(mlp(o)). alpha1..3 start "
            "at 0 in their code; this recorder sets alpha30 (alpha3) to 0.05 so that the transfer is part of the "
            "trace (at 0.5 the 32-step trace is chaotic: float32 and float64 runs differ by 5%); alpha1 and alpha2 "
            "stay 0 and are unused anyway. The "
            "later segments start from the learned initial state (item_memory_state_bias), as A3C's init_sequence "
            "does at each episode start. Parameters that the path never uses get no gradient "
            "(grad_stored 'none'). Size threshold 16,384 instead of 65,536 for this case (parameters above it are "
            "filled, gradients above it sampled, the projection filled) to keep the file near 1 MB."),
        mapping=[
            "input_projector.fc1 [96, 256] -> rlm Stm f1 (Linear 256 -> 96)",
            "input_projector2.fc1, input_projector3.fc1, alpha10 (alpha1), alpha20 (alpha2), rel_memory_state_bias: "
            "unused in this path; rlm with carry_relational false creates none of them",
            "input_gate_projector [192, 96] -> rlm gate_in; memory_gate_projector [192, 96] -> rlm gate_mem "
            "(output split [input gate: 96 | forget gate: 96]); input_bias (scalar, 0) -> rlm input_bias, "
            "forget_bias (scalar, 1) -> rlm forget_bias",
            "qkv_projector.0 [24, 96] -> rlm qkv (Linear d -> 3 nq on the column index of M^i); "
            "qkv_layernorm.0 LayerNorm([24]) -> rlm qkv_ln with qkv_norm row; the 24 outputs split "
            "[q: 8 | k: 8 | v: 8]",
            "rel_projector2 [96, 768] -> rlm g1 (transfer, input index s*96 + a of R0[s, a, c]); alpha30 -> rlm alpha3",
            "rel_projector [96, 9216] -> rlm g2 (per slot, input index a*96 + c of R0[s, a, c]); "
            "rel_projector3 [64, 768] -> rlm g3 (input index s*96 + r)",
            "layernorm2 LayerNorm(64) -> rlm out_ln (output_layernorm true)",
            "mlp.0 [128, 64] -> rlm head1, mlp.2 [128, 128] -> rlm head2, out [256, 128] -> rlm head_out",
            "item_memory_state_bias [96, 96] -> rlm item_init (learn_init_state true)",
            "rlm options: item_size 96, num_slots 8, rel_size 96, carry_relational false, gated true, qkv_norm row, "
            "out_att_size 64, mlp_size 128, output_size 256, output_layernorm true, init glorot, learn_init_state "
            "true, alphas learnable (start 0). rlm's configs/stm_popgym.yaml (carry_relational true, qkv_norm "
            "matrix) is a different cell that no authors' path runs (docs/reviews/stm.md #1, #2)",
            "state: rlm Stm state {M^i [B, d, d]} = state_in/0",
        ])


CASES = {
    "ffm_outer_ffm_paper": (11, ffm_outer_case),
    "ffm_standalone_shm_table1": (12, lambda ck: ffm_standalone_case(ck, "ffm")),
    "ffm_shmcopy_shm_table1": (12, lambda ck: ffm_standalone_case(ck, "shm")),  # same seed: must equal the above
    "shm_table1": (13, shm_case),
    "gru_shm_table1": (14, lambda ck: gru_case(ck, 64, 256, "SHM Table 1 (train_popgym.py config_gru, preprocessor "
                                                         "Linear(128, 64), --h 256 as in SHM's README and the paper)")),
    "gru_popgym": (15, lambda ck: gru_case(ck, 128, 256, "POPGym (popgym/baselines/ppo.py: h = 128, h_memory = "
                                                       "256)")),
    "stm_rl_a3c": (16, stm_case),
}
# Results stored as samples (sample_index/<key>, sample_value/<key>, sumsq/<key>) instead of whole, to keep the file
# near 1 MB: SHM's 1024-wide output and its [B, 128, 128] states would take 1.3 MB alone. Its `read` (the input of
# their `out` Linear, [T, B, 128]) is stored whole instead, so the forward is still checked entry by entry.
SAMPLED_RESULTS = {"shm_table1": ("output", "state_out/0", "grad/state_in/0"),
                   "stm_rl_a3c": ("state_out/0", "grad/state_in/0")}
NEEDS = {"ffm_outer_ffm_paper": ("ffm",), "ffm_standalone_shm_table1": ("ffm", "shm"),
         "ffm_shmcopy_shm_table1": ("shm",), "shm_table1": ("shm",), "gru_shm_table1": ("popgym",),
         "gru_popgym": ("popgym",), "stm_rl_a3c": ("sam",)}


def src(ck, repo, path, cls):
    return {"source": f"{REPOS[repo][0]}@{ck[repo]['commit']}:{path}", "class": cls}


# ----------------------------------------------------------------------------------------------------------------------
# Recording.

def starts_tensor():
    s = torch.zeros(T, B, dtype=torch.bool)
    for b, ts in STARTS.items():
        for t in ts:
            s[t, b] = True
    return s


def segments(starts, b):
    cuts = [t for t in range(T) if starts[t, b]]
    bounds = sorted(set([0] + cuts)) + [T]
    return [(t0, t1) for t0, t1 in zip(bounds[:-1], bounds[1:])]


def sample_index(numel, seed, cache):
    """SAMPLE distinct flat indices in increasing order, deterministic (stored with the samples). Tensors of the same
    size share one index tensor, which torch.save then writes once."""
    if numel not in cache:
        cache[numel] = torch.randperm(numel, generator=torch.Generator().manual_seed(seed))[:SAMPLE].sort().values
    return cache[numel]


def record_case(name, ck):
    seed, build = CASES[name]
    torch.manual_seed(seed)
    case = build(ck)
    D, O = case["D"], case["O"]
    big = case.get("big", BIG)
    out = {}
    params_info = []
    # Overwrite the big parameters with the deterministic fill before anything runs.
    with torch.no_grad():
        for k, (pname, p) in enumerate(case["params"]):
            info = {"name": pname, "authors_state_dict_name": case["prefix"] + pname, "shape": list(p.shape),
                    "dtype": str(p.dtype).replace("torch.", "")}
            if p.numel() > big:
                if pname not in case["bounds"]:
                    raise RuntimeError(f"{name}: no init bound for big parameter {pname}")
                bound, why = case["bounds"][pname]
                fseed = seed * 1000 + k
                p.copy_(fill_values(fseed, bound, tuple(p.shape)))
                info["stored"] = "fill"
                info["fill"] = {"seed": fseed, "bound": bound, "bound_is": why}
                out[f"fill_head/param/{pname}"] = p.detach().flatten()[:64].clone()
            else:
                info["stored"] = "whole"
                out[f"param/{pname}"] = p.detach().clone()
            info["grad_stored"] = "sample" if p.numel() > big else "whole"
            params_info.append(info)

    gen = torch.Generator().manual_seed(seed + 1)
    prefix = torch.randn(PREFIX, B, D, generator=gen)
    x = torch.randn(T, B, D, generator=gen)
    starts = starts_tensor()
    proj_seed = seed * 1000 + 999
    projection = fill_values(proj_seed, math.sqrt(3.0), (T, B, O))

    # state_in: the authors' forward over a random 7-step prefix from their initial state, all columns at once.
    with torch.no_grad():
        _, state_in, _ = case["run"](prefix.transpose(0, 1), case["initial"](B))
    state_in = [s.detach().clone().requires_grad_(True) for s in state_in]
    x_leaf = x.clone().requires_grad_(True)
    zeros = case["initial"](1)

    columns, finals, extra_columns = [], [], {}
    for b in range(B):
        ys, extras = [], {}
        for t0, t1 in segments(starts, b):
            carried = t0 == 0 and not starts[0, b]
            s0 = [s[b:b + 1] for s in state_in] if carried else [z.clone() for z in zeros]
            y, s_end, extra = case["run"](x_leaf[t0:t1, b:b + 1].transpose(0, 1), s0)
            ys.append(y[0])
            for k, v in extra.items():
                extras.setdefault(k, []).append(v[0])
        columns.append(torch.cat(ys, 0))
        finals.append(s_end)
        for k, v in extras.items():
            extra_columns.setdefault(k, []).append(torch.cat(v, 0))
    output = torch.stack(columns, 1)  # [T, B, O]
    assert output.shape == (T, B, O) and output.dtype == torch.float32, (output.shape, output.dtype)
    loss = (output * projection).sum()
    params = [p for _, p in case["params"]]
    grads = torch.autograd.grad(loss, params + [x_leaf] + state_in, allow_unused=True)
    g_params, g_x, g_state = grads[:len(params)], grads[len(params)], grads[len(params) + 1:]

    results = {"output": output.detach().clone()}
    for k, v in extra_columns.items():
        results[k] = torch.stack(v, 1).detach().clone()
    for i in range(len(state_in)):
        results[f"state_out/{i}"] = torch.cat([f[i] for f in finals], 0).detach().clone()
    results["grad/input"] = g_x.detach().clone()
    for i, (s, g) in enumerate(zip(state_in, g_state)):
        results[f"grad/state_in/{i}"] = torch.zeros_like(s) if g is None else g.detach().clone()

    out["input"] = x
    out["starts"] = starts
    out["prefix_input"] = prefix
    for i, s in enumerate(state_in):
        out[f"state_in/{i}"] = s.detach().clone()
    if projection.numel() <= big:
        out["projection"] = projection
    out["loss"] = loss.detach().to(torch.float64).reshape(())
    sampled = SAMPLED_RESULTS.get(name, ())
    index_cache = {}
    results_info = {}
    for k, v in results.items():
        if k in sampled:
            idx = sample_index(v.numel(), seed * 1000 + 500, index_cache)
            out[f"sample_index/{k}"] = idx
            out[f"sample_value/{k}"] = v.flatten()[idx].clone()
            out[f"sumsq/{k}"] = v.to(torch.float64).pow(2).sum()
            results_info[k] = {"shape": list(v.shape), "stored": "sample"}
        else:
            out[k] = v
            results_info[k] = {"shape": list(v.shape), "stored": "whole"}
    for (pname, _), g, info in zip(case["params"], g_params, params_info):
        if g is None:  # not used by the recorded path at all (STM's relational-memory parameters in the Atari path)
            info["grad_stored"] = "none"
            continue
        g = g.detach()
        if info["grad_stored"] == "whole":
            out[f"grad/param/{pname}"] = g.clone()
        else:
            idx = sample_index(g.numel(), seed * 1000 + 500, index_cache)
            out[f"grad_index/param/{pname}"] = idx
            out[f"grad_sample/param/{pname}"] = g.flatten()[idx].clone()
            out[f"grad_sumsq/param/{pname}"] = g.to(torch.float64).pow(2).sum()

    for k, v in out.items():
        assert isinstance(v, torch.Tensor) and v.is_contiguous(), k
        if v.is_complex():
            raise RuntimeError(f"{name}: {k} is complex")

    meta = {
        "case": name,
        "sources": case["sources"],
        "constructor": case["ctor"],
        "constructor_note": case["ctor_note"],
        "seed": seed,
        "recorded_with": {"torch": torch.__version__, "numpy": np.__version__, "device": "cpu", "threads": 1},
        **layout_meta(starts, D, O, big, params_info, case["state"]),
        **results_meta(out, projection, proj_seed, big, results_info),
        "semantics": (
            f"input x [T={T}, B={B}, D={D}] ~ N(0, 1) and prefix_input [{PREFIX}, B, D] ~ N(0, 1) from "
            f"torch.Generator().manual_seed({seed + 1}) (prefix first); the module is built after "
            f"torch.manual_seed({seed}). starts [T, B] bool: episode starts; columns 0 and 2 start at t = 0, columns 1 "
            "and 3 carry state_in in. The authors' forward has no reset input, so RLlib's semantics are emulated: each "
            "column is cut at its starts and each segment runs through their batched forward with batch 1 (batch "
            "first, [1, L, D]); the first segment starts from state_in unless starts[0, b], later segments from the "
            "authors' initial state (zeros); outputs are concatenated over time. state_in = their final state after "
            "prefix_input (all 4 columns in one batched call from the initial state). state_out = the state after the "
            "last step of each column. loss = (output * projection).sum(), projection fixed (fill, see 'projection'; "
            "stored whole when it has <= 65,536 elements); grad/param/<name> = dloss/dparam, grad/input = dloss/dx, "
            "grad/state_in/<i> = dloss/dstate_in (zero for the columns that start at t = 0). Complex tensors are "
            "stored as torch.view_as_real float32 [..., 2] (re, im). loss is a float64 scalar of the float32 loss. "
            "Parameters with more than 65,536 elements were overwritten with the fill before recording and are not "
            "stored (fill_head/param/<name>: their first 64 values, to check a regeneration); their gradients are "
            "stored as grad_index/param/<name> (int64 flat indices), grad_sample/param/<name> (float32) and "
            "grad_sumsq/param/<name> (float64 sum of squares of the whole gradient). A result listed as 'sample' under "
            "'results' is stored the same way as sample_index/<key> (int64), sample_value/<key> and sumsq/<key>. "
            "Modules are float32 as the "
            "models run; the authors' internal promotions are kept. " + case["semantics_extra"]),
        "mapping_to_rlm": case["mapping"],
    }
    return out, meta


def layout_meta(starts, D, O, big, params_info, state):
    """The json fields that describe a trace's batch, parameters and state, shared by every recorder of this format."""
    return {
        "T": T, "B": B, "D": D, "O": O, "prefix_steps": PREFIX,
        "starts": {str(b): list(ts) for b, ts in STARTS.items()},
        "segments": {str(b): segments(starts, b) for b in range(B)},
        "size_threshold": big,
        "parameters": params_info,
        "state": state,
    }


def results_meta(out, projection, proj_seed, big, results_info):
    """The json fields that describe a trace's projection, fill formula, results and stored keys."""
    return {
        "projection": {"shape": list(projection.shape), "stored": "whole" if projection.numel() <= big else "fill",
                       "fill": {"seed": proj_seed, "bound": math.sqrt(3.0),
                                "bound_is": "sqrt(3): uniform with unit variance"}},
        "fill_formula": "value[i] = float32(bound * (2.0 * (splitmix64(seed + i) >> 40) / 2**24 - 1.0)) in float64, "
                        "i the flat row-major index, uint64 wrapping; splitmix64(x): x += 0x9E3779B97F4A7C15; "
                        "z = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB; "
                        "return z ^ (z >> 31)",
        "results": results_info,
        "keys": {k: {"shape": list(v.shape), "dtype": str(v.dtype).replace("torch.", "")} for k, v in out.items()},
    }


def prepare_recording(out_dir):
    """One CPU thread, deterministic kernels and no CUDA (SAM's STM would put its initial memories on a GPU if it saw
    one), so that two runs write identical files."""
    torch.set_num_threads(1)
    torch.cuda.is_available = lambda: False
    torch.use_deterministic_algorithms(True)
    os.makedirs(out_dir, exist_ok=True)


def checkout(args, key):
    path = getattr(args, key)
    repo, probe = REPOS[key]
    if path is None:
        fail(f"--{key} is required (a checkout of {repo})")
    if not os.path.isdir(path):
        fail(f"--{key} {path}: no such directory (expected a checkout of {repo})")
    if not os.path.isfile(os.path.join(path, probe)):
        fail(f"--{key} {path}: no {probe} there (expected a checkout of {repo})")
    commit = getattr(args, f"{key}_commit")
    try:
        found = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], capture_output=True, text=True, check=True,
                               ).stdout.strip()
        top = subprocess.run(["git", "-C", path, "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(path):
            found = None  # inside some other repository (e.g. an export under our own tree): not its commit
    except (OSError, subprocess.CalledProcessError):
        found = None
    if found and commit and not found.startswith(commit):
        fail(f"--{key} {path} is at {found}, not --{key}-commit {commit}")
    commit = found or commit
    if not commit:
        fail(f"--{key} {path} is not a git checkout: pass --{key}-commit (the {repo} commit it was exported from)")
    return {"path": os.path.abspath(path), "commit": commit}


def save(out, meta, out_dir):
    path = os.path.join(out_dir, f"{meta['case']}.pt")
    # Through a buffer, so the zip's record prefix is "archive/" rather than the file name: equal data, equal bytes.
    buffer = io.BytesIO()
    torch.save(out, buffer, _use_new_zipfile_serialization=True)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())
    with open(os.path.join(out_dir, f"{meta['case']}.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key, (repo, _) in REPOS.items():
        parser.add_argument(f"--{key}", metavar="DIR", help=f"checkout of {repo}")
        parser.add_argument(f"--{key}-commit", metavar="SHA", help=f"{repo} commit, when --{key} is not a git checkout")
    parser.add_argument("--only", help="comma-separated cases: " + ", ".join(CASES))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "memory_golden"), help="output folder")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    for n in names:
        if n not in CASES:
            fail(f"unknown case {n!r} (cases: {', '.join(CASES)})")
    ck = {key: checkout(args, key) for key in sorted({k for n in names for k in NEEDS[n]})}

    # Sanity: the vectorised fill against the plain-Python formula.
    for s, bd in ((0, 1.0), (12345, 0.125), (2**64 - 3, 1 / 3)):
        v = fill_values(s, bd, (1000,))
        for i in (0, 1, 2, 999):
            assert float(v[i]) == _fill_scalar(s, bd, i), (s, i)

    install_stubs()
    # thaihungle/SHM's ray_shm.py calls the deprecated nn.init.xavier_uniform (same values as xavier_uniform_).
    warnings.filterwarnings("ignore", message=".*xavier_uniform.*", category=FutureWarning)
    prepare_recording(args.out)
    recorded = {}
    for n in names:
        out, meta = record_case(n, ck)
        if n == "ffm_shmcopy_shm_table1":
            ref = recorded.get("ffm_standalone_shm_table1")
            if ref is None and "ffm" in ck:
                ref, _ = record_case("ffm_standalone_shm_table1", ck)
            if ref is not None:
                assert ref.keys() == out.keys(), "SHM's FFM copy recorded different keys"
                for k in out:
                    assert torch.equal(ref[k], out[k]), f"SHM's FFM copy differs from proroklab/ffm's at {k}"
                meta["equals_case"] = "ffm_standalone_shm_table1 (every tensor bitwise, checked by the script)"
            else:
                print(f"{PROG}: note: --ffm not given, so {n} was not compared with ffm_standalone_shm_table1")
        recorded[n] = out
        path = save(out, meta, args.out)
        print(f"{n}: {len(out)} tensors, {os.path.getsize(path):,} bytes -> {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
