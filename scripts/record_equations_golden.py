#!/usr/bin/env python3
"""Records golden traces of the two memory cells that have no public code, from their papers' equations.

Usage (project venv):
  .venv/bin/python -m scripts.record_equations_golden [--only CASE[,CASE]] [--out DIR] [--no-checks]
Writes tests/data/memory_golden/<case>.pt and <case>.json in the format of scripts/record_memory_golden.py (issue 29
§4; tests/data/memory_golden/README.md). Needs torch and numpy only.

The KF layer (the KF paper, Luis et al., "Uncertainty Representations in State-Space Layers for Deep RL under Partial
Observability") and the spiking-gate cell (the spiking paper, "Spiking Neuron as Discrete Gating for Long-Term Memory
Tasks") have no public code, so this script implements the papers' equations itself, in float64 torch ops run step by
step (the sequential form of each recurrence, not a scan), written from the papers and not from rlm's C++. Gradients
come from torch's float64 autograd through those equations; the spike's backward is the paper's surrogate derivative
(a torch.autograd.Function). Every section and equation number below refers to the paper of its part: (a) the KF
paper (arXiv:2409.16824 v1), (b) the spiking paper (both in docs/REFERENCES.md). Where a paper leaves a choice open,
the choice is the one rlm's config that reproduces the paper makes, and the json's "choices" list says so.

Cases (each with a fixed seed; the sizes of the config that reproduces the paper):
  kf_kf_paper                   KF layer, vSSM+KF (the paper's model), configs/offpolicy/sacd_kf_popgym.yaml (the runs
                                of configs/repro/kf_paper): E = 16, N = 128, one layer, no RMSNorm, u_t in the predict
  kf_u_kf_paper                 the same with variant kf_u (vSSM+KF-u, Table 2's ablation: no input u)
  vssm_kf_paper                 the same with variant vssm (vSSM, Table 2's ablation: predict only)
  spiking_train_spiking_paper   spiking-gate cell, configs/spiking_popgym.yaml (the runs of configs/repro/
                                spiking_paper): N_x = 64, N_h = N_out = 1024, θ = 0, X ~ U(0, 1), input-dependent c_t,
                                arctan surrogate; training mode (Eq. 8 "parallel training"): random thresholds
  spiking_eval_spiking_paper    the same cell in inference mode (Eq. 8 "sequential inference"): V_th = θ + E[X] = 0.5,
                                no draws; its own seed (26: with 24 and 25 a gate lies within 1e-5 of 0.5)

The random thresholds of the training case are torch.rand([T, B, 2·N_h], generator=torch.Generator().manual_seed(S),
dtype=float32) (S in the json: threshold_noise.generator_seed), which is exactly the draw rlm's Spiking makes in
training mode from a CPU generator set with Memory::set_generator(at::detail::createCPUGenerator(S)) (spiking.hpp;
channels: the N_h input-gate neurons, then the N_h output-gate neurons). The C++ test regenerates them that way and
first checks the regeneration against the stored head and sample of the draws.

Format as record_memory_golden.py (whose helpers this script imports): parameters stored whole or, above the size
threshold, as the splitmix64 fill; state_in from a 7-step prefix run from the initial state; loss = Σ output ⊙
projection; float64 results rounded once to float32. The recorded state layout is rlm's (there is no authors' layout):
the C++ test needs no state transform.
Deterministic: two runs write identical files.
"""
import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

from scripts.record_memory_golden import (  # the format helpers of the authors'-code recorder
    BIG,
    PREFIX,
    ROOT,
    B,
    T,
    _fill_scalar,
    fill_values,
    layout_meta,
    prepare_recording,
    results_meta,
    sample_index,
    save,
    segments,
    starts_tensor,
)

PROG = "record_equations_golden.py"
KF_PAPER = "KF paper (docs/REFERENCES.md): Luis, Bottero, Vinogradska, Berkenkamp, Peters, \"Uncertainty " \
           "Representations in State-Space Layers for Deep RL under Partial Observability\", TMLR 2025, " \
           "arXiv:2409.16824 v1"
SPIKING_PAPER = "spiking paper (docs/REFERENCES.md): anonymous, \"Spiking Neuron as Discrete Gating for Long-Term " \
                "Memory Tasks\", ICLR submission under review"
# A spike flips if float32 rounding moves m − V_th across 0. The recorder keeps every |m − V_th| of the recorded run
# at least this far from 0 (float32 errors of m reach ~5e-7 here); see the json's gate_margin.
MIN_GATE_MARGIN = 1e-5


def fill_seed(seed, k):
    """The splitmix64 fill reads the counter seed + i, so record_memory_golden.py's seeds seed·1000 + k give
    consecutive tensors that are shifted copies of one stream (its fills at k and k + 2 agree at an offset of 2, and
    its projection at seed·1000 + 999 repeats the first fill from index 999). Here every tensor gets its own counter
    range of 2^32: (seed·1000 + k)·2^32. The formula is unchanged; the json carries the seeds."""
    return (seed * 1000 + k) << 32


def fail(message):
    sys.exit(f"{PROG}: {message}")


def uniform_init(bound, why):
    return {"kind": "uniform", "bound": bound, "why": why}


def const_init(values, why):
    return {"kind": "const", "values": values, "why": why}


def linear(x, p, name):
    """x Wᵀ + b for the paper's fully connected map `name` (weight [out, in], bias [out])."""
    return x @ p[name + ".weight"].T + p[name + ".bias"]


# ----------------------------------------------------------------------------------------------------------------------
# (a) The KF layer, KF paper.

def kf_coefficients(p, variant):
    """Discrete-time a = diag(A), β = diag(B) and q = diag(Σ^p) of one layer.

    §4.2 "SSM Parameterization" and App. B: the continuous system (Ã, B̃) is initialised with HiPPO matrices following
    Gu and Dao (Mamba), discretised by zero-order hold with a learnable scalar step Δ = softplus(Δ̃) (App. B), Δ̃ init
    −7 (Table 1). ZOH for a diagonal system (Smith et al. 2023, which §4.2 cites): A = exp(ΔÃ),
    B = Ã⁻¹(exp(ΔÃ) − I) B̃. Ã = −exp(A_log) is Mamba's parameterisation of its diagonal HiPPO (S4D-Real) init
    Ã_n = −(n + 1) (choice: the paper says only "HiPPO (diagonal)" and "follow Gu and Dao").
    Σ^p is time-invariant (§3.4 "Time-invariance"), diagonal (§3.4 (i)), init I (Table 1), used directly as the
    discrete-time noise of Eq. (4); its positivity map is not in the paper (choice: q = softplus(q̃)).
    """
    a_cont = -torch.exp(p["A_log"])
    delta = F.softplus(p["Delta_raw"])
    a = torch.exp(delta * a_cont)
    beta = torch.expm1(delta * a_cont) / a_cont * p["B_tilde"] if variant != "kf_u" else None
    q = F.softplus(p["Sigma_p_raw"]) if variant != "vssm" else None
    return a, beta, q


