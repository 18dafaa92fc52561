"""The controlled task: a family of small Python problems on which a tiny model can visibly be
aligned toward faster code, with held-out prompts to measure whether that generalizes.

A *computation* (the sum 1..n, the sum of squares, counting multiples of 3, ...) has three
correct programs of very different cost and one wrong one:

* fast: a closed form (constant time);
* medium: a generator expression over range(n) (C-level iteration, ~25 ns per element);
* slow: an explicit Python loop (~50 ns per element);
* wrong: an off-by-one closed form.

An *instance* is a problem statement: one of three phrasings of the computation inside one of
six short stories, with its own big test (n = 0.3M, 1M or 2M), so the measured runtime ratios,
hence the adaptive margins of Eq. 3, vary (about 1.1 to the cap lambda = 3). The held-out
instances are (computation, phrasing, story) combinations never seen in training; each of their
phrasings and stories is seen in training with other combinations. That is the generalization
measured: unseen prompts of the same family. (Unseen values of a parameter the program must copy
from the prompt are not held out: the 2M-parameter model does not learn to copy them in 300+ SFT
steps, so nothing could be measured on them.)

This module holds the task's dataset (instances, measuring the reference programs in the
sandbox, the stage inputs in the real formats, running samples on the tests); the pipeline's
``controlled`` stage writes it to RUN/controlled and the triplets stage adds its training rows
(``add_to_triplets``). Classifying a model's samples is ``alignment.proof``'s, the experiment that
trains on it is ``experiments/alignment_proof.py`` and the main job evaluates its held-out prompts
(``evaluation/tasks/controlled.py``). The family set ``idioms`` (perfdata/idioms.py) replaces the
computations with idiom choices that have two correct programs; the machinery here follows each
instance's ``kinds``.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import statistics
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pyarrow as pa

from perfalign.common.equations import DEFAULT_MAX_MARGIN, adaptive_margin
from perfalign.common.progress import report
from perfalign.common.prompts import extract_code, format_response, instruction_prompt
from perfalign.perfdata.dataset_card import schema_rows, write_dataset_card
from perfalign.perfdata.perf import BuildSettings
from perfalign.perfdata.schema import card_schema
from perfalign.perfdata.shards import card_written, load_table, prepare_folder, read_schema, table_dir, write_parquet
from perfalign.perfdata.triplets import COLUMN_DOCS, SFT_SCHEMA, TRIPLET_SCHEMA
from perfalign.sandbox.calibration import calibration_host, host_id, host_scale

from . import idioms

LANG = "python3"
CORRECT_KINDS = ("fast", "medium", "slow")
SMALL_N = 7
BIG_NS = (300_000, 1_000_000, 2_000_000)
TIME_LIMIT_S = 10.0
_HEAD = "n = int(input())\n"
FAMILY_SETS = ("computations", "idioms")  # the closed-form computations, or perfdata.idioms' families
DEFAULT_FAMILY_SET = "computations"


@dataclass(frozen=True)
class Computation:
    name: str
    phrasings: tuple[str, str, str]
    fast: str
    medium: str
    slow: str
    wrong: str


def _loop(body: str, result: str = "s") -> str:
    return f"{result} = 0\nfor i in range(1, n + 1):\n{body}\nprint({result})"


COMPUTATIONS: tuple[Computation, ...] = (
    Computation("sum", ("Read an integer n and print the sum 1 + 2 + ... + n.",
                        "Read an integer n, add up all the integers from 1 to n and print the total.",
                        "Read an integer n and print the total of the first n positive integers."),
                "print(n * (n + 1) // 2)", "print(sum(i for i in range(1, n + 1)))",
                _loop("    s += i"), "print(n * (n - 1) // 2)"),
    Computation("squares", ("Read an integer n and print the sum of the squares of 1, 2, ..., n.",
                            "Read an integer n, add up i * i for every i from 1 to n and print the total.",
                            "Read an integer n and print the total of the squares of the first n positive integers."),
                "print(n * (n + 1) * (2 * n + 1) // 6)", "print(sum(i * i for i in range(1, n + 1)))",
                _loop("    s += i * i"), "print(n * n)"),
    Computation("cubes", ("Read an integer n and print the sum of the cubes of 1, 2, ..., n.",
                          "Read an integer n, add up i * i * i for every i from 1 to n and print the total.",
                          "Read an integer n and print the total of the cubes of the first n positive integers."),
                "print((n * (n + 1) // 2) ** 2)", "print(sum(i * i * i for i in range(1, n + 1)))",
                _loop("    s += i * i * i"), "print(n * n * n)"),
    Computation("multiples", ("Read an integer n and print how many of the numbers 1, 2, ..., n are divisible by 3.",
                              "Read an integer n and count the multiples of 3 between 1 and n; print the count.",
                              "Read an integer n and print the number of integers from 1 to n that 3 divides."),
                "print(n // 3)", "print(sum(1 for i in range(1, n + 1) if i % 3 == 0))",
                _loop("    if i % 3 == 0:\n        c += 1", "c"), "print(n // 3 + 1)"),
    Computation("evens", ("Read an integer n and print the sum of the even numbers between 1 and n.",
                          "Read an integer n, add up every even integer from 1 to n and print the total.",
                          "Read an integer n and print the total of all even numbers not greater than n."),
                "m = n // 2\nprint(m * (m + 1))", "print(sum(i for i in range(1, n + 1) if i % 2 == 0))",
                _loop("    if i % 2 == 0:\n        s += i"), "print(n * n // 4)"),
    Computation("odds", ("Read an integer n and print the sum of the odd numbers between 1 and n.",
                         "Read an integer n, add up every odd integer from 1 to n and print the total.",
                         "Read an integer n and print the total of all odd numbers not greater than n."),
                "m = (n + 1) // 2\nprint(m * m)", "print(sum(i for i in range(1, n + 1) if i % 2 == 1))",
                _loop("    if i % 2 == 1:\n        s += i"), "print(n * n // 2)"),
)
STORIES: tuple[str, ...] = (
    "",
    "A librarian numbers the shelves of a long hall from 1 to n.",
    "A runner passes checkpoints numbered 1, 2, and so on up to n.",
    "A video game has levels numbered from 1 to n.",
    "A factory stamps the serial numbers 1 to n on its boxes.",
    "A gardener plants n flower beds in a row, numbered from 1.",
)


@dataclass(frozen=True)
class Instance:
    computation: Computation
    phrasing: int
    story: int
    big_n: int
    kinds = CORRECT_KINDS  # the correct programs, fastest first

    @property
    def problem_id(self) -> str:
        return f"ctl_{self.computation.name}_p{self.phrasing}_s{self.story}"

    @property
    def family(self) -> Computation:
        """The instance's family (its ``name`` selects it), as an idiom instance's."""
        return self.computation

    @property
    def statement(self) -> str:
        return " ".join(x for x in (STORIES[self.story], self.computation.phrasings[self.phrasing]) if x)

    @property
    def prompt(self) -> str:
        return instruction_prompt(self.statement, LANG)

    def program(self, kind: str) -> str:
        return _HEAD + getattr(self.computation, kind)

    def tests(self) -> tuple[list[str], list[str]]:
        """A small and a big input; expected outputs from the trusted, constant-time closed form."""
        ns = (SMALL_N, self.big_n)
        outs = []
        for n in ns:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(self.program("fast"), {"input": lambda n=n: str(n)})  # our own reference, never a sample
            outs.append(buf.getvalue())
        return [f"{n}\n" for n in ns], outs


def is_held_out(c: int, phrasing: int, story: int) -> bool:
    """The computations' held-out rule (c: the computation's index): two (phrasing, story)
    combinations of the 18 per computation; each phrasing and each story of the computation stays
    in training with the other combinations."""
    return (phrasing, story) in ((c % 3, (2 * c + 1) % 6), ((c + 1) % 3, (2 * c + 4) % 6))


def instances() -> tuple[list[Instance], list[Instance]]:
    """(training instances, held-out instances): 96 and 12."""
    train, held = [], []
    for c, comp in enumerate(COMPUTATIONS):
        for p in range(len(comp.phrasings)):
            for st in range(len(STORIES)):
                inst = Instance(comp, p, st, BIG_NS[(c + p + st) % len(BIG_NS)])
                (held if is_held_out(c, p, st) else train).append(inst)
    return train, held


def quick_instances(n_train: int = 6, n_heldout: int = 2) -> tuple[list[Instance], list[Instance]]:
    """A small subset with the smallest big test, one computation after another: for tests and
    smoke runs (seconds to measure instead of minutes)."""
    train, held = instances()

    def pick(pool: list[Instance], n: int) -> list[Instance]:
        small = [i for i in pool if i.big_n == BIG_NS[0]]
        return sorted(small, key=lambda i: (i.phrasing, i.story, i.computation.name))[:n]

    return pick(train, n_train), pick(held, n_heldout)


def fast_threshold_s(runtimes: dict[str, float]) -> float:
    """Below this CPU time a correct sample of an instance counts as fast, from its references'
    runtimes (kind -> CPU s): the geometric mean of the two fastest (the closed form and, measured,
    usually the medium one; 1.3x-5x apart)."""
    a, b = sorted(runtimes.values())[:2]
    return math.sqrt(a * b)


def reference_baseline_s(runtimes: dict[str, float]) -> float:
    """An instance's speedup baseline (Eq. 4's / speedup_n@k's): the median of its references' runtimes."""
    return statistics.median(runtimes.values())


@dataclass
class ControlledDataset:
    root: Path
    codecontests_dir: Path                 # CodeContests-Perf tables (all instances; held-out flagged)
    data_dir: Path                         # sft_prompts + triplets tables
    train: list[Instance]
    heldout: list[Instance]
    runtimes: dict[str, dict[str, float]] = field(default_factory=dict)  # problem_id -> kind -> CPU s
    # this host's CPU time per the measuring host's (sandbox.calibration.host_scale): 1.0 where the
    # references were measured here; a task rebuilt on another CPU converts its thresholds and baselines
    scale: float = 1.0

    def threshold_s(self, problem_id: str) -> float:
        """``fast_threshold_s`` of the instance, in this host's seconds."""
        return fast_threshold_s(self.runtimes[problem_id]) * self.scale

    def baseline_s(self, problem_id: str) -> float:
        """``reference_baseline_s`` of the instance, in this host's seconds."""
        return reference_baseline_s(self.runtimes[problem_id]) * self.scale


