"""The evaluation harness against programs that try to improve their own number, on the real
ParEval (serial, OpenMP, MPI) and PolyBench/C problems from the shared checkouts (skipped
without them). One session per problem scores every hostile candidate beside the honest
controls (the suite's reference and a known-slow oracle), so each test reads one record.

Each trick and what it must get:

| trick | expected |
| --- | --- |
| redefines the driver's clock macro | its true speedup (~1), the macro cannot reach the driver's TU |
| `return` + macros that redefine the validation | WRONG_ANSWER |
| work on the first call only | WRONG_ANSWER (every call is compared) |
| caches results across calls | WRONG_ANSWER (fresh secret inputs every call) |
| reads the nonce from /proc/self/fd/0, prints result lines, _exit(0) | WRONG_ANSWER / TRANSCRIPT_INVALID |
| work in a forked child / clone(CLONE_VM) child | its true cost (cgroup CPU): not faster than honest |
| forks and never waits | WRONG_ANSWER (the output is not there when the call returns) |
| std::threads in serial code | its true cost: CPU time counts every thread, the cpuset holds 1 CPU |
| num_threads(16) with a budget of 2 | OVER_BUDGET (score 0) |
| hard-codes the problem size / the expected value | WRONG_ANSWER (validated at two sizes, random inputs) |
| interposes rand(), clock_gettime(), getrusage() | its true speedup (the driver uses none of them for scores) |
| defines libc symbols (1) | OK at its true speedup (2) |
| a constructor rewrites the driver's GOT slots (mprotect of RELRO, /proc/self/mem) | OK at its true speedup (3) |

(1) printf, putchar (weak), operator new, memcpy, opendir (asm label), getrusage (top-level asm), printf (.symver).
(2) the build keeps every definition but the function private to the candidate's unit.
(3) the driver's mappings are sealed before any code of the candidate runs.
"""
from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from perfalign.measure.harness import ProbeSettings, score_problem

EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"
PAREVAL, POLYBENCH = EXTERNAL / "pareval", EXTERNAL / "polybench"
pytestmark = pytest.mark.skipif(not (PAREVAL.is_dir() and POLYBENCH.is_dir()),
                                reason=f"no ParEval/PolyBench checkouts under {EXTERNAL}")
# these tests check verdicts and that no trick gains, against wide bands: the noise gate (a
# speedup too uncertain is not reported) is the benchmark's and test_noisy_speedups_are_not_reported's
FAST = ProbeSettings(repeats=3, max_repeats=5, target_s=0.15, max_run_s=3.0, max_rel_se=10.0)

GEMM_SIG = ("void gemm(std::vector<double> const& A, std::vector<double> const& B, std::vector<double> &C, "
            "size_t M, size_t K, size_t N)")