def kf_filter(a, beta, q, u, w, r, x0, P0, starts, variant):
    """The diagonal Kalman filter of §3.4, Eq. (4)-(6), one step at a time (the sequential form of the recurrence).

    u, w, r: [T, B, N] (u None for kf_u; w, r None for vssm); x0, P0: [B, N] the belief carried in (P0 None for vssm).
    At an episode start the belief is reset to the initial belief N(x⁺_{-1}, Σ⁺_{-1}) = N(0, I) (§3.3 last sentence,
    Table 1 "Initial state belief N(0, I)") before the step's predict and update.
    Returns the posterior means x⁺_t [T, B, N] and the final (x⁺, P⁺).
    """
    x, P = x0, P0
    means = []
    for t in range(u.shape[0] if u is not None else w.shape[0]):
        reset = starts[t].unsqueeze(-1)
        x = torch.where(reset, 0.0, x)
        if P is not None:
            P = torch.where(reset, 1.0, P)
        # Predict, Eq. (4): x⁻_t = diag(A) ⊙ x⁺_{t−1} + diag(B) ⊙ u, diag(Σ⁻_t) = diag(A)² ⊙ diag(Σ⁺_{t−1}) + diag(Σ^p).
        # The paper writes u_{t−1}; the config uses u_t (input_lag 0, see the json's choices).
        x_prior = a * x + (beta * u[t] if beta is not None else 0.0)
        if variant == "vssm":  # §5.1 / App. B: vSSM is the predict block only (a KF with infinite observation noise)
            x = x_prior
            means.append(x)
            continue
        P_prior = a * a * P + q
        # Kalman gain, Eq. (6): diag(K_t) = diag(Σ⁻_t) ⊘ (diag(Σ⁻_t) + diag(Σ^o_t)), with C = I (§3.4 (iii)).
        k = P_prior / (P_prior + r[t])
        # Update, Eq. (5): x⁺_t = x⁻_t + diag(K_t) ⊙ (w_t − x⁻_t), diag(Σ⁺_t) = (1 − diag(K_t)) ⊙ diag(Σ⁻_t).
        x = x_prior + k * (w[t] - x_prior)
        P = (1.0 - k) * P_prior
        means.append(x)
    return torch.stack(means), x, P


def kf_run(p, x, states, starts, variant):
    """One KF layer (Fig. 2, §4.2): h_t → (u_t, w_t, Σ^o_t) by linear projections, the filter, z_t = Linear(x⁺_t).

    x: [T, B, E]; states: [x⁺ [B, N], P⁺ [B, N]] (vssm: [x [B, N]]). Returns (z [T, B, E], final states, extras).
    Observation noise Σ^o_t = diag(r_t) > 0 comes from the input (§3.4 "Time-invariance": only the observation noise
    is input-dependent); its positivity map is not in the paper (choice: r = softplus(r̃) + 1e-6).
    The output reads the posterior mean only (§4.2 "Design decisions", App. E: the final design).
    """
    a, beta, q = kf_coefficients(p, variant)
    u = linear(x, p, "W_u") if variant != "kf_u" else None
    w = linear(x, p, "W_w") if variant != "vssm" else None
    r = F.softplus(linear(x, p, "W_r")) + 1e-6 if variant != "vssm" else None
    P0 = states[1] if variant != "vssm" else None
    means, x_end, P_end = kf_filter(a, beta, q, u, w, r, states[0], P0, starts, variant)
    z = linear(means, p, "W_z")
    return z, [x_end] if variant == "vssm" else [x_end, P_end], {}


def kf_case(variant):
    E, N = 16, 128
    torch_linear = "PyTorch nn.Linear default init U(±1/sqrt(fan_in)) (App. B: PyTorch codebase; the config's " \
                   "model.off_policy.init torch)"
    params = []
    rows = []
    if variant != "kf_u":
        rows.append(("W_u", "u_t, the input of the predict step, Eq. (4)"))
    if variant != "vssm":
        rows += [("W_w", "w_t, the latent observation of the update step, Eq. (5)"),
                 ("W_r", "r̃_t, the observation noise before positivity: diag(Σ^o_t) = softplus(r̃_t) + 1e-6")]
    for name, what in rows:
        params.append((f"{name}.weight", [N, E], uniform_init(1 / math.sqrt(E), torch_linear + ", fan_in 16"), what))
        params.append((f"{name}.bias", [N], uniform_init(1 / math.sqrt(E), torch_linear + ", fan_in 16"), what))
    params.append(("W_z.weight", [E, N], uniform_init(1 / math.sqrt(N), torch_linear + ", fan_in 128"),
                   "z_t = W_z x⁺_t + b: the posterior mean projected back to the history space (Fig. 2)"))
    params.append(("W_z.bias", [E], uniform_init(1 / math.sqrt(N), torch_linear + ", fan_in 128"), "as W_z.weight"))
    params.append(("A_log", [N], const_init(np.log(np.arange(1, N + 1, dtype=np.float64)),
                                            "HiPPO diagonal (Table 1 'A init HiPPO (diagonal)', §4.2 'follow Gu and "
                                            "Dao'): Ã_n = −exp(A_log_n) = −(n + 1)"),
                   "Ã = −exp(A_log), the continuous-time diagonal transition"))
    if variant != "kf_u":
        params.append(("B_tilde", [N], const_init(np.ones(N), "Table 1 'B init I'"), "B̃, the continuous-time input"))
    if variant != "vssm":
        params.append(("Sigma_p_raw", [N], const_init(np.full(N, math.log(math.e - 1.0)),
                                                      "Table 1 'Σ^p init I': softplus(ln(e − 1)) = 1"),
                       "diag(Σ^p) = softplus(Sigma_p_raw), the time-invariant process noise"))
    params.append(("Delta_raw", [1], const_init(np.array([-7.0]), "Table 1 'Δ̃ init −7'"),
                   "Δ = softplus(Δ̃), the scalar ZOH step (App. B)"))

    def initial(n):  # the initial belief N(0, I) (Table 1): x⁺_{-1} = 0, P⁺_{-1} = 1
        return [torch.zeros(n, N, dtype=torch.float64)] + (
            [] if variant == "vssm" else [torch.ones(n, N, dtype=torch.float64)])

    def run(p, x, states, starts, aux=None):
        return kf_run(p, x, states, starts, variant)

    title = {"kf": "vSSM+KF (the paper's model)", "kf_u": "vSSM+KF-u (no input u_t)",
             "vssm": "vSSM (the predict block only)"}[variant]
    chunks = {"kf": "[u: 0-127 | w: 128-255 | r̃: 256-383]", "kf_u": "[w: 0-127 | r̃: 128-255]",
              "vssm": "[u: 0-127]"}[variant]
    offset = {"W_u": 0, "W_w": 0 if variant == "kf_u" else N, "W_r": N if variant == "kf_u" else 2 * N}
    mapping = [f"{name}.weight [128, 16], {name}.bias [128] -> rlm Kf layer0.in_proj.weight / .bias rows "
               f"{offset[name]}-{offset[name] + N - 1} (in_proj = Linear(16 -> {len(rows) * N}), rows {chunks})"
               for name, _ in rows]
    mapping += ["W_z.weight [16, 128], W_z.bias [16] -> rlm layer0.out_proj.weight / .bias",
                "A_log [128] -> rlm layer0.A_log",
                *(["B_tilde [128] -> rlm layer0.B"] if variant != "kf_u" else []),
                *(["Sigma_p_raw [128] -> rlm layer0.q (positive softplus)"] if variant != "vssm" else []),
                "Delta_raw [1] -> rlm layer0.dt",
                f"rlm options (KfOptions): hidden_size 16 (= input 16, no input_map), state_size 128, num_layers 1, "
                f"variant {variant}, rms_norm false, input_lag 0, process_noise time_invariant, output_features mean, "
                f"positive softplus, learn_ab true, dt_raw_init -7 (configs/offpolicy/sacd_kf_popgym.yaml"
                f"{'' if variant == 'kf' else ' with model.memory.kf.variant=' + variant})",
                "state: rlm Kf state tensors = state_in/<i> as recorded (no transform)"]
    choices = [
        "input index: the paper's predict (Eq. 1, 2, 4) reads u_{t−1}; the config uses u_t (input_lag 0, rlm's "
        "choice: u and w both come from h_t, and h_t already holds a_{t−1})" if variant != "kf_u" else
        "no input u (vSSM+KF-u, KF paper §5.1)",
        "positivity of Σ^o_t: r = softplus(r̃) + 1e-6 (not in the paper; rlm's choice)",
        "positivity of Σ^p: q = softplus(q̃), init q̃ = ln(e − 1) so that Σ^p = I (not in the paper; rlm's choice)",
        "Ã = −exp(A_log) learnable, B̃ learnable (the paper says only 'init'; Mamba's parameterisation)",
        "projections with biases (not in the paper; rlm's choice), PyTorch default init (the config's init torch)",
        "episode start: the belief is reset to N(0, I) and the step's predict and update run from it",
    ]
    state = ["state 0: posterior mean x⁺ [B, N=128] (vSSM: its state x [B, 128]), float32"]
    if variant != "vssm":
        state.append("state 1: posterior variance diag(Σ⁺) [B, N=128], float32 (the initial belief's is 1)")
    return dict(
        params=params, D=E, O=E, initial=initial, run=run, big=BIG,
        sources=[{"source": KF_PAPER,
                  "sections": "§3.3 Eq. (1)-(3); §3.4 Eq. (4)-(6) and its assumptions; §4.2 (Fig. 2, 'SSM "
                              "Parameterization', 'Design decisions'); §5.1 (vSSM, vSSM+KF-u); App. B; App. C Table 1; "
                              "App. E"},
                 {"source": "configs/offpolicy/sacd_kf_popgym.yaml (the config of configs/repro/kf_paper)",
                  "sections": "model.memory: hidden_size 16, kf.state_size 128, num_layers 1, variant "
                              f"{variant}, rms_norm false, input_lag 0, process_noise time_invariant, "
                              "output_features mean"}],
        ctor={"E": E, "N": N, "layers": 1, "variant": variant, "rms_norm": False, "input_lag": 0,
              "process_noise": "time_invariant", "output_features": "mean"},
        ctor_note=f"One KF layer, {title}, at the sizes of Table 1's POPGym column and the config: embedding E = 16 "
                  "(the layer's input and output width), latent N = 128, 1 layer, no RMSNorm output block.",
        state=state, choices=choices, mapping=mapping,
        semantics_extra=(
            "Equations, float64, one step at a time: a = exp(Δ Ã), β = expm1(Δ Ã)/Ã ⊙ B̃ (ZOH), Ã = −exp(A_log), "
            "Δ = softplus(Δ̃), q = softplus(Σ^p_raw); u_t = W_u h_t + b, w_t = W_w h_t + b, "
            "r_t = softplus(W_r h_t + b) + 1e-6; predict x⁻ = a x⁺ + β u_t, P⁻ = a² P⁺ + q (Eq. 4); "
            "gain k = P⁻/(P⁻ + r_t) (Eq. 6); update "
            "x⁺ = x⁻ + k (w_t − x⁻), P⁺ = (1 − k) P⁻ (Eq. 5); z_t = W_z x⁺_t + b. vSSM: x_t = a x_{t−1} + β u_t, "
            "z_t = W_z x_t + b; vSSM+KF-u: no u and no B̃. At an episode start the belief is N(0, I) before the "
            "step."),
    )


