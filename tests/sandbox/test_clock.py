"""The deterministic clocks (sandbox/clock.py): exact, and not for sale.

Each hostile program has an honest twin. A hostile program must either fail (its answer is
checked on the run that is counted) or be counted at least like its twin. Its trick is first
shown to work where it is not caught (the cpu clock), so a pass here is not a broken cheat.
valgrind must be installed (scripts/setup.sh): these tests fail, never skip, without it.
"""
import os
import time
from pathlib import Path

import pytest
from clock_programs import counts_agree, faults_apart

from perfalign.sandbox import Job, Limits, Sandbox, TestCase, Verdict
from perfalign.sandbox import clock as clk

LIM = Limits(time_s=2.0, memory_mb=256, output_mb=4, processes=32)
N = 2_000_000
INPUT = f"{N}\n"
ANSWER = f"{sum(i * i % 1000003 for i in range(N))}\n"
PY_N = 60_000
PY_INPUT = f"{PY_N}\n"
PY_ANSWER = f"{sum(i * i % 1000003 for i in range(PY_N))}\n"

# The honest C++ program and the template of its hostile twins: DETECT decides whether valgrind
# is watching; the cheat then does half the work (a wrong answer), or does the work elsewhere.
CPP = r"""
#include <bits/stdc++.h>
#include <unistd.h>
#include <sys/wait.h>
#include <spawn.h>
#include <signal.h>
%(headers)s
static unsigned long work(long from, long to){
  unsigned long s=0; for(long i=from;i<to;i++) s+=(unsigned long)(i*i%%1000003); return s; }
static bool detect(){ %(detect)s }
int main(int argc, char** argv){
  if(argc>1){ printf("%%lu\n", work(0, atol(argv[1]))); return 0; }  // a copy started by the program
  long n; if(scanf("%%ld",&n)!=1) return 1;
  %(body)s
}
"""
HONEST_BODY = 'printf("%lu\\n", work(0, n)); return 0;'
SKIP_BODY = 'long m = detect() ? n/2 : n; printf("%lu\\n", work(0, m)); return 0;'


def cpp(detect="return false;", body=HONEST_BODY, headers=""):
    return CPP % {"detect": detect, "body": body, "headers": headers}


HONEST_CPP = cpp()
DETECTORS = {
    "proc_maps": ('std::ifstream f("/proc/self/maps"); std::string l; while(std::getline(f,l)) '
                  'if(l.find("vgpreload")!=std::string::npos||l.find("valgrind")!=std::string::npos) return true; '
                  'return false;'),
    "environment": ('const char* p=getenv("LD_PRELOAD"); return (p&&strstr(p,"vgpreload"))||getenv("VALGRIND_LAUNCHER")'
                    '||getenv("VALGRIND_LIB");'),
    # valgrind's start-up: the process has used ~0.4 s of CPU before main, natively ~1 ms
    "timing": ('timespec a; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&a); return a.tv_sec*1e3+a.tv_nsec/1e6 > 100.0;'),
}

HONEST_PY = "n=int(input())\ns=0\nfor i in range(n): s+=i*i%1000003\nprint(s)\n"
PY_SKIP = ("import os,time\n{detect}\nn=int(input())\nm=n//2 if vg else n\ns=0\n"
           "for i in range(m): s+=i*i%1000003\nprint(s)\n")
PY_DETECTORS = {
    "proc_maps": "vg=any('vgpreload' in l or 'valgrind' in l for l in open('/proc/self/maps'))",
    "environment": "vg='vgpreload' in os.environ.get('LD_PRELOAD','') or 'VALGRIND_LAUNCHER' in os.environ",
    "timing": "vg=time.process_time()>0.8",  # CPython's start-up: ~30 ms natively, ~2.5 s under valgrind
}


@pytest.fixture(scope="module")
def sb():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()  # fail clearly: setup.sh installs it
    with Sandbox(backend="bwrap", workers=1, calibrate=False) as s:
        yield s


