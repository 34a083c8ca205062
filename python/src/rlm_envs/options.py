"""Keyword arguments to rlm's wrapper and env options, with the messages a config file's errors have.

The env options are the keys of a config's `env.options` section (`./rlm envs` lists which ones each id reads). Their
values go to C++ as YAML scalars and are read by the same code as a config file, so ranges, choices and their
messages are the same; here only their Python types are checked, since YAML would read the string "5" as a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core

MARKOVIAN_LEVELS = ("partial", "full", "full_and_partial")

#: (name, default) of every env option, in config.yaml's order.
OPTION_DEFAULTS: dict[str, Any] = dict(_core.option_fields())


def wrappers(
    previous_action: bool = False,
    antialias: bool = False,
    flatten: bool = False,
    markovian: str = "partial",
    discrete_action: bool = False,
) -> _core.Wrappers:
    """The wrappers of the popgym pipeline (src/envs/registry.hpp), all off by default, so that spaces are the env's
    own, as popgym's are."""
    w = _core.Wrappers()
    for name, value in (
        ("previous_action", previous_action),
        ("antialias", antialias),
        ("flatten", flatten),
        ("discrete_action", discrete_action),
    ):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {value!r}")
        setattr(w, name, value)
    if markovian not in MARKOVIAN_LEVELS:
        raise ValueError(f"markovian = {markovian!r} is not one of {', '.join(MARKOVIAN_LEVELS)}")
    w.markovian = markovian
    return w


def check_seed(seed: Any, note: str = "") -> int:
    """`seed` as an int: rlm's seeds are uint64, so anything but an int in [0, 2**64) is a ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an int in [0, 2**64){note}, got {seed!r}")
    return int(seed)


def state_space_of(core_env: _core.Env) -> dict[str, Any]:
    """The description of `core_env`'s full state space, for info_state; ValueError for an env that has none."""
    if core_env.state_space is None:
        raise ValueError(f"{_core.gym_style_id(core_env.id)}: info_state needs an env with a full state")
    return core_env.state_space


def yaml_scalars(env_id: str, options: dict[str, Any]) -> dict[str, str]:
    """The env options as the YAML scalars a config file would hold. A value of the wrong type raises TypeError here;
    a key that `env_id` does not read raises TypeError in C++ (as an unexpected keyword does), with the message a
    config file gets."""
    scalars = {}
    for key, value in options.items():
        if key not in OPTION_DEFAULTS:  # refused in C++, with the config's message
            scalars[key] = str(value)
            continue
        default = OPTION_DEFAULTS[key]
        if isinstance(default, bool):
            ok = isinstance(value, bool)
            text = "true" if value else "false"
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
            text = str(value)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            text = repr(float(value))
        else:
            ok = isinstance(value, str)
            text = str(value)
        if not ok:
            raise TypeError(f"env option {key} takes a {type(default).__name__}, got {value!r}")
        scalars[key] = text
    return scalars