# ----------------------------------------------------------------------------------------------------------------------
# (b) The spiking-gate cell, spiking paper.

class AtanSpike(torch.autograd.Function):
    """s = Θ(z), the Heaviside step (Eq. 7), whose backward is the surrogate gradient §4.2 defines: 'the derivative of
    the arctan function ... Following Fang et al. (2021a), Θ'(x) ≜ 1/(1 + (πx)²)'. Θ(0) = 1 (a choice; the recorded
    run keeps every |z| ≥ MIN_GATE_MARGIN, so it never matters)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z >= 0).to(z.dtype)

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad / (1.0 + (math.pi * z) ** 2)


def spiking_run(p, x, states, starts, v_th, highway_form="product", margins=None, probe=None):
    """The cell of §4.2 and App. A over x [T, B, N_x] from states [h [B, N_h, 2] (Re, Im), m [B, 2 N_h] (input-gate
    membranes, then output-gate membranes)]; v_th: the thresholds, a float or [T, B, 2 N_h] (same channel order as m).
    Returns (ŝ [T, B, N_out], [h_T, m_T], extras). At an episode start h and m are reset to 0 before the step.
    highway_form "product" is Eq. (20) (the form the surrogate gradient flows through); "case" is Eq. (9) literally
    (forward only, a check of Eq. 20). margins: a list that receives min |m − V_th| per step; probe: a dict that
    receives the membranes and gates of every step (checks only).
    """
    n = p["inv_tau_in_logit"].shape[0]
    # Input maps (Fig. 3, App. A): W_x x ∈ C^{N_h} as two real maps (Re, Im) of the real x; u_t = W_i x_t and W_o x_t,
    # the input currents of the two gate neurons (Eq. 7, App. A); ĉ_t = W_c x_t ∈ C^{N_h} (Eq. 10, 'W_h' there).
    wx_re, wx_im = linear(x, p, "W_x_re"), linear(x, p, "W_x_im")
    u_in, u_out = linear(x, p, "W_i"), linear(x, p, "W_o")
    ch_re, ch_im = linear(x, p, "W_c_re"), linear(x, p, "W_c_im")
    # Eq. (10): c_t = ĉ_t tanh(|ĉ_t|)/|ĉ_t|, with |·| 'implemented as sqrt(|·|² + 1)' (App. A, after Eq. 10), read as
    # replacing |ĉ| in both places (choice; rlm's magnitude_in_tanh true).
    mag = torch.sqrt(ch_re * ch_re + ch_im * ch_im + 1.0)
    c_re, c_im = ch_re * torch.tanh(mag) / mag, ch_im * torch.tanh(mag) / mag
    # 1/τ_m ∈ (0, 1)^{N_h}, learnable (§4.2), one vector per gate neuron (choice), as sigmoid of a logit (choice).
    k_in, k_out = torch.sigmoid(p["inv_tau_in_logit"]), torch.sigmoid(p["inv_tau_out_logit"])
    if isinstance(v_th, torch.Tensor):
        v_in, v_out = v_th[..., :n], v_th[..., n:]
    else:
        v_in = v_out = None
    h_re, h_im = states[0][..., 0], states[0][..., 1]
    m_in, m_out = states[1][:, :n], states[1][:, n:]
    ys_re, ys_im = [], []
    for t in range(x.shape[0]):
        reset = starts[t].unsqueeze(-1)
        h_re, h_im = torch.where(reset, 0.0, h_re), torch.where(reset, 0.0, h_im)
        m_in, m_out = torch.where(reset, 0.0, m_in), torch.where(reset, 0.0, m_out)
        # Eq. (7), PSN without reset: m_t = (1 − 1/τ_m) m_{t−1} + (1/τ_m) u_t; s_t = Θ(m_t − V_th) with V_th of Eq. (8).
        m_in = (1.0 - k_in) * m_in + k_in * u_in[t]
        m_out = (1.0 - k_out) * m_out + k_out * u_out[t]
        z_in = m_in - (v_in[t] if v_in is not None else v_th)
        z_out = m_out - (v_out[t] if v_out is not None else v_th)
        if margins is not None:
            margins.append(min(z_in.detach().abs().min().item(), z_out.detach().abs().min().item()))
        s_in, s_out = AtanSpike.apply(z_in), AtanSpike.apply(z_out)
        if probe is not None:
            probe.setdefault("m", []).append(torch.cat([m_in, m_out], -1).detach().double())
            probe.setdefault("s", []).append(torch.cat([s_in, s_out], -1).detach().double())
        if highway_form == "product":
            # Eq. (20) (App. C.2, the rewriting of Eq. 9 the scan and the surrogate gradient use):
            # h_t = [c_t ⊙ s^in_t + (1 − s^in_t)] ⊙ h_{t−1} + W_x x_t ⊙ s^in_t, complex products written out.
            a_re, a_im = c_re[t] * s_in + (1.0 - s_in), c_im[t] * s_in
            h_re, h_im = (a_re * h_re - a_im * h_im + wx_re[t] * s_in,
                          a_re * h_im + a_im * h_re + wx_im[t] * s_in)
            # Eq. (9) second line as a highway (Srivastava et al. 2015, which App. A cites: y = H·T + x·(1 − T)):
            # ŷ_t = s^out_t ⊙ h_t + (1 − s^out_t) ⊙ W_x x_t.
            y_re = s_out * h_re + (1.0 - s_out) * wx_re[t]
            y_im = s_out * h_im + (1.0 - s_out) * wx_im[t]
        else:
            # Eq. (9) literally: h_t = c_t h_{t−1} + W_x x_t where s^in = 1, h_{t−1} where s^in = 0;
            # ŷ_t = h_t where s^out = 1, W_x x_t where s^out = 0.
            on_in, on_out = s_in > 0.5, s_out > 0.5
            new_re = c_re[t] * h_re - c_im[t] * h_im + wx_re[t]
            new_im = c_re[t] * h_im + c_im[t] * h_re + wx_im[t]
            h_re, h_im = torch.where(on_in, new_re, h_re), torch.where(on_in, new_im, h_im)
            y_re, y_im = torch.where(on_out, h_re, wx_re[t]), torch.where(on_out, h_im, wx_im[t])
        ys_re.append(y_re)
        ys_im.append(y_im)
    # Eq. (11): ŝ_t = LN(W_y Concat(Re ŷ_t, Im ŷ_t)), LN without parameters (biased variance, eps 1e-5: choice).
    v = linear(torch.cat([torch.stack(ys_re), torch.stack(ys_im)], -1), p, "W_y")
    mean = v.mean(-1, keepdim=True)
    var = (v - mean).pow(2).mean(-1, keepdim=True)
    out = (v - mean) / torch.sqrt(var + 1e-5)
    return out, [torch.stack([h_re, h_im], -1), torch.cat([m_in, m_out], -1)], {}


def spiking_case(mode):
    D, N = 64, 1024
    O = N
    torch_linear = "PyTorch nn.Linear default init U(±1/sqrt(fan_in)) (not in the paper; rlm's choice, init " \
                   "torch_default)"
    maps = [("W_x_re", "Re W_x: the value written to h and the skip path of the output highway (Eq. 9)"),
            ("W_x_im", "Im W_x"),
            ("W_i", "W_i: the input current u_t of the input-gate neurons (Eq. 7, App. A)"),
            ("W_o", "W_o: the input current of the output-gate neurons (App. A)"),
            ("W_c_re", "Re W_c ('W_h' in Eq. 10): ĉ_t, the input-dependent forget gate before Eq. (10)'s squashing"),
            ("W_c_im", "Im W_c")]
    params = []
    for name, what in maps:
        params.append((f"{name}.weight", [N, D], uniform_init(1 / math.sqrt(D), torch_linear + ", fan_in 64"), what))
        params.append((f"{name}.bias", [N], uniform_init(1 / math.sqrt(D), torch_linear + ", fan_in 64"), what))
    params.append(("W_y.weight", [O, 2 * N], uniform_init(1 / math.sqrt(2 * N), torch_linear + ", fan_in 2048"),
                   "W_y of Eq. (11), input [Re ŷ (1024) | Im ŷ (1024)]"))
    params.append(("W_y.bias", [O], uniform_init(1 / math.sqrt(2 * N), torch_linear + ", fan_in 2048"), "W_y's bias"))
    for gate in ("in", "out"):
        params.append((f"inv_tau_{gate}_logit", [N], const_init(np.zeros(N), "App. F.3: initial 1/τ_m = 0.5 "
                                                                             "(sigmoid(0))"),
                       f"1/τ_m = sigmoid(logit) of the {gate}put-gate neurons (§4.2: a learnable vector in (0, 1))"))

    def initial(n):  # h_0 = 0, m_0 = 0 (not stated in the paper; the PSN and the linear recurrence start at rest)
        return [torch.zeros(n, N, 2, dtype=torch.float64), torch.zeros(n, 2 * N, dtype=torch.float64)]

    def run(p, x, states, starts, v_th=0.5, **kw):
        return spiking_run(p, x, states, starts, v_th, **kw)

    train = mode == "train"
    ctor = {"N_x": D, "N_h": N, "N_out": O, "theta": 0.0, "X": "U(0, 1)", "forget_gate": "input_dependent",
            "surrogate": "atan", "inv_tau_init": 0.5, "mode": "training" if train else "inference",
            "threshold": "θ + X, X drawn (see threshold_noise)" if train else "θ + E[X] = 0.5"}
    return dict(
        params=params, D=D, O=O, initial=initial, run=run, big=16384, mode=mode,
        sources=[{"source": SPIKING_PAPER,
                  "sections": "§4.1; §4.2 Eq. (7) (PSN gate, arctan surrogate), Eq. (8) (stochastic threshold), "
                              "'Linear Recurrent Cell Implementation' (Fig. 3); App. A Eq. (9)-(11); App. C.2 "
                              "Eq. (19)-(22); App. F.3 (θ = 0 outside PVM, 1/τ_m init 0.5, N_h = 1024 for POPGym "
                              "(Table 8: state size 4096 = 4 N_h))"},
                 {"source": "configs/spiking_popgym.yaml (the config of configs/repro/spiking_paper)",
                  "sections": "model.preprocessor_size 64 (N_x), memory.hidden_size 1024 (N_h), spiking: theta 0, "
                              "noise_low 0, noise_high 1, forget_gate input_dependent, surrogate atan (output_size 0: "
                              "N_out = N_h)"}],
        ctor=ctor,
        ctor_note="The cell at POPGym sizes (App. F.3, Table 8; the config): input N_x = 64 (the preprocessor's "
                  "width), N_h = 1024 complex channels and 1024 neurons per gate, N_out = N_h = 1024, θ = 0, "
                  "1/τ_m init 0.5, input-dependent forget gate (Eq. 10), arctan surrogate. " +
                  ("Training mode: V_th = θ + X with X ~ U(0, 1) drawn i.i.d. per (step, batch entry, neuron) "
                   "(Eq. 8 'parallel training')." if train else
                   "Inference mode: V_th = θ + E[X] = 0.5 (Eq. 8 'sequential inference'), nothing drawn."),
        state=["state 0: h [B, N_h=1024, 2] float32, (Re, Im) pairs of the complex hidden state (torch view_as_real "
               "layout)",
               "state 1: m [B, 2 N_h=2048] float32, the membranes: input-gate neurons 0-1023, then output-gate "
               "neurons 1024-2047"],
        choices=[
            "forget gate: the input-dependent c_t of Eq. (10) (the paper does not say which c_t each experiment "
            "used; the config's forget_gate input_dependent)",
            "Eq. (10)'s |ĉ| 'implemented as sqrt(|·|² + 1)' in both the tanh and the denominator: "
            "c = ĉ tanh(r)/r, r = sqrt(|ĉ|² + 1) (App. A after Eq. 10; both places: rlm's choice, magnitude_in_tanh "
            "true)",
            "1/τ_m = sigmoid(logit), one vector per gate (input, output), init 0.5 (App. F.3) (the paper: 'a "
            "learnable vector in (0, 1)'; rlm's leak_logit [2, N_h])",
            "output highway as the product ŷ = s^out h + (1 − s^out) W_x x (the highway form; Eq. 9 gives the case "
            "form, Eq. 20 the product form only for h), so the surrogate gradient flows through s^out too",
            "Θ(0) = 1; the LN of Eq. (11) with biased variance and eps 1e-5; biases on every map; PyTorch default "
            "init (none of these is in the paper)",
            "h_0 = 0 and m_0 = 0, and both reset to 0 at an episode start",
            ("threshold noise X ~ U(0, 1) i.i.d. per (step, batch entry, neuron) (Eq. 8 says per neuron i; the "
             "granularity in time and batch is not stated: rlm's noise_sampling per_step); the draws are an input "
             "of this trace (threshold_noise)") if train else
            "inference threshold θ + E[X] = 0.5 (Eq. 8)",
        ],
        mapping=[
            "W_x_re, W_x_im, W_i, W_o, W_c_re, W_c_im (.weight [1024, 64], .bias [1024]) -> rlm Spiking "
            "in_proj.weight [6144, 64] / in_proj.bias [6144] row blocks 0, 1024, 2048, 3072, 4096, 5120 (in that "
            "order: [W_x Re | W_x Im | W_i | W_o | W_c Re | W_c Im])",
            "W_y.weight [1024, 2048], W_y.bias [1024] -> rlm out_proj.weight / out_proj.bias (input [Re ŷ | Im ŷ])",
            "inv_tau_in_logit [1024] -> rlm leak_logit row 0; inv_tau_out_logit [1024] -> leak_logit row 1",
            "rlm options (SpikingOptions): hidden_size 1024, output_size 0, leak_init 0.5, theta 0, noise_low 0, "
            "noise_high 1, forget_gate input_dependent, surrogate atan, gate spike, noise_sampling per_step, "
            "shared_leak false, magnitude_in_tanh true, layer_norm_eps 1e-5 (configs/spiking_popgym.yaml); " +
            ("training mode (the module's default) with set_generator(at::detail::createCPUGenerator(threshold_noise."
             "generator_seed)) before the forward" if train else "eval mode (module.eval())"),
            "state: rlm Spiking state tensors = state_in/<i> as recorded (no transform)",
        ],
        semantics_extra=(
            "Equations, float64, one step at a time: u_in = W_i x + b, u_out = W_o x + b, W_x x = (W_x_re x + b, "
            "W_x_im x + b), ĉ = (W_c_re x + b, W_c_im x + b), c = ĉ tanh(r)/r with r = sqrt(|ĉ|² + 1) (Eq. 10); "
            "k = sigmoid(inv_tau_*_logit); m_t = (1 − k) m_{t−1} + k u_t (Eq. 7); s_t = Θ(m_t − V_th) (Eq. 7, 8) with "
            "backward 1/(1 + (π z)²) (§4.2); h_t = [c s^in + (1 − s^in)] h_{t−1} + W_x x s^in (Eq. 20 = Eq. 9); "
            "ŷ_t = s^out h_t + (1 − s^out) W_x x (Eq. 9); ŝ_t = LN(W_y [Re ŷ_t | Im ŷ_t] + b) (Eq. 11). "
            "state_in comes from the prefix run with the inference threshold 0.5 (as rollouts act, Eq. 8). " +
            ("The recorded run uses V_th = θ + X, X the stored draws (threshold_noise)." if train else
             "The recorded run uses V_th = 0.5 everywhere.")),
    )


# ----------------------------------------------------------------------------------------------------------------------
# Recording.

def make_parameters(case, seed):
    """float32 parameter values (the stored values; the float64 reference computes from exactly these) and json info."""
    gen = torch.Generator().manual_seed(seed)
    values, infos, out = {}, [], {}
    for k, (name, shape, init, what) in enumerate(case["params"]):
        info = {"name": name, "shape": shape, "dtype": "float32", "meaning": what}
        numel = math.prod(shape)
        if init["kind"] == "uniform":
            info["init"] = {"distribution": f"U(-{init['bound']:.8g}, {init['bound']:.8g})", "why": init["why"]}
            if numel > case["big"]:
                fseed = fill_seed(seed, k)
                v = fill_values(fseed, init["bound"], tuple(shape))
                info["stored"] = "fill"
                info["fill"] = {"seed": fseed, "bound": init["bound"], "bound_is": init["why"]}
                out[f"fill_head/param/{name}"] = v.flatten()[:64].clone()
            else:
                v = ((torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * init["bound"]).float()
                info["stored"] = "whole"
                out[f"param/{name}"] = v
        else:
            v = torch.from_numpy(np.asarray(init["values"], dtype=np.float64).reshape(shape)).float()
            info["init"] = {"value": "paper's init (constant)", "why": init["why"]}
            info["stored"] = "whole"
            out[f"param/{name}"] = v
        info["grad_stored"] = "sample" if numel > case["big"] else "whole"
        values[name] = v
        infos.append(info)
    return values, infos, out


def threshold_draws(case, seed, attempt):
    """The training case's X: torch.rand([T, B, 2 N_h], CPU generator seeded S, float32), rlm's draw (spiking.hpp)."""
    gseed = seed * 1000 + 700 + attempt
    n2 = 2 * case["params"][-1][1][0]
    return gseed, torch.rand((T, B, n2), generator=torch.Generator().manual_seed(gseed), dtype=torch.float32)


def forward_all(case, p32, x32, state32, starts, v_th, requires_grad, margins=None):
    """The float64 reference from the float32 values: leaves (with grad) and the run's results."""
    p = {k: v.double().requires_grad_(requires_grad) for k, v in p32.items()}
    x = x32.double().requires_grad_(requires_grad)
    states = [s.double().requires_grad_(requires_grad) for s in state32]
    kw = {"margins": margins} if margins is not None else {}
    y, finals, extras = case["run"](p, x, states, starts, v_th, **kw) if v_th is not None else \
        case["run"](p, x, states, starts)
    return p, x, states, y, finals, extras


