"""Concentration: the deck order at reset (position p holds card idx[p])."""


def hidden_state(env):
    return {"deck_idx": [int(c) for c in env.deck.idx]}


def _perfect(env, obs, t, rng):
    # Knows the board: open the lowest face-down position, then close with its lowest face-down partner.
    face_up = set(int(p) for p in env.deck["face_up_idx"])
    in_play = [int(p) for p in env.deck["in_play_idx"]]
    down = [p for p in range(len(env.deck)) if p not in face_up]
    if not in_play:
        return down[0]
    first = in_play[0]
    return next(p for p in down if p != first and env.state[p] == env.state[first])


class _MemoryPlayer:
    """Remembers every card it has seen in the obs; with probability eps it flips a uniformly random position
    instead (which exercises face-up flips, repeated positions and mismatches)."""

    def __init__(self, eps):
        self.eps = eps
        self.seen = {}

    def __call__(self, env, obs, t, rng):
        if t == 0:
            self.seen = {}
        facedown = env.facedown_card
        for p, c in enumerate(obs):
            if c != facedown:
                self.seen[p] = int(c)
        n = len(env.deck)
        if rng.random() < self.eps:
            return int(rng.integers(n))
        face_up = set(int(p) for p in env.deck["face_up_idx"])
        in_play = [int(p) for p in env.deck["in_play_idx"]]
        known = {p: c for p, c in self.seen.items() if p not in face_up}
        unseen = [p for p in range(n) if p not in face_up and p not in self.seen]
        if in_play:
            first = in_play[0]
            match = [p for p, c in known.items() if p != first and c == known.get(first)]
            if match:
                return match[0]
            rest = [p for p in unseen if p != first] or [p for p in known if p != first]
            return rest[0]
        by_cat = {}
        for p, c in known.items():
            by_cat.setdefault(c, []).append(p)
        pairs = [ps for ps in by_cat.values() if len(ps) >= 2]
        if pairs:
            return pairs[0][0]
        return unseen[0] if unseen else next(iter(known))


def scripted_policies():
    return {"perfect": _perfect, "flip_zero": lambda env, obs, t, rng: 0, "memory": _MemoryPlayer(0.0),
            "memory_eps": _MemoryPlayer(0.25)}
