"""Issue 22: answer bits kept in the host's page cache of a read-only system file, and repeats
judged as a set.

The attacker (ATTACK below, our own program) computes its answer on the first run and stores it
as the cache state of pages of the largest library under /usr/lib (read a page to set a bit,
evict it to clear it), then later runs, and later jobs on the same input, read the answer back
without doing the work: probing with preadv2(RWF_NOWAIT) (EAGAIN = not cached), mincore on a
shared mapping or cachestat; clearing with posix_fadvise(DONTNEED) or madvise(PAGEOUT/COLD);
setting with pread, readahead, madvise(WILLNEED) or madvise(POPULATE_READ). On this host, outside
the sandbox, it reads its answer back from the second run on (0.13 s -> 0.00 s of CPU). Under
the sandbox's default-deny seccomp filter every probe and clear is refused, so every repeat
computes: no repeat is faster than another, the answer is right, and the program says what was
refused. Its honest twin (the same work, no cache tricks) passes beside it.
"""
import pytest

from perfalign.common.plausibility import FAST_REPEAT_RATIO, repeats_as_set
from perfalign.sandbox import Limits, TestCase, Verdict, seccomp
from perfalign.sandbox import types as sandbox_types

ATTACK = r"""
#include <bits/stdc++.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
// Answer bits in the host's page cache of a read-only system file. mode = probe+clear+set.
static const long PG = 4096, SPACING = 64, BITS = 32;
static int fd = -1; static char* map = nullptr; static long fsize = 0; static std::string refused;
static void note(const char* what, long r, int err) {
    if (r < 0 && refused.empty()) refused = std::string(what) + ":" + strerror(err); }
static std::string pick() {  // the largest regular file under a few system directories
    std::string best; long bsz = 0;
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib"}) {
        DIR* d = opendir(dir); if (!d) continue;
        while (dirent* e = readdir(d)) {
            std::string p = std::string(dir) + "/" + e->d_name; struct stat st;
            if (stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > bsz) { bsz = st.st_size; best = p; }
        }
        closedir(d);
    }
    return best;
}
static int probe(const std::string& how, long off) {
    if (how == "nowait") { char b; iovec v{&b, 1}; long r = preadv2(fd, &v, 1, off, RWF_NOWAIT);
        if (r < 0 && errno != EAGAIN) { note("preadv2", r, errno); return -1; } return r == 1; }
    if (how == "mincore") { unsigned char v = 0; long r = mincore(map + off, PG, &v);
        if (r < 0) { note("mincore", r, errno); return -1; } return v & 1; }
    if (how == "cachestat") { struct { uint64_t off, len; } range{(uint64_t)off, (uint64_t)PG}; uint64_t cs[5] = {0};
        long r = syscall(451, fd, &range, cs, 0);
        if (r < 0) { note("cachestat", r, errno); return -1; } return cs[0] > 0; }
    return -1;
}
static void clear(const std::string& how, long off) {
    if (how == "fadvise") { int e = posix_fadvise(fd, off, PG, POSIX_FADV_DONTNEED); if (e) note("fadvise64", -1, e); }
    else if (how == "pageout") { volatile char c = map[off]; (void)c; long r = madvise(map + off, PG, MADV_PAGEOUT);
        if (r < 0) note("madvise(PAGEOUT)", r, errno);
        r = madvise(map + off, PG, MADV_COLD); if (r < 0) note("madvise(COLD)", r, errno); }
}
static void set(const std::string& how, long off) {
    if (how == "read") { char b; long r = pread(fd, &b, 1, off); if (r < 0) note("pread", r, errno); }
    else if (how == "readahead") { long r = readahead(fd, off, PG); if (r < 0) note("readahead", r, errno); }
    else if (how == "willneed") { long r = madvise(map + off, PG, MADV_WILLNEED);
        if (r < 0) note("madvise(WILLNEED)", r, errno); }
    else if (how == "populate") { long r = madvise(map + off, PG, 22 /* MADV_POPULATE_READ */);
        if (r < 0) note("madvise(POPULATE_READ)", r, errno); }
}
int main() {
    std::string mode; unsigned long n; std::cin >> mode >> n;
    if (mode == "honest") mode = "none+none+none";  // the twin: the same work, no cache tricks
    std::string p = mode.substr(0, mode.find('+')), rest = mode.substr(mode.find('+') + 1);
    std::string c = rest.substr(0, rest.find('+')), s = rest.substr(rest.find('+') + 1);
    std::string file = pick(); fd = open(file.c_str(), O_RDONLY); struct stat st; fstat(fd, &st); fsize = st.st_size;
    map = (char*)mmap(nullptr, fsize, PROT_READ, MAP_SHARED, fd, 0);
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM); madvise(map, fsize, MADV_RANDOM);
    long slots = fsize / PG / SPACING - BITS - 2;
    long base = (long)((n * 2654435761UL) % (unsigned long)std::max(1L, slots)) * SPACING * PG;
    auto page = [&](int i) { return base + (long)i * SPACING * PG; };
    unsigned long answer = 0; bool cached = false;
    if (slots > 0 && probe(p, page(BITS)) == 1) {  // the marker: an earlier run stored the answer
        for (int i = 0; i < BITS; ++i) if (probe(p, page(i)) == 1) answer |= 1UL << i;
        cached = refused.empty();
    }
    if (!cached) {
        answer = 0; unsigned long x = n;
        for (long i = 0; i < 60000000; ++i) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; answer += x >> 40; }
        answer &= 0xffffffffUL;
    }
    if (slots > 0) {  // (re)store: probing may have pulled pages in
        {
            for (int i = 0; i <= BITS; ++i) clear(c, page(i));
            for (int i = 0; i < BITS; ++i) if (answer >> i & 1) set(s, page(i));
            set(s, page(BITS));
        }
    }
    printf("%lu %s %s\n", answer, cached ? "from-cache" : "computed", refused.empty() ? "-" : refused.c_str());
}
"""
VARIANTS = ["nowait+fadvise+read", "mincore+fadvise+readahead", "cachestat+fadvise+read",
            "mincore+pageout+willneed", "nowait+pageout+populate", "cachestat+fadvise+readahead"]
