"""Case sets the benchmarks measure on: data built at benchmark time, not benchmarks themselves."""
