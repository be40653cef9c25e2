"""File resources: descriptive names the model uses, mapped to files only the tools see.

The model is told ``listing_image_1 (image/jpeg, 84 KB)`` and calls ``upload`` with that name; the
path never reaches it. Names and files are checked when added, so a bad path fails before the
browser starts rather than halfway through a task.
"""

from __future__ import annotations

import mimetypes
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel

from webtask_core.errors import ActionError, ResourceError

__all__ = ["RESOURCE_NAME_PATTERN", "Resource", "ResourceSet", "validate_resource_name"]

RESOURCE_NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_\-.]{0,63}$")


def validate_resource_name(name: object) -> str:
    if not isinstance(name, str) or not RESOURCE_NAME_PATTERN.fullmatch(name):
        raise ResourceError(
            str(name),
            "invalid name: use a letter first, then up to 63 letters, digits, '_', '-' or '.' "
            "(for example listing_image_1)",
        )
    return name


class Resource(BaseModel):
    name: str
    path: Path
    size: int
    media_type: str

    @classmethod
    def from_path(cls, name: str, path: str | os.PathLike[str]) -> Resource:
        validate_resource_name(name)
        file_path = Path(path).expanduser()
        if not file_path.exists():
            raise ResourceError(name, f"no file at {str(file_path)!r}")
        if not file_path.is_file():
            raise ResourceError(name, f"{str(file_path)!r} is not a file (a directory?)")
        file_path = file_path.resolve()
        media_type = mimetypes.guess_type(file_path.name)[0] or "application/octet-stream"
        return cls(name=name, path=file_path, size=file_path.stat().st_size, media_type=media_type)

    def describe(self) -> str:
        """What the model sees: the name, the type and the size; never the path."""
        return f"{self.name} ({self.media_type}, {_human_size(self.size)})"

    def checked_path(self) -> Path:
        """The path, after checking the file is still there (it may be removed after registration)."""
        if not self.path.is_file():
            raise ActionError(
                f"resource {self.name!r} is no longer available: its file was removed after it was "
                "registered; use another resource or abort"
            )
        return self.path


def _human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


class ResourceSet:
    """An ordered name → Resource mapping. Adding validates; lookups by the model give ActionErrors."""

    def __init__(self, resources: Mapping[str, str | os.PathLike[str]] | None = None):
        self._items: dict[str, Resource] = {}
        for name, path in (resources or {}).items():
            self.add(name, path)

    def add(self, name: str, path: str | os.PathLike[str]) -> Resource:
        resource = Resource.from_path(name, path)
        self._items[name] = resource
        return resource

    def remove(self, name: str) -> None:
        self._items.pop(name, None)

    def clear(self) -> None:
        self._items.clear()

    def get(self, name: str) -> Resource | None:
        return self._items.get(name)

    def names(self) -> list[str]:
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[Resource]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def merged(self, override: ResourceSet | None) -> ResourceSet:
        """A new set with this set's resources, then ``override``'s (which win on a name clash)."""
        result = ResourceSet()
        result._items = dict(self._items)
        if override is not None:
            result._items.update(override._items)
        return result

    def lookup(self, name: str) -> Resource:
        """The resource the model named, or an ActionError listing the names it may use."""
        resource = self._items.get(name)
        if resource is None:
            available = ", ".join(self._items) or "none (no resources were given for this task)"
            raise ActionError(f"unknown resource {name!r}; available resources: {available}")
        return resource

    def describe(self) -> list[str]:
        return [resource.describe() for resource in self._items.values()]

    def file_names(self) -> list[str]:
        """The files' own names (``front.jpg``): what a page shows once they are uploaded."""
        return [resource.path.name for resource in self._items.values()]