LIMITS = Limits(time_s=5.0, memory_mb=256)
REPEATS = 3


@pytest.fixture(scope="module")
def sandbox(each_backend_sandbox):  # every test, once per backend: bwrap and docker (conftest)
    return each_backend_sandbox


@pytest.fixture(scope="module")
def runs(sandbox):
    tests = [TestCase(f"{mode} {4242 + i}\n") for i, mode in enumerate(["honest"] + VARIANTS)]
    res = sandbox.run(ATTACK, "cpp", tests, LIMITS, repeats=REPEATS, keep_output=True)
    assert res.compile.ok, res.compile.message
    honest = sandbox.run(ATTACK, "cpp", [TestCase(f"honest {4242 + i}\n") for i in range(len(VARIANTS) + 1)], LIMITS,
                         keep_output=True)
    return res, honest


def test_honest_twin_passes(runs):
    res, _ = runs
    t = res.tests[0]
    assert t.verdict is Verdict.OK and t.output.split() == [t.output.split()[0], "computed", "-"], t.output
    assert "fast_repeat" not in t.flags and len(t.cpu_times_s) == REPEATS


@pytest.mark.parametrize("i,mode", list(enumerate(VARIANTS, start=1)))
def test_page_cache_channel_is_refused(runs, i, mode):
    res, honest = runs
    t = res.tests[i]
    answer, how, refused = t.output.split(None, 2)
    refused = refused.strip()
    assert t.verdict is Verdict.OK, (mode, t.message)
    assert answer == honest.tests[i].output.split()[0], (mode, t.output)  # computed, not read back
    assert how == "computed" and refused != "-", (mode, t.output)  # a probe or clear was refused
    assert refused.split(":")[0] in ("preadv2", "mincore", "cachestat", "fadvise64", "madvise(PAGEOUT)",
                                     "madvise(COLD)", "readahead", "madvise(WILLNEED)", "madvise(POPULATE_READ)")
    # no repeat gained anything: the repeats of one input took the same CPU time
    assert "fast_repeat" not in t.flags and max(t.cpu_times_s) < FAST_REPEAT_RATIO * min(t.cpu_times_s), t.cpu_times_s