def run(sb, src, lang="cpp", clock="instructions", inp=INPUT, expected=ANSWER, repeats=1, **kw):
    return sb.run_job(Job(src, lang, [TestCase(inp, expected)], LIM, repeats=repeats, clock=clock, **kw))


@pytest.fixture(scope="module")
def honest(sb):
    r = run(sb, HONEST_CPP)
    assert r.ok, r.tests[0].message if r.tests else r.message
    return r.tests[0].instructions


@pytest.fixture(scope="module")
def honest_py(sb):
    r = run(sb, HONEST_PY, "python3", inp=PY_INPUT, expected=PY_ANSWER)
    assert r.ok, r.tests[0].message if r.tests else r.message
    return r.tests[0].instructions


def assert_no_gain(r, honest_count):
    """Failed, or counted at least like the honest twin (a few % of set-up noise)."""
    t = r.tests[0] if r.tests else None
    assert not r.ok or (t.instructions is not None and t.instructions >= 0.95 * honest_count), \
        (r.verdict, t and t.instructions, honest_count)


# ---------------------------------------------------------------------------- the clock itself

def test_valgrind_is_installed():
    assert clk.valgrind_missing() is None, clk.valgrind_missing()


def test_instructions_are_exact_over_repeats_and_runs(sb, honest):
    a = run(sb, HONEST_CPP, repeats=3)
    b = run(sb, HONEST_CPP, repeats=1)
    assert a.ok and b.ok and "clock:instructions" in a.flags and a.clock == "instructions"
    # equal but for the host's reclaim (clock_programs.counts_agree): not a timing test
    assert all(counts_agree(c, honest) for c in a.tests[0].instructions_runs), \
        faults_apart(a.tests[0].instructions_runs, honest)
    assert counts_agree(b.tests[0].instructions, honest), faults_apart([b.tests[0].instructions], honest)
    assert honest > 10 * N  # the loop is really counted (about 10+ instructions per iteration)


def test_python_instructions_are_exact(sb, honest_py):
    r = run(sb, HONEST_PY, "python3", inp=PY_INPUT, expected=PY_ANSWER, repeats=3)
    assert r.ok and all(counts_agree(c, honest_py) for c in r.tests[0].instructions_runs), \
        faults_apart(r.tests[0].instructions_runs, honest_py)


def test_counts_do_not_move_with_the_page_cache(sb, honest):
    """A file page's fault costs what the page cache holds: the kernel's fault-around maps a page's
    cached neighbours but skips any another process holds locked (reclaim, the writeback of a freshly
    written binary), so the program faults on them later or not. perfcount reads the program's file
    pages in itself, outside the count, at a fixed price (perfcount.c, "File pages"): a fresh build
    each run, its libraries' unmapped pages dropped from the page cache before it, counts the same
    (but for the host's reclaim: clock_programs.counts_agree)."""
    libs = [p for p in Path("/lib/x86_64-linux-gnu").glob("lib*.so.*")
            if p.name.split(".so")[0] in ("libstdc++", "libm", "libgcc_s", "libc")]
    for i in range(2):
        for lib in libs:
            with open(lib, "rb") as f:
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        r = run(sb, f"{HONEST_CPP}\n// a fresh build: {i} {time.time_ns()}\n", repeats=2)
        assert r.ok and all(counts_agree(c, honest) for c in r.tests[0].instructions_runs), \
            faults_apart(r.tests[0].instructions_runs, honest)


def test_cycles_add_cache_misses(sb, honest):
    r = run(sb, HONEST_CPP, clock="cycles", repeats=2)
    assert r.ok and "clock:cycles" in r.flags
    t = r.tests[0]
    assert counts_agree(*t.instructions_runs) and counts_agree(*t.cycles_runs, whole=False), \
        (t.instructions_runs, t.cycles_runs)
    # the same instructions; the priced page faults differ by a few (the cache simulation's
    # larger translations move what valgrind's code cache shares a page with)
    assert abs(t.instructions - honest) < 0.02 * honest
    assert t.cycles > t.instructions  # start-up misses at least


