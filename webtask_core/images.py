"""Small JPEGs of a page for records: a step's thumbnail, a picture artifact."""

from __future__ import annotations

import base64
import io

__all__ = ["shrink_jpeg"]


def shrink_jpeg(jpeg: bytes, width: int, *, quality: int = 60) -> str | None:
    """``jpeg`` at most ``width`` pixels wide, as base64 JPEG. It is only a record: an image Pillow
    cannot read gives None rather than failing what has already happened."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(jpeg)) as image:
            height = max(1, round(image.height * width / max(1, image.width)))
            image.draft("RGB", (width, height))  # let the JPEG decoder downscale: much faster
            small = image.convert("RGB")
            small.thumbnail((width, height))
            buffer = io.BytesIO()
            small.save(buffer, format="JPEG", quality=quality)
    except (OSError, ValueError):  # UnidentifiedImageError is an OSError
        return None
    return base64.b64encode(buffer.getvalue()).decode("ascii")
