"""The demo marketplace and the fault harness need the `demo` extra and say so; the model kit does not.

Each case runs in a fresh interpreter where the extra's packages are made unimportable
(``sys.modules[name] = None`` makes ``import name`` raise ModuleNotFoundError).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

INSTALL = "pip install 'prefect-webtask[demo]'"


def run(code: str, *, blocked: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    script = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in blocked) + code
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("module", "what", "blocked", "missing"),
    [
        ("webtask_core.testing.marketplace", "the demo marketplace", ("fastapi",), "fastapi"),
        ("webtask_core.testing.marketplace", "the demo marketplace", ("python_multipart",), "python-multipart"),
        ("webtask_core.testing.marketplace.server", "the demo marketplace", ("uvicorn",), "uvicorn"),
        ("webtask_core.testing.fault_suite", "the fault harness", ("fastapi", "uvicorn"), "fastapi, uvicorn"),
    ],
)
def test_without_the_extra_the_error_names_it(module: str, what: str, blocked: tuple[str, ...], missing: str):
    code = (
        "from webtask_core.testing.demo_extra import DemoExtraMissing\n"
        "try:\n"
        f"    import {module}\n"
        "except DemoExtraMissing as error:\n"
        "    print(error)\n"
    )
    done = run(code, blocked=blocked)
    assert done.returncode == 0, done.stderr[-2000:]
    package = module.rsplit(".server", 1)[0]
    assert done.stdout.strip() == f"{what} ({package}) needs the demo extra ({missing} not installed): {INSTALL}"


def test_the_lazy_name_reports_it_too():
    code = ("import webtask_core.testing as kit\ntry:\n    kit.Marketplace\n"
            "except ModuleNotFoundError as error:\n    print(error.name, '|', error)\n")
    done = run(code, blocked=("uvicorn",))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("uvicorn | the demo marketplace") and INSTALL in done.stdout


def test_the_model_kit_works_without_the_extra():
    code = (
        "import asyncio\n"
        "from webtask_core.testing import FakeAnthropicServer, FakeLLM, MarketplaceListingPolicy, ReplayPolicy, Reply, ToolUse\n"
        "from webtask_core.testing import offline_mode, request_view, malformed, hostile_site, page_site\n"
        "from webtask_core.llm import AnthropicLLM, Message, TextBlock\n"
        "messages = [Message(role='user', content=[TextBlock(text='hi')])]\n"
        "async def main():\n"
        "    fake = FakeLLM(ReplayPolicy([Reply(text='in process')]))\n"
        "    print((await fake.complete(system='s', messages=messages, tools=[])).text)\n"
        "    async with FakeAnthropicServer(lambda request: Reply(text='over http')) as server:\n"
        "        async with AnthropicLLM(base_url=server.base_url, api_key='test') as llm:\n"
        "            print((await llm.complete(system='s', messages=messages, tools=[])).text)\n"
        "with offline_mode():\n"
        "    asyncio.run(main())\n"
        "print(sorted(n for n in ('fastapi', 'uvicorn', 'python_multipart', 'starlette') if sys.modules.get(n)))\n"
    )
    done = run(code, blocked=("fastapi", "uvicorn", "python_multipart"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["in process", "over http", "[]"]


def test_with_the_extra_nothing_is_missing():
    from webtask_core.testing.demo_extra import missing_demo_packages, require_demo_extra

    assert missing_demo_packages() == []
    require_demo_extra("the tests")