GEMM_LOOP = """
    for (size_t i = 0; i < M; ++i)
        for (size_t k = 0; k < K; ++k)
            for (size_t j = 0; j < N; ++j)
                C[i * N + j] += A[i * K + k] * B[k * N + j];
"""
HONEST = f"{GEMM_SIG} {{{GEMM_LOOP}}}\n"
HOSTILE = {
    "clock_macro": "#define perfalign_cpu_now() 0.0\n#define perfalign_wall_now() 0.0\n#define omp_get_wtime() 0.0\n"
                   + HONEST,
    "return_and_macros": "#define validate(ctx) true\n#define fequal(...) true\n#define compare_calls(...) 0\n"
                         f"{GEMM_SIG} {{ return; }}\n",
    "first_call_only": f"{GEMM_SIG} {{\n    static bool done = false;\n    if (done) return;\n"
                       f"    done = true;{GEMM_LOOP}}}\n",
    "cache_across_calls": f"""#include <vector>
static const double* last_a = nullptr;
static std::vector<double> last_c;
{GEMM_SIG} {{
    if (A.data() == last_a && last_c.size() == C.size()) {{ C = last_c; return; }}
{GEMM_LOOP}
    last_a = A.data(); last_c = C;
}}
""",
    "forge_transcript": f"""#include <fcntl.h>
#include <unistd.h>
#include <cstdio>
{GEMM_SIG} {{
    char buf[256] = {{0}};
    int fd = open("/proc/self/fd/0", O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, 255) : 0;
    buf[n > 0 ? n : 0] = 0;
    unsigned long long nonce = 0, calls = 0, seed = 0; char mode[8] = {{0}};
    sscanf(buf, "%llu %7s %llu %llu", &nonce, mode, &calls, &seed);
    for (unsigned long long i = 0; i < (calls ? calls : 1); ++i)
        printf("PA %llu C %llu w=0.000001 c=0.000001 t=1 | f:%zu:0:0:0\\n", nonce, i, C.size());
    printf("PA %llu V 1\\nPA %llu END %llu\\n", nonce, nonce, calls ? calls : 1);
    fflush(stdout);
    _exit(0);
}}
""",
    "fork_and_wait": f"""#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
{GEMM_SIG} {{
    double* out = (double*)mmap(nullptr, C.size() * sizeof(double), PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    std::copy(C.begin(), C.end(), out);
    pid_t pid = fork();
    if (pid == 0) {{
        for (size_t i = 0; i < M; ++i)
            for (size_t k = 0; k < K; ++k)
                for (size_t j = 0; j < N; ++j) out[i * N + j] += A[i * K + k] * B[k * N + j];
        _exit(0);
    }}
    waitpid(pid, nullptr, 0);
    std::copy(out, out + C.size(), C.begin());
    munmap(out, C.size() * sizeof(double));
}}
""",
    "clone_vm_child": f"""#include <sched.h>
#include <sys/wait.h>
#include <csignal>
#include <vector>
struct Work {{ const double *a, *b; double* c; size_t m, k, n; }};
static int worker(void* p) {{
    Work* w = (Work*)p;
    for (size_t i = 0; i < w->m; ++i)
        for (size_t k = 0; k < w->k; ++k)
            for (size_t j = 0; j < w->n; ++j) w->c[i * w->n + j] += w->a[i * w->k + k] * w->b[k * w->n + j];
    return 0;
}}
{GEMM_SIG} {{
    static std::vector<char> stack(1 << 20);
    Work w{{A.data(), B.data(), C.data(), M, K, N}};
    int pid = clone(worker, stack.data() + stack.size(), CLONE_VM | SIGCHLD, &w);
    waitpid(pid, nullptr, 0);
}}
""",
    "fork_no_wait": f"""#include <unistd.h>
{GEMM_SIG} {{
    if (fork() == 0) {{{GEMM_LOOP} _exit(0); }}
}}
""",
    "threads_in_serial": f"""#include <thread>
#include <vector>
{GEMM_SIG} {{
    std::vector<std::thread> pool;
    for (size_t t = 0; t < 4; ++t)
        pool.emplace_back([&, t] {{
            for (size_t i = t; i < M; i += 4)
                for (size_t k = 0; k < K; ++k)
                    for (size_t j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];
        }});
    for (auto& th : pool) th.join();
}}
""",
    "hardcoded_size": f"""{GEMM_SIG} {{
    const size_t m = 128, k_ = 32, n = 64;  // the embedded profile's timed size
    for (size_t i = 0; i < m; ++i)
        for (size_t k = 0; k < k_; ++k)
            for (size_t j = 0; j < n; ++j) C[i * n + j] += A[i * k_ + k] * B[k * n + j];
}}
""",
    "interposes_libc": """#include <cstring>
#include <ctime>
#include <sys/resource.h>
extern "C" int rand() { return 0; }
extern "C" int getrusage(int, struct rusage* u) { std::memset(u, 0, sizeof *u); return 0; }
extern "C" int clock_gettime(clockid_t, struct timespec* t) { t->tv_sec = 0; t->tv_nsec = 0; return 0; }
""" + HONEST,
}

