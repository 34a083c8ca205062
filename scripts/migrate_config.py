#!/usr/bin/env python3
"""Moves configs and sweep files to the schema where each trainer's options have their own section.

    python -m scripts.migrate_config FILE [FILE ...] [--check]

What moved (rlm refuses the old keys with "OLD is now NEW"):
- PPO's training options, once directly in `algo` (lr, gamma, epochs, ...), are now in `algo.ppo`;
- PPO's network options, once directly in `model` (feature_size, head_sizes, ...), are now in `model.ppo`;
- the off-policy per-network memories `model.actor_memory` and `model.critic_memory` are now in `model.off_policy`.

Each FILE is rewritten in place, line by line, so comments and layout stay: a moved key keeps its value, its
comments and the lines under it, indented into its new section; dotted keys (a sweep's grid, list, random and
overrides, or `key=value` text in comments) are renamed. The result is checked before it is written: both versions
are read with PyYAML, the old tree's keys are moved, and the two trees must be equal. --check writes nothing and
exits 1 when some FILE would change. Errors are one line on stderr and exit 2.
"""

import argparse
import re
import sys

import yaml

PPO_ALGO_KEYS = ["steps_per_env", "batch_mode", "max_seq_len", "minibatch_size", "epochs", "lr", "adam_eps", "gamma",
                 "gae_lambda", "clip_param", "vf_clip_param", "vf_loss_coeff", "entropy_coeff", "kl_coeff",
                 "kl_target", "grad_clip", "max_kl", "normalize_advantages"]
PPO_MODEL_KEYS = ["feature_size", "preprocessor_size", "head_sizes", "activation", "postprocessor_size",
                  "head_activation", "embedding", "embedding_max_len"]
NETWORK_MEMORIES = ["actor_memory", "critic_memory"]

# Dotted key paths: old prefix -> new prefix.
DOTTED_MOVES = ([(f"algo.{k}", f"algo.ppo.{k}") for k in PPO_ALGO_KEYS] +
                [(f"model.{k}", f"model.ppo.{k}") for k in PPO_MODEL_KEYS] +
                [(f"model.{k}", f"model.off_policy.{k}") for k in NETWORK_MEMORIES])
DOTTED_PATTERN = re.compile(r"(?<![\w.])(" + "|".join(re.escape(old) for old, _ in DOTTED_MOVES) + r")(?![\w])")
KEY_LINE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_]*)\s*:(\s|$)")


