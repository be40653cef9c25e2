"""Helpers for the model-layer tests (imported as a top-level module, like tests/core/marketplace)."""

from __future__ import annotations

import base64
import io

from PIL import Image

from webtask_core.llm.types import ToolSpec


def png_base64(width: int = 40, height: int = 30) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def tool(name: str, **properties: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=f"The {name} tool.",
        input_schema={
            "type": "object",
            "properties": {key: {"type": kind} for key, kind in properties.items()},
            "required": list(properties),
        },
    )
