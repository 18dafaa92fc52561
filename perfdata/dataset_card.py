"""Hugging Face dataset card (README.md) for a folder of parquet tables.

The YAML `configs:` block is what makes a multi-table folder loadable: `datasets.load_dataset(folder_or_repo,
"<table>")` picks the files of one table, and the first table (marked `default: true`) loads without a name.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Sequence

import yaml

_CONFIG_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_SPLIT_NAME = re.compile(r"\w+(\.\w+)*")  # what `datasets` accepts as a split name


def _md_cell(text: str) -> str:
    # A "|" or a newline would break the Markdown table row.
    return str(text).replace("|", "\\|").replace("\n", " ")


def _files_md(data_files: str | dict[str, str]) -> str:
    if isinstance(data_files, str):
        return f"`{data_files}`"
    return ", ".join(f"`{pattern}` (split `{split}`)" for split, pattern in data_files.items())


def schema_rows(schema, docs: dict[str, str]) -> list[tuple[str, str, str]]:
    """(column, type, description) rows of a card's table from an Arrow schema; every column
    must have its description in ``docs`` (a new column without one fails here, not silently)."""
    missing = [f.name for f in schema if f.name not in docs]
    if missing:
        raise ValueError(f"no description for columns {missing}")
    return [(f.name, str(f.type), docs[f.name]) for f in schema]


def write_dataset_card(
    out_dir: Path,
    *,
    title: str,
    description: str,
    tables: dict[str, dict],
    license: str = "cc-by-4.0",
    extra_markdown: str = "",
    tags: Sequence[str] = ("code", "performance"),
) -> Path:
    """Write `out_dir/README.md` documenting `tables` and return its path.

    `tables` maps a config name to {"data_files": glob relative to out_dir, "description": str,
    "schema": [(column, type, description), ...]}. "data_files" may also map split names to globs
    ({"train": "x/train-*.parquet", "test": ...}): `load_dataset(folder, split="test")` then
    loads that split. Each glob must already match a file under out_dir, so a typo fails here
    rather than at load time.
    """
    out_dir = Path(out_dir)
    if not tables:
        raise ValueError("tables is empty: a dataset card needs at least one table")
    configs = []
    for i, (name, spec) in enumerate(tables.items()):
        if not _CONFIG_NAME.fullmatch(name):
            raise ValueError(f"invalid table name {name!r}: use letters, digits, '_', '-', '.'")
        by_split = spec["data_files"] if isinstance(spec["data_files"], dict) else {"train": spec["data_files"]}
        for split, pattern in by_split.items():
            pure = PurePosixPath(pattern)
            if pure.is_absolute() or ".." in pure.parts or "\\" in pattern:
                raise ValueError(f"data_files of {name!r} must be a relative POSIX glob inside out_dir, "
                                 f"got {pattern!r}")
            if not _SPLIT_NAME.fullmatch(split):
                raise ValueError(f"invalid split name {split!r} for {name!r}: use letters, digits and '_'")
            if not any(p.is_file() for p in out_dir.glob(pattern)):
                raise ValueError(f"data_files of {name!r} ({pattern!r}) matches no file under {out_dir}")
        config = {"config_name": name, "data_files": [{"split": k, "path": v} for k, v in by_split.items()]}
        if i == 0:
            config["default"] = True  # so load_dataset(path) works without naming a table
        configs.append(config)

    meta = {"license": license, "pretty_name": title, "tags": list(tags), "configs": configs}
    parts = [
        "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n",
        f"# {title}\n\n{description.strip()}\n",
        "## Tables\n\n"
        + "\n".join(f"- `{name}`: {_md_cell(spec.get('description', ''))}" for name, spec in tables.items())
        + "\n\nLoad one with `datasets.load_dataset(<repo or folder>, \"<table>\")`; the first table is the default.\n",
    ]
    for name, spec in tables.items():
        rows = "\n".join(f"| `{_md_cell(c)}` | `{_md_cell(t)}` | {_md_cell(d)} |" for c, t, d in spec.get("schema", []))
        parts.append(
            f"### `{name}`\n\n{spec.get('description', '').strip()}\n\nFiles: {_files_md(spec['data_files'])}\n\n"
            f"| Column | Type | Description |\n|---|---|---|\n{rows}\n"
        )
    if extra_markdown.strip():
        parts.append(extra_markdown.strip() + "\n")

    path = out_dir / "README.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
