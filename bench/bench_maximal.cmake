# Maximal-coordinates benchmarks.