def test_more_work_counts_more(sb, honest):
    r = run(sb, HONEST_CPP, inp=f"{2 * N}\n", expected=None)
    assert r.ok and 1.8 * honest < r.tests[0].instructions < 2.2 * honest


def test_cpu_clock_is_unchanged(sb):
    r = run(sb, HONEST_CPP, clock="cpu")
    assert r.ok and "clock:cpu" in r.flags and r.tests[0].instructions is None and r.tests[0].cpu_time_s > 0


def test_wrong_answer_stays_wrong(sb):
    r = run(sb, HONEST_CPP, expected="42\n")
    assert r.verdict is Verdict.WRONG_ANSWER


def test_job_refuses_unknown_clock():
    with pytest.raises(ValueError, match="clock must be one of"):
        Job("", "cpp", clock="wall")


@pytest.mark.parametrize("lang,src,kw,flag", [
    ("java", "public class Main { public static void main(String[] a) { System.out.println(1); } }", {},
     "clock_fallback:java_jit"),
    ("cpp", "#include <cstdio>\nint main(){puts(\"1\");}", {"compile_flags": ("-fopenmp",)}, "clock_fallback:openmp"),
])
def test_where_it_does_not_apply_it_falls_back_with_a_flag(sb, lang, src, kw, flag):
    r = sb.run_job(Job(src, lang, [TestCase("", "1\n")], LIM, clock="instructions", **kw))
    assert r.ok and flag in r.flags and "clock:cpu" in r.flags
    assert r.tests[0].instructions is None and r.tests[0].cpu_time_s is not None


# ---------------------------------------------------------------------------- detecting valgrind

@pytest.mark.parametrize("name", sorted(DETECTORS))
def test_cpp_that_detects_valgrind_and_skips_work_fails(sb, honest, name):
    src = cpp(DETECTORS[name], SKIP_BODY)
    assert run(sb, src, clock="cpu").ok  # natively it sees nothing and does the work
    r = run(sb, src)
    assert r.verdict is Verdict.WRONG_ANSWER, (name, r.verdict)  # it did see valgrind: half the work
    assert_no_gain(r, honest)


@pytest.mark.parametrize("name", sorted(PY_DETECTORS))
def test_python_that_detects_valgrind_and_skips_work_fails(sb, honest_py, name):
    src = PY_SKIP.format(detect=PY_DETECTORS[name])
    assert run(sb, src, "python3", clock="cpu", inp=PY_INPUT, expected=PY_ANSWER).ok
    r = run(sb, src, "python3", inp=PY_INPUT, expected=PY_ANSWER)
    assert r.verdict is Verdict.WRONG_ANSWER, (name, r.verdict)
    assert_no_gain(r, honest_py)


CLIENT_REQUESTS = {
    "running_on_valgrind": "return RUNNING_ON_VALGRIND;",
    # the magic sequence by hand, no header: rol rdi 3,13,61,51; xchg rbx,rbx (RUNNING_ON_VALGRIND = 0x1001)
    "hand_written_magic": ('unsigned long args[6]={0x1001,0,0,0,0,0}, res=0; __asm__ volatile("rolq $3,%%rdi; '
                           'rolq $13,%%rdi; rolq $61,%%rdi; rolq $51,%%rdi; xchgq %%rbx,%%rbx" : "=d"(res) : '
                           '"a"(&args[0]), "0"(0UL) : "cc","memory"); return res!=0;'),
}


IGNORED = "valgrind_client_requests_ignored"


@pytest.mark.parametrize("name", sorted(CLIENT_REQUESTS))
def test_client_requests_answer_as_on_the_real_cpu(sb, honest, name):
    """perfcount drops every client request: RUNNING_ON_VALGRIND is 0, as natively, so the
    program does all its work, counted; the attempt is flagged."""
    src = cpp(CLIENT_REQUESTS[name], SKIP_BODY, headers="#include <valgrind/valgrind.h>")
    assert run(sb, src, clock="cpu").ok  # natively the request answers 0
    r = run(sb, src)
    assert r.ok and IGNORED in r.flags, (r.verdict, r.flags)
    assert r.tests[0].instructions >= 0.95 * honest


