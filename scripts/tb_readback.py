#!/usr/bin/env python3
"""Reads every TensorBoard event file under a folder with the real tensorboard package and prints its scalars.

Output (stdout): JSON {tag: [[step, value], ...]} with events in file order; non-finite values are null, as
strict JSON readers require. The C++ tests use this to prove that rlm's hand-written event files
(src/core/tensorboard_writer.cpp) are what TensorBoard itself reads, checksums included.
Exit status 1 with a message on stderr when no scalars can be read or a record is corrupt.

Usage: tb_readback.py FOLDER
"""
import json
import logging
import math
import os
import sys


def event_files(folder):
    found = []
    for root, _dirs, files in os.walk(folder):
        found += [os.path.join(root, name) for name in files if "tfevents" in name]
    return sorted(found)


def check_records(path):
    """TensorBoard's loaders stop quietly at a bad checksum; read the records directly so corruption is an error."""
    from tensorboard.backend.event_processing import event_file_loader
    from tensorboard.compat import tf

    count = 0
    try:
        # The record reader the loader itself uses (TensorFlow's when installed, else tensorboard's own stub); it
        # verifies both checksums of every record.
        for _record in event_file_loader._make_tf_record_iterator(path):
            count += 1
    except tf.errors.DataLossError as error:
        sys.exit(f"tb_readback: corrupt record {count} in {path}: {error}")
    return count


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    folder = sys.argv[1]
    try:
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError as error:
        sys.exit(f"tb_readback: cannot import tensorboard with {sys.executable}: {error}")
    logging.getLogger("tensorboard").setLevel(logging.ERROR)

    files = event_files(folder)
    if not files:
        sys.exit(f"tb_readback: no event files (*tfevents*) under '{folder}'")
    scalars = {}
    for path in files:
        check_records(path)
        # size_guidance 0 keeps every event instead of TensorBoard's default reservoir sample.
        accumulator = event_accumulator.EventAccumulator(path, size_guidance={event_accumulator.SCALARS: 0})
        accumulator.Reload()
        for tag in accumulator.Tags()[event_accumulator.SCALARS]:
            points = [[e.step, e.value if math.isfinite(e.value) else None] for e in accumulator.Scalars(tag)]
            scalars.setdefault(tag, []).extend(points)
    if not scalars:
        sys.exit(f"tb_readback: no scalars in {len(files)} event file(s) under '{folder}'")
    json.dump(scalars, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
