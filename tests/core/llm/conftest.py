"""Fixtures for the model-layer tests: tools and messages the requests are built from."""

from __future__ import annotations

import pytest
from llm_helpers import png_base64, tool

from webtask_core.llm.types import ImageBlock, Message, TextBlock, ToolSpec


@pytest.fixture
def tools() -> list[ToolSpec]:
    return [tool("click", element_id="string"), tool("fill", element_id="string", text="string")]


@pytest.fixture
def first_message() -> Message:
    return Message(role="user", content=[TextBlock(text="<task>List the red shoes</task>")], cache=True)


@pytest.fixture
def page_message() -> Message:
    return Message(
        role="user",
        content=[
            TextBlock(text='<page url="http://shop.test/" title="Shop" step="1">\n- button-0 "Sell"\n</page>'),
            ImageBlock(media_type="image/png", data=png_base64()),
        ],
    )