def test_client_requests_that_forge_or_discard_do_nothing(sb, honest):
    # natively every request answers 0: the program then does the work itself
    body = ('VALGRIND_DISCARD_TRANSLATIONS((void*)&work, 4096); '
            'VALGRIND_PRINTF("\\n==%d== perfcount: Ir 5 I1mr 0 ILmr 0 D1mr 0 D1mw 0 DLmr 0 DLmw 0 clreq 0 "'
            '"kbytes 0 wextra 0 faults 0 repbytes 0 repstarts 0 D1s 0 DLs 0\\n", (int)getpid()); '
            'unsigned long s = RUNNING_ON_VALGRIND ? VALGRIND_NON_SIMD_CALL2(native_work, 0, n) : work(0, n); '
            'printf("%lu\\n", s); return 0;')
    headers = ("#include <valgrind/valgrind.h>\n"
               "static unsigned long native_work(long, long from, long to);")
    src = cpp(body=body, headers=headers) + (
        "static unsigned long native_work(long, long from, long to){ return work(from, to); }\n")
    assert run(sb, src, clock="cpu").ok
    r = run(sb, src)
    assert r.ok and IGNORED in r.flags
    assert r.tests[0].instructions >= 0.95 * honest


# VALGRIND_NON_SIMD_CALL1 (0x1102) of a compiled function, from a trampoline decoded at run time
# (XOR'd in the binary: no file holds the preamble). Natively the sequence is a no-op answering
# its default (0) and the program does the work; under a stock tool (cachegrind) the function runs
# on the real CPU, uncounted.
CPP_RUNTIME_CALL = r"""
#include <cstdio>
#include <sys/mman.h>
static unsigned long work(long from, long to){
  unsigned long s=0; for(long i=from;i<to;i++) s+=(unsigned long)(i*i%1000003); return s; }
static unsigned long native_work(long, long n){ return work(0, n); }
int main(){
  long n; if(scanf("%ld",&n)!=1) return 1;
  // mov rax,rdi; mov rdx,rsi; rol rdi 3,13,61,51; xchg rbx,rbx; mov rax,rdx; ret -- each byte ^ 0x5a
  static const unsigned char t[] = {0x12,0xd3,0xa2, 0x12,0xd3,0xa8, 0x12,0x9b,0x9d,0x59, 0x12,0x9b,0x9d,0x57,
                                    0x12,0x9b,0x9d,0x67, 0x12,0x9b,0x9d,0x69, 0x12,0xdd,0x81, 0x12,0xd3,0x8a, 0x99};
  unsigned char* m = (unsigned char*)mmap(0, 4096, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 2;
  for (unsigned i = 0; i < sizeof t; i++) m[i] = t[i] ^ 0x5a;
  unsigned long args[6] = {0x1102, (unsigned long)&native_work, (unsigned long)n, 0, 0, 0};
  unsigned long s = ((unsigned long(*)(unsigned long*, unsigned long))m)(args, 0);
  if (s == 0) s = work(0, n);
  printf("%lu\n", s);
  return 0;
}
"""


def test_client_call_built_at_run_time_gains_nothing(sb, honest, tmp_path):
    import subprocess

    exe = tmp_path / "a.out"
    subprocess.run(["g++", "-O2", "-x", "c++", "-", "-o", str(exe)], input=CPP_RUNTIME_CALL, text=True, check=True)
    stock = subprocess.run([clk.valgrind_binary(), "--tool=cachegrind", "--cache-sim=no",
                            "--cachegrind-out-file=/dev/null", str(exe)],
                           input=INPUT, capture_output=True, text=True, timeout=120)
    stock_ir = int(stock.stderr.split("I   refs:")[1].split()[0].replace(",", ""))
    assert stock.stdout == ANSWER and stock_ir < honest / 10  # the hole is real under a stock tool
    assert run(sb, CPP_RUNTIME_CALL, clock="cpu").ok  # natively: a no-op, the program does the work
    r = run(sb, CPP_RUNTIME_CALL)
    twin = run(sb, CPP_RUNTIME_CALL.replace("((unsigned long(*)(unsigned long*, unsigned long))m)(args, 0)", "0"))
    assert r.ok and IGNORED in r.flags and twin.ok and IGNORED not in twin.flags
    assert r.tests[0].instructions >= 0.99 * twin.tests[0].instructions  # its honest twin: the same work


