"""The judges' environments: Python 3 library set and the Python 2 (bullseye) root."""
import os

import pytest

from perfalign.sandbox import Limits, Sandbox, TestCase, Verdict, environments

ATCODER_PY = """import sys
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path
import networkx as nx
from sortedcontainers import SortedList

n, m = map(int, sys.stdin.readline().split())
rows, cols, w = [], [], []
g = nx.Graph()
for _ in range(m):
    a, b, c = map(int, sys.stdin.readline().split())
    rows.append(a - 1); cols.append(b - 1); w.append(c)
    g.add_edge(a - 1, b - 1, weight=c)
d = shortest_path(csr_matrix((w, (rows, cols)), shape=(n, n)), directed=False)
s = SortedList(int(x) for x in d[0])
print(int(np.sum(d[0])), nx.shortest_path_length(g, 0, n - 1, weight="weight"), s[-1])
"""


@pytest.fixture(scope="module")
def sandbox(each_backend_sandbox):  # once per backend: bwrap and docker (conftest)
    return each_backend_sandbox


PY2 = """n = int(raw_input())
xs = map(int, raw_input().split())
print sum(xs) / n, 7 / 2
print "%d items" % len(xs)
"""


def _need_py3_libs():
    libs = environments.python3_libs()
    if libs.dir is None:
        pytest.skip(libs.reason)


def _need_py2():
    py2 = environments.python2()
    if py2.root is None:
        pytest.skip(py2.reason)


def test_atcoder_style_solution_with_numpy_scipy_networkx(sandbox):
    _need_py3_libs()
    r = sandbox.run(ATCODER_PY, "python3", [TestCase("3 3\n1 2 4\n2 3 1\n1 3 7\n", "9 5 5\n")],
                    Limits(time_s=10), repeats=2)
    assert r.verdict is Verdict.OK, (r.message, [t.message for t in r.tests])
    libs = r.to_dict()["environment"]["libraries"]
    for name in ("numpy", "scipy", "networkx", "sortedcontainers"):
        assert libs[name] == dict(environments.python3_libs().libraries)[name]
    assert libs["numpy"] == "1.24.1"  # the pinned judge version, not whatever the host has
    assert r.environment["toolchain"].startswith("Python 3")
    assert r.tests[0].cpu_time_s > 0


def test_library_folder_is_read_only_and_only_on_the_programs_path(sandbox):
    _need_py3_libs()
    src = f"""import os, sys
print(os.environ.get("PYTHONPATH"))
try:
    open({environments.PY3_GUEST!r} + "/numpy/__init__.py", "a").write("x")
    print("writable")
except OSError:
    print("read-only")
"""
    r = sandbox.run(src, "python3", keep_output=True)
    assert r.verdict is Verdict.OK
    assert r.tests[0].output.split() == [environments.PY3_GUEST, "read-only"]


def test_python2_program_runs_through_the_bullseye_root(sandbox):
    _need_py2()
    r = sandbox.run(PY2, 1, [TestCase("3\n4 5 7\n", "5 3\n3 items\n")], repeats=2)
    assert r.verdict is Verdict.OK, (r.message, [t.message for t in r.tests])
    assert r.language.value == "python2"
    assert r.environment["toolchain"].startswith("Python 2.7")
    assert r.environment["root"] == "debian bullseye"
    t = r.tests[0]
    assert len(t.cpu_times_s) == 2 and 0 < t.cpu_time_s < 2
    # a Python 3-only construct is a Python 2 syntax error: it really is Python 2
    r = sandbox.run("print(1, end='')\n", "python2")
    assert r.verdict is Verdict.RUNTIME_ERROR and "SyntaxError" in r.tests[0].message


def test_python2_missing_root_is_unsupported_with_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(environments, "ENV_DIR", tmp_path)
    environments.python2.cache_clear()
    try:
        with Sandbox(backend="auto", calibrate=False) as sb:
            r = sb.run(PY2, "python2", [TestCase("1\n1\n")])
        assert r.verdict is Verdict.UNSUPPORTED_LANGUAGE
        assert str(tmp_path / "py2root") in r.message and "scripts/setup.sh" in r.message
        assert r.environment["root"] is None
        # a root without its stamp (an interrupted setup) is not used either
        (tmp_path / "py2root" / "usr" / "bin").mkdir(parents=True)
        environments.python2.cache_clear()
        assert environments.python2().root is None
    finally:
        environments.python2.cache_clear()


def test_resolve_in_root_follows_absolute_links_inside_the_root(tmp_path):
    (tmp_path / "usr" / "lib" / "x").mkdir(parents=True)
    (tmp_path / "usr" / "lib" / "x" / "ld-2.31.so").write_text("")
    os.symlink("usr/lib", tmp_path / "lib")
    os.symlink("usr/lib64", tmp_path / "lib64")
    (tmp_path / "usr" / "lib64").mkdir()
    os.symlink("/lib/x/ld-2.31.so", tmp_path / "usr" / "lib64" / "ld.so")  # absolute: must stay in root
    assert environments.resolve_in_root(tmp_path, "/lib64/ld.so") == "/usr/lib/x/ld-2.31.so"
    assert environments.resolve_in_root(tmp_path, "/lib/x/../x/ld-2.31.so") == "/usr/lib/x/ld-2.31.so"
