"""Production code does not import the offline test kit: `webtask_core` outside `testing/` and `webtask_flows`
(but for the demo commands, which are the demo) run with `webtask_core.testing` unavailable."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KIT = "webtask_core.testing"
# The commands that run the demo marketplace and the scripted model: the kit is what they serve.
DEMO_MODULES = {"webtask_flows.listings.demo", "webtask_flows.listings.services"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "flows":  # the folder flows/ is installed as webtask_flows
        parts[0] = "webtask_flows"
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def production_modules() -> dict[str, Path]:
    found = {}
    for package in ("webtask_core", "flows"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = _module_name(path)
            if name == KIT or name.startswith(KIT + ".") or name in DEMO_MODULES:
                continue
            found[name] = path
    return found


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level == 0:
            base = node.module or ""
        else:  # relative: resolve against the module's package
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
        return [base] + [f"{base}.{alias.name}" for alias in node.names]
    return []


def test_no_production_module_imports_the_kit_in_its_source():
    offenders = []
    for module, path in production_modules().items():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py"):
                if name == KIT or name.startswith(KIT + "."):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert offenders == []


def test_every_production_module_imports_with_the_kit_blocked():
    # Catches what the source scan cannot: an import of the kit through another module.
    script = (
        "import importlib, sys\n"
        "from importlib.abc import MetaPathFinder\n"
        f"KIT = {KIT!r}\n"
        "class Block(MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == KIT or name.startswith(KIT + '.'):\n"
        "            raise ImportError(f'{name} is the test kit; production code must not import it')\n"
        "        return None\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for name in {sorted(production_modules())!r}:\n"
        "    importlib.import_module(name)\n"
        "print(sorted(n for n in sys.modules if n == KIT or n.startswith(KIT + '.')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"


def test_the_scan_sees_relative_and_absolute_imports_of_the_kit():
    samples = {
        "from webtask_core.testing import FakeLLM": ("webtask_core.agent", False),
        "import webtask_core.testing.replies": ("webtask_flows.listings.batch", False),
        "from .testing import replies": ("webtask_core", True),
        "from ..testing.policies import ReplayPolicy": ("webtask_core.llm.fake", False),
    }
    for source, (module, is_package) in samples.items():
        (node,) = ast.parse(source).body
        assert any(n.startswith(KIT) for n in _imported(node, module, is_package)), source


def test_the_generic_flows_never_import_the_listing_application():
    # The listing upload application builds on webtask_flows; the generic layer stands without it.
    offenders = []
    for module, path in production_modules().items():
        if not module.startswith("webtask_flows") or module.startswith("webtask_flows.listings"):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py"):
                if name.startswith("webtask_flows.listings"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {name}")
    assert offenders == []
