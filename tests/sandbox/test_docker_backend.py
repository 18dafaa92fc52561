"""The docker backend against a real (private) engine: what a container gives the program, and
that nothing is left behind. The shared sandbox, hostile and integrity tests also run on it."""
import json

import pytest

from perfalign.sandbox import Limits, Sandbox, TestCase, Verdict, seccomp
from perfalign.sandbox.backends import BackendUnavailable
from perfalign.sandbox.backends.docker import DockerBackend, seccomp_profile

PROBE = r"""
import os, socket
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
init = open("/proc/1/status").read().split()[1]
def writable(d):
    try:
        open(os.path.join(d, "probe"), "w").close()
        return True
    except OSError:
        return False
print(json.dumps({
    "uid": os.getuid(), "cap_eff": status["CapEff"].strip(), "no_new_privs": status["NoNewPrivs"].strip(),
    "seccomp": status["Seccomp"].strip(), "pid1": init, "interfaces": sorted(n for _, n in socket.if_nameindex()),
    "root_writable": writable("/"), "cgroup_writable": writable("/sys/fs/cgroup"), "tmp_writable": writable("/tmp"),
    "env": sorted(os.environ),
}))
""".replace("import os, socket", "import json, os, socket")


@pytest.fixture(scope="module")
def docker_sandbox(docker_engine):
    with Sandbox(backend="docker", workers=2, calibrate=False) as sb:
        yield sb


def _ours(engine):
    return engine.client().containers.list(all=True, filters={"label": "perfalign.sandbox"})


def test_container_confines_the_program(docker_sandbox):
    r = docker_sandbox.run(PROBE, "python3", [TestCase("")], keep_output=True)
    assert r.verdict is Verdict.OK, r.tests[0].message
    got = json.loads(r.tests[0].output)
    assert got["uid"] >= 200000                     # the slot's unprivileged uid
    assert int(got["cap_eff"], 16) == 0             # no capabilities
    assert got["no_new_privs"] == "1" and got["seccomp"] == "2"
    assert got["pid1"] == "python3"                 # the runner is the container's init
    assert got["interfaces"] == ["lo"]              # no network
    assert not got["root_writable"] and not got["cgroup_writable"] and got["tmp_writable"]
    assert "DOCKER_HOST" not in got["env"] and "PYTHONPATH" in got["env"]


def test_one_container_per_launch_and_none_left_behind(docker_sandbox, docker_engine):
    assert docker_sandbox.run("print(6)", "python3", [TestCase("", "6")]).verdict is Verdict.OK
    # a run the host stops at its wall-clock guard (the program blocks forever, using no CPU)
    r = docker_sandbox.run("import time\ntime.sleep(600)", "python3", limits=Limits(time_s=0.5))
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert _ours(docker_engine) == []


def test_memory_limit_is_the_jobs(docker_sandbox):
    grab = "x = bytearray({mb} << 20)\nx[::4096] = b'1' * len(x[::4096])\nprint(len(x) >> 20)\n"
    ok = docker_sandbox.run(grab.format(mb=40), "python3", [TestCase("", "40")], Limits(memory_mb=128))
    assert ok.verdict is Verdict.OK, ok.tests[0].message
    big = docker_sandbox.run(grab.format(mb=400), "python3", [TestCase("", "400")], Limits(memory_mb=128))
    assert big.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, big.tests[0].message


def test_seccomp_profile_is_the_bwrap_filters_policy():
    profile = json.loads(seccomp_profile())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == 38  # default deny
    denied = {n for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ERRNO" and "args" not in rule
              for n in rule["names"]}
    assert {n for names in seccomp.DENIED.values() for n in names} <= denied
    allowed = {n for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW" and "args" not in rule
               for n in rule["names"]}
    assert allowed == seccomp.allowed_names() and not allowed & set(seccomp.DENIED["page cache"])
    clone = [r for r in profile["syscalls"] if r["names"] == ["clone"]]
    assert clone[0]["args"] == [{"index": 0, "value": sum(seccomp.NS_FLAGS), "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]
    madvise = {r["args"][0]["value"] for r in profile["syscalls"] if r["names"] == ["madvise"]}
    assert madvise == set(seccomp.MADV_OK) and 21 not in madvise  # never MADV_PAGEOUT


def test_unreachable_engine_is_a_clear_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    with pytest.raises(BackendUnavailable, match="no reachable Docker engine"):
        DockerBackend.check()