# Issue 22: the candidate's TU defines functions the trusted driver calls by name. Each variant
# would visibly break (or cheapen) the driver's own per-call work if its definition reached the
# driver: no transcript (printf, putchar), a failed allocation (operator new), no thread count
# (opendir: t=0) or a zero clock. Confined to its own unit (sandbox/privatelink.py), each is the
# honest gemm and must score like it, with the driver's real thread count.
INTERPOSERS = {
    "defines_printf": 'extern "C" int printf(const char*, ...) { return 0; }\n' + HONEST,
    "weak_putchar": 'extern "C" __attribute__((weak)) int putchar(int c) { return c; }\n'
                    'extern "C" __attribute__((weak)) int puts(const char*) { return 0; }\n' + HONEST,
    "operator_new": """#include <new>
#include <cstdlib>
void* operator new(std::size_t) { throw std::bad_alloc(); }
void* operator new[](std::size_t) { throw std::bad_alloc(); }
void operator delete(void*) noexcept {}
void operator delete(void*, std::size_t) noexcept {}
""" + HONEST,
    "asm_label_opendir": """#include <dirent.h>
extern "C" DIR* perfalign_no_dir(const char*) asm("opendir");
extern "C" DIR* perfalign_no_dir(const char*) { return nullptr; }
""" + HONEST,
    "toplevel_asm_symbols": 'asm(".globl getrusage\\n.type getrusage,@function\\n'
                            'getrusage:\\n xor %eax,%eax\\n ret\\n"\n'
                            '    ".globl clock_gettime\\n.type clock_gettime,@function\\nclock_gettime:\\n'
                            ' xor %eax,%eax\\n ret\\n");\n' + HONEST,
    "symver_printf": """#include <cstdarg>
extern "C" int perfalign_quiet(const char*, ...) { return 0; }
asm(".symver perfalign_quiet, printf@@GLIBC_2.2.5");
""" + HONEST,
    "memcpy_and_memset": """#include <cstddef>
extern "C" void* memcpy(void* d, const void*, std::size_t) { return d; }
extern "C" void* memset(void* d, int, std::size_t) { return d; }
""" + HONEST,
    # the driver's per-call work (thread count, clocks) made cheap, output intact
    "cheap_driver_calls": """#include <dirent.h>
#include <cstring>
#include <ctime>
#include <sys/resource.h>
extern "C" DIR* opendir(const char*) { return nullptr; }
extern "C" int getrusage(int, struct rusage* u) { std::memset(u, 0, sizeof *u); return 0; }
extern "C" int clock_gettime(clockid_t, struct timespec* t) { t->tv_sec = 0; t->tv_nsec = 0; return 0; }
""" + HONEST,
}
# The red team's attack on the next line of defence: a constructor of the candidate finds the
# program's GOT slots for getrusage and opendir (its dynamic section) and rewrites them, after
# making the RELRO page writable again or through /proc/self/mem. The driver seals its mappings and
# makes itself non-dumpable before any candidate code runs (measure/probe_cpp.py): both fail.
GOT_REWRITE = r"""#include <link.h>
#include <elf.h>
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstring>
#include <cstdint>
#include <sys/mman.h>
#include <sys/resource.h>
namespace {
int fake_getrusage(int, rusage* u) { std::memset(u, 0, sizeof *u); return 0; }
DIR* fake_opendir(const char*) { return nullptr; }
bool write_slot(uintptr_t slot, uintptr_t value) {
#ifdef VIA_PROC_MEM
    const int fd = open("/proc/self/mem", O_RDWR);
    if (fd < 0) return false;
    const bool ok = pwrite(fd, &value, sizeof value, (off_t)slot) == (ssize_t)sizeof value;
    close(fd);
    return ok;
#else
    const uintptr_t page = slot & ~(uintptr_t)4095;
    if (mprotect((void*)page, 8192, PROT_READ | PROT_WRITE) != 0) return false;
    *(uintptr_t*)slot = value;
    return true;
#endif
}
int rewrite(dl_phdr_info* info, size_t, void*) {  // the first object: the program
    const uintptr_t base = info->dlpi_addr;
    auto at = [&](uintptr_t p) { return p < base ? p + base : p; };
    const ElfW(Dyn)* dyn = nullptr;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const ElfW(Dyn)*)(base + info->dlpi_phdr[i].p_vaddr);
    const ElfW(Rela)* rel[2] = {nullptr, nullptr};
    size_t size[2] = {0, 0};
    const ElfW(Sym)* sym = nullptr;
    const char* str = nullptr;
    for (; dyn && dyn->d_tag != DT_NULL; ++dyn) {
        if (dyn->d_tag == DT_JMPREL) rel[0] = (const ElfW(Rela)*)at(dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_PLTRELSZ) size[0] = dyn->d_un.d_val;
        if (dyn->d_tag == DT_RELA) rel[1] = (const ElfW(Rela)*)at(dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_RELASZ) size[1] = dyn->d_un.d_val;
        if (dyn->d_tag == DT_SYMTAB) sym = (const ElfW(Sym)*)at(dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_STRTAB) str = (const char*)at(dyn->d_un.d_ptr);
    }
    for (int t = 0; t < 2 && sym && str; ++t)
        for (size_t i = 0; rel[t] && i < size[t] / sizeof(ElfW(Rela)); ++i) {
            const char* name = str + sym[ELF64_R_SYM(rel[t][i].r_info)].st_name;
            const uintptr_t slot = base + rel[t][i].r_offset;
            if (std::strcmp(name, "getrusage") == 0) write_slot(slot, (uintptr_t)fake_getrusage);
            if (std::strcmp(name, "opendir") == 0) write_slot(slot, (uintptr_t)fake_opendir);
        }
    return 1;
}
__attribute__((constructor)) void hijack() { dl_iterate_phdr(rewrite, nullptr); }
}  // namespace
"""
INTERPOSERS["got_rewrite_mprotect"] = GOT_REWRITE + HONEST
INTERPOSERS["got_rewrite_proc_mem"] = "#define VIA_PROC_MEM\n" + GOT_REWRITE + HONEST
HOSTILE.update(INTERPOSERS)


