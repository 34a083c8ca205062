"""RepeatPrevious: the deck order at reset."""


def hidden_state(env):
    return {"deck_idx": [int(c) for c in env.deck.idx]}
