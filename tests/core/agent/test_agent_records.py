"""The agent loop's data parts without a browser: sessions, resources, history, tools, prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from webtask_core.errors import ActionError, ConfigError, ResourceError, SessionFormatError
from webtask_core.history import ActionHistory, ActionRecord, StuckThresholds
from webtask_core.llm.types import ImageBlock, Message, TextBlock, ToolCall, ToolResult, Usage
from webtask_core.prompt_set import PromptSet
from webtask_core.record import (
    SCHEMA_VERSION,
    Step,
    StepTimings,
    TaskRecord,
    ToolCallRecord,
    WorkerStatus,
    utc_now,
)
from webtask_core.resources import ResourceSet
from webtask_core.tools import OutputSpec, ToolRegistry


def _session() -> TaskRecord:
    call = ToolCall(id="toolu_1", name="click", input={"element_id": "button-3"})
    return TaskRecord(
        status=WorkerStatus.completed,
        output={"listing_url": "http://shop/listings/1"},
        feedback="done",
        task_description="list it",
        pairs=[
            Message(role="assistant", content=[TextBlock(text="clicking"), call]),
            Message(role="user", content=[ToolResult(tool_call_id="toolu_1",
                                                     content=[TextBlock(text="clicked")])]),
        ],
        steps=[Step(index=1, url="http://shop/", title="Shop", model_text="clicking",
                    tool_calls=[ToolCallRecord(id="toolu_1", name="click", input={"element_id": "button-3"},
                                               ok=True, message="clicked")],
                    usage=Usage(input_tokens=10, output_tokens=5),
                    timings=StepTimings(observe_ms=1, model_ms=2, act_ms=3, total_ms=7),
                    screenshot="aGk=")],
        steps_used=1,
        max_steps=20,
        final_screenshot="aGk=",
        usage=Usage(input_tokens=10, output_tokens=5),
        started_at=utc_now(),
        finished_at=utc_now(),
    )


# ---- TaskRecord -------------------------------------------------------------------------------

def test_session_json_round_trip_keeps_everything():
    session = _session()
    again = TaskRecord.from_json(session.to_json())
    assert again == session
    assert isinstance(again.pairs[0].content[1], ToolCall)
    assert isinstance(again.pairs[1].content[0], ToolResult)
    assert json.loads(session.to_json())["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    "document, expected",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"schema_version": 99, "status": "completed"}), "schema_version 99"),
        (json.dumps({"status": "completed"}), "schema_version None"),
        (json.dumps({"schema_version": SCHEMA_VERSION, "status": "exploded"}), "corrupt"),
    ],
)
def test_session_from_json_refuses_bad_documents(document, expected):
    with pytest.raises(SessionFormatError, match=expected):
        TaskRecord.from_json(document)


# ---- resources -------------------------------------------------------------------------------------

def test_resources_validate_names_and_paths(tmp_path: Path):
    photo = tmp_path / "front.jpg"
    photo.write_bytes(b"\xff\xd8jpeg")
    resources = ResourceSet({"listing_image_1": photo})
    assert resources.describe() == ["listing_image_1 (image/jpeg, 6 B)"]
    assert str(tmp_path) not in " ".join(resources.describe())
    with pytest.raises(ResourceError, match="invalid name"):
        resources.add("1st photo", photo)
    with pytest.raises(ResourceError, match="no file"):
        resources.add("missing", tmp_path / "nope.jpg")
    with pytest.raises(ResourceError, match="not a file"):
        resources.add("folder", tmp_path)


def test_task_resources_win_and_unknown_names_list_the_available_ones(tmp_path: Path):
    first, second = tmp_path / "a.png", tmp_path / "b.png"
    first.write_bytes(b"a")
    second.write_bytes(b"bb")
    merged = ResourceSet({"photo": first, "other": first}).merged(ResourceSet({"photo": second}))
    assert merged.lookup("photo").path == second.resolve()
    with pytest.raises(ActionError, match="unknown resource 'nope'; available resources: photo, other"):
        merged.lookup("nope")
    second.unlink()
    with pytest.raises(ActionError, match="no longer available"):
        merged.lookup("photo").checked_path()


# ---- history and stuck detection --------------------------------------------------------------------

def _click(step: int, ok: bool, element: str = "button-3") -> ActionRecord:
    return ActionRecord(step=step, tool="click", params={"element_id": element}, ok=ok,
                        message="ok" if ok else "button-3 is covered by div-1", url="http://x/", at=0.0)


def test_the_same_failing_action_warns_then_stops():
    history = ActionHistory(thresholds=StuckThresholds(action_threshold=3))
    for step in (1, 2):
        history = history.with_actions([_click(step, ok=False)])
    assert history.warnings() == []
    history = history.with_actions([_click(3, ok=False)])
    assert "failed 3 times" in history.warnings()[0]
    assert history.hard_stop_reason() is None
    for step in (4, 5, 6):
        history = history.with_actions([_click(step, ok=False)])
    assert history.hard_stop_reason() == "stuck: click button-3 failed 6 times: button-3 is covered by div-1"


def test_a_success_resets_the_count_and_history_is_never_mutated():
    empty = ActionHistory()
    history = empty.with_actions([_click(1, ok=False), _click(2, ok=False), _click(3, ok=True)])
    assert history.failure_counts == {} and empty.records == []
    history = history.with_actions([_click(4, ok=False), _click(4, ok=False, element="a-1")])
    assert history.warnings() == []


def test_an_unchanged_page_warns_then_stops():
    history = ActionHistory(thresholds=StuckThresholds(page_threshold=2, hard_factor=2))
    history = history.with_page("p1", "http://x/")
    assert history.warnings() == []
    history = history.with_page("p1", "http://x/")
    assert "has not changed for 2 steps" in history.warnings()[0]
    history = history.with_page("p1", "http://x/").with_page("p1", "http://x/")
    assert history.hard_stop_reason() == "stuck: the page http://x/ did not change for 4 steps"
    assert history.with_page("p2", "http://x/").same_page_count == 1


def test_the_history_block_counts_actions_and_keeps_the_last_error_without_repeating_results():
    assert ActionHistory().render(now=0.0) == "No actions yet."
    skipped = ActionRecord(step=3, tool="fill", params={"element_id": "input-1", "text": "x"}, ok=False,
                           message="not run", url="http://x/", at=2.0, skipped=True)
    history = ActionHistory().with_actions([_click(1, ok=False), _click(2, ok=True).model_copy(update={"at": 1.5})])
    history = history.with_actions([skipped])
    text = history.render(now=4.0)
    # the skipped call is not an action taken; the time counts from the last one that ran
    assert text.splitlines()[0] == "Actions so far: 2 (1 failed). Last action: step 2, 2.5 s ago."
    assert "Last error (step 1): click button-3 -> button-3 is covered by div-1" in text
    assert " -> ok" not in text  # successful results are in the tool results already


# ---- tools -----------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "name, tool_input, expected",
    [
        ("fly", {}, "unknown tool 'fly'; the tools are: navigate, click"),
        ("click", "button-3", "input for click must be a JSON object"),
        ("click", {}, "invalid input for click: element_id: Field required"),
        ("click", {"element_id": 3}, "element_id: Input should be a valid string (got 3)"),
        ("check", {"element_id": "input-1", "checked": "perhaps"}, "checked: Input should be a valid boolean"),
        ("click", {"element_id": "a-1", "force": True}, "force: Extra inputs are not permitted"),
        ("wait_for", {"timeout_s": 60}, "timeout_s: Input should be less than or equal to 15"),
        ("upload", {"element_id": "input-7", "resources": []}, "resources: List should have at least 1 item"),
    ],
)
def test_bad_tool_input_is_a_short_action_error(name, tool_input, expected):
    registry = ToolRegistry.default()
    with pytest.raises(ActionError) as info:
        registry.parse(ToolCall(id="t", name=name, input=tool_input))
    assert expected in str(info.value)


class Listing(BaseModel):
    listing_url: str
    price: float


def test_output_spec_takes_a_pydantic_model_a_json_schema_or_nothing():
    spec = OutputSpec(Listing)
    assert set(spec.schema["properties"]) == {"listing_url", "price"}
    assert spec.validate({"listing_url": "u", "price": "45"}) == {"listing_url": "u", "price": 45.0}
    assert spec.to_user({"listing_url": "u", "price": 45.0}) == Listing(listing_url="u", price=45)
    with pytest.raises(ActionError, match="invalid output: price: Field required"):
        spec.validate({"listing_url": "u"})

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with pytest.raises(ActionError, match="n: 'x' is not of type 'integer'"):
        OutputSpec(schema).validate({"n": "x"})
    assert OutputSpec(None).validate({"output": [1, 2]}) == [1, 2]
    assert ToolRegistry.default(OutputSpec(schema)).get("set_output").spec().input_schema == schema

    with pytest.raises(ConfigError, match='"type": "object"'):
        OutputSpec({"type": "string"})
    with pytest.raises(ConfigError, match="not a valid JSON schema"):
        OutputSpec({"type": "object", "properties": {"n": {"type": 5}}})


# ---- prompts ---------------------------------------------------------------------------------------

def test_the_packaged_prompt_set_renders_with_strict_variables():
    prompts = PromptSet.load("worker")
    assert "set_output" in prompts.render("system")
    assert "{{secret:NAME}}" in prompts.render("system")
    page = prompts.render("page", url='http://x/?a=1&b="2"', title="T", step=3, tree="- button-0")
    assert page == '<page url="http://x/?a=1&amp;b=&quot;2&quot;" title="T" step="3">\n- button-0\n</page>'
    with pytest.raises(ConfigError, match="'tree' is undefined"):
        prompts.render("page", url="u", title="t", step=1)
    with pytest.raises(ConfigError, match="lacks templates"):
        PromptSet({"system": "hi"})


def test_image_blocks_survive_the_session_round_trip():
    session = _session()
    session.pairs[1].content.append(ImageBlock(data="aGk="))
    assert TaskRecord.from_json(session.to_json()).pairs[1].content[-1] == ImageBlock(data="aGk=")