def _gains_nothing(s, ref) -> bool:
    """The trick's speedup is no higher than the suite reference's, within 3 standard errors of
    the ratio of the two estimates (both errors: this VM has bursts of a second and more at half
    speed, and a burst that hits most of one program's five rounds moves its median by 1.6x)."""
    err = math.hypot(s.rel_se or 0.0, ref.rel_se or 0.0)
    return s.speedup <= max(1.3, math.exp(3 * err)) * max(ref.speedup, 1.0)


@pytest.fixture(scope="module")
def gemm_serial(sandbox):
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("02_dense_la_gemm", "serial")
    scores, info = score_problem(sandbox, p, {"reference": p.reference, "slow": p.slow, **HOSTILE}, FAST)
    return scores, info, p, sandbox


def _gains_nothing_remeasured(gemm_serial, name) -> tuple[bool, tuple]:
    """``_gains_nothing`` on the module's session; a miss is measured once more in a session of its
    own (the candidate beside the reference): the conftest's timing policy for a module fixture."""
    scores, _, p, sandbox = gemm_serial
    s, ref = scores[name], scores["reference"]
    if _gains_nothing(s, ref):
        return True, (s, ref)
    again, _ = score_problem(sandbox, p, {"reference": p.reference, name: HOSTILE[name]}, FAST)
    return _gains_nothing(again[name], again["reference"]), (s, ref, again[name], again["reference"])


@pytest.mark.timing
def test_controls_score_their_true_speedups(sandbox):
    # measured on its own (not the module fixture) so that a miss is re-measured: this VM has
    # bursts of 1 s and more in which its CPU runs at half speed (the same gemm binary: 49 us per
    # call, then 75-98 us for four runs in a row), and with FAST's noise gate off a burst that hits
    # the reference's copies unevenly reads as a false speedup (1.25-1.69x seen)
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("02_dense_la_gemm", "serial")
    scores, info = score_problem(sandbox, p, {"reference": p.reference, "slow": p.slow}, FAST)
    ref, slow = scores["reference"], scores["slow"]
    assert ref.verdict == "OK" and slow.verdict == "OK", (ref, slow)
    # the band widens with the harness's own error estimate (the default gate would withhold these)
    assert abs(math.log(ref.speedup)) <= max(math.log(1.25), 3 * ref.rel_se), ref
    truth = slow.inprocess_baseline_s / slow.inprocess_runtime_s  # the driver's own clock, honest program
    # the truth is itself measured (medians of per-call clocks): bursts of host load move it too
    assert 0.3 <= truth <= 0.7 and abs(math.log(slow.speedup / truth)) < max(0.25, 3 * slow.rel_se), slow
    assert info["calls"] >= 2 and "cpu:cgroup" in ref.flags


