#!/usr/bin/env python3
"""The fastest PPO can possibly run in `./rlm bench peers`' setting on this CPU: the time of its matrix products alone.

Usage: .venv/bin/python -m scripts.ppo_gemm_ceiling [--threads N] [--repeats R] [--dtype float32|bfloat16]
                                                     [--sb3 STEPS_PER_S] [--json FILE]

Every Linear of the peers' network (scripts/bench_peers.py: 10 -> 128 -> 128 -> GRU 256 -> actor and critic
[128, 128], 4 actions; 413,829 parameters) is timed as the GEMM that an iteration runs. Each GEMM goes through the
oneDNN op that rlm calls (mkldnn::_linear_pointwise, src/nn/linear.cpp), with dense operands in its fastest
orientation. One iteration has these GEMMs:
- rollout: 1,071 steps of the forward at 64 rows (one row per env), the GRU's W_hh product included;
- update: for each epoch and minibatch (ours: 8 of 8,192 steps, 161 whole 51-step episodes), the forward of every
  layer on 8,192 rows, the GRU's W_hh product once per step on 161 rows, and in the backward the input gradient of
  every layer but the first (per step for W_hh), plus every weight gradient ([n, 8192] x [8192, k]).
The sum is a ceiling: it leaves out everything that is not a GEMM (gates, LayerNorm, activations, the loss, Adam,
the env, copies) and assumes no GEMM pays for a transposed operand. steps/s above it cannot be reached at fp32 on
this machine, whatever else is made faster. With --sb3, the ceiling is divided by sb3-contrib's steps/s: this is the
highest ratio that `./rlm bench peers` can ever show here. --dtype bfloat16 times the products with bf16 operands,
the ceiling of `experiment.cpu_matmul: bf16` (only meaningful on a CPU that multiplies bf16 natively).
"""
import argparse
import json
import os
import time

from scripts.bench_peers import EPISODE_LENGTH, SETTINGS, trained_steps_per_iteration

OBS_SIZE = 10  # PreviousAction + Antialias, flattened one-hot (bench_peers.py)
ACTIONS = 4    # RepeatPreviousEasy: Discrete(4)


def network_layers():
    """(name, in, out) of every Linear, and the GRU's recurrent product separately (it runs once per step)."""
    s = SETTINGS
    h, f, p = s["memory_hidden_size"], s["feature_size"], s["preprocessor_size"]
    a1, a2 = s["head_sizes"]
    layers = [("feature map", OBS_SIZE, f), ("preprocessor", f, p), ("GRU W_ih", p, 3 * h),
              ("actor+critic first (fused)", h, 2 * a1), ("actor second", a1, a2), ("critic second", a1, a2),
              ("actor logits", a2, ACTIONS), ("critic value", a2, 1)]
    params = sum((k + 1) * n for _, k, n in layers) + 3 * h * h + 3 * h  # + W_hh and b_hh
    return layers, ("GRU W_hh", h, 3 * h), params


def gemm_seconds(rows, inner, cols, repeats, dtype="float32"):
    """Best time of one [rows, inner] x [inner, cols] product through rlm's oneDNN op, dense operands."""
    import torch
    a, w = torch.randn(rows, inner).to(getattr(torch, dtype)), torch.randn(cols, inner).to(getattr(torch, dtype))
    op = torch.ops.mkldnn._linear_pointwise
    best = float("inf")
    for _ in range(3):
        op(a, w, None, "none", [], "")
    for _ in range(repeats):
        start = time.perf_counter()
        op(a, w, None, "none", [], "")
        best = min(best, time.perf_counter() - start)
    return best


