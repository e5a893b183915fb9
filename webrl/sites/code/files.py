"""A project's repository files (default branch): a README, a license and a
small source tree in the project's language, each file a few short lines.

Pure functions of the project's name, description, language and modules, so
the seed stays deterministic without drawing more random numbers.
"""

from __future__ import annotations

LICENSE = "MIT License\n\nCopyright (c) {year} The {name} authors\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this software.\n"

COMMANDS = {  # language -> (install, test)
    "python": ("pip install -e .", "pytest"),
    "javascript": ("npm install", "npm test"),
    "go": ("go build ./...", "go test ./..."),
    "rust": ("cargo build", "cargo test"),
    "docs": ("pip install mkdocs", "mkdocs build --strict"),
}


def readme(name: str, description: str, language: str, modules: list[str]) -> str:
    install, test = COMMANDS[language]
    parts = ", ".join(modules[:3])
    return (
        f"# {name}\n\n{description}\n\n## Getting started\n\n"
        f"- Install: `{install}`\n- Run the tests: `{test}`\n\n"
        f"## Layout\n\nThe main parts are {parts} and {modules[3]}.\n\n"
        "## License\n\nMIT, see LICENSE.\n"
    )


def _python(name: str, modules: list[str]) -> dict[str, str]:
    pkg = name.replace("-", "_")
    out = {
        "pyproject.toml": f'[project]\nname = "{name}"\nversion = "0.4.0"\nrequires-python = ">=3.9"\n',
        ".gitignore": "__pycache__/\n*.egg-info/\n.venv/\n",
        f"src/{pkg}/__init__.py": f'"""{name}."""\n\n__version__ = "0.4.0"\n',
    }
    for m in modules:
        out[f"src/{pkg}/{m}.py"] = (
            f'"""The {m} component of {name}."""\n\n\ndef run_{m}(data):\n    return list(data)\n'
        )
    for m in modules[:2]:
        out[f"tests/test_{m}.py"] = (
            f"from {pkg}.{m} import run_{m}\n\n\ndef test_{m}_empty():\n    assert run_{m}([]) == []\n"
        )
    return out


def _javascript(name: str, modules: list[str]) -> dict[str, str]:
    out = {
        "package.json": f'{{\n  "name": "{name}",\n  "version": "1.2.0",\n  "scripts": {{ "test": "node --test" }}\n}}\n',
        ".eslintrc.json": '{ "extends": "eslint:recommended" }\n',
        "src/index.js": "".join(f"export * from './{m}.js';\n" for m in modules),
    }
    for m in modules:
        out[f"src/{m}.js"] = (
            f"// The {m} component of {name}.\nexport function {m}Setup(options = {{}}) {{\n  return {{ ...options }};\n}}\n"
        )
    for m in modules[:2]:
        out[f"test/{m}.test.js"] = (
            f"import {{ {m}Setup }} from '../src/{m}.js';\n// {m}Setup() returns a copy of its options\n"
        )
    return out


def _go(name: str, modules: list[str]) -> dict[str, str]:
    out = {
        "go.mod": f"module example.com/{name}\n\ngo 1.21\n",
        "Makefile": "build:\n\tgo build ./...\n\ntest:\n\tgo test ./...\n",
        "main.go": f'package main\n\nimport "fmt"\n\nfunc main() {{\n\tfmt.Println("{name}")\n}}\n',
    }
    for m in modules:
        out[f"internal/{m}/{m}.go"] = (
            f'// Package {m} is part of {name}.\npackage {m}\n\nfunc New() string {{ return "{m}" }}\n'
        )
    for m in modules[:2]:
        out[f"internal/{m}/{m}_test.go"] = (
            f'package {m}\n\nimport "testing"\n\nfunc TestNew(t *testing.T) {{ _ = New() }}\n'
        )
    return out


def _rust(name: str, modules: list[str]) -> dict[str, str]:
    out = {
        "Cargo.toml": f'[package]\nname = "{name}"\nversion = "0.3.1"\nedition = "2021"\n',
        "src/main.rs": "".join(f"mod {m};\n" for m in modules)
        + f'\nfn main() {{\n    println!("{name}");\n}}\n',
        "tests/integration.rs": f"// Integration tests for {name}.\n#[test]\nfn it_runs() {{}}\n",
    }
    for m in modules:
        out[f"src/{m}.rs"] = (
            f"//! The {m} part of {name}.\n\npub fn {m}_init() -> bool {{\n    true\n}}\n"
        )
    return out


def _docs(name: str, modules: list[str]) -> dict[str, str]:
    out = {
        "mkdocs.yml": f"site_name: {name}\nnav:\n" + "".join(f"  - docs/{m}.md\n" for m in modules)
    }
    out["docs/index.md"] = f"# {name}\n\nStart with the {modules[0]} page.\n"
    for m in modules:
        out[f"docs/{m}.md"] = (
            f"# {m.capitalize()}\n\nThis page covers {m} for {name}.\n\n- Overview\n- Steps\n- Troubleshooting\n"
        )
    return out


LANGUAGES = {"python": _python, "javascript": _javascript, "go": _go, "rust": _rust, "docs": _docs}


def project_files(name: str, description: str, language: str, modules: list[str]) -> dict[str, str]:
    """path -> content for every file of the project's default branch."""
    files = {"README.md": readme(name, description, language, modules),
             "LICENSE": LICENSE.format(year=2023, name=name)}  # fmt: skip
    files.update(LANGUAGES[language](name, modules))
    return dict(sorted(files.items()))
