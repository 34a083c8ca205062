"""Bad input raises a Python exception with the C++ message, and never takes the interpreter down."""

import gymnasium
import numpy as np
import pytest

import rlm_envs
from rlm_envs import RlmEnv


def message(excinfo):
    return str(excinfo.value.args[0])


def test_unknown_id_is_a_key_error_naming_the_closest_ids():
    with pytest.raises(KeyError) as e:
        rlm_envs.make_vec("popgym/RepeatFirstEsy", num_envs=2)
    # The message `./rlm train` prints after the location of env.id.
    assert message(e) == (
        "unknown env id 'popgym/RepeatFirstEsy' (did you mean popgym/RepeatFirstEasy, popgym/RepeatFirstHard, "
        "popgym/RepeatFirstMedium?)"
    )
    with pytest.raises(KeyError):
        RlmEnv("nope/Nothing")
    with pytest.raises(gymnasium.error.NameNotFound):
        gymnasium.make("rlm/popgym-Nothing-v0")


def test_option_value_out_of_range_is_a_value_error_as_in_a_config():
    with pytest.raises(ValueError) as e:
        rlm_envs.make_vec("memory_rl/TMazePassive", num_envs=2, corridor_length=0)
    assert message(e).startswith("rlm_envs: env.options.corridor_length = 0 is out of range")
    with pytest.raises(ValueError) as e:
        RlmEnv("meta/Wind", variant="newest")
    assert message(e) == "rlm_envs: env.options.variant = 'newest' is not one of shm, original"


def test_cross_field_check_runs():
    with pytest.raises(ValueError) as e:
        RlmEnv("kf/BestArm", sigma_low=2.0, sigma_high=1.0)
    assert message(e) == "rlm_envs: env.options.sigma_low = 2 exceeds env.options.sigma_high = 1"


def test_option_the_env_does_not_read_is_a_type_error_with_the_config_message():
    with pytest.raises(TypeError) as e:
        RlmEnv("popgym/RepeatFirstEasy", corridor_length=5)
    assert message(e) == "env.options.corridor_length: env popgym/RepeatFirstEasy takes no env.options"
    with pytest.raises(TypeError) as e:
        RlmEnv("memory_rl/TMazePassive", variant="shm")
    assert message(e).startswith("env.options.variant: env memory_rl/TMazePassive reads only env.options.")
    with pytest.raises(TypeError) as e:
        RlmEnv("memory_rl/TMazePassive", no_such_option=1)
    assert message(e).startswith("env.options.no_such_option: env memory_rl/TMazePassive reads only")


def test_option_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError, match="corridor_length takes a int"):
        RlmEnv("memory_rl/TMazePassive", corridor_length="5")
    with pytest.raises(TypeError, match="previous_action must be a bool"):
        RlmEnv("popgym/RepeatFirstEasy", previous_action=1)


def test_wrapper_the_env_cannot_take_is_a_value_error():
    with pytest.raises(ValueError, match="markovian"):
        RlmEnv("popgym/RepeatFirstEasy", markovian="everything")
    with pytest.raises(ValueError) as e:
        RlmEnv("memory_rl/TMazePassive", markovian="full")
    assert message(e) == (
        "memory_rl-TMazePassive-v0: env.markovian = full needs the env's state, but the env exposes no state "
        "(state_space())"
    )


def test_action_outside_the_space_is_a_value_error_with_the_env_message():
    env = RlmEnv("popgym/RepeatFirstEasy")
    env.reset(seed=0)
    with pytest.raises(ValueError) as e:
        env.step(7)
    assert message(e) == "popgym-RepeatFirstEasy-v0: invalid action 7 for action space Discrete(4)"
    env.step(1)  # the env still works

    envs = rlm_envs.make_vec("popgym/MineSweeperEasy", num_envs=3, seed=0)
    envs.reset()
    bad = np.array([[0, 0], [0, 9], [1, 1]])
    with pytest.raises(ValueError) as e:
        envs.step(bad)
    assert message(e) == "popgym-MineSweeperEasy-v0: invalid action [0, 9] for action space MultiDiscrete([4, 4])"
    envs.step(np.zeros((3, 2), dtype=np.int64))  # refused before stepping: the batch still works
    with pytest.raises(ValueError, match="shape"):
        envs.step(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError):
        envs.step(np.array([[0.5, 0], [0, 0], [0, 0]]))  # not an integer


def test_nan_in_a_box_action_is_refused():
    env = RlmEnv("popgym/PositionOnlyPendulumEasy")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="invalid action"):
        env.step(np.array([np.nan], dtype=np.float32))


def test_step_before_reset_and_after_the_end_are_runtime_errors():
    env = RlmEnv("popgym/RepeatFirstEasy")
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(0)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(0)
        done = terminated or truncated
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)
    envs = rlm_envs.make_vec("popgym/RepeatFirstEasy", num_envs=2)
    with pytest.raises(RuntimeError, match=r"step\(\) called before reset\(\)"):
        envs.step(np.zeros(2, dtype=np.int64))


def test_bad_counts_and_seeds_are_value_errors():
    for kwargs in ({"num_envs": 0}, {"num_threads": 0}, {"seed": -1}, {"seed": 2**64}, {"num_envs": 2.5}):
        with pytest.raises(ValueError):
            rlm_envs.make_vec("popgym/RepeatFirstEasy", **{"num_envs": 2, **kwargs})
    envs = rlm_envs.make_vec("popgym/RepeatFirstEasy", num_envs=2)
    with pytest.raises(ValueError, match="one seed for the batch"):
        envs.reset(seed=[1, 2])


def test_info_state_of_an_env_without_a_state_is_a_value_error():
    for make in (RlmEnv, rlm_envs.make_vec):
        with pytest.raises(ValueError, match="memory_rl-TMazePassive-v0: info_state needs an env with a full state"):
            make("memory_rl/TMazePassive", info_state=True)
