"""Choices a recording must make explicit: a radio group or a select that showed a parameter's value
when the form was submitted, though the run never touched it (the page's default was this item's
value: status "Published"). The commit check asks for this run's value there, so a replay with
another value ("Draft") would hand over before the submit; the recorder saves the choice as a step
of its own, right before the submit, bound to the parameter (a replay whose default already matches
checks what is checked: nothing changes).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from webtask_core.replay.commit import CommitCheck, form_controls
from webtask_core.replay.reading import is_checked, is_radio
from webtask_core.replay.script import ScriptAction
from webtask_core.replay.templates import ELEMENT

if TYPE_CHECKING:
    from webtask_core.replay.signature import ElementFingerprint, PageView

__all__ = ["unmade_choices"]

_PARAM = "{{param:"


def unmade_choices(check: CommitCheck, view: PageView, element_id: str | None,
                   made: Iterable[ScriptAction]) -> list[ScriptAction]:
    """The choices the submitted form showed bound to a parameter that no action in ``made`` set:
    a ``check`` of the radio labelled with the value, a ``select_option`` of the option, in page order."""
    touched = [action.element for action in made if action.element is not None]
    elements = view.observation.elements
    keys = form_controls(view, element_id)
    if len(keys) != len(check.controls):  # the check was taken on this same look: one control each
        return []
    choices: list[ScriptAction] = []
    for key, control in zip(keys, check.controls):
        element = elements[key]
        fingerprint = view.fingerprints[key]
        if element.tag == "select":
            value = control.value
            if (value and value.startswith(_PARAM) and value.endswith("}}") and value.count(_PARAM) == 1
                    and "multiple" not in element.attributes and not _touched(fingerprint, touched)):
                choices.append(ScriptAction(tool="select_option", input={"element_id": ELEMENT, "option": value},
                                            element=fingerprint))
        elif is_radio(element) and is_checked(element) and element.name:
            template = check.groups.get(element.name, "")
            if _PARAM in template and not _touched(fingerprint, touched):
                choices.append(ScriptAction(tool="check", input={"element_id": ELEMENT, "checked": True},
                                            element=fingerprint))
    return choices


def _touched(fingerprint: ElementFingerprint, touched: list[ElementFingerprint]) -> bool:
    """Whether an action set this control (a radio: any of its group) earlier in the run."""
    for other in touched:
        if (other.tag, other.type, other.name) != (fingerprint.tag, fingerprint.type, fingerprint.name):
            continue
        if fingerprint.name or fingerprint.same_control(other):
            return True
    return False