@pytest.mark.parametrize("name", ["return_and_macros", "first_call_only", "cache_across_calls", "forge_transcript",
                                  "fork_no_wait", "hardcoded_size"])
def test_cheats_score_zero(gemm_serial, name):
    s = gemm_serial[0][name]
    assert s.verdict in ("WRONG_ANSWER", "TRANSCRIPT_INVALID", "RUNTIME_ERROR"), (name, s)
    assert not s.correct and s.speedup == 0.0


@pytest.mark.parametrize("name", ["clock_macro", "interposes_libc", "fork_and_wait", "clone_vm_child",
                                  "threads_in_serial"])
def test_tricks_outside_the_function_gain_nothing(gemm_serial, name):
    s = gemm_serial[0][name]
    assert s.verdict == "OK" and s.correct, (name, s)
    # measured as what it is: the same work as the reference, at best no faster
    # (the band widens with the measured noise, as above; the tricks gained 13-1e7x before the fix)
    ok, detail = _gains_nothing_remeasured(gemm_serial, name)
    assert ok, (name, detail)


def test_openmp_budget_and_honest_parallel_code(sandbox):
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("02_dense_la_gemm", "omp", threads=2)
    omp = f"#include <omp.h>\n{GEMM_SIG} {{\n#pragma omp parallel for schedule(static)\n" \
          "    for (size_t i = 0; i < M; ++i)\n        for (size_t k = 0; k < K; ++k)\n" \
          "            for (size_t j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];\n}\n"
    scores, info = score_problem(sandbox, p, {"reference": p.reference, "omp": omp,
                                              "sixteen": omp.replace("schedule(static)", "num_threads(16)"),
                                              "first_call_only": HOSTILE["first_call_only"]}, FAST)
    assert info["clock"] == "wall" and scores["reference"].verdict == "OK"
    assert scores["omp"].verdict == "OK" and scores["omp"].max_threads <= 2, scores["omp"]
    assert "cpus:2" in scores["omp"].flags or "cpus_not_enforced" in scores["omp"].flags
    s16 = scores["sixteen"]
    assert s16.verdict == "OVER_BUDGET" and s16.speedup == 0.0 and s16.max_threads >= 16, s16
    assert scores["first_call_only"].verdict == "WRONG_ANSWER"


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="Open MPI is not installed (scripts/setup.sh installs it)")
def test_mpi_problems_run_through_the_sandbox(sandbox):
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("27_reduce_average", "mpi", ranks=2)
    mpi = """#include <mpi.h>
double average(std::vector<double> const& x) {
    int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t n = x.size(), lo = n * rank / size, hi = n * (rank + 1) / size;
    double part = 0, total = 0;
    for (size_t i = lo; i < hi; ++i) part += x[i];
    MPI_Reduce(&part, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return total / n;
}
"""
    expected_value = "double average(std::vector<double> const& x) { return 50.0; }\n"  # E[U(0,100)]
    first_only = ("double average(std::vector<double> const& x) {\n    static double v = -1;\n"
                  "    if (v < 0) { double s = 0;"
                  " for (double e : x) s += e; v = s / x.size(); }\n    return v;\n}\n")
    scores, info = score_problem(sandbox, p, {"mpi": mpi, "expected_value": expected_value,
                                              "first_only": first_only}, FAST)
    assert info["clock"] == "wall" and p.toolchain == "mpi:2"
    s = scores["mpi"]
    # a memory-bound reduction on 2 ranks in wall time: a speedup, or (too little work per call
    # against the ranks' start-up and broadcasts, decided at calibration) none, with the reason
    assert s.verdict == "OK" and s.correct, s
    assert (s.speedup is not None and s.speedup > 0) or ("unmeasurable" in s.flags and s.message), s
    assert scores["expected_value"].verdict == "WRONG_ANSWER" and scores["expected_value"].speedup == 0.0
    assert scores["first_only"].verdict == "WRONG_ANSWER"


