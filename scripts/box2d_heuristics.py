"""Gymnasium's Box2D controllers, rewritten in double precision: lunar_lander.heuristic and
bipedal_walker.BipedalWalkerHeuristics (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/box2d/), as
tests/box2d/*_policies.hpp rewrite them in C++.

scripts/record_gymnasium_box2d.py drives Gymnasium's envs with these (and checks that they act as Gymnasium's own
functions), and tests/python/test_box2d_stats.py drives rlm's envs through the Python package with them, so both
sides of that comparison play the same controllers. Plain Python and numpy: importable without pybox2d.
"""

import numpy as np


def lander_todo(s):
    s = [float(v) for v in s]
    angle_targ = min(max(0.5 * s[0] + s[2], -0.4), 0.4)
    hover_targ = 0.55 * abs(s[0])
    angle_todo = 0.5 * (angle_targ - s[4]) - s[5]
    hover_todo = 0.5 * (hover_targ - s[1]) - 0.5 * s[3]
    if s[6] != 0.0 or s[7] != 0.0:
        angle_todo, hover_todo = 0.0, -0.5 * s[3]
    return angle_todo, hover_todo


def lander_heuristic(s, continuous):
    angle_todo, hover_todo = lander_todo(s)
    if continuous:
        return np.clip(np.array([20.0 * hover_todo - 1.0, -20.0 * angle_todo]), -1.0, 1.0)
    if hover_todo > abs(angle_todo) and hover_todo > 0.05:
        return 2
    if angle_todo < -0.05:
        return 3
    if angle_todo > 0.05:
        return 1
    return 0


class WalkerHeuristic:
    """BipedalWalkerHeuristics' three-state gait; a fresh one per episode."""

    STAY, PUT, PUSH = 1, 2, 3
    SPEED, SKA0 = 0.29, 0.1

    def __init__(self):
        self.state, self.moving, self.supporting, self.ska = self.STAY, 0, 1, self.SKA0

    def act(self, obs):
        s = [float(v) for v in obs]
        bm, bs = 4 + 5 * self.moving, 4 + 5 * self.supporting
        hip_t, knee_t = [None, None], [None, None]
        if self.state == self.STAY:
            hip_t[self.moving], knee_t[self.moving] = 1.1, -0.6
            self.ska += 0.03
            if s[2] > self.SPEED:
                self.ska += 0.03
            self.ska = min(self.ska, self.SKA0)
            knee_t[self.supporting] = self.ska
            if s[bs] < 0.10:
                self.state = self.PUT
        if self.state == self.PUT:
            hip_t[self.moving], knee_t[self.moving] = 0.1, self.SKA0
            knee_t[self.supporting] = self.ska
            if s[bm + 4] != 0.0:
                self.state = self.PUSH
                self.ska = min(s[bm + 2], self.SKA0)
        if self.state == self.PUSH:
            knee_t[self.moving], knee_t[self.supporting] = self.ska, 1.0
            if s[bs + 2] > 0.88 or s[2] > 1.2 * self.SPEED:
                self.state = self.STAY
                self.moving = 1 - self.moving
                self.supporting = 1 - self.moving
        hip, knee = [0.0, 0.0], [0.0, 0.0]
        for leg in range(2):
            b = 4 + 5 * leg
            if hip_t[leg]:  # an unset target and exactly 0.0 give no command
                hip[leg] = 0.9 * (hip_t[leg] - s[b]) - 0.25 * s[b + 1]
            if knee_t[leg]:
                knee[leg] = 4.0 * (knee_t[leg] - s[b + 2]) - 0.25 * s[b + 3]
            hip[leg] += 0.9 * s[0] + 1.5 * s[1]
            knee[leg] -= 15.0 * s[3]
        return np.clip(0.5 * np.array([hip[0], knee[0], hip[1], knee[1]]), -1.0, 1.0)