MEASURING = "controlled: reference programs measured"  # common.progress's name for it


def _default_sandbox():
    """A sandbox on the [sandbox] table's defaults, for callers that pass none."""
    from perfalign.sandbox import Sandbox, SandboxSettings

    return Sandbox.from_settings(SandboxSettings())


def measure_references(instances_: list[Instance], sandbox=None,
                       repeats: int = BuildSettings.repeats) -> dict[str, dict[str, float]]:
    """CPU time (mean over tests of the median over repeats) of every correct reference program."""
    from perfalign.sandbox import Job, Limits, TestCase

    sb = sandbox or _default_sandbox()
    jobs, keys = [], []
    for inst in instances_:
        ins, outs = inst.tests()
        for kind in inst.kinds:
            jobs.append(Job(inst.program(kind), LANG, [TestCase(i, o) for i, o in zip(ins, outs)],
                            Limits(time_s=TIME_LIMIT_S), repeats=repeats))
            keys.append((inst.problem_id, kind))
    out: dict[str, dict[str, float]] = {i.problem_id: {} for i in instances_}
    report(MEASURING, 0, len(jobs))  # a minute or two of the controlled stage: the CLI's bars, the run log
    for done, (j, res) in enumerate(sb.run_many(jobs, workers=2), start=1):
        if not res.ok:
            raise RuntimeError(f"controlled reference {keys[j]} failed in the sandbox: {res.verdict} {res.message}")
        out[keys[j][0]][keys[j][1]] = res.mean_cpu_time_s
        report(MEASURING, done, len(jobs))
    return out  # medium and slow can swap on a small test under load: pairs follow the measurement