POLY_SIG = ("void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta, "
            "DATA_TYPE POLYBENCH_2D(C,NI,NJ,ni,nj), DATA_TYPE POLYBENCH_2D(A,NI,NK,ni,nk), "
            "DATA_TYPE POLYBENCH_2D(B,NK,NJ,nk,nj))")
POLY_LOOP = """
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++) C[i][j] += alpha * A[i][k] * B[k][j];
  }
"""


@pytest.mark.timing
def test_polybench_kernel_controls_and_cheats(sandbox):
    from perfalign.evaluation.tasks.polybench import PolyBenchCheckout

    p = PolyBenchCheckout(POLYBENCH).problem("gemm")
    ikj = POLY_LOOP  # the original loop order: a faithful rewrite
    cands = {
        "reference": p.reference, "slow": p.slow,
        "rewrite": f"#include <polybench.h>\n#include \"gemm.h\"\nstatic\n{POLY_SIG} {{{ikj}}}\n",
        "first_call_only": f"{POLY_SIG} {{\n  static int done = 0;\n  if (done++) return;{POLY_LOOP}}}\n",
        "hardcoded_output": f"{POLY_SIG} {{\n  for (int i = 0; i < ni; i++) "
                            f"for (int j = 0; j < nj; j++) C[i][j] = 1.0;\n}}\n",
        "forge_transcript": HOSTILE["forge_transcript"].replace(GEMM_SIG, POLY_SIG).replace("C.size()", "(size_t)4"),
    }
    scores, info = score_problem(sandbox, p, cands, FAST)
    assert info["sizes"] == {"V": "SMALL_DATASET", "T": "MEDIUM_DATASET"}
    for name in ("reference", "slow", "rewrite"):
        assert scores[name].verdict == "OK", (name, scores[name])
    assert 0.8 <= scores["reference"].speedup <= 1.25 and scores["slow"].speedup < 0.7
    for name in ("first_call_only", "hardcoded_output", "forge_transcript"):
        assert scores[name].verdict in ("WRONG_ANSWER", "TRANSCRIPT_INVALID") and scores[name].speedup == 0.0, name


@pytest.mark.timing
def test_integer_outputs_are_fingerprinted_exactly(sandbox):
    """ParEval's integer transforms: inputs from the fast fill, outputs hashed as one block of
    bytes: an honest rewrite passes, one element left untouched (of a million) does not."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("56_transform_negate_odds")
    honest = ("void negateOddsAndHalveEvens(std::vector<int> &x) {\n"
              "    for (auto &v : x) v = (v % 2 != 0) ? -v : v / 2;\n}\n")
    last_untouched = honest.replace("for (auto &v : x)", "for (size_t i = 0; i + 1 < x.size(); ++i)") \
        .replace("v = (v % 2 != 0) ? -v : v / 2", "x[i] = (x[i] % 2 != 0) ? -x[i] : x[i] / 2")
    scores, info = score_problem(sandbox, p, {"honest": honest, "last_untouched": last_untouched},
                                 ProbeSettings(repeats=1, max_repeats=1, target_s=0.05, max_run_s=1.0))
    assert scores["honest"].verdict == "OK" and scores["honest"].correct, scores["honest"]
    assert scores["last_untouched"].verdict == "WRONG_ANSWER" and scores["last_untouched"].speedup == 0.0
    # the fast paths cut the driver's per-call overhead to a few times the work
    assert info["overhead_ratio"] < 8, info


def test_the_overhead_gate_weighs_the_mean_work_of_a_call(sandbox):
    """36_search_check_if_array_contains_value finds its value within ~100 elements in about
    half its calls and scans all 2^19 in the rest: a run's work is the sum of both kinds, so the
    gate weighs the mean call (a median read either mode: 1.8x or 79x from one calibration to
    the next, and the problem was unmeasurable in half the sessions)."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession

    session = ProbeSession(sandbox, ParEvalCheckout(PAREVAL).problem("36_search_check_if_array_contains_value"))
    session.prepare()
    assert session.measurable and session.info["overhead_ratio"] < 10, session.info


