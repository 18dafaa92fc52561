"""Assemble the bundled CodeContests sample from problems/ into Parquet in the real
deepmind/code_contests schema (data/train-*.parquet, data/test-*.parquet for held-out problems).

Expected outputs come from each problem's reference solution, run in the sandbox.

    .venv/bin/python data/codecontests_sample/build_sample.py [--backend auto]

The Parquet files are committed; rerun this only after editing problems/.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from perfalign.sandbox import Language, Limits, Sandbox, TestCase  # noqa: E402

EXT_LANG = {".cpp": 2, ".py": 3, ".java": 4}
_TESTS = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
_SOLS = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
SCHEMA = pa.schema([
    ("name", pa.string()), ("description", pa.string()),
    ("public_tests", _TESTS), ("private_tests", _TESTS), ("generated_tests", _TESTS),
    ("source", pa.int64()), ("difficulty", pa.int64()),
    ("solutions", _SOLS), ("incorrect_solutions", _SOLS),
    ("cf_contest_id", pa.int64()), ("cf_index", pa.string()), ("cf_points", pa.float64()),
    ("cf_rating", pa.int64()), ("cf_tags", pa.list_(pa.string())),
    ("is_description_translated", pa.bool_()), ("untranslated_description", pa.string()),
    ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])),
    ("memory_limit_bytes", pa.int64()), ("input_file", pa.string()), ("output_file", pa.string()),
])


def load_gen(path: Path):
    spec = importlib.util.spec_from_file_location(f"gen_{path.parent.name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.tests()


def build_problem(d: Path, sb: Sandbox) -> tuple[dict, dict]:
    meta = json.loads((d / "meta.json").read_text())
    tests = load_gen(d / "gen.py")
    ref = d / "solutions" / meta["reference"]
    ref_lang = Language.from_codecontests(EXT_LANG[ref.suffix])
    limits = Limits(time_s=float(meta.get("time_limit_seconds", 2)) * 5, memory_mb=int(meta.get("memory_limit_mb", 256)))
    groups = {}
    for group in ("public", "private", "generated"):
        inputs = tests.get(group, [])
        res = sb.run(ref.read_text(), ref_lang, [TestCase(i) for i in inputs], limits, keep_output=True)
        if inputs and not res.ok:
            raise SystemExit(f"{d.name}: reference {ref.name} failed on {group}: {res.verdict} {res.message}")
        groups[group] = {"input": list(inputs), "output": [t.output for t in res.tests] if inputs else []}
    files = sorted((d / "solutions").iterdir())
    correct = [f for f in files if f.name.startswith("correct_")]
    incorrect = [f for f in files if f.name.startswith("incorrect_")]
    row = {
        "name": meta["name"], "description": meta["description"],
        "public_tests": groups["public"], "private_tests": groups["private"], "generated_tests": groups["generated"],
        "source": meta.get("source", 2), "difficulty": meta.get("difficulty", 0),
        "solutions": {"language": [EXT_LANG[f.suffix] for f in correct], "solution": [f.read_text() for f in correct]},
        "incorrect_solutions": {"language": [EXT_LANG[f.suffix] for f in incorrect], "solution": [f.read_text() for f in incorrect]},
        "cf_contest_id": meta.get("cf_contest_id", 0), "cf_index": meta.get("cf_index", ""), "cf_points": 0.0,
        "cf_rating": meta.get("cf_rating", 0), "cf_tags": meta.get("cf_tags", []),
        "is_description_translated": False, "untranslated_description": "",
        "time_limit": {"seconds": int(meta.get("time_limit_seconds", 2)), "nanos": 0},
        "memory_limit_bytes": int(meta.get("memory_limit_mb", 256)) * 1024 * 1024,
        "input_file": "", "output_file": "",
    }
    names = [f.name for f in correct]
    order = {
        "held_out": bool(meta.get("held_out")),
        "known_faster": [[names.index(a), names.index(b)] for a, b in meta.get("known_faster", [])],
        "known_faster_files": meta.get("known_faster", []),
        "solution_files": names,
        "incorrect_files": [f.name for f in incorrect],
    }
    return row, order


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    rows = {"train": [], "test": []}
    known = {}
    with Sandbox(backend=args.backend, workers=1, calibrate=False) as sb:
        for d in sorted(p for p in (HERE / "problems").iterdir() if (p / "meta.json").exists()):
            row, order = build_problem(d, sb)
            rows["test" if order["held_out"] else "train"].append(row)
            known[row["name"]] = order
            print(f"{d.name}: {len(row['solutions']['solution'])} correct, "
                  f"{len(row['incorrect_solutions']['solution'])} incorrect, "
                  f"{sum(len(row[k]['input']) for k in ('public_tests', 'private_tests', 'generated_tests'))} tests")
    out = HERE / "data"
    out.mkdir(exist_ok=True)
    for split, rs in rows.items():
        pq.write_table(pa.Table.from_pylist(rs, schema=SCHEMA), out / f"{split}-00000-of-00001.parquet", compression="zstd")
    (HERE / "known_order.json").write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    print(f"wrote {sum(map(len, rows.values()))} problems ({len(rows['test'])} held out) to {out}")


if __name__ == "__main__":
    main()
