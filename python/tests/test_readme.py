"""The README's Python examples run as written (so they stay true), and the type stubs
name everything the package exports."""

import ast
import re
from pathlib import Path

import symstride as ss

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(path):
    text = path.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_python_readme_examples_run(tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / "python" / "README.md")
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "python/README.md", "exec"), {})


def test_main_readme_python_section_runs(tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / "README.md")
    assert blocks, "the main README has a Python example"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, "README.md", "exec"), {})


def test_stubs_cover_the_exports():
    stub = (ROOT / "python" / "symstride" / "__init__.pyi").read_text()
    tree = ast.parse(stub)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name)
    missing = [n for n in ss.__all__ if n not in names]
    assert not missing, missing
    for cls in (ss.SymInt, ss.SymBool, ss.Guard, ss.ShapeEnv, ss.View, ss.Artifact, ss.Check):
        stub_cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
        declared = {n.name for n in ast.walk(stub_cls) if isinstance(n, ast.FunctionDef)}
        declared |= {t.target.id for t in ast.walk(stub_cls) if isinstance(t, ast.AnnAssign)}
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public <= declared, (cls.__name__, sorted(public - declared))
