"""The site's one timing protocol, for the few claims only time can show (CONTRIBUTING.md, "Quantities").

Interleaved repeats (A B A B ...: a change in the machine's load hits every candidate alike), CPU time of the
whole process by default (every TensorFlow thread, not the neighbours' share of the cores), the median as the
statistic, and the spread (slowest / fastest repeat) returned beside it so a page can show both.
A page asserts a ratio only with a margin of at least twice the spread measured under `make stress`
(bench/findings.md lists them); a ratio that is not robust is shown as measured, not asserted.
"""

# --8<-- [start:protocol]
import statistics
import time


def measure(candidates, *, repeats=7, clock=time.process_time):
    """Time each zero-argument callable in `candidates` (name -> callable) `repeats` times, interleaved.
    Returns name -> {"median": seconds, "spread": slowest / fastest repeat, "samples": [...]}."""
    samples = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, run in candidates.items():
            start = clock()
            run()
            samples[name].append(clock() - start)
    return {name: {"median": statistics.median(times), "spread": max(times) / max(min(times), 1e-9),
                   "samples": times} for name, times in samples.items()}


def ratio(timings, slow, fast):
    """Median of `slow` over median of `fast`."""
    return timings[slow]["median"] / max(timings[fast]["median"], 1e-9)
# --8<-- [end:protocol]


if __name__ == "__main__":  # runs on its own (tests/test_snippets.py): a loop 20x longer takes longer
    timings = measure({"short": lambda: sum(range(10_000)), "long": lambda: sum(range(200_000))})
    assert ratio(timings, "long", "short") > 5, timings
