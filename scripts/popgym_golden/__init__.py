"""Per-family hooks for scripts/record_popgym.py: one module per POPGym family, named after it in snake case.

Each module defines
  hidden_state(env) -> dict   JSON-serialisable hidden state right after reset (what C++ needs to restore the env)
and optionally
  scripted_policies() -> {name: policy(base_env, obs, t, rng) -> action}   e.g. a perfect and a worst policy.
"""
