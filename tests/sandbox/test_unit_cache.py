"""The object cache of trusted C++ units (sandbox/cache.py: UnitCache): a driver unit compiled
once is linked into every later program with the same bytes, command and compiler; anything
else recompiles; and neither a candidate's build step nor its run can touch a cached object."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from perfalign.sandbox import Limits, Sandbox, TestCase, Verdict, toolchains
from perfalign.sandbox.types import Job

LIMITS = Limits(time_s=2.0, memory_mb=256, output_mb=4, processes=32)
# A trusted driver in the probe harness's shape: it calls the candidate's function and prints.
DRIVER = """#include <cstdio>
#include <map>
#include <string>
int f(int);
int main() {
    std::map<std::string, int> m;
    m["answer"] = f(20);
    printf("%d\\n", m["answer"]);
    return 0;
}
"""
REUSED = "note: main.cpp: object from the unit cache"


def candidate(body: str) -> str:
    return f"int f(int x) {{ {body} }}\n"


def job(driver: str, cand: str, flags: tuple[str, ...] = ()) -> Job:
    return Job(driver, "cpp", [TestCase("", None)], LIMITS, keep_output=True, compile_flags=flags,
               extra_sources={"candidate.cpp": cand}, exports={"candidate.cpp": ("f",)})


def _cache_dir() -> Path:
    # not pytest's tmp_path: its base is 0700, and the compiler runs as the slot's unprivileged uid
    d = Path(tempfile.mkdtemp(prefix="perfalign-unitcache-test-"))
    d.chmod(0o755)
    return d


@pytest.fixture
def cache_dirs():
    made: list[Path] = []
    yield lambda: made.append(_cache_dir()) or made[-1]
    for d in made:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def sb(cache_dirs):
    try:
        box = Sandbox(backend="bwrap", workers=1, calibrate=False, cache_dir=cache_dirs())
    except Exception as e:  # noqa: BLE001 - no bwrap here: nothing of this module can run
        pytest.skip(f"bubblewrap sandbox unavailable: {e}")
    with box:
        yield box


def run(sb: Sandbox, j: Job) -> str:
    r = sb.run_job(j)
    assert r.verdict is Verdict.OK, (r.verdict, r.message, r.compile.message, r.tests and r.tests[0].message)
    return r.tests[0].output.strip()


def cached_objects(sb: Sandbox) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sb.units.root.glob("??/*/unit.o")}


def test_the_second_program_reuses_the_driver_object(sb):
    assert run(sb, job(DRIVER, candidate("return x + 1;"))) == "21"
    assert (sb.units.compiled, sb.units.hits) == (1, 0)
    r = sb.run_job(job(DRIVER, candidate("return x * 3;")))
    assert r.verdict is Verdict.OK and r.tests[0].output.strip() == "60"
    assert (sb.units.compiled, sb.units.hits) == (1, 1)  # the driver was not compiled again
    assert REUSED in r.compile.message and not r.compile.cached
    # the object is read-only on the host and the only entry
    objs = cached_objects(sb)
    assert len(objs) == 1 and all(not os.stat(p).st_mode & 0o222 for p in objs)


def test_another_flag_source_or_header_recompiles(sb):
    run(sb, job(DRIVER, candidate("return x + 1;")))
    assert sb.units.compiled == 1
    run(sb, job(DRIVER, candidate("return x + 1;"), flags=("-O3",)))
    assert sb.units.compiled == 2
    run(sb, job(DRIVER + "// another byte\n", candidate("return x + 1;")))
    assert sb.units.compiled == 3
    assert run(sb, job(DRIVER.replace("%d\\n", "%d!\\n"), candidate("return x + 1;"))) == "21!"
    assert sb.units.compiled == 4 and sb.units.hits == 0
    # a header shipped with the job is part of what the driver's compile could read
    j = job(DRIVER, candidate("return x + 1;"))
    j.extra_sources["consts.h"] = "#define K 1\n"
    run(sb, j)
    assert sb.units.compiled == 5
    # a candidate (a confined unit) is never cached: a new one compiles itself, the driver is a hit
    run(sb, job(DRIVER, "#include <cstdio>\n" + candidate("return x + 1;")))
    assert sb.units.compiled == 5 and sb.units.hits == 1


def test_the_reused_object_builds_the_same_program(sb, cache_dirs):
    """The object compiled alone is the one the build would compile: the linked program is
    byte-identical with the cache on and off."""
    j = job(DRIVER, candidate("return x - 1;"))
    assert run(sb, j) == "19"
    with Sandbox(backend="bwrap", workers=1, calibrate=False, cache_dir=cache_dirs(), unit_cache=False) as off:
        assert run(off, j) == "19"
        assert off.units is None
        on_progs = [p.read_bytes() for p in sb.cache.root.glob("??/*/prog")]
        off_progs = [p.read_bytes() for p in off.cache.root.glob("??/*/prog")]
    assert len(on_progs) == len(off_progs) == 1 and on_progs == off_progs


def test_a_driver_that_needs_the_candidate_falls_back(sb):
    """A trusted unit that does not compile without a confined unit is built with it, as without
    the cache; that fact is cached too (no second lone compile per program)."""
    driver = '#include <cstdio>\n#include "candidate.cpp"\nint main() { printf("%d\\n", f(1)); }\n'
    assert run(sb, job(driver, "inline int f(int x) { return x + 41; }\n")) == "42"
    assert (sb.units.compiled, sb.units.hits) == (1, 0) and not cached_objects(sb)
    r = sb.run_job(job(driver, "inline int f(int x) { return x + 1; }\n"))
    assert r.verdict is Verdict.OK and r.tests[0].output.strip() == "2"
    assert (sb.units.compiled, sb.units.hits) == (1, 0) and REUSED not in r.compile.message


# A build step the candidate controls (as if its source exploited the compiler): it runs in the
# build's sandbox, where the cached objects are, before the real build.
BUILD_ATTACK = r"""
ls /box/units/*.o >/dev/null 2>&1 && echo SAW_OBJECT >&2
for f in /box/units/*; do
  (printf X >> "$f") 2>/dev/null && echo "WROTE $f" >&2
  (chmod 666 "$f") 2>/dev/null && echo "CHMOD $f" >&2
  (rm -f "$f") 2>/dev/null; [ -e "$f" ] || echo "REMOVED $f" >&2
done
(: > /box/units/evil.o) 2>/dev/null && echo "CREATED /box/units/evil.o" >&2
(ls "$HOST_CACHE") >/dev/null 2>&1 && echo "SEES_HOST_CACHE" >&2
echo ATTACK_RAN >&2
exec "$@"
"""


def test_a_hostile_build_step_cannot_touch_a_cached_object(sb, monkeypatch):
    assert run(sb, job(DRIVER, candidate("return x + 1;"))) == "21"
    before = cached_objects(sb)
    assert len(before) == 1
    real = toolchains.private_link_argv

    def hostile(argv, units, prebuilt=None):
        script = BUILD_ATTACK.replace("$HOST_CACHE", str(sb.units.root))
        return ["/bin/sh", "-c", script, "sh", *real(argv, units, prebuilt)]

    monkeypatch.setattr(toolchains, "private_link_argv", hostile)
    r = sb.run_job(job(DRIVER, candidate("return x + 2;")))
    msg = r.compile.message
    assert "ATTACK_RAN" in msg and "SAW_OBJECT" in msg and REUSED in msg, msg  # it ran, beside the object
    for mark in ("WROTE", "CHMOD", "REMOVED", "CREATED", "SEES_HOST_CACHE"):
        assert mark not in msg, msg
    assert r.verdict is Verdict.OK and r.tests[0].output.strip() == "22"
    monkeypatch.undo()
    assert cached_objects(sb) == before
    r = sb.run_job(job(DRIVER, candidate("return x + 3;")))  # the next program links the same object
    assert r.tests[0].output.strip() == "23" and sb.units.hits == 2 and sb.units.compiled == 1


def test_a_hostile_program_cannot_reach_the_cache_at_run_time(sb):
    """The candidate's function searches every place it can see for objects and writable files
    (the build's directories, the runner's, the host cache's path) and writes to what opens."""
    assert run(sb, job(DRIVER, candidate("return x + 1;"))) == "21"
    before = cached_objects(sb)
    hostile = r"""#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
static int visited = 0;
static void attack(const std::string& dir, int depth) {
    DIR* d = opendir(dir.c_str());
    if (!d) return;
    ++visited;
    std::string probe = dir + "/evil.o";
    int c = open(probe.c_str(), O_WRONLY | O_CREAT, 0666);
    if (c >= 0) { printf("CREATED %s\n", probe.c_str()); close(c); }
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name, p = dir + "/" + n;
        struct stat st;
        if (n == "." || n == ".." || lstat(p.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode) && depth < 6) attack(p, depth + 1);
        if (!S_ISREG(st.st_mode)) continue;
        if (n.size() > 2 && n.compare(n.size() - 2, 2, ".o") == 0) printf("OBJECT %s\n", p.c_str());
        int w = open(p.c_str(), O_WRONLY | O_APPEND);
        if (w >= 0) { printf("WROTE %s %zd\n", p.c_str(), write(w, "X", 1)); close(w); }
        if (chmod(p.c_str(), 0666) == 0) printf("CHMOD %s\n", p.c_str());
    }
    closedir(d);
}
int f(int x) {
    const char* roots[] = {"/box", "/run", "/var/cache", "/root", "HOST_CACHE", "HOST_ROOT"};
    for (const char* r : roots) attack(r, 0);
    printf("VISITED %d\n", visited);
    return x + 1;
}
""".replace("HOST_CACHE", str(sb.units.root)).replace("HOST_ROOT", str(sb.units.root.parent))
    r = sb.run_job(job(DRIVER, hostile))
    assert r.verdict is Verdict.OK, (r.message, r.compile.message)
    lines = r.tests[0].output.splitlines()
    visited = [int(line.split()[1]) for line in lines if line.startswith("VISITED")]
    assert lines[-1] == "21" and visited and visited[0] >= 3, lines  # /box, /box/prog, /run at least
    assert not [line for line in lines if line.split()[0] in ("CREATED", "OBJECT", "WROTE", "CHMOD")], lines
    assert cached_objects(sb) == before
    assert run(sb, job(DRIVER, candidate("return x + 5;"))) == "25" and sb.units.hits == 2
