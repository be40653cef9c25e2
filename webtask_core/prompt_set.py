"""Prompt sets: YAML files of Jinja2 templates (StrictUndefined), shipped as ``webtask_core.prompts``.

The top-level ``prompts/`` folder is installed as the package ``webtask_core.prompts``; a prompt set
is loaded from there through :mod:`importlib.resources`, so a wheel and a checkout behave alike.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

from webtask_core.errors import ConfigError

__all__ = ["PromptSet", "REQUIRED_TEMPLATES"]

# Every prompt set must define these (the worker renders each of them).
REQUIRED_TEMPLATES = (
    "system",
    "task",
    "resources",
    "previous_tasks",
    "page",
    "page_collapsed",
    "history",
    "new_task",
    "tool_call_required",
    "empty_reply",
)

_SOURCE_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"


class PromptSet:
    """Named Jinja2 templates. Rendering with a missing variable is an error, never a blank."""

    def __init__(self, templates: dict[str, str], *, name: str = "custom",
                 required: tuple[str, ...] = REQUIRED_TEMPLATES):
        if not isinstance(templates, dict):
            raise ConfigError("prompts", f"prompt set {name!r} must be a mapping of name -> template")
        missing = [key for key in required if key not in templates]
        if missing:
            raise ConfigError("prompts", f"prompt set {name!r} lacks templates: {', '.join(missing)}")
        self.name = name
        self._env = jinja2.Environment(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=False,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.filters["attrq"] = _attribute_value
        try:
            self._templates = {
                key: self._env.from_string(str(text)) for key, text in templates.items()
            }
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError("prompts", f"prompt set {name!r}: {exc}") from exc

    @classmethod
    def load(cls, name: str = "worker", *, required: tuple[str, ...] = REQUIRED_TEMPLATES) -> PromptSet:
        """The packaged prompt set ``name`` (``prompts/{name}.yaml``); ``required``: the templates
        it must define (the worker's by default; the read-back's set has its own)."""
        return _load_packaged(name, required)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> PromptSet:
        file_path = Path(path)
        try:
            text = file_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError("prompts", f"cannot read prompt file {str(file_path)!r}: {exc}") from exc
        return cls(_parse_yaml(text, str(file_path)), name=file_path.stem)

    @classmethod
    def resolve(cls, prompts: PromptSet | str | os.PathLike[str]) -> PromptSet:
        """A PromptSet, a packaged set name (``"worker"``) or a path to a YAML file."""
        if isinstance(prompts, PromptSet):
            return prompts
        if isinstance(prompts, str) and not prompts.endswith((".yaml", ".yml")):
            return cls.load(prompts)
        return cls.from_file(prompts)

    def render(self, key: str, **values: Any) -> str:
        template = self._templates.get(key)
        if template is None:
            raise ConfigError("prompts", f"prompt set {self.name!r} has no template {key!r}")
        try:
            return template.render(**values).strip("\n")
        except jinja2.UndefinedError as exc:
            raise ConfigError("prompts", f"template {key!r} of {self.name!r}: {exc}") from exc


def _attribute_value(value: Any) -> str:
    """Make a value safe inside a double-quoted pseudo-XML attribute."""
    return str(value).replace("&", "&amp;").replace('"', "&quot;").replace("\n", " ")


def _parse_yaml(text: str, where: str) -> dict[str, str]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("prompts", f"{where} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError("prompts", f"{where} must be a mapping of name -> template")
    return {str(key): str(value) for key, value in data.items()}


@functools.lru_cache(maxsize=8)
def _load_packaged(name: str, required: tuple[str, ...] = REQUIRED_TEMPLATES) -> PromptSet:
    file_name = f"{name}.yaml"
    text: str | None = None
    try:
        resource = importlib.resources.files("webtask_core.prompts").joinpath(file_name)
        if resource.is_file():
            text = resource.read_text(encoding="utf-8")
    except ModuleNotFoundError:
        text = None
    if text is None and (_SOURCE_PROMPTS / file_name).is_file():
        # A source checkout that was not installed: read the folder directly.
        text = (_SOURCE_PROMPTS / file_name).read_text(encoding="utf-8")
    if text is None:
        raise ConfigError("prompts", f"no packaged prompt set named {name!r} ({file_name})")
    return PromptSet(_parse_yaml(text, file_name), name=name, required=required)
