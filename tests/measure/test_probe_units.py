"""The probe harness's pieces without the sandbox: signatures, the candidate's own
translation unit, transcripts and their comparison, the real suites' loaders (skipped without
the shared checkouts), the driver's PRNG and string fill (one small native program)."""
from __future__ import annotations

from pathlib import Path

import pytest

from perfalign.measure.cxxsig import parse_signature, split_top_level
from perfalign.measure.probe import Tolerance, split_definitions
from perfalign.measure.transcript import Transcript, compare_calls, compare_token, parse_transcript

EXTERNAL = Path(__file__).resolve().parents[3] / "shared" / "external"
PAREVAL, POLYBENCH = EXTERNAL / "pareval", EXTERNAL / "polybench"
needs_pareval = pytest.mark.skipif(not PAREVAL.is_dir(), reason=f"no ParEval checkout at {PAREVAL}")
needs_polybench = pytest.mark.skipif(not POLYBENCH.is_dir(), reason=f"no PolyBench checkout at {POLYBENCH}")


def test_signatures_and_outputs():
    sig = parse_signature("void gemm(std::vector<double> const& A, std::vector<double> const& B, "
                          "std::vector<double> &C, size_t M, size_t K, size_t N) {")
    assert sig.name == "gemm" and not sig.returns_value and sig.args == "A, B, C, M, K, N"
    assert [p.name for p in sig.params if p.output] == ["C"]
    sig = parse_signature("void firstLetterCounts(std::vector<std::string> const& s, std::array<size_t, 26> &bins) {")
    assert [p.name for p in sig.params] == ["s", "bins"] and [p.output for p in sig.params] == [False, True]
    sig = parse_signature("size_t findClosestToPi(const std::vector<double>& x) {")
    assert sig.returns_value and sig.ret == "size_t" and not sig.params[0].output
    assert split_top_level("std::map<int, int> a, int b") == ["std::map<int, int> a", "int b"]
    with pytest.raises(ValueError):
        parse_signature("not a function")


def test_preamble_definitions_split():
    text = ("#include <mpi.h>\n\nstruct Point {\n\tdouble x, y;\n};\n\n"
            "double distance(Point const& p1, Point const& p2) {\n\treturn p1.x - p2.x;\n}\n\n/* doc */\n")
    parts = split_definitions(text)
    assert [(k, n) for k, n, _ in parts if k != "other"] == [("struct", "Point"), ("function", "distance")]
    assert "".join(t for _, _, t in parts) == text


def _line(i, outs, w=0.01, c=0.01, t=1, nonce=7):
    return f"PA {nonce} C {i} w={w} c={c} t={t} | {outs}"


def test_transcript_parsing_and_tampering():
    good = "\n".join([_line(0, "i:3"), _line(1, "i:4"), "PA 7 END 2"])
    t = parse_transcript("noise\n" + good + "\n", 7)
    assert not t.problems and [c.outputs for c in t.calls] == [["i:3"], ["i:4"]] and t.times("cpu") == [0.01, 0.01]
    assert parse_transcript(good.replace("PA 7 END 2", ""), 7).problems  # stopped early
    dup = "\n".join([_line(0, "i:3"), _line(0, "i:3"), _line(1, "i:4"), "PA 7 END 2"])
    assert parse_transcript(dup, 7).problems  # a program printing lines of its own
    assert parse_transcript(good, 8).problems  # another nonce: no transcript at all
    glued = "garbage without newline" + good  # a candidate's partial line before ours
    assert not parse_transcript(glued, 7).problems


def test_fingerprint_comparison():
    tol = Tolerance(abs=1e-4, rel=1e-8)
    ref = "f:4:10:14:0.5:1=2.5,3=4"
    assert compare_token("f:4:10.00000001:14:0.5:1=2.50001,3=4", ref, tol) is None
    assert "element 1" in compare_token("f:4:10:14:0.5:1=2.6,3=4", ref, tol)
    assert "values" in compare_token("f:5:10:14:0.5:1=2.5,3=4", ref, tol)
    assert "sum" in compare_token("f:4:11:14:0.5:1=2.5,3=4", ref, tol)
    assert compare_token("i:3", "i:3", tol) is None and compare_token("i:4", "i:3", tol)
    assert compare_token("h:2:00ff", "h:2:00fe", tol) and compare_token("d:nan", "d:1.0", tol)
    assert compare_token("d:1.00001", "d:1.0", tol) is None
    a = parse_transcript("\n".join([_line(0, "i:3 d:1.0"), "PA 7 END 1"]), 7)
    b = parse_transcript("\n".join([_line(0, "i:3 d:1.5"), "PA 7 END 1"]), 7)
    assert compare_calls(a, a, tol) is None and "call 0 output 1" in compare_calls(b, a, tol)


