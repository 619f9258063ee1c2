"""The benchmark: versioned suites of scenarios, their references, scoring, statistics and the suite runner."""
