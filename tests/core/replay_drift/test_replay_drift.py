"""Replay against a site that changed under a recorded script (issues 18, 25, 26): a listing site of
its own in two markup styles (and a form of real widgets: radios, Tagify, Pikaday, TinyMCE), a careful
scripted model, and 45+ changes a hostile or merely different site makes. Each run must end with
exactly this run's listing stored once, or nothing stored (a hand-over before anything was
submitted): never a wrong listing, a draft, a deletion or a second listing. Harmless changes must
still replay with zero model calls; a page that says something a model must weigh must reach the
model. Every run reads its listing back (issue 26): where the site stores something else than was
typed (VAT added, a quantity capped, a title cut, the price taken as the shipping cost), the run ends
as a mismatch naming exactly those fields, and a right listing is never flagged. The cases are in
drift_cases.py, the site in drift_site.py (widgets: drift_widgets.py), the model in drift_model.py
(drift_widget_model.py), the judge in drift_run.py; ``python -m tests.core.replay_drift.table``
prints the whole table without pytest (pytest prints it too when a case failed, or with
WEBTASK_DRIFT_TABLE=1)."""

from __future__ import annotations

import pytest
from drift_cases import case_runs
from drift_run import RESULTS, Case, DriftEnv
from drift_site import Style

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.mark.parametrize(("case", "style"), case_runs(), ids=[f"{case.name}-{style}" for case, style in case_runs()])
async def test_a_changed_site_never_gets_a_wrong_submission(case: Case, style: Style, drift_env: DriftEnv) -> None:
    outcome = await drift_env.run(case, style)
    RESULTS.append(outcome)
    # A listing the site stored otherwise than was typed must end as a mismatch naming those fields.
    assert not outcome.wrong or outcome.passed, f"a wrong listing not caught: {outcome.explain()}"
    assert outcome.passed, outcome.explain()
    if outcome.replay == "repaired":  # a repair keeps, as recorded, every step this run replayed
        assert outcome.kept_steps >= outcome.replayed_steps, outcome.explain()
    if case.name == "slow-submit":  # the model was told the Submit may have gone through; it looked first
        assert outcome.notes and "it may have gone through" in outcome.notes[0], outcome.notes
        # the next look found the tab lost, or the click itself got no answer (a busy machine): either
        # way no change of the site, and no repair saved for it
        assert outcome.stored == "right" and outcome.replay != "repaired", outcome.explain()
        assert "lost" in outcome.handovers[0] or "no answer in time" in outcome.handovers[0], outcome.explain()


CRASHES = [(case, style) for case, style in case_runs() if case.name.startswith("crash")]


@pytest.mark.parametrize(("case", "style"), CRASHES, ids=[f"{case.name}-{style}" for case, style in CRASHES])
async def test_the_models_own_submit_that_failed_is_never_repeated_blindly(case: Case, style: Style,
                                                                          drift_env: DriftEnv) -> None:
    """Without replay: the model's Submit reached the site and the step failed; the retried step's
    model is told it may have gone through, looks, and lists nothing twice."""
    outcome = await drift_env.run(case, style, replay=False)
    assert not outcome.wrong, f"a wrong submission: {outcome.explain()}"
