"""Create the alerting automations kept in ``deployments/automations/`` and their notification block.

Prefect's own ``prefect automation create --from-file`` needs the notification block's *id* in the
file; ours name the block (``block: custom-webhook/webtask-alerts``) so the same file works on every
server. This module resolves the name to the id, then creates the automation — or updates the one
with the same name, so running it twice does not double the alerts.

    python -m webtask_flows.automations webhook-block webtask-alerts https://hooks.slack.com/services/...
    python -m webtask_flows.automations create deployments/automations/webtask-aborted.yaml
    python -m webtask_flows.automations create deployments/automations     # every automation in the folder
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import yaml

from webtask_core.errors import ConfigError

__all__ = [
    "read_automation_definitions",
    "resolve_notification_block",
    "create_automation_from_file",
    "create_webhook_block",
    "WEBHOOK_JSON_TEMPLATE",
    "main",
]

# What a custom webhook block posts; `text` suits Slack / Mattermost / Teams incoming webhooks.
WEBHOOK_JSON_TEMPLATE: dict[str, str] = {
    "text": "{{subject}}\n{{body}}",
    "subject": "{{subject}}",
    "body": "{{body}}",
}


def read_automation_definitions(path: str | Path) -> list[dict[str, Any]]:
    """The automation(s) in a YAML or JSON file (one object, a list, or ``{automations: [...]}``),
    or in every such file of a folder, in name order."""
    file = Path(path)
    if file.is_dir():
        files = sorted(p for p in file.iterdir() if p.suffix.lower() in (".yaml", ".yml", ".json"))
        if not files:
            raise ConfigError("automation file", f"{str(file)!r} holds no .yaml or .json files")
        return [definition for each in files for definition in read_automation_definitions(each)]
    if not file.is_file():
        raise ConfigError("automation file", f"{str(file)!r} does not exist")
    text = file.read_text()
    try:
        data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError("automation file", f"{str(file)!r} cannot be parsed: {exc}") from exc
    if isinstance(data, dict) and "automations" in data:
        data = data["automations"]
    definitions = data if isinstance(data, list) else [data]
    if not definitions or not all(isinstance(d, dict) for d in definitions):
        raise ConfigError("automation file", f"{str(file)!r} holds no automation objects")
    return definitions


async def resolve_notification_block(reference: str) -> UUID:
    """The block document id for ``<block-type-slug>/<block-name>``."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    slug, sep, name = reference.partition("/")
    if not sep or not slug or not name:
        raise ConfigError("notification block", f"{reference!r} must look like 'custom-webhook/my-alerts'")
    async with get_client() as client:
        try:
            document = await client.read_block_document_by_name(name=name, block_type_slug=slug)
        except ObjectNotFound:
            raise ConfigError(
                "notification block", f"no {slug!r} block named {name!r} on this Prefect server"
            ) from None
    return document.id


async def _with_block_ids(definition: dict[str, Any], override: str | None, source: str) -> dict[str, Any]:
    resolved = copy.deepcopy(definition)
    for action in resolved.get("actions", []):
        if action.get("type") != "send-notification":
            continue
        reference = override or action.pop("block", None)
        action.pop("block", None)
        if reference:
            action["block_document_id"] = str(await resolve_notification_block(reference))
        elif not action.get("block_document_id"):
            raise ConfigError(
                "automation file", f"{source}: a send-notification action names no `block`"
            )
    return resolved


async def create_automation_from_file(
    path: str | Path, *, notification_block: str | None = None
) -> list[UUID]:
    """Create (or update, matched by name) every automation in ``path``; returns their ids.

    ``notification_block`` (``<slug>/<name>``) replaces the block every send-notification action
    names.
    """
    from prefect.client.orchestration import get_client
    from prefect.events.schemas.automations import AutomationCore
    from pydantic import ValidationError

    ids: list[UUID] = []
    async with get_client() as client:
        for index, definition in enumerate(read_automation_definitions(path)):
            source = f"{path} [{definition.get('name', index)}]"
            resolved = await _with_block_ids(definition, notification_block, source)
            try:
                automation = AutomationCore.model_validate(resolved)
            except ValidationError as exc:
                raise ConfigError("automation file", f"{source} is not a valid automation: {exc}") from exc
            existing = await client.read_automations_by_name(automation.name)
            if existing:
                await client.update_automation(existing[0].id, automation)
                ids.append(existing[0].id)
            else:
                ids.append(await client.create_automation(automation))
    return ids


async def create_webhook_block(
    name: str,
    url: str,
    *,
    json_data: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> UUID:
    """Save a ``CustomWebhookNotificationBlock`` (slug ``custom-webhook``) called ``name``."""
    from prefect.blocks.notifications import CustomWebhookNotificationBlock

    block = CustomWebhookNotificationBlock(
        name=name, url=url, json_data=json_data or dict(WEBHOOK_JSON_TEMPLATE), headers=headers
    )
    return await block.asave(name, overwrite=True)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m webtask_flows.automations", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    hook = commands.add_parser("webhook-block", help="create or replace a custom-webhook notification block")
    hook.add_argument("name")
    hook.add_argument("url")
    hook.add_argument("--header", action="append", default=[], metavar="NAME=VALUE")
    create = commands.add_parser("create", help="create or update the automations in a file or folder")
    create.add_argument("file", help="a .yaml/.json file, or a folder of them")
    create.add_argument("--block", default=None, metavar="SLUG/NAME", help="notification block to use")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        if args.command == "webhook-block":
            headers = dict(h.split("=", 1) for h in args.header if "=" in h) or None
            block_id = asyncio.run(create_webhook_block(args.name, args.url, headers=headers))
            print(f"Saved notification block custom-webhook/{args.name} ({block_id})")
        else:
            ids = asyncio.run(create_automation_from_file(args.file, notification_block=args.block))
            print("Automation(s) ready: " + ", ".join(str(i) for i in ids))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