def record_case(name):
    seed, build = CASES[name]
    case = build()
    D, O, big = case["D"], case["O"], case["big"]
    p32, params_info, out = make_parameters(case, seed)

    gen = torch.Generator().manual_seed(seed + 1)
    prefix = torch.randn(PREFIX, B, D, generator=gen)
    x32 = torch.randn(T, B, D, generator=gen)
    starts = starts_tensor()
    proj_seed = fill_seed(seed, 999)
    projection = fill_values(proj_seed, math.sqrt(3.0), (T, B, O))
    spiking = "mode" in case
    eval_threshold = 0.5 if spiking else None

    # state_in: the equations over the prefix from the initial state, all columns at once (spiking: with the inference
    # threshold, as the rollouts that produce a carried state act); rounded to float32, which the main run reads.
    with torch.no_grad():
        prefix_starts = torch.zeros(PREFIX, B, dtype=torch.bool)
        prefix_starts[0] = True
        _, _, _, _, finals, _ = forward_all(case, p32, prefix, [s.float() for s in case["initial"](B)],
                                            prefix_starts, eval_threshold, False)
    state32 = [s.float() for s in finals]

    meta_extra = {}
    v_th = eval_threshold
    if spiking and case["mode"] == "train":
        for attempt in range(200):
            gseed, noise = threshold_draws(case, seed, attempt)
            margins = []
            with torch.no_grad():
                forward_all(case, p32, x32, state32, starts, noise.double(), False, margins)
            if min(margins) >= MIN_GATE_MARGIN:
                break
        else:
            raise RuntimeError(f"{name}: no threshold draw keeps every gate {MIN_GATE_MARGIN} from its threshold")
        v_th = noise.double()
        idx = sample_index(noise.numel(), seed * 1000 + 600, {})
        out["threshold_noise_head"] = noise.flatten()[:64].clone()
        out["sample_index/threshold_noise"] = idx
        out["sample_value/threshold_noise"] = noise.flatten()[idx].clone()
        meta_extra["threshold_noise"] = {
            "generator_seed": gseed, "shape": list(noise.shape), "dtype": "float32",
            "draw": f"torch.rand({list(noise.shape)}, generator=torch.Generator().manual_seed({gseed}), "
                    "dtype=torch.float32) on the CPU; V_th = θ + X = X (θ = 0, noise_low 0, noise_high 1). Channels: "
                    "input-gate neurons 0-1023, then output-gate neurons 1024-2047. C++: Memory::set_generator("
                    f"at::detail::createCPUGenerator({gseed})) makes rlm's Spiking draw exactly these in training "
                    "mode (one torch::rand of this shape per forward).",
            "stored": "threshold_noise_head (the first 64 values), sample_index/threshold_noise and "
                      "sample_value/threshold_noise (4096 entries): to check a regeneration; not part of the results",
            "attempts": attempt + 1,
        }

    margins = [] if spiking else None
    p, x, state_in, y, finals, _ = forward_all(case, p32, x32, state32, starts, v_th, True, margins)
    if spiking:
        if min(margins) < MIN_GATE_MARGIN:
            raise RuntimeError(f"{name}: a gate is {min(margins):.3g} from its threshold (< {MIN_GATE_MARGIN})")
        meta_extra["gate_margin"] = {
            "min_abs_m_minus_vth": min(margins), "required": MIN_GATE_MARGIN,
            "why": "a spike flips if rounding moves m − V_th across 0; float32 errors of m are ~5e-7"}
    assert y.shape == (T, B, O) and y.dtype == torch.float64
    loss = (y * projection.double()).sum()
    names = list(p)
    grads = torch.autograd.grad(loss, [p[k] for k in names] + [x] + state_in)
    g_params, g_x, g_state = grads[:len(names)], grads[len(names)], grads[len(names) + 1:]

    results = {"output": y.detach().float()}
    for i, s in enumerate(finals):
        results[f"state_out/{i}"] = s.detach().float()
    results["grad/input"] = g_x.float()
    for i, g in enumerate(g_state):
        results[f"grad/state_in/{i}"] = g.float()

    out["input"] = x32
    out["starts"] = starts
    out["prefix_input"] = prefix
    for i, s in enumerate(state32):
        out[f"state_in/{i}"] = s
    if projection.numel() <= big:
        out["projection"] = projection
    out["loss"] = loss.detach().reshape(())
    sampled = SAMPLED_RESULTS.get(name, ())
    index_cache = {}
    results_info = {}
    for k, v in results.items():
        if k in sampled:
            idx = sample_index(v.numel(), seed * 1000 + 500, index_cache)
            out[f"sample_index/{k}"] = idx
            out[f"sample_value/{k}"] = v.flatten()[idx].clone()
            out[f"sumsq/{k}"] = v.double().pow(2).sum()
            results_info[k] = {"shape": list(v.shape), "stored": "sample"}
        else:
            out[k] = v
            results_info[k] = {"shape": list(v.shape), "stored": "whole"}
    for pname, g, info in zip(names, g_params, params_info):
        assert info["name"] == pname
        if info["grad_stored"] == "whole":
            out[f"grad/param/{pname}"] = g.float()
        else:
            idx = sample_index(g.numel(), seed * 1000 + 500, index_cache)
            out[f"grad_index/param/{pname}"] = idx
            out[f"grad_sample/param/{pname}"] = g.flatten()[idx].float()
            out[f"grad_sumsq/param/{pname}"] = g.pow(2).sum()

    for k, v in out.items():
        assert isinstance(v, torch.Tensor) and v.is_contiguous(), k
        assert torch.isfinite(v.double()).all() if v.is_floating_point() else True, k

    meta = {
        "case": name,
        "sources": case["sources"],
        "reference": "the paper's equations implemented in scripts/record_equations_golden.py (float64 torch ops, "
                     "step by step; gradients by float64 autograd with the paper's surrogate derivative for the "
                     "spike); no authors' code exists",
        "constructor": case["ctor"],
        "constructor_note": case["ctor_note"],
        "choices": case["choices"],
        "seed": seed,
        "recorded_with": {"torch": torch.__version__, "numpy": np.__version__, "device": "cpu", "threads": 1,
                          "dtype": "float64, results rounded once to float32"},
        **layout_meta(starts, D, O, big, params_info, case["state"]),
        **meta_extra,
        **results_meta(out, projection, proj_seed, big, results_info),
        "semantics": (
            f"input x [T={T}, B={B}, D={D}] ~ N(0, 1) and prefix_input [{PREFIX}, B, D] ~ N(0, 1) from "
            f"torch.Generator().manual_seed({seed + 1}) (prefix first), float32. Parameters: float32, drawn from the "
            f"init distribution in the json (torch.Generator().manual_seed({seed}), U(±bound) in float64 rounded "
            "once) or the paper's constant init, or, above the size threshold, the splitmix64 fill with the same "
            "bound. The reference computes in float64 from exactly the stored float32 values (parameters, input, "
            "state_in, projection). starts [T, B] bool: episode starts; columns 0 and 2 start at t = 0, columns 1 "
            "and 3 carry state_in in; at a start the state is reset to the initial state before the step. state_in = "
            "the state after prefix_input run from the initial state (all columns, rounded to float32). state_out = "
            "the state after the last step. loss = (output * projection).sum() in float64 (stored float64); "
            "grad/param/<name> = dloss/dparam, grad/input = dloss/dx, grad/state_in/<i> = dloss/dstate_in (zero for "
            "columns 0 and 2). Parameters above the threshold are stored as fill (fill_head: their first 64 "
            "values); their gradients as grad_index/, grad_sample/ (float32) and grad_sumsq/ (float64 sum of squares "
            "of the whole float64 gradient); results listed as 'sample' as sample_index/, sample_value/, sumsq/. "
            + case["semantics_extra"]),
        "mapping_to_rlm": case["mapping"],
    }
    return out, meta