class MigrationError(Exception):
    pass


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def is_content(line):
    """A line that holds YAML (not blank, not only a comment)."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def top_block(lines, name):
    """(start, end) of the top-level section `name:` (its key line through its last line), or None."""
    for i, line in enumerate(lines):
        match = KEY_LINE.match(line)
        if match and match.group(1) == "" and match.group(2) == name:
            rest = line[match.end():].split("#", 1)[0].strip()
            if rest:
                raise MigrationError(f"line {i + 1}: '{name}:' holds a flow-style value; write it as a block first")
            end = i + 1
            while end < len(lines) and not (is_content(lines[end]) and indent_of(lines[end]) == 0):
                end += 1
            return i, end
    return None


def child_units(lines, start, end):
    """Splits a section's lines [start, end) into units, one per child key: the comments and blank lines above the
    key, its line, and every deeper line under it. Returns (indent, units, tail), each unit (key, [lines])."""
    body = [i for i in range(start, end) if is_content(lines[i])]
    if not body:
        return 0, [], lines[start:end]
    indent = indent_of(lines[body[0]])
    units, pending = [], []
    for i in range(start, end):
        line = lines[i]
        match = KEY_LINE.match(line)
        if match and len(match.group(1)) == indent:
            units.append([match.group(2), pending + [line]])
            pending = []
        elif is_content(line) and indent_of(line) < indent:
            raise MigrationError(f"line {i + 1}: unexpected indentation")
        elif not is_content(line) and (not line.strip() or indent_of(line) <= indent):
            pending.append(line)  # a blank line or a comment at the child level: it belongs to what follows
        else:
            if not units:
                raise MigrationError(f"line {i + 1}: a section's first line is not a key")
            units[-1][1].extend(pending + [line])
            pending = []
    return indent, units, pending


def deeper(unit_lines, by):
    return [(" " * by + line) if line.strip() else line for line in unit_lines]


def move_into(lines, section, keys, target):
    """Moves the children `keys` of the top-level `section` into its child `target`, creating it where the first
    of them was. Returns the new lines."""
    block = top_block(lines, section)
    if block is None:
        return lines
    start, end = block
    indent, units, tail = child_units(lines, start + 1, end)
    moving = [u for u in units if u[0] in keys]
    if not moving:
        return lines
    existing = [u for u in units if u[0] == target]
    out = []
    placed = False
    for unit in units:
        if unit[0] in keys:
            if not placed and not existing:
                out.append([target, [" " * indent + f"{target}:"]])
                out[-1][1].extend(line for u in moving for line in deeper(u[1], indent))
                placed = True
            continue
        out.append(unit)
        if unit[0] == target:
            unit[1].extend(line for u in moving for line in deeper(u[1], indent))
    body = [line for unit in out for line in unit[1]] + tail
    return lines[:start + 1] + body + lines[end:]


def migrate_text(text):
    lines = text.split("\n")
    lines = move_into(lines, "algo", PPO_ALGO_KEYS, "ppo")
    lines = move_into(lines, "model", PPO_MODEL_KEYS, "ppo")
    lines = move_into(lines, "model", NETWORK_MEMORIES, "off_policy")
    moves = dict(DOTTED_MOVES)
    return DOTTED_PATTERN.sub(lambda m: moves[m.group(1)], "\n".join(lines))


def moved_tree(tree):
    """The old tree with every key moved, to compare with the migrated file's tree."""
    moves = dict(DOTTED_MOVES)
    if isinstance(tree, str):
        return DOTTED_PATTERN.sub(lambda m: moves[m.group(1)], tree)  # "algo.lr=0.1" in a list of overrides
    if not isinstance(tree, dict):
        return tree
    out = {}
    for key, value in tree.items():
        new_key = moved_tree(key)  # a dotted key of a sweep: "algo.lr", "model.critic_memory.type"
        out[new_key] = [moved_tree(v) for v in value] if isinstance(value, list) else moved_tree(value)
    for section, keys, target in (("algo", PPO_ALGO_KEYS, "ppo"), ("model", PPO_MODEL_KEYS, "ppo"),
                                  ("model", NETWORK_MEMORIES, "off_policy")):
        block = out.get(section)
        if isinstance(block, dict) and any(k in block for k in keys):
            inner = block.setdefault(target, {}) or {}
            for k in keys:
                if k in block:
                    inner[k] = block.pop(k)
            block[target] = inner
    return out


def normalised(tree):
    """Dicts compared without their key order."""
    if isinstance(tree, dict):
        return {k: normalised(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [normalised(v) for v in tree]
    return tree


def migrate_file(path, check_only):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        new_text = migrate_text(text)
        before = yaml.safe_load(text)
        after = yaml.safe_load(new_text)
    except (MigrationError, yaml.YAMLError) as e:
        raise MigrationError(f"{path}: {e}".replace("\n", " ")) from None
    if normalised(moved_tree(before)) != normalised(after):
        raise MigrationError(f"{path}: the rewritten file does not read as the moved config; edit it by hand")
    if new_text == text:
        return False
    if not check_only:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new_text)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when some FILE would change")
    args = parser.parse_args()
    changed = []
    try:
        for path in args.files:
            if migrate_file(path, args.check):
                changed.append(path)
    except (MigrationError, OSError) as e:
        print(f"migrate_config: {e}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"{'would move' if args.check else 'moved'} keys in {path}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
