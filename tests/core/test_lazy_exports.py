"""The packages import their public names on first use, so importing them stays cheap."""

from __future__ import annotations

import subprocess
import sys

import pytest

import webtask_core


def test_importing_the_packages_loads_neither_playwright_nor_the_sdk_nor_prefect():
    script = (
        "import sys, webtask_core, flows\n"
        "heavy = [name for name in ('playwright', 'anthropic', 'prefect') if name in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == ""


def test_a_public_name_resolves_and_an_unknown_one_is_an_attribute_error():
    from webtask_core.agent import Agent

    assert webtask_core.Agent is Agent
    assert sorted(dir(webtask_core)) == sorted(webtask_core.__all__)
    with pytest.raises(AttributeError, match="module 'webtask_core' has no attribute 'Agnet'"):
        webtask_core.Agnet  # noqa: B018 - the lookup is the test


def test_every_public_name_is_what_it_says_even_after_every_module_was_imported():
    # Importing a submodule binds it as an attribute of its package, which hides the lazy name when
    # both are called the same (`from flows import webtask_result` gave the module, not the function).
    script = (
        "import importlib, pkgutil, types, flows, webtask_core, webtask_core.testing\n"
        "packages = (flows, webtask_core, webtask_core.testing)\n"
        "for package in packages:\n"
        "    for info in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(info.name)\n"
        "print(','.join(f'{p.__name__}.{n}' for p in packages for n in p.__all__\n"
        "               if isinstance(getattr(p, n), types.ModuleType)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == ""
