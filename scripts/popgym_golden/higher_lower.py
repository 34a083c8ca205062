"""HigherLower: the deck order at reset (the first card is its last entry)."""


def hidden_state(env):
    return {"deck_idx": [int(c) for c in env.deck.idx]}


def _oracle(env, obs, t, rng):
    # Peeks at the next card: it is idx[len(deck) - 1]. Action 0 = higher, 1 = lower.
    nxt = int(env.deck.ranks_idx[env.deck.idx[len(env.deck) - 1]])
    return 0 if nxt >= int(obs) else 1


def scripted_policies():
    return {"always_higher": lambda env, obs, t, rng: 0, "oracle": _oracle}
