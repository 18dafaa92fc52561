"""The measured program is an adversary: each trick it could use to improve its
number — forge the runner's report, stop or kill the runner, hide work from the CPU clock,
cache across repeats or tests, read what it should not, blame the infrastructure — scores no
better than an honest program. One test per trick, plus honest programs measured as before."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

from perfalign.sandbox import Limits, TestCase, Verdict

FAST = Limits(time_s=1.0, memory_mb=128, output_mb=4, processes=32)


@pytest.fixture(scope="module")
def sandbox(each_backend_sandbox):  # every test, once per backend: bwrap and docker (conftest)
    return each_backend_sandbox
INPUT = [TestCase("3\n1 2 3\n", "6")]

# Burn a fixed amount of CPU time, measured by the burner itself (process or thread clock).
BURN = r"""
#include <bits/stdc++.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
static double clk(clockid_t c){ timespec t; clock_gettime(c,&t); return t.tv_sec+t.tv_nsec*1e-9; }
static void burn(double s, clockid_t c=CLOCK_PROCESS_CPUTIME_ID){
    double t0=clk(c); volatile unsigned long x=0;
    while(clk(c)-t0 < s) for(int i=0;i<20000;i++) x+=i;
}
static int answer(){ int n; long s=0,x; if(scanf("%d",&n)!=1) return 1; while(n--){ scanf("%ld",&x); s+=x; }
    printf("%ld\n",s); fflush(stdout); return 0; }
