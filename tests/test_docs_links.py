"""The docs name only what exists, and only inside the repository.

README.md, docs/*.md and deployments/README.md are read as text (nothing is imported):

- a path in backticks that starts at a top-level entry of the repository (``flows/run_flow.py``,
  ``webtask_core/browser/``, ``flows/run_flow.py:run_webtask``) exists; one relative to the page's own
  folder (``work-pools/...`` in deployments/README.md) counts too; ``*`` is a glob that must match;
- a dotted name of the two packages (``webtask_flows.run_signals.note_run_started``, and the
  ``from webtask_core.x import a, b`` lines of code blocks) is a module of the source tree, and the
  first name after the module is defined in it (def, class, assignment, ``__all__``, import);
- a relative Markdown link resolves to a file inside the repository, and no page names a place
  outside it (``../``-paths leaving the root, ``/work/``, a sibling ``shared`` folder).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "deployments" / "README.md"]
# Where the packages' modules live in the source tree (the installed names differ from the folders).
PACKAGE_FOLDERS = {
    "webtask_core.prompts": ROOT / "prompts",
    "webtask_core": ROOT / "webtask_core",
    "webtask_flows": ROOT / "flows",
}
TOP_LEVEL = {p.name for p in ROOT.iterdir() if not p.name.startswith(".")}

_BACKTICKED = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_DOTTED = re.compile(r"\b(?:webtask_core|webtask_flows)(?:\.[A-Za-z_]\w*)+")
_FROM_IMPORT = re.compile(
    r"^\s*from\s+((?:webtask_core|webtask_flows)[\w.]*)\s+import\s+(?:\(([\w\s,]+)\)|([\w \t,]+))", re.MULTILINE
)
_OUTSIDE = re.compile(r"/work/|\.\./shared|(?<![\w.])shared/DESIGN\.md")


def _doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _repo_path(token: str, doc: Path) -> Path | None:
    """The path a backticked token names in the repository, or None when it is not a repo path."""
    token = token.split(":", 1)[0].rstrip(".,;")
    if " " in token or "/" not in token or token.startswith(("/", "~", "<", "s3:", "http", "block:")):
        return None
    first = token.split("/", 1)[0]
    if first in TOP_LEVEL:
        return ROOT / token
    if (doc.parent / first).exists() and doc.parent != ROOT:
        return doc.parent / token
    return None


def _exists(path: Path) -> bool:
    if "*" in str(path):
        return any(path.parent.glob(path.name))
    return path.exists()


def _module_file(dotted: str) -> tuple[Path, list[str]] | None:
    """(file of the longest module prefix, the names after it), or None when no package matches."""
    for package, folder in PACKAGE_FOLDERS.items():  # noqa: B007 - folder is used after the break
        if dotted == package or dotted.startswith(package + "."):
            rest = dotted[len(package):].lstrip(".").split(".") if dotted != package else []
            break
    else:
        return None
    current = folder
    while rest:
        if (current / rest[0]).is_dir():
            current = current / rest.pop(0)
        elif (current / f"{rest[0]}.py").is_file():
            return current / f"{rest.pop(0)}.py", rest
        else:
            break
    init = current / "__init__.py"
    return (init if init.exists() else current), rest


def _defines(module: Path, name: str) -> bool:
    if module.is_dir():  # a data folder shipped as a package (prompts/): its files are its names
        return any(module.glob(f"{name}.*"))
    text = module.read_text(encoding="utf-8")
    patterns = (
        rf"^\s*(?:async\s+def|def|class)\s+{name}\b",
        rf"^{name}\s*[:=]",
        rf"[\"']{name}[\"']",  # __all__ and lazy-export tables
        rf"^\s*(?:from\s+\S+\s+)?import\s+[^\n]*\b{name}\b",
    )
    return any(re.search(p, text, re.MULTILINE) for p in patterns)


def _dotted_problem(dotted: str) -> str | None:
    found = _module_file(dotted)
    if found is None:
        return None
    module, rest = found
    if not module.exists():
        return f"{dotted}: no module {module.relative_to(ROOT)}"
    if rest and not _defines(module, rest[0]):
        return f"{dotted}: {rest[0]} is not defined in {module.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_paths_in_backticks_exist(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = sorted({
        token for token in _BACKTICKED.findall(text)
        if (path := _repo_path(token, doc)) is not None and not _exists(path)
    })
    assert not missing, f"{_doc_id(doc)} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_module_names_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    problems = {p for dotted in _DOTTED.findall(text) if (p := _dotted_problem(dotted))}
    for module, in_parens, on_the_line in _FROM_IMPORT.findall(text):
        for name in (n.strip() for n in (in_parens or on_the_line).replace("\n", ",").split(",")):
            if name and (p := _dotted_problem(f"{module}.{name}")):
                problems.add(p)
    assert not problems, f"{_doc_id(doc)}: " + "; ".join(sorted(problems))


@pytest.mark.parametrize("doc", DOCS, ids=_doc_id)
def test_links_stay_inside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    problems = [f"line {text[:m.start()].count(chr(10)) + 1}: {m.group(0)!r}" for m in _OUTSIDE.finditer(text)]
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # https:, mailto:, an anchor on the page
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT):
            problems.append(f"link {target!r} leaves the repository")
        elif not path.exists():
            problems.append(f"link {target!r} does not exist")
    assert not problems, f"{_doc_id(doc)}: " + "; ".join(problems)


def test_the_checks_catch_stale_names() -> None:
    doc = ROOT / "README.md"
    assert not _exists(_repo_path("flows/webtask_flow.py:run_webtask", doc))
    assert _exists(_repo_path("flows/run_flow.py:run_webtask", doc))
    assert _repo_path(".venv/bin/pytest", doc) is None
    assert _dotted_problem("webtask_flows.webtask_flow.run_webtask")
    assert _dotted_problem("webtask_core.browser.BrowserSession")
    assert _dotted_problem("webtask_flows.run_flow.run_webtask") is None
    assert _dotted_problem("webtask_core.testing.FakeLLM") is None
    assert _OUTSIDE.search("Read `../shared/DESIGN.md` first")
