"""CountRecall: both deck orders at reset (value deck, then query deck, shuffled by the same generator)."""


def hidden_state(env):
    return {"value_idx": [int(c) for c in env.value_deck.idx], "query_idx": [int(c) for c in env.query_deck.idx]}


def _perfect(env, obs, t, rng):
    return int(env.counts[env.query])


def _off_by_two(env, obs, t, rng):
    # popgym's test_awful answers count + 2; wrap so the action stays in Discrete(M+1).
    return int(env.counts[env.query] + 2) % env.action_space.n


def scripted_policies():
    return {"perfect": _perfect, "off_by_two": _off_by_two}
