"""LabyrinthEscape: the maze right after reset (START and GOAL written), the start and the exit.

Upstream generates mazes with Python's global `random` and numpy's global RNG, not env.np_random, so the recorder's
DrawRecorder sees no draws (steps are deterministic anyway) and C++ restores the maze instead of regenerating it.
"""
from collections import deque

# popgym.core.maze Actions: LEFT, RIGHT, UP, DOWN as (dy, dx).
MOVES = ((0, -1), (0, 1), (-1, 0), (1, 0))


def hidden_state(env):
    return {"grid": env.maze.grid.astype(int).tolist(), "start": [int(v) for v in env.maze.start],
            "end": [int(v) for v in env.maze.end]}


def first_action_towards(env, is_target):
    """The first action of a shortest path (env.move's rules) from the agent to the nearest cell with is_target."""
    start = tuple(int(v) for v in env.position)
    first = {start: None}
    queue = deque([start])
    saved = env.position
    try:
        while queue:
            cell = queue.popleft()
            if cell != start and is_target(cell):
                return first[cell]
            env.position = cell
            for a in range(4):
                nxt = tuple(int(v) for v in env.move(a))
                if nxt not in first:
                    first[nxt] = a if cell == start else first[cell]
                    queue.append(nxt)
    finally:
        env.position = saved
    return 0


def stay_action(env):
    """An action that leaves the agent where it is (at the start: towards the outer wall)."""
    here = tuple(int(v) for v in env.position)
    return next(a for a in range(4) if tuple(int(v) for v in env.move(a)) == here)


def scripted_policies():
    return {
        # Shortest path to the exit: the best return of the maze, 1 - k/1024.
        "shortest": lambda env, obs, t, rng: first_action_towards(env, lambda c: env.maze.grid[c] == 3),
        # Never move: the worst return, -1023/1024.
        "stay": lambda env, obs, t, rng: stay_action(env),
    }