# A client request from code made at run time (no preamble in any file): VALGRIND_PRINTF_VALIST_BY_REF
# (0x1403) forging a summary line. Python builds the machine code with ctypes in an executable mapping.
PY_FORGE = r"""
import ctypes, mmap, os
code = bytes.fromhex("4889f8" "4889f2" "48c1c70348c1c70d48c1c73d48c1c733" "4887db" "4889d0" "c3")
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
fn = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
fmt = ctypes.create_string_buffer(b"\n==%d== perfcount: Ir 5 I1mr 0 ILmr 0 D1mr 0 D1mw 0 DLmr 0 DLmw 0 clreq 0 "
                                 b"kbytes 0 wextra 0 faults 0 repbytes 0 repstarts 0 D1s 0 DLs 0\n==%d== Command: x\n"
                                 % (os.getpid(), os.getpid()))
args = (ctypes.c_ulong * 6)(0x1403, ctypes.addressof(fmt), 0, 0, 0, 0)
fn(ctypes.addressof(args), 0)
n=int(input())
s=0
for i in range(n): s+=i*i%1000003
print(s)
"""


def test_forged_log_lines_from_run_time_code_count_nothing(sb, honest_py):
    r = run(sb, PY_FORGE, "python3", inp=PY_INPUT, expected=PY_ANSWER)
    assert r.ok, r.tests[0].message
    assert r.tests[0].instructions >= 0.95 * honest_py  # the request was dropped: nothing reached the log
    assert IGNORED in r.flags


# A client call (VALGRIND_NON_SIMD_CALL1, 0x1102) from code made at run time: the function runs on
# the real CPU, uncounted, and no file holds the preamble for the static check to find.
PY_NATIVE = r"""
import ctypes, mmap
tramp = bytes.fromhex("4889f8" "4889f2" "48c1c70348c1c70d48c1c73d48c1c733" "4887db" "4889d0" "c3")
# f(tid, n): sum of 1..n
loop = bytes.fromhex("31c0" "4885f6" "7408" "4801f0" "48ffce" "75f8" "c3")
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(tramp + b"\x90" * (64 - len(tramp)) + loop)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
fn = ctypes.CFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong)(base)
n = int(input())
args = (ctypes.c_ulong * 6)(0x1102, base + 64, n, 0, 0, 0)
s = fn(ctypes.addressof(args), 0)
if s == 0:
    for i in range(1, n + 1): s += i
print(s)
"""
PY_SUM = "n=int(input())\ns=0\nfor i in range(1,n+1): s+=i\nprint(s)\n"


def test_python_client_call_from_run_time_code_gains_nothing(sb):
    expected = f"{PY_N * (PY_N + 1) // 2}\n"
    honest = run(sb, PY_SUM, "python3", inp=PY_INPUT, expected=expected)
    assert honest.ok and run(sb, PY_NATIVE, "python3", clock="cpu", inp=PY_INPUT, expected=expected).ok
    r = run(sb, PY_NATIVE, "python3", inp=PY_INPUT, expected=expected)
    assert r.ok and IGNORED in r.flags
    assert r.tests[0].instructions >= 0.95 * honest.tests[0].instructions


def test_program_output_cannot_forge_the_count(sb, honest):
    body = 'fprintf(stderr, "==%d== I   refs:      5\\n", (int)getpid()); printf("%lu\\n", work(0, n)); return 0;'
    r = run(sb, cpp(body=body))
    assert r.ok and r.tests[0].instructions >= 0.99 * honest  # another binary: a page fault more or less


# ---------------------------------------------------------------------------- hiding work elsewhere

