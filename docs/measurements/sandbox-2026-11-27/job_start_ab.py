"""A job's fixed cost: medians of 30 one-test and 10 ten-test trivial C++ jobs (bwrap).
Run once per arm, alternating, with PYTHONPATH pointing each arm at its checkout."""
import statistics
import time

from perfalign.sandbox import Sandbox, TestCase

SRC = "#include <cstdio>\nint main(){ int a, b; if (scanf(\"%d %d\", &a, &b) == 2) printf(\"%d\\n\", a + b); }"


def median_ms(sb: Sandbox, tests: int, jobs: int) -> float:
    times = []
    for _ in range(jobs):
        t = time.perf_counter()
        sb.run(SRC, "cpp", [TestCase("1 2\n", "3")] * tests)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


sb = Sandbox(backend="bwrap", calibrate=False)
sb.run(SRC, "cpp", [TestCase("1 2\n", "3")])  # the compile cache
print(f"one-test job median ms {median_ms(sb, 1, 30):.1f} | ten-test job median ms {median_ms(sb, 10, 10):.1f}")