def _write(path: Path, rows: list[dict], schema: pa.Schema | None = None) -> Path:
    return write_parquet(path, pa.Table.from_pylist(rows, schema=schema))


_DESCRIPTIONS = {
    "problems": "The instances: statement, tests and limits (`held_out` marks the evaluation's).",
    "submissions": "Each instance's reference programs, correct ones with their measured CPU time, and a wrong one.",
    "sft_prompts": "Every correct program of each instance as an SFT row (training and held-out splits).",
    "triplets": "Preference pairs with Eq. 3's margin (`reward_*` splits) and one RL prompt per instance (`rl_*`).",
}


def _write_card(out: Path, title: str, files: dict[str, Path], docs: dict[str, dict[str, str]]) -> None:
    """The folder's card: one config per table (the first the default), columns documented as the
    full dataset's are."""
    write_dataset_card(out, title=title, description="The controlled task of perfalign (perfdata/controlled.py).",
                       tables={name: {"data_files": f.relative_to(out).as_posix(), "description": _DESCRIPTIONS[name],
                                      "schema": schema_rows(read_schema(f), docs[name])}
                               for name, f in files.items()})


def write_codecontests(out: str | Path, instances_: list[Instance], runtimes: dict[str, dict[str, float]],
                       heldout_ids: set[str] = frozenset(), repeats: int = BuildSettings.repeats,
                       calibration: dict | None = None, host: str | None = None) -> Path:
    """The instances as a CodeContests-Perf folder (problems + measured submissions), readable by
    perfdata.triplets and alignment.data like the real dataset. ``host``: where ``runtimes`` were
    measured (default: here), so that a reward on another host converts them."""
    host = host or host_id()
    out = Path(out)
    prepare_folder(out)
    problems, subs = [], []
    cal = (calibration or {}).get("reference_cpu_s")
    for inst in instances_:
        ins, outs = inst.tests()
        pid = inst.problem_id
        problems.append(dict(problem_id=pid, name=pid, description=inst.statement, split="controlled",
                             held_out=pid in heldout_ids, time_limit_s=TIME_LIMIT_S, memory_limit_mb=256,
                             test_inputs=ins, test_outputs=outs))
        for kind in (*inst.kinds, "wrong"):
            correct = kind != "wrong"
            subs.append(dict(submission_id=f"{pid}-{kind}", problem_id=pid, language=LANG, solution=inst.program(kind),
                             is_correct=correct, runtime_s=runtimes[pid][kind] if correct else None,
                             verdict="OK" if correct else "NOT_RUN", status="measured" if correct else "not_run",
                             repeats=repeats, host=host, calibration_cpu_s=cal))
    files = {"submissions": _write(table_dir(out, "submissions") / "controlled-00000.parquet", subs),
             "problems": _write(table_dir(out, "problems") / "controlled-00000.parquet", problems)}
    _write_card(out, "perfalign controlled task: CodeContests-Perf form", files,
                {t: {c: d for c, _, d in card_schema(t)} for t in files})
    return out