WORK_ELSEWHERE = {
    # compute, answer, then exec a trivial program: the pre-exec count would be lost
    "exec_after_work": 'printf("%lu\\n", work(0, n)); fflush(stdout); execl("/bin/true", "true", (char*)0); return 0;',
    # the work in a re-exec'd copy of itself
    "exec_self": ('char b[32]; snprintf(b,32,"%ld",n); execl("/proc/self/exe", "x", b, (char*)0); return 9;'),
    # the work in a shell's child (exec of a program valgrind may not follow)
    "exec_shell": ('printf("%lu\\n", work(0, n)); fflush(stdout); execl("/bin/sh","sh","-c","exit 0",(char*)0); '
                   'return 9;'),
    # fork: the child works and answers, the parent kills it before its summary
    "fork_and_kill": ('int fd[2]; if(pipe(fd)) return 2; pid_t p=fork(); if(p<0) return 3; if(p==0){ '
                      'printf("%lu\\n", work(0, n)); fflush(stdout); close(fd[1]); for(;;) sleep(100); } '
                      'close(fd[1]); char c; read(fd[0],&c,1); kill(p,SIGKILL); waitpid(p,0,0); return 0;'),
    "vfork_exec": ('pid_t p=vfork(); if(p<0) return 3; if(p==0){ execl("/proc/self/exe","x","1",(char*)0); _exit(1);} '
                   'waitpid(p,0,0); printf("%lu\\n", work(0, n)); return 0;'),
    "posix_spawn": ('char b[32]; snprintf(b,32,"%ld",n); char* av[]={(char*)"x", b, 0}; pid_t p; '
                    'if(posix_spawn(&p,"/proc/self/exe",0,0,av,environ)) return 4;'
                    'int st; waitpid(p,&st,0); return 0;'),
    "system": ('fflush(stdout); return system("exit 0") == 0 ? (printf("%lu\\n", work(0, n)), 0) : 5;'),
    # outlive the program: a daemon child answering after the parent has exited
    "daemon_child": ('if(fork()==0){ printf("%lu\\n", work(0, n)); fflush(stdout); _exit(0);} return 0;'),
}


@pytest.mark.parametrize("name", sorted(WORK_ELSEWHERE))
def test_work_hidden_in_other_processes_is_counted_or_fails(sb, honest, name):
    r = run(sb, cpp(body=WORK_ELSEWHERE[name]))
    assert_no_gain(r, honest)
    if name in ("exec_after_work", "exec_self", "fork_and_kill", "posix_spawn"):
        assert run(sb, cpp(body=WORK_ELSEWHERE[name]), clock="cpu").ok, name  # the trick itself works
        assert not r.ok, name


def test_work_in_a_thread_is_counted(sb, honest):
    body = 'unsigned long s=0; std::thread t([&]{ s=work(0, n); }); t.join(); printf("%lu\\n", s); return 0;'
    r = run(sb, cpp(body=body))
    assert r.ok, r.tests[0].message
    assert r.tests[0].instructions >= 0.95 * honest


def test_work_split_over_threads_is_counted(sb, honest):
    body = ('unsigned long a=0,b=0; std::thread t([&]{ a=work(0, n/2); }); b=work(n/2, n); t.join(); '
            'printf("%lu\\n", a+b); return 0;')
    r = run(sb, cpp(body=body))
    assert r.ok and r.tests[0].instructions >= 0.95 * honest


def test_python_subprocess_is_refused(sb, honest_py):
    src = ("import subprocess,sys\nn=int(input())\n"
           "print(subprocess.run([sys.executable,'-c','print(sum(i*i%%1000003 for i in range(%d)))'%n],"
           "capture_output=True,text=True).stdout,end='')\n")
    assert run(sb, src, "python3", clock="cpu", inp=PY_INPUT, expected=PY_ANSWER).ok
    r = run(sb, src, "python3", inp=PY_INPUT, expected=PY_ANSWER)
    assert not r.ok
    assert_no_gain(r, honest_py)


# ---------------------------------------------------------------------------- the log parser