CASES = {
    "kf_kf_paper": (21, lambda: kf_case("kf")),
    "kf_u_kf_paper": (22, lambda: kf_case("kf_u")),
    "vssm_kf_paper": (23, lambda: kf_case("vssm")),
    "spiking_train_spiking_paper": (24, lambda: spiking_case("train")),
    "spiking_eval_spiking_paper": (26, lambda: spiking_case("eval")),  # 24, 25: a gate < 1e-5 from 0.5
}
# The eval case's 1024-wide output is sampled (the training case stores its output whole), to keep the file near 0.6 MB.
SAMPLED_RESULTS = {"spiking_eval_spiking_paper": ("output",)}


# ----------------------------------------------------------------------------------------------------------------------
# Sanity checks of the implementation (run before recording unless --no-checks).

def by_segments(case, p, x, state_in, starts, v_th):
    """The same run with the episode starts emulated instead: each column cut at its starts, every segment run from
    state_in (first segment of a column that does not start at t = 0) or the initial state, with no start inside."""
    ys, finals = [], []
    for b in range(B):
        col = []
        for t0, t1 in segments(starts, b):
            carried = t0 == 0 and not starts[0, b]
            s0 = [s[b:b + 1] for s in state_in] if carried else case["initial"](1)
            no_starts = torch.zeros(t1 - t0, 1, dtype=torch.bool)
            vt = v_th[t0:t1, b:b + 1] if isinstance(v_th, torch.Tensor) else v_th
            y, fin, _ = case["run"](p, x[t0:t1, b:b + 1], s0, no_starts, vt) if v_th is not None else \
                case["run"](p, x[t0:t1, b:b + 1], s0, no_starts)
            col.append(y)
        ys.append(torch.cat(col, 0))
        finals.append(fin)
    return torch.cat(ys, 1), [torch.cat([f[i] for f in finals], 0) for i in range(len(finals[0]))]