@needs_pareval
def test_pareval_checkout_loads_every_problem_in_every_model():
    from perfalign.evaluation.tasks.pareval import EMBEDDED_SIZE_DIVISOR, ParEvalCheckout

    co = ParEvalCheckout(PAREVAL)
    names = co.names()
    assert len(names) == 60
    for model in ("serial", "omp", "mpi"):
        for name in names:
            p = co.problem(name, model)
            assert p.signature.name in p.prompt and "validate(perfalign_ctx)" in p.drivers["V"]
            assert f"/ {EMBEDDED_SIZE_DIVISOR})" in p.drivers["T"]
    gemm = co.problem("02_dense_la_gemm", "omp", threads=3)
    assert gemm.compile_flags == ("-O3", "-std=c++17", "-fopenmp") and gemm.env == {"OMP_NUM_THREADS": "3"}
    assert gemm.clock == "wall" and gemm.threads == 3 and gemm.tolerance.abs == 1e-4
    assert co.problem("02_dense_la_gemm", "mpi", ranks=3).toolchain == "mpi:3"
    src = gemm.candidate_source("void gemm(std::vector<double> const& A, std::vector<double> const& B, "
                                "std::vector<double> &C, size_t M, size_t K, size_t N) {}", "T")
    # the candidate's own TU: no driver, no validator, no clock of ours in scope
    assert "perfalign_observe" not in src and "validate" not in src and "perfalign_cpu_now" not in src
    # 07: ParEval's best() baseline fails its own validate(); the reference is validate()'s
    assert "fftCooleyTookey" in co.problem("07_fft_fft_conjugate").notes[0]
    # a completion that repeats the prompt's struct and helper gets neither twice
    hull = co.problem("11_geometry_convex_hull_perimeter")
    code = ("struct Point { double x, y; };\ndouble distance(Point const& a, Point const& b) { return 0; }\n"
            "double convexHullPerimeter(std::vector<Point> const& points) { return 0; }")
    assert hull.candidate_source(code, "T").count("struct Point") == 1
    with pytest.raises(ValueError, match="no ParEval problem"):
        co.problem("99_nothing")


@needs_polybench
def test_polybench_checkout_loads_every_kernel():
    from perfalign.evaluation.tasks.polybench import PolyBenchCheckout

    co = PolyBenchCheckout(POLYBENCH)
    assert len(co.names()) == 30
    for name in co.names():
        p = co.problem(name)
        assert p.sizes == {"V": "SMALL_DATASET", "T": "MEDIUM_DATASET"} and p.signature.name.startswith("kernel_")
        assert "print_array(" in p.drivers["T"] and p.validate_calls == 2
    gemm = co.problem("gemm", "full")
    assert gemm.sizes["T"] == "LARGE_DATASET"
    src = gemm.candidate_source('#include <polybench.h>\n#include "gemm.h"\nstatic\nvoid kernel_gemm(int ni) {}', "T")
    assert "#include <polybench.h>" not in src.split('#line 1 "candidate.cpp"')[1] and "static" not in src.split(
        '#line 1 "candidate.cpp"')[1]


def test_checkout_errors_are_clear(tmp_path):
    from perfalign.evaluation.score_one import ScoreInputError, score_candidate
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.evaluation.tasks.polybench import PolyBenchCheckout

    with pytest.raises(FileNotFoundError, match="not a ParEval checkout"):
        ParEvalCheckout(tmp_path)
    with pytest.raises(FileNotFoundError, match="not a PolyBench/C checkout"):
        PolyBenchCheckout(tmp_path)
    with pytest.raises(ScoreInputError, match="--pareval-dir is required"):
        score_candidate("pareval", "02_dense_la_gemm", "void f() {}")
    with pytest.raises(ScoreInputError, match="unknown suite"):
        score_candidate("no-such-suite", "x", "int main() {}")
    with pytest.raises(ScoreInputError, match="empty"):
        score_candidate("pareval", "x", "   ")


def test_mpi_toolchain_spec():
    from perfalign.sandbox.toolchains import MPI_DEFAULT_RANKS, parse_toolchain

    assert parse_toolchain("default") == ("default", 0) and parse_toolchain("mpi") == ("mpi", MPI_DEFAULT_RANKS)
    assert parse_toolchain("mpi:4") == ("mpi", 4)
    for bad in ("mpi:0", "mpich", "default:2"):
        with pytest.raises(ValueError):
            parse_toolchain(bad)


