"""The wheel built from the tree carries everything loaded through the package at run time."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        check=True,
        cwd=out,
    )
    (built,) = out.glob("prefect_webtask-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_ships_prompts_inside_the_packages(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for folder, package in (("prompts", "webtask_core/prompts"), ("flows/listings/prompts", "webtask_flows/listings/prompts")):
        prompt_files = {p.name for p in (ROOT / folder).glob("*.yaml")}
        assert prompt_files, f"the source tree has no {folder}/*.yaml"
        for name in prompt_files:
            assert f"{package}/{name}" in names
    assert not any(name.startswith("flows/") for name in names)  # installed as webtask_flows only


def test_pyproject_lists_every_python_package_of_the_tree() -> None:
    """pyproject lists the packages by hand, so a new folder must be added there. A wheel built here
    would not show a missing one: setuptools takes the files of an unlisted subpackage in as package
    data when an egg-info from an editable install lists them, but a clean checkout builds without."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    for folder, installed in (("webtask_core", "webtask_core"), ("flows", "webtask_flows")):
        for init in (ROOT / folder).rglob("__init__.py"):
            package = ".".join((installed, *init.parent.relative_to(ROOT / folder).parts))
            assert package in listed, f"{package} is not in [tool.setuptools] packages"


def test_wheel_ships_the_in_page_script_and_marketplace_templates(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert any(n.startswith("webtask_core/browser/") and n.endswith(".js") for n in names)
    assert any(n.startswith("webtask_core/testing/marketplace/templates/") for n in names)


def test_wheel_declares_the_console_command(wheel: zipfile.ZipFile) -> None:
    (entry_points,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    assert "webtask = webtask_flows.listings.cli:app" in wheel.read(entry_points).decode()


def test_wheel_puts_the_demo_site_packages_behind_the_demo_extra(wheel: zipfile.ZipFile) -> None:
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    requires = [line.split(":", 1)[1].strip() for line in wheel.read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    base = [r for r in requires if "extra ==" not in r]
    demo = [r.split(";")[0].strip() for r in requires if r.replace("'", '"').endswith('extra == "demo"')]
    dev = [r.split(";")[0].strip() for r in requires if r.replace("'", '"').endswith('extra == "dev"')]
    assert not any(r.startswith(("uvicorn", "python-multipart")) for r in base)
    assert "fastapi<0.151" in base  # Prefect's own server needs FastAPI, and 3.8 needs this pin
    assert sorted(demo) == ["fastapi<0.151", "python-multipart>=0.0.13", "uvicorn>=0.30"]
    assert "prefect-webtask[demo]" in dev  # the tests run the demo marketplace