def check_resets(name, case, out):
    p = {k[len("param/"):]: v.double() for k, v in out.items() if k.startswith("param/")}
    p.update(regenerated_fills(name, case))
    x = out["input"].double()
    state_in = [out[f"state_in/{i}"].double() for i in range(len(case["initial"](1)))]
    starts = out["starts"]
    v_th = None
    if "mode" in case:
        v_th = 0.5
        if case["mode"] == "train":
            _, noise = threshold_draws(case, CASES[name][0], THRESHOLD_ATTEMPT[name])
            v_th = noise.double()
    with torch.no_grad():
        y, finals, _ = case["run"](p, x, state_in, starts, v_th) if v_th is not None else \
            case["run"](p, x, state_in, starts)
        y2, finals2 = by_segments(case, p, x, state_in, starts, v_th)
    assert torch.allclose(y, y2, rtol=0, atol=1e-12), f"{name}: starts differ from the segment emulation"
    for a, b in zip(finals, finals2):
        assert torch.allclose(a, b, rtol=0, atol=1e-12), f"{name}: final state differs from the segment emulation"
    if "output" in out:  # stored whole: this rerun (no autograd) gives the same float32 values
        assert torch.equal(y.float(), out["output"]), f"{name}: output not reproducible"
    return p, x, state_in, starts, v_th


