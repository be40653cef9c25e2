#!/usr/bin/env bash
# What benchmarks/page_text.py compares with, kept out of the project's own venv: browser-use from
# PyPI in .venv/bu (its DOM serializer runs there, against our Chromium over CDP) and the pages of
# MiniWoB++ (the `miniwob` package, its HTML only) in .venv/miniwob-data.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bu/bin/python ] || python3.11 -m venv .venv/bu
.venv/bu/bin/python -m pip install -q "browser-use==0.13.14"
.venv/bin/python -m pip install -q --no-deps --target .venv/miniwob-data "miniwob==1.1.0"
