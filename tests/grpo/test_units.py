"""grpo units without the sandbox: the spec format and its C expansion, static library and
technique checks, reward tiers, SQD schedule, archive and prompts."""
from __future__ import annotations

import itertools

import pytest

from perfalign.grpo.prompts import spec_prompt
from perfalign.grpo.reward import GrpoRewardTiers, tier_of_verdict, tier_reward
from perfalign.grpo.spec_family import ORDERS, TILES, UNROLLS, Spec, SpecError, expand_dgemm, parse_spec
from perfalign.grpo.sqd import QDArchive, all_niches, parse_schedule
from perfalign.grpo.static import detect_techniques, library_violation, link_violation
from perfalign.grpo.tasks import dgemm_flops, dgemm_task, jacobi_2d_flops, polybench_sizes, syrk_flops, two_mm_flops


def test_every_spec_expands_to_exactly_its_techniques():
    for o, t, s, m, u in itertools.product(ORDERS, TILES, (0, 1), (0, 1), UNROLLS):
        spec = Spec(o, t, s, m, u)
        assert parse_spec(" " + spec.text() + "\n junk after the line") == spec
        assert detect_techniques(expand_dgemm(spec)) == spec.techniques


@pytest.mark.parametrize("bad", ["", "order=ikj", "order=iij tile=0 simd=0 omp=0 unroll=1",
                                 "order=ikj tile=12 simd=0 omp=0 unroll=1",
                                 "order=ikj tile=0 simd=0 omp=0 unroll=1 x=1",
                                 "order=ikj order=ikj tile=0 simd=0 omp=0",
                                 "order=ikj tile=zero simd=0 omp=0 unroll=1"])
def test_malformed_specs_are_format_errors(bad):
    with pytest.raises(SpecError):
        parse_spec(bad)


def test_library_checks():
    assert "cblas" in library_violation('#include <cblas.h>\nvoid f(){}')
    assert library_violation("void f(double*a){ cblas_dgemm(101,111,111,1,1,1,1,a,1,a,1,0,a,1); }")
    assert library_violation('void f(){ void* h = dlopen("libopenblas.so", 2); }')
    assert library_violation("extern \"C\" void dgemm_(char*, char*); void g(){ dgemm_(0, 0); }")
    # the task's own function and comments mentioning BLAS are not violations
    assert library_violation("// unlike cblas_dgemm\nvoid dgemm(int n){ for(;;){} }") is None
    msg = "candidate.cpp:(.text+0x1d): undefined reference to `xerbla_'\ncollect2: error: ld returned 1"
    assert "xerbla_" in link_violation(msg)
    assert link_violation("candidate.cpp:3:1: error: expected ';'") is None


def test_technique_detection_on_free_code():
    code = """#include <immintrin.h>
    void k(int n, double* a) {
      #pragma omp parallel for
      for (int ii = 0; ii < n; ii += BS) for (int i = ii; i < ii + BS; ++i) a[i] *= 2;
    }"""
    assert detect_techniques(code) == {"openmp", "simd", "blocking"}
    assert detect_techniques("void k(int n, double* a){ for (int i = 0; i < n; ++i) a[i] = 0; }") == frozenset()
    assert detect_techniques("void k(){\n#pragma omp simd\nfor(int i=0;i<4;i++){} }") == {"simd"}


def test_tiers_configurable_and_mapped():
    t = GrpoRewardTiers()
    assert [tier_reward(x, None, None, t) for x in ("format", "library", "compile", "timeout", "runtime",
                                                    "verification")] == [-100, -100, -40, -30, -20, -10]
    assert tier_reward("ok", 12.5, 50.0, t) == 12.5
    assert tier_reward("ok", 12.5, 50.0, GrpoRewardTiers(ok_reward="peak_fraction")) == pytest.approx(25.0)
    assert tier_reward("compile", None, None, GrpoRewardTiers(compile=-7)) == -7
    assert tier_reward("infrastructure", None, None, t) is None
    assert tier_of_verdict("TIME_LIMIT_EXCEEDED") == "timeout"
    assert tier_of_verdict("MEMORY_LIMIT_EXCEEDED") == "runtime"
    assert tier_of_verdict("TRANSCRIPT_INVALID") == "verification"
    assert tier_of_verdict("OVER_BUDGET") == "format"


def test_flop_counts():
    assert dgemm_flops(256) == 2 * 256 ** 3
    assert two_mm_flops(2, 3, 4, 5) == 2 * 2 * 3 * 4 + 2 * 2 * 5 * 3
    assert syrk_flops(3, 4) == 3 * 4 * 4
    assert jacobi_2d_flops(2, 5) == 10 * 2 * 9
    header = ("#  ifdef SMALL_DATASET\n#   define N 30\n#   define M 20\n#  endif\n"
              "#  ifdef MEDIUM_DATASET\n#   define N 90\n#  endif")
    assert polybench_sizes(header, "MEDIUM_DATASET") == {"N": 90}
    assert dgemm_task().flops == dgemm_flops(256)


def test_schedule_archive_prompt():
    stages = parse_schedule("none:2;blocking+simd;all", 3)
    assert [s.steps for s in stages] == [2, 3, 3]
    assert stages[0].permitted == frozenset() and stages[2].permitted == {"openmp", "simd", "blocking", "unroll"}
    with pytest.raises(ValueError):
        parse_schedule("gpu", 1)
    a = QDArchive("dgemm")
    assert a.offer("scalar", 2.0, "order=ikj tile=0 simd=0 omp=0 unroll=1", 1, "s0")
    assert not a.offer("scalar", 1.0, "x", 2, "s0")
    assert a.offer("blocking", 5.0, "order=ikj tile=32 simd=0 omp=0 unroll=1", 2, "s1")
    assert a.niches_filled == 2 and len(all_niches()) == 16
    # a stage that forbids blocking is seeded only with elites it permits
    prompt = spec_prompt(dgemm_task(), stages[0], a)
    assert "allow: none" in prompt and "tile=0" in prompt and "tile=32" not in prompt
    assert "tile=32" in spec_prompt(dgemm_task(), stages[1], a)


def test_compliant_prior_uses_only_permitted_techniques():
    import random

    from perfalign.grpo.spec_family import compliant_spec

    rng = random.Random(0)
    seen = set()
    for permitted in (frozenset(), frozenset({"blocking"}), frozenset({"simd", "unroll"})):
        for _ in range(200):
            spec = compliant_spec(rng, permitted)
            assert spec.techniques <= permitted
            seen.add(spec.techniques)
    assert frozenset({"simd", "unroll"}) in seen and frozenset({"blocking"}) in seen


def test_warmup_priors_narrow_is_mostly_plain_loops():
    import random

    from perfalign.grpo.spec_family import compliant_spec
    from perfalign.grpo.train import WARMUP_PRIORS, check_warmup_prior

    everything = frozenset({"openmp", "simd", "blocking", "unroll"})
    rng = random.Random(1)
    used = {name: sum(bool(compliant_spec(rng, everything, p).techniques) for _ in range(2000)) / 2000
            for name, p in WARMUP_PRIORS.items() if p is not None}
    assert 0.4 < used["narrow"] < 0.6 < 0.9 < used["compliant"]  # 1-0.85^4 = 0.48; 1-0.5^4 = 0.94
    assert check_warmup_prior("uniform") is None
    with pytest.raises(ValueError, match="narrow"):
        check_warmup_prior("wide")
