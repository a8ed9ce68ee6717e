"""What the benchmark scripts share: the command line's before/after, scenario runs, word errors, timers."""
