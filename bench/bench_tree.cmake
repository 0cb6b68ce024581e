# Tree engine benchmarks.
