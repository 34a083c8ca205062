"""rlm's spaces as Gymnasium spaces, and the conversions between Gymnasium values and rlm's raw layout.

rlm's envs read and write every value as flat float32 ("raw layout", src/envs/space.hpp): a Discrete value is its
integer stored as a float, a MultiDiscrete one float per component, a Box its values in C order, a Tuple its parts one
after the other. Here each space becomes its Gymnasium counterpart (Discrete and MultiDiscrete values as int64, a
uint8 Box as uint8), and a whole batch is converted with a few numpy operations per part, never per env.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


def to_gymnasium(description: dict[str, Any]) -> spaces.Space:
    """The Gymnasium space for a space description from the C++ module."""
    kind = description["kind"]
    if kind == "Discrete":
        return spaces.Discrete(int(description["nvec"][0]))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(np.asarray(description["nvec"], dtype=np.int64))
    if kind == "Box":
        shape = tuple(int(d) for d in description["shape"])
        dtype = np.dtype(description["dtype"])
        low = np.asarray(description["low"], dtype=np.float32).reshape(shape).astype(dtype)
        high = np.asarray(description["high"], dtype=np.float32).reshape(shape).astype(dtype)
        return spaces.Box(low, high, shape=shape, dtype=dtype)
    if kind == "Tuple":
        return spaces.Tuple([to_gymnasium(part) for part in description["parts"]])
    raise ValueError(f"unknown space kind {kind!r}")


def raw_size(space: spaces.Space) -> int:
    """Floats of one value in the raw layout."""
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, spaces.MultiDiscrete):
        return int(space.nvec.size)
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape))
    if isinstance(space, spaces.Tuple):
        return sum(raw_size(part) for part in space.spaces)
    raise TypeError(f"rlm has no raw layout for {space}")


def decode_batch(space: spaces.Space, raw: np.ndarray, fresh: bool = False) -> Any:
    """Values of `space` from raw rows [n, raw_size]: arrays with a leading batch dimension (a tuple of them for a
    Tuple), never views of `raw` unless `fresh` says that `raw` is the caller's to give away (then a float32 Box is
    `raw` itself, reshaped)."""
    n = raw.shape[0]
    if isinstance(space, spaces.Discrete):
        return raw[:, 0].astype(np.int64)
    if isinstance(space, spaces.MultiDiscrete):
        return raw.astype(np.int64).reshape((n, *space.shape))
    if isinstance(space, spaces.Box):
        return raw.reshape((n, *space.shape)).astype(space.dtype, copy=not fresh)
    if isinstance(space, spaces.Tuple):
        parts, offset = [], 0
        for part in space.spaces:
            size = raw_size(part)
            parts.append(decode_batch(part, raw[:, offset : offset + size]))
            offset += size
        return tuple(parts)
    raise TypeError(f"rlm has no raw layout for {space}")


def decode_flat_batch(space: spaces.Space, flat: np.ndarray) -> Any:
    """Values of `space` from rows [n, flatdim] as rlm's Flatten wrapper writes them (Gymnasium's flatten: a
    Discrete value or MultiDiscrete component one-hot, Box values copied, Tuple parts one after the other), as
    decode_batch gives them."""
    if isinstance(space, spaces.Discrete):
        return flat.argmax(axis=1).astype(np.int64)
    if isinstance(space, spaces.Box):
        return decode_batch(space, flat)
    parts, offset = [], 0
    if isinstance(space, spaces.MultiDiscrete):
        for size in space.nvec.ravel():
            parts.append(flat[:, offset : offset + size].argmax(axis=1))
            offset += size
        return np.stack(parts, axis=1).astype(np.int64).reshape((flat.shape[0], *space.shape))
    if isinstance(space, spaces.Tuple):
        for part in space.spaces:
            size = spaces.flatdim(part)
            parts.append(decode_flat_batch(part, flat[:, offset : offset + size]))
            offset += size
        return tuple(parts)
    raise TypeError(f"rlm has no raw layout for {space}")


def decode_one(space: spaces.Space, raw: np.ndarray) -> Any:
    """One value of `space` from its raw floats: np.int64 for a Discrete value, arrays otherwise, always fresh."""
    batch = decode_batch(space, raw.reshape(1, -1))
    return _first(batch)


def _first(batch: Any) -> Any:
    if isinstance(batch, tuple):
        return tuple(_first(part) for part in batch)
    return batch[0] if batch.ndim == 1 else batch[0].copy()


def encode_actions(space: spaces.Space, actions: Any, n: int) -> np.ndarray:
    """Raw rows [n, raw_size] (float32, C order) for `n` actions of `space` given as one batched array."""
    array = np.asarray(actions)
    size = raw_size(space)
    if isinstance(space, spaces.Discrete):
        expected: tuple[int, ...] = (n,)
    else:
        expected = (n, *space.shape)
    if array.shape != expected:
        raise ValueError(f"actions have shape {array.shape}, want {expected} for {n} actions of {space}")
    return np.ascontiguousarray(array.reshape(n, size), dtype=np.float32)
