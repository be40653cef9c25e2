"""webtask_core: Claude driving a real Chromium through Playwright. Never imports prefect."""

__all__: list[str] = []
