"""Hostile programs: each gets the right verdict, the host is unchanged, nothing survives."""
import os
import socket
import subprocess
import time
import uuid

import pytest

from perfalign.sandbox import Limits, TestCase, Verdict

FAST = Limits(time_s=1.0, memory_mb=128, output_mb=4, processes=32)


@pytest.fixture(scope="module")
def sandbox(each_backend_sandbox):  # every test, once per backend: bwrap and docker (conftest)
    return each_backend_sandbox


def _survivors(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-af", marker], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "pgrep" not in line]


def test_fork_bomb_is_contained(sandbox):
    src = "#include <unistd.h>\nint main(){ while(1) fork(); }"
    t0 = time.monotonic()
    r = sandbox.run(src, "cpp", limits=FAST)
    assert r.verdict in (Verdict.TIME_LIMIT_EXCEEDED, Verdict.RUNTIME_ERROR)
    assert time.monotonic() - t0 < 30
    # no process of this sandbox's slot uids remains
    uids = {s.uid for s in sandbox._all_slots}
    time.sleep(0.2)
    out = subprocess.run(["ps", "-eo", "uid=,stat="], capture_output=True, text=True).stdout.split("\n")
    alive = [line for line in out
             if line.split() and int(line.split()[0]) in uids and not line.split()[1].startswith("Z")]
    assert alive == []


def test_memory_bomb_gets_mle(sandbox):
    src = ("#include <bits/stdc++.h>\nint main(){ std::vector<char*> v; for(;;){ char* p=(char*)malloc(1<<20);"
           " if(!p) return 3; memset(p,1,1<<20); v.push_back(p);} }")
    r = sandbox.run(src, "cpp", limits=FAST)
    assert r.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, r.tests[0].message


def test_python_memory_bomb_gets_mle(sandbox):
    r = sandbox.run("x = []\nwhile True:\n    x.append(bytearray(1 << 20))\n", "python3", limits=FAST)
    assert r.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, r.tests[0].message


def test_infinite_loop_gets_tle(sandbox):
    r = sandbox.run("int main(){ volatile unsigned long x=0; for(;;) x++; }", "cpp", limits=FAST)
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert r.tests[0].cpu_time_s > 0.1  # it burned CPU (less than 1 s when the host is loaded)


def test_sleep_forever_gets_tle_by_wall_time(sandbox):
    t0 = time.monotonic()
    r = sandbox.run("import time\ntime.sleep(3600)\n", "python3", limits=FAST)
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert r.tests[0].cpu_time_s < 0.5  # it was the wall clock that stopped it
    assert time.monotonic() - t0 < 20


def test_huge_stdout_gets_ole(sandbox):
    src = ("#include <cstdio>\nint main(){ for(;;) fputs(\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
           "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n\", stdout); }")
    r = sandbox.run(src, "cpp", limits=FAST)
    assert r.verdict is Verdict.OUTPUT_LIMIT_EXCEEDED


def test_writes_outside_the_sandbox_do_not_reach_the_host(sandbox, tmp_path):
    target = tmp_path / "escaped.txt"
    os.chmod(tmp_path, 0o777)
    probe = f"/tmp/perfalign-escape-{uuid.uuid4().hex}"
    src = f"""
import os
for p in [{str(target)!r}, {probe!r}, "/usr/perfalign-escape", "/etc/perfalign-escape"]:
    try:
        open(p, "w").write("pwned")
        print("wrote", p)
    except OSError as e:
        print("denied", p)
"""
    r = sandbox.run(src, "python3", limits=FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    assert not target.exists()
    assert not os.path.exists(probe)  # the sandbox's /tmp is private
    assert not os.path.exists("/usr/perfalign-escape")
    assert "denied /usr/perfalign-escape" in r.tests[0].output


def test_cannot_read_shadow_or_callers_environment(sandbox, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_supersecret_test_token")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini_supersecret")
    src = """
import os
try:
    print(open("/etc/shadow").read())
except OSError as e:
    print("shadow denied", type(e).__name__)
print(sorted(os.environ.items()))
print(os.getuid())
"""
    r = sandbox.run(src, "python3", limits=FAST, keep_output=True)
    out = r.tests[0].output
    assert r.verdict is Verdict.OK
    assert "shadow denied" in out
    assert "supersecret" not in out and "HF_TOKEN" not in out
    assert out.strip().splitlines()[-1] != "0"  # never uid 0 inside


def test_no_network_tcp_or_udp(sandbox):
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    tcp.settimeout(0.2)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.5)
    src = f"""
import socket
s = socket.socket()
s.settimeout(1)
print("tcp", s.connect_ex(("127.0.0.1", {tcp.getsockname()[1]})))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"leak", ("127.0.0.1", {udp.getsockname()[1]}))
    print("udp sent")
except OSError as e:
    print("udp", type(e).__name__)
"""
    r = sandbox.run(src, "python3", limits=FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    assert "tcp 0" not in r.tests[0].output
    with pytest.raises(socket.timeout):
        tcp.accept()
    with pytest.raises(socket.timeout):
        udp.recvfrom(16)
    tcp.close()
    udp.close()


def test_detached_grandchild_does_not_survive(sandbox):
    marker = f"perfalign_orphan_{uuid.uuid4().hex[:8]}"
    src = f"""
import os, time, sys
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sh", ["/bin/sh", "-c", "exec -a {marker} sleep 60"])
    os._exit(0)
time.sleep(0.2)
print("parent done")
"""
    tests = [TestCase(""), TestCase("")]
    r = sandbox.run(src, "python3", tests, limits=FAST)
    assert r.verdict is Verdict.OK
    time.sleep(0.2)
    assert _survivors(marker) == []


@pytest.mark.parametrize("src,sig", [
    ("int f(int x){ volatile char b[4096]; b[0]=x; return f(x+1)+b[0]; } int main(){ return f(0); }", 11),
    ("#include <cstdlib>\nint main(){ abort(); }", 6),
    ("int main(){ int *p = 0; *p = 1; return 0; }", 11),
])
def test_crashes_are_runtime_errors(sandbox, src, sig):
    r = sandbox.run(src, "cpp", limits=FAST)
    assert r.verdict is Verdict.RUNTIME_ERROR
    assert r.tests[0].signal == sig


def test_nonzero_exit_is_runtime_error_with_code(sandbox):
    r = sandbox.run("import sys\nsys.exit(7)\n", "python3", limits=FAST)
    assert r.verdict is Verdict.RUNTIME_ERROR and r.tests[0].exit_code == 7


def test_closing_stdout_early_is_fine(sandbox):
    src = "import os\nprint(42, flush=True)\nos.close(1)\nx = sum(range(10**5))\n"
    r = sandbox.run(src, "python3", [TestCase("", "42\n")], limits=FAST)
    assert r.verdict is Verdict.OK


def test_program_that_reads_no_input(sandbox):
    r = sandbox.run('#include <cstdio>\nint main(){ puts("hello"); }', "cpp", [TestCase("1 2 3\n" * 1000, "hello")])
    assert r.verdict is Verdict.OK
