"""A batch against a site whose log-in asks an authenticator app's code (`webtask services
--second-factor totp`): the seed in a Secret block named by ``totp_secret``, the shared login types the
code of the moment, and nobody is asked."""

from __future__ import annotations

import json

import pytest
from flow_helpers import (
    USERS,
    fake_model_env,
    flow_env,  # noqa: F401 (fixture)
    shop_secret,  # noqa: F401 (fixture)
)
from test_batch_flow import manifest_rows, params, write_photos

from webtask_core.testing import MarketplaceListingPolicy
from webtask_core.testing.marketplace import Marketplace
from webtask_flows.listings.batch import batch_listing_upload, batch_results


@pytest.mark.slow
@pytest.mark.e2e
async def test_a_batch_logs_in_with_the_totp_seed_of_a_secret_block(flow_env, shop_secret, monkeypatch, tmp_path):
    from prefect.blocks.system import Secret

    rows = manifest_rows(1, prefix="TOTP")
    write_photos(tmp_path, rows)
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(row) for row in rows))
    with Marketplace(users=USERS, second_factor="totp") as shop:
        await Secret(value=shop.checks.totp_seed).asave("webtask-test-shop-2fa", overwrite=True)
        async with fake_model_env(MarketplaceListingPolicy(), monkeypatch) as server:
            state = await batch_listing_upload(manifest=str(manifest), replay=False, return_state=True,
                                               **params(shop, tmp_path, totp_secret="webtask-test-shop-2fa"))
            assert state.is_completed(), state.message
            (result,) = await batch_results(state)
            assert result.status == "completed" and len(shop.listing_by_sku(rows[0]["sku"])) == 1
    said = json.dumps(server.requests)
    assert "{{totp:shop_2fa}}" in said and shop.checks.totp_seed not in said  # the model saw only the placeholder
    assert "ask_human" not in {block.get("name") for request in server.requests for message in request["messages"]
                               if isinstance(message["content"], list) for block in message["content"]
                               if block.get("type") == "tool_use"}