THRESHOLD_ATTEMPT = {}


def regenerated_fills(name, case):
    seed = CASES[name][0]
    p = {}
    for k, (pname, shape, init, _) in enumerate(case["params"]):
        if init["kind"] == "uniform" and math.prod(shape) > case["big"]:
            p[pname] = fill_values(fill_seed(seed, k), init["bound"], tuple(shape)).double()
    return p


def finite_differences(name, case, p, x, state_in, starts, v_th, entries, grads):
    """Central differences of the float64 loss at a few entries against the recorded-path autograd gradient."""
    projection = fill_values(fill_seed(CASES[name][0], 999), math.sqrt(3.0), (T, B, case["O"])).double()

    def loss_of(pp, xx, ss):
        with torch.no_grad():
            y = (case["run"](pp, xx, ss, starts, v_th) if v_th is not None else case["run"](pp, xx, ss, starts))[0]
        return (y * projection).sum().item()

    worst = 0.0
    for kind, key, index in entries:
        h = 1e-6
        vals = []
        for sign in (1, -1):
            pp = dict(p)
            xx, ss = x, list(state_in)
            if kind == "param":
                t = p[key].clone()
                t.view(-1)[index] += sign * h
                pp[key] = t
            elif kind == "input":
                xx = x.clone()
                xx.view(-1)[index] += sign * h
            else:
                t = state_in[key].clone()
                t.view(-1)[index] += sign * h
                ss[key] = t
            vals.append(loss_of(pp, xx, ss))
        fd = (vals[0] - vals[1]) / (2 * h)
        g = grads[(kind, key)].reshape(-1)[index].item()
        err = abs(fd - g) / max(abs(g), 1e-3)
        worst = max(worst, err)
        assert err < 1e-5, f"{name}: finite difference at {kind} {key}[{index}]: {fd} vs autograd {g}"
    return worst


def autograd_grads(case, p, x, state_in, starts, v_th, projection):
    pp = {k: v.clone().requires_grad_(True) for k, v in p.items()}
    xx = x.clone().requires_grad_(True)
    ss = [s.clone().requires_grad_(True) for s in state_in]
    y = (case["run"](pp, xx, ss, starts, v_th) if v_th is not None else case["run"](pp, xx, ss, starts))[0]
    (y * projection).sum().backward()
    grads = {("param", k): v.grad for k, v in pp.items()}
    grads[("input", None)] = xx.grad
    for i, s in enumerate(ss):
        grads[("state", i)] = s.grad
    return grads


def float32_drift(case, p, x, state_in, starts, v_th):
    """The same equations in float32 against float64: the size of float32 rounding in this case (for the C++
    tolerances), and for the spiking cell the largest membrane difference and the number of spikes that flip."""
    p32 = {k: v.float() for k, v in p.items()}
    vt32 = v_th.float() if isinstance(v_th, torch.Tensor) else v_th
    probe64, probe32 = {}, {}
    with torch.no_grad():
        if v_th is None:
            y64 = case["run"](p, x, state_in, starts)[0]
            y32 = case["run"](p32, x.float(), [s.float() for s in state_in], starts)[0]
        else:
            y64 = case["run"](p, x, state_in, starts, v_th, probe=probe64)[0]
            y32 = case["run"](p32, x.float(), [s.float() for s in state_in], starts, vt32, probe=probe32)[0]
    text = f"max |Δ output| / max |output| = {((y32.double() - y64).abs().max() / y64.abs().max()).item():.2e}"
    if probe64:
        dm = (torch.stack(probe32["m"]) - torch.stack(probe64["m"])).abs().max().item()
        flips = int((torch.stack(probe32["s"]) != torch.stack(probe64["s"])).sum())
        text += f", max |Δm| = {dm:.2e}, spikes flipped: {flips}"
    return text