def _summary(pid, ir, clreq=0):
    return (f"=={pid}== perfcount: Ir {ir} I1mr 3 ILmr 1 D1mr 4 D1mw 5 DLmr 2 DLmw 0 clreq {clreq} kbytes 7 "
            "wextra 0 faults 0 repbytes 0 repstarts 0 D1s 0 DLs 0")


def _log(pid, ir, commands=1, extra=""):
    lines = [f"=={pid}== Command: /box/prog/prog"] * commands + [_summary(pid, ir)]
    return "\n".join(lines) + extra


def test_parse_log_reads_the_program_summary():
    c, why = clk.parse_log(_log(2, 1234567), 2)
    assert why == "" and c == clk.Counts(1234567, l1_misses=3 + 4 + 5, ll_misses=1 + 2 + 0, client_requests=0)
    c, _ = clk.parse_log("==2== Command: x\n" + _summary(2, 10, clreq=4), 2)
    assert c.client_requests == 4


@pytest.mark.parametrize("text,pid,fragment", [
    (_log(2, 100, commands=2), 2, "may not exec"),
    (_log(2, 100) + "\n" + _summary(2, 5), 2, "two instruction-count summaries"),
    ("==2== Command: /box/prog/prog", 2, "without valgrind's instruction-count summary"),
    (_log(3, 100), 2, "did not start the program"),
    (_log(2, 100) + "\n" + _summary(7, 5), 2, "without valgrind's instruction-count summary"),
    ("==2== Command: x\n==2== perfcount: sealed: mprotect on a sealed mapping", 2, "memory it had sealed (mprotect"),
])
def test_parse_log_refuses_incomplete_counts(text, pid, fragment):
    c, why = clk.parse_log(text, pid)
    assert c is None and fragment in why


def test_parse_log_reads_only_valgrinds_own_lines():
    c, _ = clk.parse_log(_log(2, 1000) + "\n**2** " + _summary(2, 5), 2)
    assert c.instructions == 1000


def test_cycles_model_is_one_function():
    c = clk.Counts(1000, l1_misses=10, ll_misses=2)
    assert clk.cycles(c) == 1000 + clk.CYCLE_WEIGHTS["L1"] * 10 + clk.CYCLE_WEIGHTS["LL"] * 2


# ---------------------------------------------------------------------------- labels carry their clock

def test_build_settings_key_the_clock_and_keep_old_keys():
    from perfalign.perfdata.perf import BuildSettings

    cpu, ins = BuildSettings(), BuildSettings(clock="instructions")
    assert cpu.settings_hash != ins.settings_hash != BuildSettings(clock="cycles").settings_hash
    import hashlib
    import json
    from dataclasses import asdict

    old = {**asdict(cpu), "backend": "auto"}  # the hash of a cpu build is the one from before the clock existed
    old.pop("batch_size"), old.pop("clock"), old.pop("limit_cap")  # the cap is not in the key either
    assert cpu.settings_hash == hashlib.sha256(json.dumps(old, sort_keys=True).encode()).hexdigest()[:12]
    with pytest.raises(ValueError, match="clock must be one of"):
        BuildSettings(clock="wall")


def test_a_dataset_never_mixes_clocks(tmp_path):
    import pyarrow as pa

    from perfalign.perfdata import shards
    from perfalign.perfdata.perf_plan import ClockMismatch, check_same_clock
    from perfalign.perfdata.schema import arrow_schema, conform

    check_same_clock(tmp_path, "instructions")  # empty: anything goes
    legacy = conform(pa.table({"submission_key": ["a"], "split": ["train"]}), "submissions")  # clock null: cpu
    shards.write_shard(tmp_path, "submissions", "s1", legacy, arrow_schema("submissions"), "train")
    check_same_clock(tmp_path, "cpu")
    with pytest.raises(ClockMismatch, match="never mixes clocks"):
        check_same_clock(tmp_path, "instructions")


# ---------------------------------------------------------------------------- work done by the kernel