def test_non_finite_values_match_only_themselves():
    tol = Tolerance(abs=1e-4, rel=1e-8)
    # a reference that divides by zero on a singular input defines NaN / inf outputs too
    assert compare_token("f:2:nan:nan:nan:0=nan,1=inf", "f:2:nan:nan:nan:0=nan,1=inf", tol) is None
    assert compare_token("f:2:nan:nan:nan:0=1,1=inf", "f:2:nan:nan:nan:0=nan,1=inf", tol)
    assert compare_token("d:inf", "d:-inf", tol) and compare_token("d:inf", "d:inf", tol) is None


def _round(**clocks):
    """One timed round as the harness keeps it: label -> the sandbox's result of the run."""
    from perfalign.common.languages import Language
    from perfalign.sandbox import RunResult, Verdict
    from perfalign.sandbox.types import CompileInfo, TestResult

    return {label: RunResult(Verdict.OK, "test", Language.CPP, True, CompileInfo(True),
                             [TestResult(Verdict.OK, cpu_time_s=c, wall_time_s=c)])
            for label, c in clocks.items()}


@needs_pareval
def test_time_precision_is_robust_to_one_disturbed_run():
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings

    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("27_reduce_average"), ProbeSettings())
    steady = [_round(__null__=1.0 + 0.002 * (i % 3), __reference__=1.3 + 0.002 * (i % 2)) for i in range(9)]
    assert s._rel_se("__reference__", steady) < 0.02
    # one run disturbed by other load (3x the others): the estimate is a median, so is its spread
    assert s._rel_se("__reference__", steady[:8] + [_round(__null__=1.0, __reference__=3.9)]) < 0.02
    # work (0.05 s) that the runs' noise (+-0.1 s) swamps
    noisy = [_round(__null__=1.0 + 0.1 * (-1) ** i, __reference__=1.05 - 0.1 * (-1) ** i) for i in range(9)]
    assert s._rel_se("__reference__", noisy) > 1.0
    # three runs: the plain standard deviation (a median absolute deviation of 3 can be 0)
    three = [_round(__null__=1.0, __reference__=c) for c in (1.3, 1.3, 1.6)]
    assert s._rel_se("__reference__", three) > 0.3


@needs_pareval
def test_a_shift_in_machine_speed_is_seen():
    """The medians of runs against the median of per-round ratios: the sweep's session of
    50_stencil_xor_kernel (its reference's copy, CPU seconds per run, as measured; the machine ran
    14% slower from the third round on) read 0.87 by the medians, at an estimated error of
    1.7%, and 0.995 by the rounds. Steady rounds put the two together."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings

    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("50_stencil_xor_kernel"), ProbeSettings())
    measured = [_round(reference=0.3745, __null__=0.0686, __reference__=0.373),
                _round(reference=0.37, __null__=0.0688, __reference__=0.3771),
                _round(reference=0.4289, __null__=0.0681, __reference__=0.3765),
                _round(reference=0.4237, __null__=0.0726, __reference__=0.4279),
                _round(reference=0.4267, __null__=0.0717, __reference__=0.4251)]
    assert s._rel_se("reference", measured) < 0.03  # each estimate looks precise on its own...
    assert s._shift("reference", measured) > ProbeSettings().max_rel_se  # ...but they disagree
    steady = [_round(reference=0.37 + 0.004 * (i % 3), __null__=0.07, __reference__=0.372 - 0.003 * (i % 2))
              for i in range(5)]
    assert s._shift("reference", steady) < 0.02
    # a candidate faster than the noise (work at or below its null run): the speedup floor's case
    assert s._shift("reference", [_round(reference=0.06, __null__=0.07, __reference__=0.37)] * 3) == 0.0

@needs_pareval
def test_cpu_over_wall_budget():
    """CPU time over wall time of a whole run may not pass the thread budget (the check that
    matters where no cpuset confines a run); an honest team at its budget passes."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeScore, ProbeSession, ProbeSettings

    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("27_reduce_average", "omp", threads=2), ProbeSettings())
    honest = ProbeScore("omp", "OK", True, None, None, None, "wall", cpu_wall_ratio=2.0, max_threads=2)
    assert s._over_budget(honest, ref_threads=1) == ""
    three = ProbeScore("omp", "OK", True, None, None, None, "wall", cpu_wall_ratio=2.9, max_threads=2)
    assert "over the budget of 2 CPU(s)" in s._over_budget(three, ref_threads=1)


@needs_pareval
def test_rounds_stop_when_more_cannot_help():
    """More rounds while a time is imprecise, but not for one so noisy that the rounds left
    cannot bring it under the reporting limit: that session stops at 5 rounds, not 9."""
    import itertools

    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings

    def session(ref_clocks):
        s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("27_reduce_average"), ProbeSettings())
        s.measurable, feed = True, itertools.cycle(ref_clocks)
        s._rounds = lambda alive, n: [_round(__null__=1.0, __reference__=next(feed), cand=1.5) for _ in range(n)]
        return s._measure({"cand": "code"})

    assert len(session([1.1, 2.0, 1.3, 1.8, 1.05, 1.9])) == 5  # work 0.1-1.0 s over a 1 s null: hopeless
    assert len(session([1.5, 1.6, 1.45, 1.62, 1.48, 1.58])) == 9  # ~6%: worth the rounds