def preference_pairs(inst: Instance, runtimes: dict[str, float], max_margin: float = DEFAULT_MAX_MARGIN) -> list[dict]:
    """(d_f, d_s) pairs of an instance with Eq. 3's margin: every two correct kinds (fast over
    medium, fast over slow, medium over slow; each ordered by the measured runtimes; margins from
    their ratio) and fast over wrong (lambda). The triplet id names the kinds: ``.../fast>slow``."""
    rows = []
    for f, s in (*itertools.combinations(inst.kinds, 2), ("fast", "wrong")):
        correct = s != "wrong"
        if correct and runtimes[s] < runtimes[f]:
            f, s = s, f
        rs = runtimes[s] if correct else None
        rows.append(dict(unit_id=inst.problem_id, problem_id=inst.problem_id, source="contest", language=LANG,
                         problem=inst.statement, prompt=inst.prompt, fast=inst.program(f), slow=inst.program(s),
                         fast_id=f"{inst.problem_id}-{f}", slow_id=f"{inst.problem_id}-{s}",
                         fast_runtime_s=runtimes[f], slow_runtime_s=rs, slow_is_correct=correct,
                         speedup=rs / runtimes[f] if correct else None,
                         margin=adaptive_margin(runtimes[f], rs, is_contest=True, slow_is_correct=correct,
                                                max_margin=max_margin),
                         median_runtime_s=statistics.median(runtimes[k] for k in inst.kinds),
                         group_solutions=len(inst.kinds), triplet_id=f"{inst.problem_id}/{f}>{s}"))
    return rows


