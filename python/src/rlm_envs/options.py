"""Keyword arguments to rlm's wrapper and env options, with the messages a config file's errors have.

The env options are the keys of a config's `env.options` section (`./rlm envs` lists which ones each id reads). Their
values go to C++ as YAML scalars and are read by the same code as a config file, so ranges, choices and their
messages are the same; here only their Python types are checked, since YAML would read the string "5" as a number.
"""

from __future__ import annotations

from typing import Any

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
