"""The Python side of the env speed comparisons (bench_envs_vs_python.py, bench_envs_vs_references.py,
bench_box2d_vs_gymnasium.py): one env stepped through pre-drawn actions for a fixed time. Plain Python, so each
script can import it from whatever venv runs it."""
import time


def steps_per_second(step, reset, actions, seconds):
    """Env steps per second: `step(a)` returns whether the episode ended, `reset()` starts the next one; the actions
    are replayed in a loop for about `seconds` (the clock is read once per pass over them)."""
    reset()
    steps, start = 0, time.perf_counter()
    deadline = start + seconds
    while True:
        for a in actions:
            if step(a):
                reset()
        steps += len(actions)
        now = time.perf_counter()
        if now >= deadline:
            return steps / (now - start)
