"""`webrl archive SRC --out DST`: a slim copy of a run's evidence, small enough to commit.

Run folders hold checkpoints and every page the agent saw (hundreds of MB a run); a machine that
loses them loses the evidence behind a results table. The archive keeps what the tables, the
report and the viewer read, and nothing that needs a model:

- every `*.json`, `*.jsonl`, `*.md`, `done` and `wall_seconds` file under SRC, folder structure kept;
- skipped: folders that hold weights (a `*.safetensors`, `*.bin` or `*.pt` file: checkpoints,
  with their configs) and TensorBoard folders (`tb`: the metrics files hold the same numbers);
- slimmed (`slim_row`): episode-like rows lose the page text (`final_obs`, each step's `obs` and
  `screenshot`); the intent, responses, parsed actions, errors, URLs and rewards stay;
- JSONL files over `GZIP_OVER` bytes after slimming are stored gzipped as `NAME.gz`, which
  `read_jsonl` and `read_episodes` read in place of the missing `NAME`; a source's own `NAME.gz`
  without a `NAME` (a run adopted from an archive) is archived as its JSONL;
- files still over `max_bytes` are left out and listed in the manifest;
- folders named in `exclude` are not walked, and what DST already holds of them stays as it is
  (`webrl study --archive` excludes its unfinished runs: a study stopped mid-run and restarted
  archives no partial records).

`ARCHIVE.json` at DST's top says where it came from, when, which code archived it (the runs'
own commits are in their `invocations.jsonl`), and what was left out. A study folder archives
whole (its runs are subfolders), so `webrl study --table` and `webrl report` regenerate from the
archive; `webrl study --archive DST` refreshes it after every finished run. Archiving again
replaces the files it writes, and drops its earlier copy of a file now left out (an interrupted
archive is redone).
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

from webrl.files import read_jsonl, write_bytes_atomic, write_json_atomic
from webrl.provenance import code_version

KEEP_SUFFIXES = (".json", ".jsonl", ".md")
KEEP_NAMES = ("done", "wall_seconds")  # marks and clocks of finished stages and phases
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt")
SKIP_DIRS = ("tb",)
PAGE_KEYS = ("obs", "screenshot")  # a step's page text and screenshot path
GZIP_OVER = 64 * 1024
MANIFEST = "ARCHIVE.json"


def slim_row(row):
    """A JSONL row without page text: `final_obs` dropped, and `obs` / `screenshot` dropped from
    each dict of its `steps` list; any other row is returned as it is."""
    if not isinstance(row, dict):
        return row
    out = {k: v for k, v in row.items() if k != "final_obs"}
    if isinstance(out.get("steps"), list):
        out["steps"] = [{k: v for k, v in s.items() if k not in PAGE_KEYS} if isinstance(s, dict) else s
                        for s in out["steps"]]  # fmt: skip
    return out


def holds_weights(folder: Path) -> bool:
    return any(f.suffix in WEIGHT_SUFFIXES for f in folder.iterdir() if f.is_file())


def kept_files(src: Path, exclude: tuple[Path, ...] = ()) -> list[Path]:
    """The files under `src` the archive keeps (paths relative to `src`), in walk order; the
    folders in `exclude` (relative to `src`) are not walked."""
    keep: list[Path] = []
    for root, dirs, files in os.walk(src):
        here = Path(root)
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                         and (here / d).relative_to(src) not in exclude
                         and not holds_weights(here / d))  # fmt: skip
        for name in sorted(files):
            if name.startswith(".") or name == MANIFEST:
                continue
            if name.endswith(".jsonl.gz"):  # an archive's own form (an adopted archived run): as its JSONL
                if name[: -len(".gz")] not in files:  # (the readers take a plain sibling first)
                    keep.append((here / name[: -len(".gz")]).relative_to(src))
            elif name in KEEP_NAMES or Path(name).suffix in KEEP_SUFFIXES:
                keep.append((here / name).relative_to(src))
    return keep


def archive(src: str | Path, dst: str | Path, max_bytes: int = 4 * 2**20, exclude=()) -> dict:
    """Write the slim copy of `src` into `dst` (see the module docstring), leaving out the folders
    `exclude` names (relative to `src`); returns the manifest."""
    src, dst = Path(src), Path(dst)
    exclude = tuple(Path(e) for e in exclude)
    if not src.is_dir():
        raise FileNotFoundError(f"archive: {src} is not a folder (give a run, study or demo folder)")
    if dst.resolve() == src.resolve() or src.resolve() in dst.resolve().parents:
        raise ValueError(f"archive: --out {dst} must lie outside {src}")
    if dst.exists() and (not dst.is_dir() or (any(dst.iterdir()) and not (dst / MANIFEST).exists())):
        raise ValueError(f"archive: --out {dst} is neither a new or empty folder nor an archive to refresh (no "
                         f"{MANIFEST}): archiving there would overwrite its files; pick another --out")  # fmt: skip
    files, left_out, total = [], [], 0
    for rel in kept_files(src, exclude):
        name = rel
        if rel.suffix == ".jsonl":  # read_jsonl takes NAME.gz when NAME is missing
            data = "".join(json.dumps(slim_row(r)) + "\n" for r in read_jsonl(src / rel)).encode()
            if len(data) > GZIP_OVER:
                data, name = gzip.compress(data, mtime=0), rel.with_name(rel.name + ".gz")
        else:
            data = (src / rel).read_bytes()
        too_big = len(data) > max_bytes
        for old in (dst / rel, dst / rel.with_name(rel.name + ".gz")):
            if too_big or old != dst / name:  # an earlier archive's other form, or its copy of a file now left out
                old.unlink(missing_ok=True)
        if too_big:
            left_out.append({"path": str(rel), "bytes": len(data)})
            continue
        write_bytes_atomic(dst / name, data)
        files.append(str(name))
        total += len(data)
    manifest = {"source": str(src.resolve()), "archived": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "archiver": code_version(), "files": len(files), "bytes": total, "left_out": left_out,
                "excluded": sorted(str(e) for e in exclude), "dropped": ["checkpoints (folders with weights)", "tb/", "final_obs", "steps[].obs",
                            "steps[].screenshot"]}  # fmt: skip
    write_json_atomic(dst / MANIFEST, manifest)
    return manifest