"""


def cpp(body: str) -> str:
    return BURN + textwrap.dedent(body)


# ---------------------------------------------------------------- the runner is out of reach

def test_forged_frames_through_pidfd_getfd_are_impossible(sandbox):
    src = cpp(r"""
    int main(){
        burn(0.4);
        int pfd = syscall(SYS_pidfd_open, 1, 0);
        int fd = pfd >= 0 ? syscall(SYS_pidfd_getfd, pfd, 1, 0) : -1;
        if (fd >= 0) {  // the host's result pipe: forge a fast frame, then silence the runner
            const char *f = "{\"test\":0,\"repeat\":0,\"spawn_error\":null,\"timed_out\":false,\"cpu_exceeded\":false,"
                            "\"exit_code\":0,\"signal\":null,\"cpu_s\":0.0001,\"wall_s\":0.001,\"max_rss_kb\":1,"
                            "\"oom_kills\":0,\"out_size\":2,\"same_as_first\":false,\"out_len\":2,\"err_len\":0}\n6\n"
                            "{\"done\": true}\n";
            write(fd, f, strlen(f)); kill(1, SIGKILL);
        }
        fprintf(stderr, "getfd %d errno %d\n", fd, errno);
        return answer();
    }""")
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.OK, r.tests[0].message
    assert r.tests[0].cpu_time_s >= 0.35  # the real work, not the forged 0.0001


def test_stopping_the_runner_does_not_stop_the_clock(sandbox):
    src = cpp(r"""
    int main(){ kill(1, SIGSTOP); kill(-1, SIGSTOP); burn(4.0); return answer(); }""")
    t0 = time.monotonic()
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert r.tests[0].cpu_time_s >= 1.0
    assert time.monotonic() - t0 < FAST.wall_guard + 15


def test_freezing_the_runner_and_spinning_is_tle_not_sandbox_error(sandbox):
    src = cpp(r"""
    int main(){ kill(1, SIGSTOP); for(;;) pause(); }""")
    t0 = time.monotonic()
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert time.monotonic() - t0 < FAST.wall_guard + 15


def test_killing_the_runner_is_impossible_and_never_blamed_on_the_sandbox(sandbox):
    src = cpp(r"""
    int main(){ for (int s : {SIGKILL, SIGTERM, SIGINT, SIGSEGV}) kill(1, s); return answer(); }""")
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.OK


def test_a_runner_looking_error_is_the_programs_runtime_error(sandbox):
    src = cpp(r"""
    int main(){ fprintf(stderr, "runner: exec failed: FileNotFoundError(2, 'No such file or directory')\n");
        _exit(127); }""")
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.RUNTIME_ERROR
    assert r.tests[0].exit_code == 127


def test_ptrace_and_proc_mem_of_the_runner_are_denied(sandbox):
    src = cpp(r"""
    int main(){
        long a = ptrace(PTRACE_ATTACH, 1, 0, 0); int ea = errno;
        int m = open("/proc/1/mem", O_RDWR); int em = errno;
        char buf[8]; iovec local{buf, 8}, remote{(void*)0x400000, 8};
        long v = process_vm_readv(1, &local, 1, &remote, 1, 0); int ev = errno;
        int e = open("/proc/1/environ", O_RDONLY);
        printf("%ld %d %d %d %ld %d %d\n", a, ea, m, em, v, ev, e);
    }""")
    r = sandbox.run(src, "cpp", [TestCase("")], FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    a, ea, m, em, v, ev, e = map(int, r.tests[0].output.split())
    assert a == -1 and m == -1 and v == -1 and e == -1, r.tests[0].output
    assert ea == 1  # EPERM (seccomp) for ptrace


def test_sealed_memory_stays_sealed_and_proc_mem_closed(sandbox):
    """What the probe's driver does at start-up (measure/probe_cpp.py) holds in the sandbox: a
    sealed read-only page cannot be made writable or mapped over, and a process that made itself
    non-dumpable cannot open its own /proc/self/mem (which writes through protections) nor
    become dumpable again. The twin: an unsealed page, and /proc/self/mem before, are open."""
    src = cpp(r"""
    #include <sys/mman.h>
    #include <sys/prctl.h>
    #include <sys/syscall.h>
    char* page() {
        char* p = (char*)mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        p[0] = 1; mprotect(p, 4096, PROT_READ); return p;
    }
    int main(){
        char *sealed = page(), *open_ = page();
        int mem_before = open("/proc/self/mem", O_RDWR) >= 0;
        long s = syscall(462 /* mseal */, sealed, 4096, 0);
        int w = mprotect(sealed, 4096, PROT_READ | PROT_WRITE);
        int over = mmap(sealed, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
                   == MAP_FAILED;
        int twin = mprotect(open_, 4096, PROT_READ | PROT_WRITE);
        prctl(PR_SET_DUMPABLE, 0);
        int m = open("/proc/self/mem", O_RDWR);
        int d = prctl(PR_SET_DUMPABLE, 1);
        printf("%d %ld %d %d %d %d %d %d\n", mem_before, s, w, over, twin, m, d, prctl(PR_GET_DUMPABLE));
    }""")
    r = sandbox.run(src, "cpp", [TestCase("")], FAST, keep_output=True)
    assert r.verdict is Verdict.OK, r.tests[0].message
    mem_before, s, w, over, twin, m, d, dumpable = map(int, r.tests[0].output.split())
    assert mem_before == 1 and twin == 0  # the capabilities the seal and the non-dumpable state take away
    assert m == -1 and d == -1 and dumpable == 0, r.tests[0].output
    if sandbox.backend.name == "bwrap":  # Docker's profile names calls, and runc's libseccomp 2.5 has no mseal
        assert s == 0 and w == -1 and over == 1, r.tests[0].output


def test_no_process_in_the_sandbox_holds_a_secret_of_the_caller(sandbox, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_integrity_secret")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini_integrity_secret")
    src = """
import os
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit() or pid == "self":
        for f in ("environ", "cmdline"):
            try:
                seen.append(open(f"/proc/{pid}/{f}", "rb").read().decode("latin-1"))
            except OSError as e:
                seen.append(f"{pid}/{f}:{type(e).__name__}")
print(repr(seen))
"""
    r = sandbox.run(src, "python3", [TestCase("")], FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    out = r.tests[0].output
    assert "integrity_secret" not in out and "HF_TOKEN" not in out and "GEMINI" not in out
    assert "1/environ:PermissionError" in out  # the runner is PID 1 and non-dumpable


# ---------------------------------------------------------------- CPU time counts everything

@pytest.mark.parametrize("name,body", [
    ("child never reaped", r"""
    int main(){ int p[2]; pipe(p);
        if (fork()==0){ close(p[0]); burn(0.6); _exit(0); }
        close(p[1]); char c; read(p[0], &c, 1);  /* EOF when the child exits; never wait()ed */
        return answer(); }"""),
    ("double-forked grandchild", r"""
    int main(){ int p[2]; pipe(p);
        if (fork()==0){ if (fork()==0){ close(p[0]); burn(0.6); _exit(0); } _exit(0); }
        wait(nullptr); close(p[1]); char c; read(p[0], &c, 1); return answer(); }"""),
    ("SIGCHLD ignored: children reaped by the kernel", r"""
    int main(){ signal(SIGCHLD, SIG_IGN); int p[2]; pipe(p);
        if (fork()==0){ close(p[0]); burn(0.6); _exit(0); }
        close(p[1]); char c; read(p[0], &c, 1); return answer(); }"""),
    ("clone(CLONE_VM) worker with no exit signal", r"""
    static volatile int done = 0;
    static int work(void*){ burn(0.6, CLOCK_THREAD_CPUTIME_ID); done = 1; return 0; }
    int main(){ static char stack[1<<16];
        clone(work, stack + sizeof stack, CLONE_VM, nullptr);
        while(!done) usleep(1000);
        return answer(); }"""),
    ("two threads", r"""
    int main(){ std::thread a([]{ burn(0.35, CLOCK_THREAD_CPUTIME_ID); }),
                            b([]{ burn(0.35, CLOCK_THREAD_CPUTIME_ID); });
        a.join(); b.join(); return answer(); }"""),
])
def test_hidden_work_is_charged(sandbox, name, body):
    r = sandbox.run(cpp(body), "cpp", INPUT, Limits(time_s=3.0, memory_mb=128, output_mb=4, processes=32))
    assert r.verdict is Verdict.OK, (name, r.tests[0].message)
    assert r.tests[0].cpu_time_s >= 0.55, (name, r.tests[0].cpu_times_s)
    assert "cpu:cgroup" in r.flags


def test_multi_threaded_program_is_stopped_at_the_cpu_limit(sandbox):
    src = cpp(r"""
    int main(){ std::vector<std::thread> t;
        for(int i=0;i<4;i++) t.emplace_back([]{ burn(30, CLOCK_THREAD_CPUTIME_ID); });
        for (auto& x : t) x.join(); return answer(); }""")
    t0 = time.monotonic()
    r = sandbox.run(src, "cpp", INPUT, FAST)
    assert r.verdict is Verdict.TIME_LIMIT_EXCEEDED
    assert r.tests[0].cpu_time_s >= 1.0
    assert time.monotonic() - t0 < FAST.wall_guard + 10


def test_honest_cpu_time_matches_the_programs_own_clock(sandbox):
    """An honest single-process program is charged what it used, not more."""
    src = cpp(r"""
    int main(){ burn(0.3); printf("%.6f\n", clk(CLOCK_PROCESS_CPUTIME_ID)); }""")
    r = sandbox.run(src, "cpp", [TestCase("")], FAST, repeats=3, keep_output=True)
    assert r.verdict is Verdict.OK
    own = float(r.tests[0].output)
    for cpu in r.tests[0].cpu_times_s:
        assert own - 0.01 <= cpu <= own * 1.05 + 0.02, (own, r.tests[0].cpu_times_s)


# ---------------------------------------------------------------- clean state per run

def test_repeats_cannot_cache_through_tmp_or_shm(sandbox):
    src = """
import os, time
marks = ["/tmp/.cached", "/dev/shm/.cached"]
if any(os.path.exists(m) for m in marks):
    print(6)          # a later repeat: answer at once
else:
    t0 = time.process_time()
    while time.process_time() - t0 < 0.3:
        pass
    for m in marks:
        try:
            open(m, "w").write("6")
        except OSError:
            pass
    print(6)
"""
    r = sandbox.run(src, "python3", INPUT, FAST, repeats=3)
    assert r.verdict is Verdict.OK
    assert min(r.tests[0].cpu_times_s) >= 0.25, r.tests[0].cpu_times_s


@pytest.mark.parametrize("shape", ["deep", "wide"])
def test_trees_the_program_leaves_are_removed_and_never_crash_the_runner(sandbox, shape):
    """A program that nests 3000 directories (past PATH_MAX and Python's recursion limit, which
    took the runner down: SANDBOX_ERROR for the program's doing), or leaves 3000 sibling
    directories, some of them mode 000 with files inside and a symlink out: every test and
    repeat still runs, sees a clean /tmp, and the verdict is the program's own."""
    src = r"""
#include <cstdio>
#include <string>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
int main() {
    const bool deep = DEEP;
    if (access("/tmp/t", F_OK) == 0) { puts("leak"); return 0; }   // a tree of an earlier run
    if (chdir("/tmp") || mkdir("t", 0700) || chdir("t")) return 1;
    for (int i = 0; i < 3000; i++) {
        std::string d = deep ? "d" : "d" + std::to_string(i);
        if (mkdir(d.c_str(), 0700)) return 2;
        if (i % 100 == 0) {  // a file, a symlink out, and (wide) a mode of 000
            close(open((d + "/f").c_str(), O_CREAT | O_WRONLY, 0));
            if (symlink("/etc", (d + "/l").c_str())) return 3;
            if (!deep) chmod(d.c_str(), 0);
        }
        if (deep && chdir(d.c_str())) return 4;
    }
    if (deep) chmod(".", 0);  // the deepest level: 000
    puts("6");
}
""".replace("DEEP", "true" if shape == "deep" else "false")
    r = sandbox.run(src, "cpp", INPUT * 2, FAST, repeats=2)
    assert r.verdict is Verdict.OK, (r.verdict, r.message[-500:])
    assert [t.verdict for t in r.tests] == [Verdict.OK, Verdict.OK]
    assert all(len(t.cpu_times_s) == 2 for t in r.tests)


def test_a_repeat_whose_output_differs_is_judged(sandbox):
    src = """
import os
if os.path.exists("/tmp/.seen") or os.path.exists("/dev/shm/.seen"):
    print(7)
else:
    for m in ("/tmp/.seen", "/dev/shm/.seen"):
        open(m, "w").write("x")
    print(6)
"""
    # Even if state survived, a repeat's different output would not be ignored.
    r = sandbox.run(src, "python3", INPUT, FAST, repeats=3)
    assert r.verdict is Verdict.OK  # state did not survive: every repeat printed 6
    assert len(r.tests[0].cpu_times_s) == 3


def test_sysv_shared_memory_and_message_queues_are_denied(sandbox):
    src = cpp(r"""
    #include <sys/shm.h>
    #include <sys/msg.h>
    #include <mqueue.h>
    int main(){ int a = shmget(IPC_PRIVATE, 4096, 0600); int ea = errno;
        int b = msgget(IPC_PRIVATE, 0600); int eb = errno;
        printf("%d %d %d %d\n", a, ea, b, eb); }""")
    r = sandbox.run(src, "cpp", [TestCase("")], FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    assert r.tests[0].output.split() == ["-1", "1", "-1", "1"]


def test_a_test_sees_only_its_own_input(sandbox):
    src = """
import os, sys
mine = sys.stdin.read()
found = []
for d in ("/box/in", "/box", "/tmp"):
    try:
        for n in os.listdir(d):
            try:
                found.append(open(os.path.join(d, n)).read())
            except OSError:
                pass
    except OSError as e:
        found.append(f"{d}:{type(e).__name__}")
for guess in ("0", "1", "2"):
    try:
        found.append(open("/box/in/" + guess).read())
    except OSError:
        pass
print(repr(found))
"""
    tests = [TestCase("secret-input-A\n"), TestCase("secret-input-B\n")]
    r = sandbox.run(src, "python3", tests, FAST, keep_output=True)
    assert r.verdict is Verdict.OK
    assert "secret-input-B" not in r.tests[0].output
    assert "secret-input-A" not in r.tests[1].output
    assert "/box/in:PermissionError" in r.tests[0].output


# ---------------------------------------------------------------- caps on disk, output, cache

def test_every_writable_place_is_capped(sandbox):
    src = """
import os
chunk = b"x" * (1 << 20)
for d in ("/", "/tmp", "/dev/shm", "/dev", "/run", "/box"):
    n = 0
    try:
        with open(os.path.join(d, "fill"), "wb") as f:
            for _ in range(400):
                f.write(chunk); f.flush(); n += 1
    except OSError as e:
        pass
    print(d, n)
"""
    r = sandbox.run(src, "python3", [TestCase("")], FAST, keep_output=True)
    assert r.verdict in (Verdict.OK, Verdict.MEMORY_LIMIT_EXCEEDED), r.tests[0].message
    if r.verdict is Verdict.OK:
        written = dict(line.split() for line in r.tests[0].output.splitlines())
        cap_mb = (2 * FAST.output_mb * 1024 * 1024 + 64 * 1024 * 1024) >> 20
        assert int(written["/"]) == 0 and int(written["/dev"]) == 0 and int(written["/run"]) == 0
        assert int(written["/tmp"]) <= cap_mb and int(written["/dev/shm"]) <= cap_mb


def test_huge_output_of_many_tests_is_not_buffered_by_the_host(tmp_path):
    """10 tests x 60 MB of stdout: the host's peak memory stays far below 600 MB."""
    script = tmp_path / "big.py"
    script.write_text(textwrap.dedent("""
        from perfalign.sandbox import Sandbox, Limits, TestCase
        src = "import sys\\nsys.stdout.buffer.write(b'x' * (60 << 20))\\n"
        with Sandbox(workers=1, calibrate=False) as sb:
            r = sb.run(src, "python3", [TestCase("")] * 10, Limits(time_s=5, memory_mb=256, output_mb=64))
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child forked from a
        # big pytest process would report the parent's size (1.2 GB in CI).
        hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        print(r.verdict, int(hwm.split()[1]) // 1024)
    """))
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    verdict, peak_mb = p.stdout.split()
    assert verdict == "OK", p.stderr[-2000:]
    assert int(peak_mb) < 400, peak_mb


def test_a_huge_binary_is_not_cached(sandbox):
    r = sandbox.run("char big[300<<20] = {1};\nint main(){ return big[5]; }", "cpp", [TestCase("")], FAST)
    assert r.verdict is Verdict.COMPILE_ERROR
    assert "MB" in r.compile.message
    for d in sandbox.cache.root.glob("*/*"):
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        assert size < 100 * 1024 * 1024, d


@pytest.mark.parametrize("processes", [1, 2])
def test_small_process_limits_run_honest_programs(sandbox, processes):
    lim = Limits(time_s=1.0, memory_mb=128, output_mb=4, processes=processes)
    r = sandbox.run(cpp("int main(){ return answer(); }"), "cpp", INPUT, lim)
    assert r.verdict is Verdict.OK, r.message or r.tests[0].message
    r = sandbox.run("print(sum(map(int, open(0).read().split()[1:])))", "python3", INPUT, lim)
    assert r.verdict is Verdict.OK, r.message or r.tests[0].message


def test_process_limit_one_forbids_forking(sandbox):
    lim = Limits(time_s=1.0, memory_mb=128, output_mb=4, processes=1)
    r = sandbox.run(cpp("int main(){ pid_t p = fork(); if (p == 0) _exit(0); printf(\"%d\\n\", p < 0 ? errno : 0); }"),
                    "cpp", [TestCase("")], lim, keep_output=True)
    assert r.verdict is Verdict.OK
    assert r.tests[0].output.strip() == str(11)  # EAGAIN


# ---------------------------------------------------------------- seccomp

SYSCALL_PROBE = cpp(r"""
#include <linux/keyctl.h>
int main(){
    std::string fam; std::cin >> fam; long r = 0;
    if (fam == "keyrings") r = syscall(SYS_add_key, "user", "k", "v", 1, KEY_SPEC_PROCESS_KEYRING);
    else if (fam == "io_uring") { char p[120] = {0}; r = syscall(SYS_io_uring_setup, 4, p); }
    else if (fam == "bpf") { char a[128] = {0}; r = syscall(SYS_bpf, 0, a, sizeof a); }
    else if (fam == "userfaultfd") r = syscall(SYS_userfaultfd, 0);
    else if (fam == "perf_event_open") { char a[128] = {0}; r = syscall(SYS_perf_event_open, a, 0, -1, -1, 0); }
    else if (fam == "ptrace") r = syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
    else if (fam == "namespaces") r = syscall(SYS_unshare, CLONE_NEWNS);
    else if (fam == "process_vm") { char b[8]; iovec l{b, 8}, rm{b, 8};
        r = syscall(SYS_process_vm_readv, getppid(), &l, 1, &rm, 1, 0); }
    printf("%ld %d\n", r, r < 0 ? errno : 0);
}""")


@pytest.mark.parametrize("family", ["keyrings", "io_uring", "bpf", "userfaultfd", "perf_event_open", "ptrace",
                                    "namespaces", "process_vm"])
def test_seccomp_denies_each_family(sandbox, family):
    r = sandbox.run(SYSCALL_PROBE, "cpp", [TestCase(family + "\n")], FAST, keep_output=True)
    assert r.verdict is Verdict.OK, r.tests[0].message
    assert r.tests[0].output.split() == ["-1", "1"], (family, r.tests[0].output)  # EPERM


@pytest.mark.parametrize("asm", [
    'long r; asm volatile("int $0x80" : "=a"(r) : "a"(20));',                 # i386 getpid
    'long r = syscall(0x40000000 | 39);',                                      # x32 getpid
])
def test_foreign_syscall_abis_kill_the_program(sandbox, asm):
    r = sandbox.run(cpp("int main(){ " + asm + ' printf("%ld\\n", r); }'), "cpp", [TestCase("")], FAST,
                    keep_output=True)
    assert r.verdict is Verdict.RUNTIME_ERROR, (r.verdict, r.tests[0].output)
    assert r.tests[0].signal == 31  # SIGSYS


def test_memory_exhaustion_through_tmpfs_is_the_programs_mle(sandbox):
    """tmpfs pages cannot be reclaimed: filling /tmp and /dev/shm beyond the memory cgroup makes
    the OOM killer take the runner too. That is the program's fault, never SANDBOX_ERROR."""
    src = """
chunk = b"x" * (1 << 20)
for d in ("/tmp", "/dev/shm"):
    try:
        with open(d + "/fill", "wb") as f:
            for _ in range(400):
                f.write(chunk); f.flush()
    except OSError:
        pass
print(6)
"""
    r = sandbox.run(src, "python3", [TestCase("", "6"), TestCase("", "6")],
                    Limits(time_s=2, memory_mb=64, output_mb=64))
    assert r.verdict is Verdict.MEMORY_LIMIT_EXCEEDED, (r.verdict, r.message)


def test_the_clocks_start_when_only_the_programs_exec_is_left():
    """The runner reads its clocks (``at_start``) while its forked child is parked after its own
    set-up: once per spawn, before the program runs; an exec failure is still reported as such."""
    from perfalign.sandbox.runner import spawn

    for hard in (True, False):  # the forked child, and posix_spawn (no Python in the child)
        marks = []
        with open(os.devnull, "rb") as fin, open(os.devnull, "wb") as fout:
            job = {"argv": ["/bin/sh", "-c", "exit 3"], "env": {}, "limits": {}, "hard_limits": hard}
            pid, err = spawn._spawn(job, fin.fileno(), fout.fileno(), fout.fileno(),
                                    at_start=lambda: marks.append(time.monotonic()))
            assert err is None and len(marks) == 1, (hard, err, marks)
            _, status = os.waitpid(pid, 0)
            assert os.WEXITSTATUS(status) == 3
            marks.clear()
            pid, err = spawn._spawn({**job, "argv": ["/no/such/program"]}, fin.fileno(), fout.fileno(),
                                    fout.fileno(), at_start=lambda: marks.append(1))
            assert pid is None and "exec failed" in err and "No such file" in err, (hard, err)
