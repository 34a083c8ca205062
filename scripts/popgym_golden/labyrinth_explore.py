"""LabyrinthExplore: the maze right after reset (START written; the exit stays a wall), the start and the exit.

Upstream generates mazes with Python's global `random` and numpy's global RNG, not env.np_random, so the recorder's
DrawRecorder sees no draws (steps are deterministic anyway) and C++ restores the maze instead of regenerating it.
"""
from scripts.popgym_golden.labyrinth_escape import first_action_towards, hidden_state, stay_action  # noqa: F401


def scripted_policies():
    return {
        # Always walk to the nearest unexplored cell: explores everything, revisiting only to leave dead ends.
        "nearest_unexplored": lambda env, obs, t, rng: first_action_towards(env, lambda c: env.explored[c] == 0),
        # Never move: the worst return, -1023/1024.
        "stay": lambda env, obs, t, rng: stay_action(env),
    }