# 2000 copies of 64 KB: with memcpy (counted), or written into a pipe and read back (the kernel copies)
KERNEL_COPY = r"""
#include <cstdio>
#include <cstring>
#include <vector>
#include <unistd.h>
int main(){ int mode; if(scanf("%d",&mode)!=1) return 1;
  const size_t n = 1<<16; std::vector<char> a(n), b(n); for(size_t i=0;i<n;i++) a[i]=(char)(i*7);
  int fd[2]; if(pipe(fd)) return 2;
  unsigned long s=0;
  for(int r=0;r<2000;r++){ a[r%n]^=1;
    if(mode==0) memcpy(b.data(), a.data(), n);
    else for(size_t w=0;w<n;){ ssize_t k=write(fd[1], a.data()+w, n-w); if(k<=0) return 3;
      for(ssize_t got=0; got<k;){ ssize_t q=read(fd[0], b.data()+w+got, k-got); if(q<=0) return 4; got+=q; } w+=k; }
    s+=(unsigned char)b[(r*131)%n]; }
  printf("%lu\n", s); return 0; }
"""


def test_copies_made_by_the_kernel_gain_nothing(sb):
    """Unpriced, the pipe round trip counted 2,146,198 instructions against memcpy's 133,075,722:
    perfcount now charges each byte a system call moves like the C library's copy."""
    honest = run(sb, KERNEL_COPY, inp="0\n", expected=None, keep_output=True)
    assert honest.ok and honest.tests[0].output
    piped = run(sb, KERNEL_COPY, inp="1\n", expected=honest.tests[0].output)
    assert piped.ok  # the same answer
    assert piped.tests[0].instructions >= honest.tests[0].instructions  # each byte crosses twice


def test_every_allowed_call_that_moves_data_is_priced():
    """By capability: every byte of the program's memory a call reads or fills is priced through
    valgrind's own pre-call read checks and post-call write marks (no list of calls). Calls that move
    data between two files without touching the program's memory must be on perfcount's short list."""
    import re

    from perfalign.sandbox import perfcount, seccomp

    src = perfcount.SOURCE.read_text()
    assert "VG_(track_pre_mem_read)(pc_pre_mem_read)" in src and "VG_(track_post_mem_write)(pc_post_mem_write)" in src
    hook = src[src.index("static void pc_post_syscall"):]
    priced = set(re.findall(r"case __NR_(\w+):", hook[:hook.index("default:")]))
    allowed = seccomp.allowed_names() | set(seccomp.ARGUMENTS)
    file_to_file = {n for n in allowed if n in ("splice", "tee", "sendfile", "copy_file_range")}
    assert file_to_file <= priced, file_to_file - priced


# ---------------------------------------------------------------------------- sealed memory
# valgrind has no mseal: perfcount keeps the program's seals (perfcount.c) and ends a run that
# would make a sealed page writable again. The honest twin does the same on the unsealed page.
SEAL_BODY = ('long pg=sysconf(_SC_PAGESIZE); char* p=(char*)mmap(0,2*pg,PROT_READ,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);'
             'syscall(462,p,pg,0); if(mprotect(p+%s,pg,PROT_READ|PROT_WRITE)==0) p[%s]=1;'
             'printf("%%lu\\n", work(0, n)); return 0;')


@pytest.mark.parametrize("clock", clk.DETERMINISTIC)
def test_a_sealed_page_stays_sealed_under_a_count(sb, honest, clock):
    heads = "#include <sys/mman.h>\n#include <sys/syscall.h>"
    twin = run(sb, cpp(body=SEAL_BODY % ("pg", "pg"), headers=heads), clock=clock)
    assert twin.ok and twin.tests[0].instructions >= 0.95 * honest, twin.tests[0].message
    hostile = cpp(body=SEAL_BODY % ("0", "0"), headers=heads)
    assert run(sb, hostile, clock="cpu").ok  # natively the kernel refuses the mprotect (EPERM)
    r = run(sb, hostile, clock=clock)
    assert r.verdict is Verdict.RUNTIME_ERROR and "sealed" in r.tests[0].message, r.tests[0].message
