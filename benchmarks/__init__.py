"""Speed and memory benchmarks (not timed tests); each prints a table.

Run each from the repository root as a module, with the project installed (``make install``):
``python -m benchmarks.bench_scoring``; its docstring gives its options.
"""
