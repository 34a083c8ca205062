"""rlm's Python tools, one package: run each from the repository root as `python -m scripts.<name>`.

- record_*.py: golden-data recorders; each runs a reference (a pip package, or a checkout whose path it is given on
  its command line) and writes the data the C++ tests replay (tests/data/<suite>/, whose READMEs give the commands).
- bench_*.py: the Python side of the benchmarks (`./rlm bench`): references timed beside our figures.
- plot_runs.py (`./rlm plot`), learn_summary.py, tb_readback.py: reading run folders.
- popgym_golden/: the hidden-state readers record_popgym.py uses per POPGym family.
Lint: `.venv/bin/ruff check .` with ruff.toml (the suite runs it: tests/lint/check_python.sh).
"""