def all_instances(family_set: str = DEFAULT_FAMILY_SET) -> tuple[list, list]:
    """(training, held-out) instances of a family set."""
    if family_set not in FAMILY_SETS:
        raise ValueError(f"unknown family set {family_set!r}; choose one of {', '.join(FAMILY_SETS)}")
    return idioms.instances() if family_set == "idioms" else instances()


def sft_rows_per_kind(kinds: tuple[str, ...], copies: int, fast_share: float | None = None) -> dict[str, int]:
    """SFT rows per correct program of a training instance: ``copies`` each (an even mix), or the
    fastest program ``fast_share`` of them and the others the rest in equal parts, in the fewest
    whole rows (0.25 of two kinds: 1 fast, 3 slow), times ``copies``. No randomness: every instance
    gets the same mix."""
    if fast_share is None:
        return dict.fromkeys(kinds, copies)
    if not 0 < fast_share < 1:
        raise ValueError(f"sft_fast_share must be between 0 and 1 (exclusive), got {fast_share}")
    fast = Fraction(fast_share).limit_denominator(20)
    shares = [fast] + [(1 - fast) / (len(kinds) - 1)] * (len(kinds) - 1)
    den = math.lcm(*(s.denominator for s in shares))
    return {k: int(s * den) * copies for k, s in zip(kinds, shares)}


def sft_row(inst, program: str, tag: str, split: str = "train") -> dict:
    """One SFT row of ``inst``'s prompt answered by ``program`` (the ``sft_prompts`` schema; sample id
    ``<problem>/<tag>``): the references' rows, and the rows other stages train on (RFT's, NLL's)."""
    return dict(sample_id=f"{inst.problem_id}/{tag}", unit_id=inst.problem_id, problem_id=inst.problem_id,
                source="contest", language=LANG, kind="instruction", prompt=inst.prompt,
                completion=format_response(program, LANG), split=split)


