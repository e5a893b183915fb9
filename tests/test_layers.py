"""The package's layering (README "What is here"): every import points down the stack, so the
world (sites, tasks, env) can be used alone, and the method alone. Imports for type checking only
(`if TYPE_CHECKING:`) are exempt: they never run."""

import ast
from pathlib import Path

import webrl

# lower number = lower layer; a module may import its own layer and any lower one
LEVELS = {"files": 0, "provenance": 0, "tensorboard": 0, "sites": 1, "tasks": 2, "env": 3, "models": 4, "agent": 4,
          "orm": 5, "rollout": 6, "rl": 7, "eval": 8, "cli": 9}  # fmt: skip
ROOT = Path(webrl.__file__).parent


def _imports(tree: ast.AST):
    """(line, module) of every `webrl.*` import outside `if TYPE_CHECKING:` blocks."""
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
            for n in ast.walk(node)}  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("webrl."):
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if a.name.startswith("webrl."))


def upward_imports(root: Path = ROOT) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        me = path.relative_to(root).with_suffix("").parts[0]
        if me == "__init__":
            continue
        assert me in LEVELS, f"{path}: a package or module outside the layer table; add it to LEVELS and the README"
        for line, module in _imports(ast.parse(path.read_text())):
            other = module.split(".")[1]
            assert other in LEVELS, f"{path}:{line} imports {module}, outside the layer table"
            if LEVELS[other] > LEVELS[me]:
                out.append(f"{path.relative_to(root)}:{line} ({me}) imports {module} ({other})")
    return out


def test_imports_point_down_only():
    assert upward_imports() == []


def test_the_check_finds_an_upward_import(tmp_path):
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "x.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                          "    from webrl.rl.loop import train\nfrom webrl.tasks.schema import Task\n"
                                          "import webrl.rollout.llm\n")  # fmt: skip
    assert upward_imports(tmp_path) == ["env/x.py:5 (env) imports webrl.rollout.llm (rollout)"]
