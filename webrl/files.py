"""Crash-safe file writes and tolerant JSONL reads, for everything a resume reads back.

A file is written whole to a temporary sibling and renamed over the target (`os.replace` is
atomic on POSIX), so a crash leaves either the old file or the new one, never half of one.
Append-only JSONL logs (episodes, metrics) may still end in a torn line after a kill;
`read_jsonl` drops lines that do not parse instead of failing the resume, and reads a file's
gzipped copy (`NAME.gz`, as `webrl archive` writes them) when the file itself is absent.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary sibling and a rename (parent folders made)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, obj, **kw) -> None:
    kw.setdefault("indent", 1)
    write_text_atomic(path, json.dumps(obj, **kw) + "\n")


def write_jsonl_atomic(path: Path, rows: list[dict]) -> None:
    write_text_atomic(path, "".join(json.dumps(r) + "\n" for r in rows))


def read_text_or_gz(path: Path) -> str | None:
    """The text of `path`, else of its gzipped sibling `path.gz` (how `webrl archive` stores a large
    JSONL file), else None."""
    path = Path(path)
    if path.exists():
        return path.read_text()
    gz = path.with_name(path.name + ".gz")
    return gzip.decompress(gz.read_bytes()).decode() if gz.exists() else None


def read_json(path: Path):
    """A JSON file's content; a file that does not parse is a ValueError naming it (a run's
    config or summary damaged by hand or by a full disk, say)."""
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg}, line {e.lineno}); restore or delete the file") from None


def load_jsonl(path: Path) -> list[dict]:
    """The rows of a JSONL data file (demonstrations, ORM data): strict, unlike `read_jsonl`: a
    missing file raises, and so does a line that is not a JSON object (ValueError naming the file
    and the line)."""
    rows = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: line {i} is not JSON ({e.msg}); one JSON object a line expected") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}: line {i} is a JSON {type(row).__name__}, not an object")
        rows.append(row)
    return rows


def read_jsonl(path: Path) -> list[dict]:
    """The rows of a JSONL file ([] when missing), skipping lines that do not parse: a line torn
    by a kill mid-append, or the next append glued onto it."""
    text = read_text_or_gz(path)
    if text is None:
        return []
    rows = []
    for line in text.splitlines():
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def copytree_atomic(src: Path, dst: Path, ignore=None) -> None:
    """Replace the folder `dst` by a copy of `src`: copied beside it first, then swapped in by
    renames, so a crash never leaves `dst` holding part of the copy."""
    src, dst = Path(src), Path(dst)
    tmp = dst.with_name(f".{dst.name}.tmp")
    old = dst.with_name(f".{dst.name}.old")
    for p in (tmp, old):
        if p.exists():
            shutil.rmtree(p)
    shutil.copytree(src, tmp, ignore=ignore)
    if dst.exists():
        os.replace(dst, old)
    os.replace(tmp, dst)
    if old.exists():
        shutil.rmtree(old)


KEEP_CHECKPOINTS = 2  # a crash while writing the newest still leaves a complete one to resume from


def _step(ckpt: Path) -> int:
    return int(ckpt.name[len("ckpt-") :])


def checkpoints(out: Path, complete: bool = True) -> list[Path]:
    """The `ckpt-<step>` folders of `out`, oldest first; only the complete ones (their
    `trainer_state.pt` is written last) unless `complete` is False."""
    found = [p for p in Path(out).glob("ckpt-*") if p.name[len("ckpt-") :].isdigit()]
    return sorted((p for p in found if not complete or (p / "trainer_state.pt").exists()), key=_step)


def prune_checkpoints(out: Path, keep: int = KEEP_CHECKPOINTS) -> list[Path]:
    """Delete the `ckpt-<step>` folders of `out` older than its `keep` newest complete ones;
    returns what was deleted. Without this a run that saves often fills the disk: an encoder
    ORM checkpoint is ≈ 260 MB."""
    if keep < 1:
        raise ValueError(f"prune_checkpoints: keep must be >= 1, got {keep}")
    complete = checkpoints(out)
    if len(complete) <= keep:
        return []
    gone = [p for p in checkpoints(out, complete=False) if _step(p) < _step(complete[-keep])]
    for p in gone:
        shutil.rmtree(p)
    return gone
