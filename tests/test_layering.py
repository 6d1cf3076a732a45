"""The package's layering: no import circle between the PDF and paged-corpus readers, and
``ragworkbook.llm`` a face whose submodules never import back from it."""

from __future__ import annotations

import ast
from pathlib import Path

import ragworkbook

PKG = Path(ragworkbook.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_pdf_does_not_import_the_paged_corpus_reader():
    assert "ragworkbook.corpus.pages" not in _imports(PKG / "corpus" / "pdf.py")
    assert "ragworkbook.corpus.pdf" in _imports(PKG / "corpus" / "pages.py")


def test_llm_submodules_do_not_import_the_llm_package():
    for path in (PKG / "llm").glob("*.py"):
        if path.name != "__init__.py":
            assert "ragworkbook.llm" not in _imports(path), path.name


def test_llm_init_is_a_face():
    tree = ast.parse((PKG / "llm" / "__init__.py").read_text(encoding="utf-8"))
    kinds = {type(n).__name__ for n in tree.body}
    assert kinds <= {"Expr", "ImportFrom", "Import", "Assign"}, kinds  # docstring, imports, __all__
    from ragworkbook import llm
    from ragworkbook.llm import select

    assert llm.get_generator is select.get_generator
    for name in llm.__all__:  # every public name is still importable from ragworkbook.llm
        assert hasattr(llm, name), name