def test_policy_never_allows_page_cache_control():
    allowed = seccomp.allowed_names()
    assert not allowed & set(seccomp.DENIED["page cache"])
    assert not allowed & {n for names in seccomp.DENIED.values() for n in names}
    kind, index, advice = seccomp.ARGUMENTS["madvise"]
    # never WILLNEED, REMOVE, COLD, PAGEOUT, POPULATE_WRITE. POPULATE_READ passes: it reads the
    # range in, as a touch of each page or pread would (a set, never a probe or a clear: the
    # "nowait+pageout+populate" attack above is refused all the same); perfcount makes it
    assert kind == "in" and index == 2 and not set(advice) & {3, 9, 20, 21, 23} and 22 in advice
    for name in ("preadv2", "pwritev2"):
        assert seccomp.ARGUMENTS[name] == ("clear", 5, seccomp.RWF_NOWAIT)
    assert "preadv2" not in allowed and "madvise" not in allowed  # only through their argument rules


# ------------------------------------------------------------------ repeats judged as a set

def test_a_far_faster_repeat_is_flagged_and_the_cold_run_counts():
    # repeat 0 does the work, later repeats read the answer
    value, flags = repeats_as_set([0.22, 0.0017, 0.0017, 0.0018, 0.0017])
    assert flags == ["fast_repeat"] and value == 0.22  # a median (0.0017) would hide the cold first run
    assert repeats_as_set([0.20, 0.21, 0.22]) == (0.21, [])
    assert repeats_as_set([0.2, 0.2 / (FAST_REPEAT_RATIO * 0.99)])[1] == []  # within the ratio: no flag
    assert repeats_as_set([0.00002, 0.00009]) == (0.000055, [])  # below the timer's resolution: noise
    assert repeats_as_set([]) == (None, [])


def test_test_result_keeps_every_repeat_and_the_flag():
    t = sandbox_types.TestResult.from_repeats(Verdict.OK, [0.22, 0.0017, 0.0017], [0.23, 0.002, 0.002], [1, 1, 1])
    assert t.cpu_times_s == [0.22, 0.0017, 0.0017] and t.wall_times_s == [0.23, 0.002, 0.002]
    assert t.cpu_time_s == 0.22 and t.wall_time_s == 0.23 and t.flags == ["fast_repeat"]
    honest = sandbox_types.TestResult.from_repeats(Verdict.OK, [0.21, 0.2, 0.22], [0.21, 0.2, 0.22], [1, 1, 1])
    assert honest.cpu_time_s == 0.21 and honest.flags == []


def test_run_result_and_reward_carry_the_flag(sandbox):
    """The flag reaches RunResult.flags (the labels' record: perfdata's sandbox_flags) and the RLPF
    reward's details, whose runtime is the cold run's; the reward is the penalty."""
    from perfalign.alignment import performance_reward as rw
    from perfalign.alignment.data import RewardProblem

    res = sandbox.run(ATTACK, "cpp", [TestCase("honest 1\n")], LIMITS, repeats=2)
    assert res.ok and "fast_repeat" not in res.flags and len(res.tests[0].cpu_times_s) == 2  # honest: no flag
    t = sandbox_types.TestResult.from_repeats(Verdict.OK, [0.3, 0.01], [0.3, 0.01], [1, 1])
    judged = sandbox_types.RunResult(Verdict.OK, res.backend, res.language, True, res.compile, [t])
    assert judged.mean_cpu_time_s == 0.3  # the label: the slowest repeat, not a median of 0.155
    problem = RewardProblem("p", ["1"], ["1"], 1.0, 256, {"cpp": 0.3})
    pr = rw.PerformanceReward({"p": problem}, sandbox=sandbox)
    m = rw._Measured("OK", judged.mean_cpu_time_s, {}, flags=("fast_repeat",))
    detail = pr._detail(("p", "cpp", "code"), m)
    # state kept between repeats is the candidate's doing: penalized (common.outcomes), never a median
    assert "fast_repeat" in detail.flags and detail.runtime_s == 0.3
    assert detail.reward == -1.0 and not detail.withheld and detail.cause == "fast_repeat"