def run_checks(name, case, out):
    p, x, state_in, starts, v_th = check_resets(name, case, out)
    report = ["starts = segment emulation (1e-12)"]
    projection = fill_values(fill_seed(CASES[name][0], 999), math.sqrt(3.0), (T, B, case["O"])).double()
    grads = autograd_grads(case, p, x, state_in, starts, v_th, projection)
    for key, g in grads.items():
        assert g is not None and torch.isfinite(g).all(), f"{name}: gradient {key} not finite"
    # Every gradient recorded equals this recomputation (whole ones to float32 rounding).
    for (kind, key), g in grads.items():
        rec = f"grad/param/{key}" if kind == "param" else "grad/input" if kind == "input" else f"grad/state_in/{key}"
        if rec in out:
            assert (g.float() == out[rec]).all(), f"{name}: {rec} not reproducible"
    if "mode" not in case:
        variant = case["ctor"]["variant"]
        entries = [("param", "A_log", 5), ("param", "A_log", 127), ("param", "Delta_raw", 0),
                   ("param", "W_z.weight", 33), ("input", None, 1234), ("state", 0, 77)]
        if variant != "kf_u":
            entries += [("param", "B_tilde", 3), ("param", "W_u.weight", 100)]
        if variant != "vssm":
            entries += [("param", "Sigma_p_raw", 9), ("param", "W_r.weight", 555), ("param", "W_w.bias", 12),
                        ("state", 1, 300)]
        worst = finite_differences(name, case, p, x, state_in, starts, v_th, entries, grads)
        report.append(f"finite differences at {len(entries)} entries: worst relative error {worst:.2e}")
        if variant == "kf":  # Eq. (5)-(6) equal the product of two Gaussians (an independent form of the update)
            gen = torch.Generator().manual_seed(5)
            xp, Pp, w, r = (torch.randn(3, 7, generator=gen, dtype=torch.float64) for _ in range(4))
            Pp, r = Pp.abs() + 0.1, r.abs() + 0.1
            a = torch.ones(7, dtype=torch.float64)
            m, xk, Pk = kf_filter(a, torch.zeros(7, dtype=torch.float64), torch.zeros(7, dtype=torch.float64),
                                  torch.zeros(1, 3, 7, dtype=torch.float64), w[None], r[None], xp, Pp,
                                  torch.zeros(1, 3, dtype=torch.bool), "kf")
            assert torch.allclose(xk, (xp * r + w * Pp) / (Pp + r)) and torch.allclose(Pk, Pp * r / (Pp + r))
            # r → ∞: the update does nothing and the KF is the vSSM (§5.1)
            u = torch.randn(5, 3, 7, generator=gen, dtype=torch.float64)
            aa = torch.rand(7, generator=gen, dtype=torch.float64)
            big_r = torch.full((5, 3, 7), 1e30, dtype=torch.float64)
            m1, _, _ = kf_filter(aa, aa, aa, u, u, big_r, xp, Pp, torch.zeros(5, 3, dtype=torch.bool), "kf")
            m2, _, _ = kf_filter(aa, aa, None, u, None, None, xp, None, torch.zeros(5, 3, dtype=torch.bool), "vssm")
            assert torch.allclose(m1, m2, atol=1e-12)
            report.append("Eq. (5)-(6) = Gaussian product; r → ∞ gives vSSM")
    else:
        # The surrogate: d/dz Θ(z) := 1/(1 + (πz)²).
        z = torch.linspace(-2, 2, 41, dtype=torch.float64, requires_grad=True)
        AtanSpike.apply(z).sum().backward()
        assert torch.allclose(z.grad, 1 / (1 + (math.pi * z.detach()) ** 2))
        # Eq. (9) (case form) = Eq. (20) (product form) in the forward.
        with torch.no_grad():
            y1 = case["run"](p, x, state_in, starts, v_th)[0]
            y2 = case["run"](p, x, state_in, starts, v_th, highway_form="case")[0]
        assert torch.allclose(y1, y2, rtol=0, atol=1e-12), f"{name}: Eq. 9 and Eq. 20 differ"
        # Smooth paths (the spikes do not depend on W_x, W_c, W_y or h): finite differences are exact there.
        entries = [("param", "W_x_re.weight", 4321), ("param", "W_x_im.bias", 17), ("param", "W_c_re.weight", 999),
                   ("param", "W_c_im.weight", 60000), ("param", "W_y.weight", 123456), ("param", "W_y.bias", 5),
                   ("state", 0, 2 * 1500 + 1)]
        worst = finite_differences(name, case, p, x, state_in, starts, v_th, entries, grads)
        # Gates: both values occur, and the fraction open.
        with torch.no_grad():
            margins = []
            case["run"](p, x, state_in, starts, v_th, margins=margins)
        report.append(f"surrogate = 1/(1+(πz)²); Eq. 9 = Eq. 20; finite differences on smooth paths at "
                      f"{len(entries)} entries: worst {worst:.2e}; min |m - V_th| {min(margins):.2e}")
        # h keeps its value exactly where s_in = 0 (the highway): run one step with V_th huge.
        with torch.no_grad():
            one = torch.zeros(1, B, dtype=torch.bool)
            _, fin, _ = case["run"](p, x[:1], state_in, one, 1e9)
            assert torch.equal(fin[0], state_in[0]), "s_in = 0 must keep h"
    report.append(f"float32 run of the same equations: {float32_drift(case, p, x, state_in, starts, v_th)}")
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated cases: " + ", ".join(CASES))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "memory_golden"), help="output folder")
    parser.add_argument("--no-checks", action="store_true", help="skip the sanity checks of the implementation")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    for n in names:
        if n not in CASES:
            fail(f"unknown case {n!r} (cases: {', '.join(CASES)})")
    for s, bd in ((0, 1.0), (12345, 0.125)):
        v = fill_values(s, bd, (100,))
        for i in (0, 1, 99):
            assert float(v[i]) == _fill_scalar(s, bd, i), (s, i)
    prepare_recording(args.out)
    for n in names:
        out, meta = record_case(n)
        if "threshold_noise" in meta:
            THRESHOLD_ATTEMPT[n] = meta["threshold_noise"]["attempts"] - 1
        path = save(out, meta, args.out)
        print(f"{n}: {len(out)} tensors, {os.path.getsize(path):,} bytes -> {os.path.relpath(path, ROOT)}")
        if "gate_margin" in meta:
            print(f"  gate margin {meta['gate_margin']['min_abs_m_minus_vth']:.3g}"
                  + (f", threshold draw attempts {meta['threshold_noise']['attempts']}" if "threshold_noise" in meta
                     else ""))
        if not args.no_checks:
            for line in run_checks(n, CASES[n][1](), out):
                print(f"  check: {line}")


if __name__ == "__main__":
    main()
