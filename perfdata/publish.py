"""Publish a dataset folder (parquet tables + README.md card) to the Hugging Face Hub."""

from __future__ import annotations

import re
from pathlib import Path

from huggingface_hub import HfApi, constants, get_token
from huggingface_hub.utils import filter_repo_objects

from perfalign.perfdata.shards import card_written

# What goes up: the card and the parquet tables, nothing else. Hidden files/dirs (.cache, .lock, .git)
# and leftovers of interrupted writes must never reach the repo, where a glob in the card would load them.
ALLOW_PATTERNS = ["README.md", "*.parquet"]
IGNORE_PATTERNS = [".*", "*/.*", "*.tmp", "*.lock", "*.partial", "*.incomplete", "*~",
                   "quarantine/*"]  # corrupt shards a build moved aside (perfdata.shards)
# Parquet files in the repo that are not in this upload are deleted, so a re-publish with fewer
# shards leaves no stale shard behind for the card's glob to pick up.
DELETE_PATTERNS = ["*.parquet"]

_REPO_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REPO_ID = re.compile(rf"(?:{_REPO_PART}/)?{_REPO_PART}")
_REAL_HUB = "https://huggingface.co"


class PublishError(ValueError):
    """The folder or arguments cannot be published; the message says why."""


def card_globs(card: Path) -> list[str]:
    """Every data_files glob of a card's configs (the YAML front matter's ``configs``); none for
    a card whose YAML does not parse (the Hub's validation then names the fault)."""
    import yaml
    from huggingface_hub.repocard import metadata_load

    globs: list[str] = []

    def add(spec) -> None:
        if isinstance(spec, str):
            globs.append(spec)
        elif isinstance(spec, list):
            for item in spec:
                add(item.get("path") if isinstance(item, dict) else item)

    try:
        configs = (metadata_load(card) or {}).get("configs") or []
    except yaml.YAMLError:
        return []
    for config in configs:
        add(config.get("data_files"))
    return globs


def files_to_upload(folder: Path) -> list[str]:
    """Paths (relative, POSIX) that publish_dataset uploads from `folder`: the card and the Parquet
    files its configs name, so every published file is one a reader of the card can find (a
    table the card does not name, e.g. a training-only shard beside its tables, stays local)."""
    rel = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    allowed = list(filter_repo_objects(rel, allow_patterns=ALLOW_PATTERNS, ignore_patterns=IGNORE_PATTERNS))
    globs = card_globs(folder / "README.md")
    if not globs:  # no configs: readers take every Parquet file
        return allowed
    named = set(filter_repo_objects(allowed, allow_patterns=globs))
    return [f for f in allowed if f == "README.md" or f in named]


def publish_dataset(
    folder: Path,
    repo_id: str,
    *,
    private: bool = False,
    token: str | None = None,
    endpoint: str | None = None,
    commit_message: str = "Upload dataset (parquet tables and card)",
) -> str:
    """Create (if needed) the dataset repo `repo_id` and upload the folder's parquet files and README.md.

    Token: `token`, else HF_TOKEN, else the token stored by `hf auth login`; required for the real Hub.
    `endpoint` defaults to HF_ENDPOINT (read by huggingface_hub at import). Returns the dataset URL.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise PublishError(f"dataset folder not found: {folder}")
    if not (folder / "README.md").is_file():
        raise PublishError(f"{folder} has no README.md dataset card (write one with perfdata.dataset_card)")
    if not card_written(folder):
        raise PublishError(f"{folder}: its dataset card is pending (the build writing the folder has not finished): "
                           "rerun the build, then publish")
    files = files_to_upload(folder)
    if not any(f.endswith(".parquet") for f in files):
        raise PublishError(f"{folder} contains no parquet files to publish")
    if not _REPO_ID.fullmatch(repo_id or "") or "--" in repo_id or ".." in repo_id:
        raise PublishError(f"invalid repo id {repo_id!r}: expected NAME or ORG/NAME (letters, digits, '-', '_', '.')")

    endpoint = (endpoint or constants.ENDPOINT).rstrip("/")
    token = token or get_token()  # HF_TOKEN (read now, not at import), else the stored login token
    if token is None and endpoint == _REAL_HUB:
        raise PublishError("no Hugging Face token: give --token, set HF_TOKEN, or run `hf auth login`")

    api = HfApi(endpoint=endpoint, token=token)
    repo_url = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    # Use the id the Hub returned: a bare NAME is created under the token owner's namespace.
    api.upload_folder(
        repo_id=repo_url.repo_id,
        repo_type="dataset",
        folder_path=folder,
        allow_patterns=files,  # the card and the files it names, nothing else
        ignore_patterns=IGNORE_PATTERNS,
        delete_patterns=DELETE_PATTERNS,
        commit_message=commit_message,
    )
    return str(repo_url)
