"""Read-back: a listing is done when the site shows it.

After a completed run, the listing's own page is opened in the run's browser context and every field
of the listing's data that the page shows is compared with what was asked, format-tolerant and in
code. With templates of the page recorded beside a replay script the check makes no model call;
otherwise one structured-output call reads the page (the model reads, code judges). Fields the page
does not show are "not shown", never "passed".

    from webtask_core.readback import ReadBack
    result = await agent.do(task, readback=ReadBack(fields=item))   # verify="always" | "replayed" | "off"
    result.readback.status        # passed | mismatch | unread | skipped
    result.readback.fields        # each field: expected, shown, verdict (match | mismatch | not_shown)

See docs/internals.md §11.
"""

from __future__ import annotations

from webtask_core.readback.compare import compare_field, same_value
from webtask_core.readback.reader import READ_TOOL, PageReading
from webtask_core.readback.result import FieldCheck, ReadbackResult, ReadbackStatus, ReadMethod, Verdict
from webtask_core.readback.run import read_back
from webtask_core.readback.spec import VERIFY_MODES, ReadBack, VerifyMode, check_verify
from webtask_core.readback.store import READBACK_FOLDER, TemplateStore
from webtask_core.readback.templates import FieldReading, PageTemplates

__all__ = [
    "ReadBack",
    "VerifyMode",
    "VERIFY_MODES",
    "check_verify",
    "ReadbackResult",
    "ReadbackStatus",
    "ReadMethod",
    "FieldCheck",
    "Verdict",
    "FieldReading",
    "PageReading",
    "PageTemplates",
    "TemplateStore",
    "READBACK_FOLDER",
    "READ_TOOL",
    "read_back",
    "compare_field",
    "same_value",
]