def test_the_drivers_rand_and_string_fill(tmp_path):
    """The driver TU's rand() (values handed out a block at a time) and its fillRandString keep
    ParEval's ranges; a call's inputs follow from its seed alone, however many values the call
    before it drew."""
    import subprocess

    from perfalign.measure import probe_cpp
    src = "\n".join([probe_cpp.PRELUDE % {"extra_includes": ""}, probe_cpp.REDIRECT_RAND, r"""
int main() {
    perfalign_seed_value = 12345;
    perfalign_reseed(7); int a = rand(), b = rand();
    perfalign_reseed(3); for (int i = 0; i < 1000; ++i) rand();
    perfalign_reseed(7); std::printf("same %d\n", a == rand() && b == rand());
    long odd = 0, lo = RAND_MAX, hi = 0; const int n = 200000;
    for (int i = 0; i < n; ++i) { long r = rand(); odd += r % 2; lo = std::min(lo, r); hi = std::max(hi, r); }
    std::printf("odd %.4f lo %ld hi %ld\n", (double)odd / n, lo, hi);
    std::vector<std::string> s(20000); fillRandString(s, 2, 10);
    size_t mn = 99, mx = 0; int letters[26] = {0}; bool bad = false;
    for (auto& w : s) { mn = std::min(mn, w.size()); mx = std::max(mx, w.size());
        for (char c : w) { if (c < 'a' || c > 'z') bad = true; else letters[c - 'a'] = 1; } }
    int seen = 0; for (int k = 0; k < 26; ++k) seen += letters[k];
    std::printf("len %zu %zu letters %d bad %d\n", mn, mx, seen, (int)bad);
}
"""])
    (tmp_path / "t.cpp").write_text(src)
    subprocess.run(["g++", "-O2", "-std=c++17", "-o", str(tmp_path / "t"), str(tmp_path / "t.cpp")], check=True)
    out = dict(line.split(" ", 1) for line in subprocess.run(
        [str(tmp_path / "t")], capture_output=True, text=True, check=True).stdout.splitlines())
    assert out["same"] == "1"
    odd, _, lo, _, hi = out["odd"].split()
    assert abs(float(odd) - 0.5) < 0.01 and 0 <= int(lo) < 2**20 and 2**31 - 2**20 < int(hi) <= 2**31 - 1
    assert out["len"].split() == ["2", "9", "letters", "26", "bad", "0"]  # ParEval: [min, max) letters a-z


@needs_pareval
def test_shaving_the_driver_pays_at_most_the_payoff_bound():
    """The payoff bound: a candidate that shaves part of the driver's work in its own runs (30% or
    5% of the null run) beside its honest twin (the same kernel, 2x the
    reference). On a problem whose driver does as much work as the reference, both reach the
    ceiling and score alike; where the driver's work is small, shaving gains at most
    max_driver_payoff; the reference (1x) is never touched."""
    from perfalign.evaluation.tasks.pareval import ParEvalCheckout
    from perfalign.measure.harness import ProbeSession, ProbeSettings

    settings = ProbeSettings()
    s = ProbeSession(None, ParEvalCheckout(PAREVAL).problem("27_reduce_average"), settings)
    s.measurable, s.calls = True, 10
    s._shift = lambda label, rounds: 0.0
    s.transcript = lambda res: Transcript(end=0)  # a complete transcript of no calls

    def judged(null, ref, **cands):
        rounds = [_round(__null__=null, __reference__=null + ref, **{k: null + v for k, v in cands.items()})] * 3
        return {k: s._judge(k, rounds) for k in ("__reference__", *cands)}

    heavy = judged(1.0, 1.0, honest=0.5, shaver=0.5 - 0.3)  # the driver's work = the reference's
    assert heavy["honest"].speedup == heavy["shaver"].speedup == 1.0 and "driver_bound" in heavy["shaver"].flags
    assert heavy["__reference__"].speedup == 1.0 and "driver_bound" not in heavy["__reference__"].flags
    light = judged(0.1, 1.0, honest=0.5, shaver=0.5 - 0.05)  # a tenth: the ceiling is 5x
    assert light["honest"].speedup == 2.0 and "driver_bound" not in light["honest"].flags
    assert light["shaver"].speedup <= settings.max_driver_payoff * light["honest"].speedup
    assert s.info["driver_ceiling"] == 5.0