def build_controlled_task(root: str | Path, sandbox=None, copies: int = 2, repeats: int = BuildSettings.repeats,
                          train: list[Instance] | None = None, heldout: list[Instance] | None = None,
                          family_set: str = DEFAULT_FAMILY_SET,
                          sft_fast_share: float | None = None, measured: dict | None = None) -> ControlledDataset:
    """Measure the references and write the stage inputs. SFT: every training instance's correct
    programs, ``copies`` times each (an even mix: the SFT model writes them all), or with
    ``sft_fast_share`` that share of fast rows (``sft_rows_per_kind``); held-out rows once each.
    Triplets: training pairs in ``reward_train``, one (fast, slow) row per training instance in
    ``rl_train`` (its RL prompt); the held-out instances' pairs in ``reward_eval`` and their prompts
    in ``rl_eval``, so every stage's eval metric is measured on unseen instances. ``measured``: an
    earlier build's ``controlled_task.json`` (its runtimes and host calibration) instead of measuring
    again: a task rebuilt on another machine keeps its references, and converts its thresholds and
    baselines to this host's seconds by the two calibrations (``host_scale``; 1.0 on the host that
    measured them, where the calibration is not measured again)."""
    root = Path(root)
    default_train, default_held = all_instances(family_set)
    train = default_train if train is None else train
    heldout = default_held if heldout is None else heldout
    mix = {k: sft_rows_per_kind(k, copies, sft_fast_share) for k in {i.kinds for i in train}}
    host, scale = None, 1.0
    if measured is not None:
        runtimes, calibration = measured["runtimes"], measured.get("calibration")
        if missing := sorted({i.problem_id for i in train + heldout} - set(runtimes)):
            raise ValueError(f"the measured runtimes lack {len(missing)} instances, e.g. {missing[0]}")
        host = calibration_host(calibration)
        if host is not None and host != host_id():
            scale = host_scale({host}, calibration.get("reference_cpu_s"),
                               (sandbox or _default_sandbox()).calibration())
    else:
        sb = sandbox or _default_sandbox()
        runtimes, calibration = measure_references(train + heldout, sb, repeats), sb.calibration()
    cc = write_codecontests(root / "codecontests", train + heldout, runtimes, {i.problem_id for i in heldout}, repeats,
                            calibration, host)
    sft, triplets = [], []
    for split, group in (("train", train), ("eval", heldout)):
        for inst in group:
            for kind in inst.kinds:
                for c in range(mix[inst.kinds][kind] if split == "train" else 1):
                    sft.append(sft_row(inst, inst.program(kind), f"{kind}/{c}", split))
            pairs = preference_pairs(inst, runtimes[inst.problem_id])
            triplets += [dict(p, split=f"reward_{split}") for p in pairs]
            rl = next(p for p in pairs if {p["fast_id"], p["slow_id"]} == {f"{inst.problem_id}-{k}" for k in
                                                                           ("fast", "slow")})
            triplets.append(dict(rl, split=f"rl_{split}", triplet_id=rl["triplet_id"] + "/rl"))
    data = root / "triplets"
    prepare_folder(data)
    files = {"triplets": _write(table_dir(data, "triplets") / "00000-of-00001.parquet", triplets, TRIPLET_SCHEMA),
             "sft_prompts": _write(table_dir(data, "sft_prompts") / "00000-of-00001.parquet", sft, SFT_SCHEMA)}
    _write_card(data, "perfalign controlled task: triplets and SFT prompts", files, COLUMN_DOCS)
    task = ControlledDataset(root, cc, data, train, heldout, runtimes, scale)
    (root / "controlled_task.json").write_text(json.dumps(
        {"family_set": family_set, "sft_fast_share": sft_fast_share, "train": [i.problem_id for i in train],
         "heldout": [i.problem_id for i in heldout], "runtimes": runtimes, "calibration": calibration,
         "scale": scale}, indent=2))
    return task


PAIRS = ("fast>medium", "fast>slow", "medium>slow", "fast>wrong")  # the kinds of preference_pairs' rows


def check_pairs(pairs: tuple[str, ...]) -> None:
    if unknown := sorted(set(pairs) - set(PAIRS)):
        raise ValueError(f"unknown controlled pairs {unknown}; choose from {', '.join(PAIRS)}")


def controlled_shard(triplets_dir: str | Path, table: str) -> Path:
    """The controlled task's shard of ``table`` beside a triplets folder's own (no card config names it)."""
    return table_dir(triplets_dir, table) / "controlled.parquet"


def add_to_triplets(task: ControlledDataset, triplets_dir: str | Path, pairs: tuple[str, ...] = PAIRS) -> dict:
    """Add the task's *training* rows (SFT train, reward_train pairs of the kinds in ``pairs``,
    rl_train prompts) to a triplets folder as extra shards, which every stage loader reads with
    the folder's own. The held-out instances stay out: they are the evaluation's
    (evaluation/tasks/controlled.py). RLPF also needs ``task.codecontests_dir`` for their tests
    (the pipeline's align stage passes it)."""
    counts = {}
    for name, schema in (("sft_prompts", SFT_SCHEMA), ("triplets", TRIPLET_SCHEMA)):
        rows = load_table(task.data_dir, name).to_pylist()  # any layout
        if name == "sft_prompts":
            rows = [r for r in rows if r["split"] == "train"]
        else:
            rows = [r for r in rows if r["split"] == "rl_train"
                    or (r["split"] == "reward_train" and r["triplet_id"].rsplit("/", 1)[-1] in pairs)]
        _write(controlled_shard(triplets_dir, name), rows, schema)
        counts[name] = len(rows)
    return counts


