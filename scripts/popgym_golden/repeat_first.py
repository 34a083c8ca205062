"""RepeatFirst: the deck order at reset (the first card dealt is the target)."""


def hidden_state(env):
    return {"deck_idx": [int(c) for c in env.deck.idx]}


def scripted_policies():
    return {"perfect": lambda env, obs, t, rng: int(env.card)}