def measure(threads, repeats, dtype="float32"):
    """The GEMM time of one iteration, layer by layer, and the steps/s it allows."""
    import torch
    torch.set_num_threads(threads)
    s = SETTINGS
    envs, steps = s["num_envs"], s["steps_per_env"]
    mb = s["minibatch_size"]
    sequences = -(-mb // EPISODE_LENGTH)  # whole episodes per minibatch
    mb_rows = sequences * EPISODE_LENGTH
    updates = trained_steps_per_iteration("ours", steps) // mb  # minibatches over all epochs
    layers, recurrent, params = network_layers()
    timed = {}

    def t(rows, inner, cols, orientations=False):
        """A product's time; orientations: a weight gradient, which may be computed as its transpose."""
        key = (rows, inner, cols)
        if key not in timed:
            timed[key] = gemm_seconds(rows, inner, cols, repeats, dtype)
            if orientations:
                timed[key] = min(timed[key], gemm_seconds(cols, inner, rows, repeats, dtype))
        return timed[key]

    rows_out = []
    rollout = update = flops = 0.0
    for name, k, n in layers + [recurrent]:
        per_step = name == recurrent[0]
        act = t(envs, k, n)
        fwd = (t(sequences, k, n) * EPISODE_LENGTH) if per_step else t(mb_rows, k, n)
        grad_in = 0.0 if name == "feature map" else (
            t(sequences, n, k) * EPISODE_LENGTH if per_step else t(mb_rows, n, k))
        grad_w = t(n, mb_rows, k, orientations=True)
        rollout += act * steps
        update += (fwd + grad_in + grad_w) * updates
        flops += 2 * k * n * (envs * steps + updates * mb_rows * (2 if name == "feature map" else 3))
        rows_out.append({"layer": name, "in": k, "out": n, "rollout_s": act * steps,
                         "update_s": (fwd + grad_in + grad_w) * updates})
    env_steps = envs * steps
    return {"ceiling_steps_per_second": env_steps / (rollout + update), "rollout_gemm_seconds": rollout,
            "update_gemm_seconds": update, "gflop_per_iteration": flops / 1e9, "env_steps_per_iteration": env_steps,
            "minibatches_per_iteration": updates, "sequences_per_minibatch": sequences, "parameters": params,
            "threads": threads, "dtype": dtype, "torch": torch.__version__, "layers": rows_out}


def report(r):
    """The table and the ceiling, as text lines."""
    s = SETTINGS
    total = r["rollout_gemm_seconds"] + r["update_gemm_seconds"]
    lines = [f"PPO GEMM ceiling, ./rlm bench peers' setting ({r['parameters']:,} parameters; {s['num_envs']} x "
             f"{s['steps_per_env']} steps, {r['minibatches_per_iteration']} minibatches of "
             f"{r['sequences_per_minibatch']} x {EPISODE_LENGTH} steps per iteration), {r['dtype']} operands, torch "
             f"{r['torch']}, {r['threads']} thread(s)",
             f"{'layer':28} {'in':>5} {'out':>5} {'rollout s':>10} {'update s':>10}"]
    for x in r["layers"]:
        lines.append(f"{x['layer']:28} {x['in']:>5} {x['out']:>5} {x['rollout_s']:>10.3f} {x['update_s']:>10.3f}")
    lines.append(f"GEMMs per iteration: rollout {r['rollout_gemm_seconds']:.2f} s + update "
                 f"{r['update_gemm_seconds']:.2f} s = {total:.2f} s for {r['env_steps_per_iteration']:,} env steps "
                 f"({r['gflop_per_iteration']:,.0f} GFLOP, {r['gflop_per_iteration'] / total:,.0f} GFLOP/s)")
    lines.append(f"ceiling: {r['ceiling_steps_per_second']:,.0f} env steps/s")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threads", type=int, default=SETTINGS["torch_threads"])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="the products' operand type (bfloat16: experiment.cpu_matmul bf16)")
    parser.add_argument("--sb3", type=float, help="sb3-contrib's steps/s from ./rlm bench peers, for the ratio")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args()
    result = measure(args.threads, args.repeats, args.dtype)
    print("\n".join(report(result)))
    if args.sb3:
        result["sb3_steps_per_second"] = args.sb3
        result["ceiling_over_sb3"] = result["ceiling_steps_per_second"] / args.sb3
        print(f"ceiling / sb3-contrib ({args.sb3:,.0f} steps/s): {result['ceiling_over_sb3']:.2f}x")
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
