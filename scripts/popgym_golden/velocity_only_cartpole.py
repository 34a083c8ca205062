"""VelocityOnlyCartpole (upstream's spelling of the id): the float64 4-state that reset() drew."""
from scripts.popgym_golden.position_only_cart_pole import hidden_state, scripted_policies  # noqa: F401
