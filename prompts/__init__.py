"""Prompt templates (YAML, Jinja2). Installed as the package ``webtask_core.prompts``."""
