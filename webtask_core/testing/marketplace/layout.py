"""Layouts of the demo marketplace: the original site, or a redesign made of independent changes.

Replay tests need a site that changes under a recorded flow the way real sites do. Each change is
one flag; any mix of them is a layout, and the running site can switch between listings of a batch
(its listings and sessions stay):

- ``renamed_field``: the form's "Title" field becomes "Listing headline", ``name="headline"`` (the
  server reads that name, and its error messages say "headline").
- ``extra_step``: after Next, a "Shipping" page with a required choice and a Continue button comes
  before the review page; the choice is stored on the listing.
- ``moved_button``: Publish leaves the form under the summary for a toolbar above the heading, with
  another class, submitting its form through the ``form`` attribute; same text.

``Layout()`` is the original site, rendered byte for byte as before layouts existed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Layout", "LAYOUT_ENV", "SHIPPING_OPTIONS"]

LAYOUT_ENV = "WEBTASK_SITE_LAYOUT"

# (value sent by the Shipping page, label shown and stored on the listing)
SHIPPING_OPTIONS: tuple[tuple[str, str], ...] = (
    ("prepaid-label", "Prepaid label (we email it)"),
    ("own-carrier", "I'll ship it myself"),
    ("local-pickup", "Local pickup"),
)


@dataclass(frozen=True)
class TitleField:
    """How the listing form's title field is named and labelled in a layout."""

    name: str
    label: str
    noun: str  # in error messages: "Enter a {noun}."


_TITLE = TitleField("title", "Title", "title")
_HEADLINE = TitleField("headline", "Listing headline", "headline")


@dataclass(frozen=True)
class Layout:
    """Which changes the site shows; ``Layout()`` is the original site.

    >>> Layout(renamed_field=True, moved_button=True).changes
    ('renamed_field', 'moved_button')
    >>> Layout.parse("extra_step, moved_button") == Layout(extra_step=True, moved_button=True)
    True
    """

    renamed_field: bool = False
    extra_step: bool = False
    moved_button: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every change a layout can make, in order."""
        return tuple(item.name for item in fields(cls))

    @classmethod
    def every_change(cls) -> Layout:
        return cls(**dict.fromkeys(cls.names(), True))

    @classmethod
    def of(cls, changes: list[str] | tuple[str, ...]) -> Layout:
        """The layout making exactly these changes; an unknown name raises ValueError naming the known ones."""
        unknown = [change for change in changes if change not in cls.names()]
        if unknown:
            raise ValueError(f"unknown layout change {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(cls.names())} (or 'all', 'original')")
        return cls(**dict.fromkeys(changes, True))

    @classmethod
    def parse(cls, text: str) -> Layout:
        """``"renamed_field,extra_step"`` (commas or spaces), ``"all"``, or ``"original"``/``""``."""
        words = [word for word in text.replace(",", " ").split() if word]
        if words == ["all"]:
            return cls.every_change()
        if words in ([], ["original"]):
            return cls()
        return cls.of(words)

    @property
    def changes(self) -> tuple[str, ...]:
        return tuple(name for name in self.names() if getattr(self, name))

    @property
    def is_original(self) -> bool:
        return not self.changes

    @property
    def title_field(self) -> TitleField:
        return _HEADLINE if self.renamed_field else _TITLE

    def __str__(self) -> str:
        return ",".join(self.changes) or "original"