def test_noisy_speedups_are_not_reported(sandbox):
    """A speedup less precise than max_rel_se (here: any) is not reported: the candidate is
    correct, the speedup None with flag unmeasurable and the reason, the estimate kept."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("41_sort_k-th_smallest_element")
    scores, info = score_problem(sandbox, p, {"reference": p.reference},
                                 ProbeSettings(repeats=2, max_repeats=2, target_s=0.05, max_run_s=1.0,
                                               max_rel_se=1e-6))
    s = scores["reference"]
    assert s.verdict == "OK" and s.correct and s.speedup is None and "unmeasurable" in s.flags, s
    assert "uncertain by" in s.message and s.rel_se > 1e-6 and 0.5 < s.raw_speedup < 2.0, s
    assert s.baseline_s and s.runtime_s and info["reference_rel_se"] is not None


@pytest.mark.parametrize("name", sorted(INTERPOSERS))
def test_definitions_of_the_drivers_functions_stay_in_the_candidate(gemm_serial, name):
    s = gemm_serial[0][name]
    assert s.verdict == "OK" and s.correct, (name, s)  # the driver printed, allocated, copied for real
    assert s.max_threads and s.max_threads >= 1, (name, s)  # the real opendir counted the thread
    assert s.inprocess_runtime_s and s.inprocess_runtime_s > 0, (name, s)  # the real clocks ran
    ok, detail = _gains_nothing_remeasured(gemm_serial, name)
    assert ok, (name, detail)


def test_private_link_keeps_only_the_function(tmp_path):
    """The build step itself (sandbox/privatelink.py, run here directly): the confined unit's
    definitions of libc names reach neither the other unit nor libc's callers; the function does."""
    import json
    import subprocess
    import sys

    from perfalign.sandbox import toolchains

    (tmp_path / "main.cpp").write_text(
        '#include <cstdio>\n#include <dirent.h>\nint work(int);\n'
        'int main() { DIR* d = opendir("/"); std::printf("%d %d\\n", work(20), d != nullptr); }\n')
    (tmp_path / "unit.cpp").write_text(
        '#include <dirent.h>\nextern "C" int printf(const char*, ...) { return 0; }\n'
        'extern "C" DIR* opendir(const char*) { return nullptr; }\n'
        'extern "C" int perfalign_q(const char*, ...) { return 0; }\nasm(".symver perfalign_q, puts@@GLIBC_2.2.5");\n'
        'int work(int x) { return x + 1; }\n')
    argv = ["/usr/bin/g++", "-O2", "-o", str(tmp_path / "prog"), str(tmp_path / "main.cpp")]
    units = [(str(tmp_path / "main.cpp"), None), (str(tmp_path / "unit.cpp"), ("work",))]
    build = toolchains.private_link_argv(argv, units)
    spec = json.loads(build[-1])
    assert spec["units"][1][1] == ["work"] and "-Wl,-z,relro,-z,now" in spec["link"]
    p = subprocess.run([sys.executable, *build[1:]], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "kept private" in p.stderr and "printf" in p.stderr and "opendir" in p.stderr
    assert subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True).stdout == "21 1\n"
    assert not (tmp_path / ".objects").exists()


@pytest.mark.parametrize("clock", ["instructions", "cycles"])
def test_got_rewrite_under_a_count_is_refused(sandbox, clock):
    """Under a count the program runs under valgrind, which has no mseal: perfcount keeps the
    driver's seals itself, so the constructor's mprotect of the RELRO page ends the counted run
    (natively the kernel refuses it). The honest twin, the same gemm, scores its exact ~1x."""
    import dataclasses

    from perfalign.evaluation.tasks.pareval import ParEvalCheckout

    p = ParEvalCheckout(PAREVAL).problem("02_dense_la_gemm", "serial")
    counted = dataclasses.replace(FAST, clock=clock, repeats=1, max_repeats=1)
    scores, info = score_problem(sandbox, p, {"honest": HONEST, "got_rewrite": HOSTILE["got_rewrite_mprotect"]},
                                 counted)
    honest, hostile = scores["honest"], scores["got_rewrite"]
    assert info["measure_clock"] == clock and honest.verdict == "OK", (info, honest)
    assert 0.9 <= honest.speedup <= 1.1, honest
    assert hostile.verdict == "RUNTIME_ERROR" and hostile.speedup == 0.0 and "sealed" in hostile.message, hostile