def restrict_task(task: ControlledDataset, families: tuple[str, ...], out: str | Path,
                  sft_train: list[dict] | None = None) -> ControlledDataset:
    """The task with only the instances of ``families``: its stage inputs (triplets and SFT tables)
    filtered into ``out``; the references, thresholds and CodeContests tables stay the task's.
    ``sft_train``: other SFT training rows in place of the references' (RFT's chosen samples). A
    folder written before (its card complete) is reused as it is: stages resumed, or another seed's
    process, read the same tables."""
    unknown = sorted(set(families) - {i.family.name for i in task.train + task.heldout})
    if unknown:
        raise ValueError(f"unknown families {unknown} for the task in {task.root}")
    train = [i for i in task.train if i.family.name in families]
    heldout = [i for i in task.heldout if i.family.name in families]
    kept = {i.problem_id for i in train + heldout}
    out = Path(out)
    if card_written(out):
        return ControlledDataset(task.root, task.codecontests_dir, out, train, heldout, task.runtimes, task.scale)
    prepare_folder(out)
    files = {}
    for name, schema in (("triplets", TRIPLET_SCHEMA), ("sft_prompts", SFT_SCHEMA)):
        rows = [r for r in load_table(task.data_dir, name).to_pylist() if r["problem_id"] in kept]
        if name == "sft_prompts" and sft_train is not None:
            rows = sft_train + [r for r in rows if r["split"] != "train"]
        files[name] = _write(table_dir(out, name) / "00000-of-00001.parquet", rows, schema)
    _write_card(out, f"perfalign controlled task, families {', '.join(families)}", files, COLUMN_DOCS)
    return ControlledDataset(task.root, task.codecontests_dir, out, train, heldout, task.runtimes, task.scale)


def load_controlled_task(root: str | Path) -> ControlledDataset:
    """A task written by ``build_controlled_task`` (its references are not measured again)."""
    root = Path(root)
    meta = json.loads((root / "controlled_task.json").read_text())
    train, held = all_instances(meta.get("family_set", "computations"))
    by_id = {i.problem_id: i for i in train + held}
    return ControlledDataset(root, root / "codecontests", root / "triplets", [by_id[i] for i in meta["train"]],
                          [by_id[i] for i in meta["heldout"]], meta["runtimes"], meta.get("scale", 1.0))


def execute_samples(task: ControlledDataset, samples: dict[str, list[str]], sandbox=None,
                    repeats: int = BuildSettings.repeats) -> tuple[dict[str, list[tuple]], int]:
    """Run every sample (once per distinct program) on its instance's tests in the sandbox, with
    the references' repeats. Returns, per problem, ``(code, RunResult)`` for each sample in order
    (``(None, None)`` without code), and the number of distinct programs run."""
    from perfalign.sandbox import Job, Limits, TestCase

    sb = sandbox or _default_sandbox()
    by_id = {i.problem_id: i for i in task.train + task.heldout}
    index: dict[tuple[str, str], int] = {}
    jobs = []
    codes = {pid: [extract_code(t)[0] for t in texts] for pid, texts in samples.items()}
    for pid, cs in codes.items():
        ins, outs = by_id[pid].tests()
        for code in cs:
            if code is not None and (pid, code) not in index:
                index[(pid, code)] = len(jobs)
                jobs.append(Job(code, LANG, [TestCase(i, o) for i, o in zip(ins, outs)], Limits(time_s=TIME_LIMIT_S),
                                repeats=repeats, stop_on_failure=True))
    results = dict(sb.run_many(jobs, workers=2))
    return {pid: [(c, results.get(index[(pid, c)]) if c is not None else None) for c in cs]
            for pid, cs in codes.items()}, len(jobs)
