"""Every ```python example of README.md runs as written, offline, so a renamed API breaks this test.

Each example is marked in the README with ``<!-- example: NAME -->`` on the line before its block,
and has a scenario here: the model's replies (a policy) and what the run must have done. What the
test changes, and nothing else:

- ``https://shop.example.com`` is a local site (:class:`PageSite` on 127.0.0.1) with the pages the
  examples talk about, and the host pattern ``shop.example.com`` becomes that site's host and port;
  a second local site on 127.0.0.2 stands for "another host";
- ``Agent`` and ``llm`` are given to the examples that use them without defining them (the README
  says they come from the first example); ``llm`` is a :class:`FakeLLM` with the scenario's policy;
- the first example's ``AnthropicLLM()`` and the Bedrock one reach a :class:`FakeAnthropicServer`
  through the environment variables their clients read (``ANTHROPIC_BASE_URL`` /
  ``ANTHROPIC_BEDROCK_BASE_URL`` and a key); files the examples name (photos, ``careful.yaml``) are
  made in a temporary working directory.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from webtask_core import Agent
from webtask_core.testing import FakeAnthropicServer, FakeLLM, ReplayPolicy, Reply, ToolUse
from webtask_core.testing.page_site import PageSite
from webtask_core.testing.request_view import find_element, last_tool_results, latest_page, latest_url, task_text

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SHOP_PASSWORD = "s3cret-Pa55word"

_EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+) -->\n```python\n(?P<code>.*?)\n```\n", re.DOTALL)
_PYTHON_BLOCK = re.compile(r"^```python$", re.MULTILINE)


@dataclass
class Example:
    name: str
    code: str
    line: int  # the README line of the block's first line of code


def readme_examples() -> dict[str, Example]:
    text = README.read_text(encoding="utf-8")
    examples: dict[str, Example] = {}
    for match in _EXAMPLE.finditer(text):
        name = match["name"]
        assert name not in examples, f"two README examples are called {name!r}"
        line = text.count("\n", 0, match.start("code")) + 1
        examples[name] = Example(name, match["code"], line)
    return examples


# ---- the local shop ---------------------------------------------------------------------------------


def _page(title: str, body: str) -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def _form_value(body: bytes, name: str) -> str:
    from urllib.parse import parse_qs

    return (parse_qs(body.decode()).get(name) or [""])[0]


@dataclass
class Shop:
    site: PageSite
    elsewhere: PageSite  # another host: nothing may reach it when the examples say so

    @property
    def host(self) -> str:
        return self.site.origin.removeprefix("http://")

    def substitute(self, code: str) -> str:
        return code.replace("https://shop.example.com", self.site.origin).replace("shop.example.com", self.host)

    def bodies(self) -> bytes:
        return b"\n".join(self.site.bodies)


@pytest.fixture
def shop() -> Iterator[Shop]:
    with PageSite(host="127.0.0.2", pages={"/offer": _page("Offer", "<h1>Partner offer</h1>")}) as elsewhere:
        other = elsewhere.origin

        def login(path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, str, dict[str, str]]:
            if body and _form_value(body, "username") == "ops" and _form_value(body, "password") == SHOP_PASSWORD:
                return 200, _page("Account", "<h1>Welcome, ops</h1>"), {}
            error = "<p>Wrong username or password</p>" if body else ""
            return 200, _page("Log in", f"""{error}<form method="post" action="/login">
                <label>Username <input name="username"></label>
                <label>Password <input name="password" type="password"></label>
                <button>Log in</button></form>"""), {}

        def sell(path: str, query: dict[str, list[str]], body: bytes) -> tuple[int, str, dict[str, str]]:
            if body:
                return 200, _page("Listed", "<h1>Listed: your item is on sale</h1>"), {}
            return 200, _page("Sell", """<form method="post" action="/sell" enctype="multipart/form-data">
                <label>Title <input name="title"></label>
                <label>Price <input name="price"></label>
                <label>Photos <input name="photos" type="file" multiple></label>
                <button>List it</button></form>"""), {}

        pages = {
            "/": _page("Shoe shop", f"""<h1>Shoe shop</h1><p>Open 9-17 on weekdays.</p>
                <a href="/items/red-boots">Red boots</a> <a href="/sell">Sell an item</a>
                <a href="{other}/offer">Partner offer</a> <img src="{other}/banner.png" alt="Summer sale">"""),
            "/items/red-boots": _page("Red boots", "<h1>Red boots</h1><p>Price: $45.00</p><p>In stock</p>"),
            "/login": login,
            "/sell": sell,
            "/newsletter": _page("Newsletter", """<h1>Our newsletter</h1>
                <form action="/newsletter/thanks"><label>Email <input name="email" type="email"></label>
                <button>Subscribe</button></form>"""),
            "/newsletter/thanks": _page("Thanks", "<p>Thanks for subscribing</p>"),
        }
        with PageSite(host="127.0.0.1", pages=pages) as site:
            yield Shop(site, elsewhere)


# ---- scripted model replies -------------------------------------------------------------------------


def _complete(feedback: str, text: str = "") -> Reply:
    return Reply(text=text, tool_uses=[ToolUse("complete", {"feedback": feedback})])


def _click(page: str, text: str) -> Reply:
    element = find_element(page, text=text)
    assert element is not None, f"no {text!r} on the page:\n{page}"
    return Reply(text=f"Clicking {text}.", tool_uses=[ToolUse("click", {"element_id": element})])


def find_red_boots(request: dict[str, Any]) -> Reply:
    if latest_url(request).endswith("/items/red-boots"):
        return _complete("Found the red boots.")
    return _click(latest_page(request), "Red boots")


def policy_persist_context(request: dict[str, Any]) -> Reply:
    if "What do they cost?" in task_text(request):
        return _complete("$45.00")
    return find_red_boots(request)


def policy_output_schema(request: dict[str, Any]) -> Reply:
    if "Is it in stock?" in task_text(request):
        return Reply(tool_uses=[ToolUse("set_output", {"in_stock": True}), ToolUse("complete", {"feedback": "In stock."})])
    if not any(result.is_error for result in last_tool_results(request)):
        # A first answer that does not validate: it goes back to the model as an error result.
        return Reply(tool_uses=[ToolUse("set_output", {"title": "Red boots", "price": "forty-five"})])
    return Reply(tool_uses=[ToolUse("set_output", {"title": "Red boots", "price": 45.0}),
                            ToolUse("complete", {"feedback": "Red boots, $45.00."})])


def policy_secrets(request: dict[str, Any]) -> Reply:
    page = latest_page(request)
    if "Welcome, ops" in page:
        return _complete("Logged in as ops.")
    if "Wrong username or password" in page:
        return _complete("The password was refused.")
    return Reply(text="Logging in.", tool_uses=[
        ToolUse("fill", {"element_id": find_element(page, name="username"), "text": "ops"}),
        ToolUse("fill", {"element_id": find_element(page, name="password"), "text": "{{secret:shop_password}}"}),
        ToolUse("click", {"element_id": find_element(page, text="Log in")}),
    ])


def policy_allowed_domains(request: dict[str, Any]) -> Reply:
    results = last_tool_results(request)
    if not results:
        return _click(latest_page(request), "Partner offer")
    return Reply(tool_uses=[ToolUse("abort", {"reason": f"The offer is on another site: {results[-1].text}"})])


def policy_resources(request: dict[str, Any]) -> Reply:
    page = latest_page(request)
    if "Listed:" in page:
        return _complete("Listed the red boots with two photos.")
    return Reply(text="Filling in the form.", tool_uses=[
        ToolUse("fill", {"element_id": find_element(page, name="title"), "text": "Red boots"}),
        ToolUse("fill", {"element_id": find_element(page, name="price"), "text": "45"}),
        ToolUse("upload", {"element_id": find_element(page, type="file"), "resources": ["front_photo", "back_photo"]}),
        ToolUse("click", {"element_id": find_element(page, text="List it")}),
    ])


def policy_tools(request: dict[str, Any]) -> Reply:
    if not last_tool_results(request):
        return Reply(tool_uses=[ToolUse("lookup_price", {"sku": "SHOE-001"}), ToolUse("page_title", {})])
    return _complete("Yes: SHOE-001 costs 45.0 USD.")


def policy_replay(request: dict[str, Any]) -> Reply:
    page = latest_page(request)
    if "Listed:" in page:
        return _complete("Listed it.")
    title, price = re.fullmatch(r"Sell (.+) for \$(\d+)", task_text(request).strip()).groups()
    return Reply(text="Filling in the form.", tool_uses=[
        ToolUse("fill", {"element_id": find_element(page, name="title"), "text": title}),
        ToolUse("fill", {"element_id": find_element(page, name="price"), "text": price}),
        ToolUse("click", {"element_id": find_element(page, text="List it")}),
    ])


# ---- what each example must have done -----------------------------------------------------------------


def request_text(requests: list[dict[str, Any]]) -> str:
    return json.dumps(requests, ensure_ascii=False)


def first_requests_of_tasks(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    firsts, seen = [], None
    for request in requests:
        if task_text(request) != seen:
            seen = task_text(request)
            firsts.append(request)
    return firsts


def check_basic(ns: dict[str, Any], shop: Shop, server: FakeAnthropicServer) -> None:
    assert ns["result"].ok and ns["result"].feedback == "Open 9-17 on weekdays."
    assert "Open 9-17 on weekdays" in latest_page(server.requests[0])  # the real client sent the page


def check_persist_context(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].feedback == "$45.00"
    first, second = first_requests_of_tasks(llm.requests)
    assert "<previous_tasks>" not in request_text(first["messages"])
    assert "<previous_tasks>" in request_text(second["messages"]) and "Find the red boots" in request_text(second["messages"])
    assert latest_url(second).endswith("/items/red-boots")  # the second task starts where the first ended


def check_step_mode(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    agent = ns["agent"]
    assert agent.last_result.ok and agent.last_result.steps == 2 and ns["step"].index == 2


def check_output_schema(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    item = ns["result"].output
    assert type(item).__name__ == "Item" and item.price == 45.0
    assert "invalid output: price" in request_text(llm.requests)  # the model was told what was wrong
    assert ns["stock"].output == {"in_stock": True}


def check_secrets(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].ok, ns["result"].feedback
    assert SHOP_PASSWORD.encode() in shop.bodies()  # typed into the form
    sent = request_text(llm.requests)
    assert SHOP_PASSWORD not in sent and "{{secret:shop_password}}" in sent  # the model saw the placeholder only
    assert SHOP_PASSWORD not in ns["agent"].last_session.to_json()


def check_allowed_domains(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].status.value == "aborted"
    assert shop.elsewhere.requests == []  # neither the link nor the page's image reached the other host


def check_resources(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].ok, ns["result"].feedback
    body = shop.bodies()
    assert b'filename="front.jpg"' in body and b'filename="back.jpg"' in body
    sent = request_text(llm.requests[:1])
    assert "front_photo (image/jpeg" in sent and "back_photo (image/jpeg" in sent and "photos/" not in sent


def check_tools(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].ok
    results = last_tool_results(llm.requests[1])
    assert [r.is_error for r in results] == [False, False], results
    assert '"price":45.0' in results[0].text and results[1].text == "Shoe shop"
    tools = {tool["name"]: tool for tool in llm.requests[0]["tools"]}
    assert tools["lookup_price"]["input_schema"]["properties"]["currency"]["enum"] == ["USD", "EUR"]


def check_prompts(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    assert ns["result"].ok
    assert "Never buy anything." in request_text([{"system": llm.requests[0]["system"]}])


def check_replay(ns: dict[str, Any], shop: Shop, llm: FakeLLM) -> None:
    # 3: the model's fill-and-submit turn is kept as two steps (the form is checked before the submit)
    assert (ns["result"].replay, ns["result"].replayed_steps) == ("replayed", 3), ns["result"].feedback
    assert {task_text(request).strip() for request in llm.requests} == {"Sell Red boots for $45"}  # one run asked
    body = shop.bodies()
    assert b"Blue sandals" in body and b"30" in body  # the replayed run typed its own values
    assert ns["scripts"].keys() == [ns["replay"].key]


def check_readback(ns: dict[str, Any], shop: Shop, llm: Any) -> None:
    readback = ns["result"].readback
    assert readback.status == "mismatch" and readback.method == "model" and readback.model_calls == 1
    assert {check.field: check.shown for check in readback.fields}["price"] == "$54.74"


def check_nothing_more(ns: dict[str, Any], shop: Shop, llm: Any) -> None:
    """The example asserts what it does itself."""
    assert ns["result"].ok


@dataclass
class Scenario:
    check: Callable[..., None]
    policy: Callable[[dict[str, Any]], Reply] | None = None  # None: the example makes its own model
    given: tuple[str, ...] = ("Agent", "llm")  # names the example uses without defining them
    env: dict[str, str] = field(default_factory=dict)


SCENARIOS: dict[str, Scenario] = {
    "basic": Scenario(check_basic, given=()),
    "persist_context": Scenario(check_persist_context, policy_persist_context),
    "step_mode": Scenario(check_step_mode, find_red_boots),
    "output_schema": Scenario(check_output_schema, policy_output_schema),
    "secrets": Scenario(check_secrets, policy_secrets, env={"SHOP_PASSWORD": SHOP_PASSWORD}),
    "allowed_domains": Scenario(check_allowed_domains, policy_allowed_domains),
    "resources": Scenario(check_resources, policy_resources),
    "tools": Scenario(check_tools, policy_tools, given=("llm",)),
    "bedrock": Scenario(check_nothing_more, given=()),  # checked by test_the_bedrock_example_is_a_working_client
    "prompts": Scenario(check_prompts, find_red_boots, given=("llm",)),
    "replay": Scenario(check_replay, policy_replay),
    "testing_policy": Scenario(check_nothing_more, given=()),
    "testing_server": Scenario(check_nothing_more, given=("Agent",)),
    "testing_marketplace": Scenario(check_nothing_more, given=("Agent",)),
    "readback": Scenario(check_readback, given=("Agent",)),
    "human": Scenario(check_nothing_more, given=("Agent",)),
}


# ---- running an example -----------------------------------------------------------------------------------


async def run_example(example: Example, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the example's code as a module with top-level await; tracebacks name README.md lines."""
    source = "\n" * (example.line - 1) + example.code
    code = compile(source, str(README), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    outcome = eval(code, namespace)
    if inspect.iscoroutine(outcome):
        await outcome
    return namespace


def _undefined_names(code: str) -> set[str]:
    """Names the code loads but never binds (nor imports), builtins aside."""
    tree = ast.parse(code)
    bound = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
            bound |= {arg.arg for arg in ast.walk(node) if isinstance(arg, ast.arg)}
        elif isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            bound.add(node.optional_vars.id)
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return loaded - bound - set(dir(builtins))


def test_every_python_block_is_a_marked_example_with_a_scenario():
    text = README.read_text(encoding="utf-8")
    examples = readme_examples()
    assert len(_PYTHON_BLOCK.findall(text)) == len(examples), "a ```python block without <!-- example: NAME -->"
    assert set(examples) == set(SCENARIOS)
    for name, example in examples.items():
        assert _undefined_names(example.code) == set(SCENARIOS[name].given), name


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The examples' working directory, with the files they name."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "photos").mkdir()
    Image.new("RGB", (64, 48), (190, 30, 40)).save(tmp_path / "photos" / "front.jpg", "JPEG")
    Image.new("RGB", (64, 48), (90, 30, 40)).save(tmp_path / "photos" / "back.jpg", "JPEG")
    return tmp_path


def make_careful_yaml(workdir: Path) -> None:
    """careful.yaml as the README says: its command's copy of worker.yaml, with a rule added to `system`."""
    text = README.read_text(encoding="utf-8")
    (command,) = [line for line in text.splitlines() if line.startswith("python -c") and "careful.yaml" in line]
    words = shlex.split(command.split(" > ")[0])
    copied = subprocess.run([sys.executable, *words[1:]], capture_output=True, text=True, check=True, timeout=60)
    templates = yaml.safe_load(copied.stdout)
    templates["system"] += "  - Never buy anything.\n"
    (workdir / "careful.yaml").write_text(yaml.safe_dump(templates, sort_keys=False), encoding="utf-8")


@pytest.mark.parametrize("name", [name for name in SCENARIOS if name not in ("basic", "bedrock")])
async def test_the_readme_example_runs(name: str, shop: Shop, workdir: Path, monkeypatch: pytest.MonkeyPatch):
    example, scenario = readme_examples()[name], SCENARIOS[name]
    for variable, value in scenario.env.items():
        monkeypatch.setenv(variable, value)
    if name == "prompts":
        make_careful_yaml(workdir)
    llm = FakeLLM(scenario.policy) if scenario.policy is not None else None
    namespace: dict[str, Any] = {"__name__": f"readme_{name}"}
    if "Agent" in scenario.given:
        namespace["Agent"] = Agent
    if "llm" in scenario.given:
        namespace["llm"] = llm
    await run_example(Example(name, shop.substitute(example.code), example.line), namespace)
    scenario.check(namespace, shop, llm)


async def test_the_first_example_runs_the_real_client(shop: Shop, monkeypatch: pytest.MonkeyPatch):
    example = readme_examples()["basic"]
    with FakeAnthropicServer(ReplayPolicy([ToolUse("complete", {"feedback": "Open 9-17 on weekdays."})])) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)  # what AnthropicLLM() reads
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        namespace = await run_example(Example("basic", shop.substitute(example.code), example.line), {})
        await namespace["llm"].aclose()
    check_basic(namespace, shop, server)


async def test_the_bedrock_example_is_a_working_client(shop: Shop, monkeypatch: pytest.MonkeyPatch):
    example = readme_examples()["bedrock"]
    for variable in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(variable)
    with FakeAnthropicServer(ReplayPolicy([ToolUse("complete", {"feedback": "Open 9-17 on weekdays."})])) as server:
        # What AsyncAnthropicBedrock reads: an endpoint (here the fake's) and a Bedrock API key.
        monkeypatch.setenv("ANTHROPIC_BEDROCK_BASE_URL", server.base_url)
        monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "test-bearer")
        namespace = await run_example(example, {})
        llm = namespace["llm"]
        async with Agent(llm, start_url=shop.site.url("/")) as agent:
            result = await agent.do("Find the shop's opening hours")
        await llm.aclose()
    assert result.ok
    (request,) = server.requests
    assert request["anthropic_version"]  # a Bedrock body, for the model in the URL path
    assert request["model"] == "global.anthropic.claude-sonnet-5-5"
