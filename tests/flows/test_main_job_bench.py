"""benchmarks/main_job_bench.py counts the job's CPU where rusage does not reach: a process of the
job that moves into a sandbox slot's cgroup (as the sandbox's runner does) is still counted, by
the slot named after the job's PID; another PID's slot is not."""
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("main_job_bench", ROOT / "benchmarks" / "main_job_bench.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

BURN = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    slot = Path(sys.argv[1]) / f"{os.getpid()}-{sys.argv[2]}"
    slot.mkdir(parents=True)
    (slot / "cgroup.procs").write_text("0")    # out of the job's group, as a sandboxed program
    t = time.process_time()
    while time.process_time() - t < 0.4:
        pass
    print(slot)
""")


@pytest.mark.skipif(not (bench.CGROUPS / "cpuacct" / "cpuacct.stat").exists(), reason="needs cgroup v1 cpuacct")
def test_a_process_in_a_sandbox_slot_is_counted(tmp_path):
    cpu = bench.JobCPU()
    slots = cpu.root / "perfalign"
    foreign = slots / "1-benchtest"  # PID 1's: not the job's
    foreign.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.Popen([sys.executable, "-c", BURN, str(slots), "benchtest"], preexec_fn=cpu.enter,
                                stdout=subprocess.PIPE, text=True)
        while proc.poll() is None:
            user, sys_ = cpu.sample()
        out = proc.communicate()[0].strip()
        user, sys_ = cpu.sample()
    finally:
        cpu.close()
        foreign.rmdir()
    slot = Path(out)
    try:
        assert set(cpu.slots) == {slot.name}  # found by the PID in its name
        assert cpu.slots[slot.name][0] + cpu.slots[slot.name][1] >= 0.3
        assert user + sys_ >= 0.3
    finally:
        slot.rmdir()
    assert not cpu.group.exists()
