"""Keeping a session on the hosts it may visit (`allowed_domains`).

Top-level navigations (navigate, link clicks, form posts, new tabs) to another host are stopped by a
route handler on main-frame document requests before any request leaves the browser. Playwright does
not route the later hops of a server redirect; those are stopped at the redirect response by
:class:`~webtask_core.browser.redirects.RedirectGuard`, before the next hop is sent. As a fallback
(the first request of a tab the page opened), a redirect onto a foreign host is also caught from the
request event: the page is taken off that host right after the action and the action fails.
With ``block_requests`` the page's own requests (images, scripts, fetches, frames) to other hosts are
aborted too, and so are their redirects onto other hosts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Frame, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

from webtask_core.browser.failures import first_line, is_closed_error
from webtask_core.browser.redirects import RedirectGuard
from webtask_core.errors import ActionError, BrowserCrashedError, ConfigError
from webtask_core.hosts import HostPatterns

__all__ = ["DomainPolicy", "BlockedNavigation"]

_ALWAYS_ALLOWED_SCHEMES = {"about", "data", "blob", "chrome-error"}


@dataclass(frozen=True)
class BlockedNavigation:
    url: str
    page: Page | None
    by_redirect: bool


class DomainPolicy:
    """Which hosts a session may navigate to; records what it blocked."""

    def __init__(self, allowed_domains: Sequence[str] | None, block_requests: bool = False):
        self._hosts = HostPatterns(allowed_domains, parameter="allowed_domains")
        if block_requests and not self._hosts:
            raise ConfigError("block_requests", "needs allowed_domains to say which hosts requests may reach")
        self.patterns: tuple[str, ...] = self._hosts.patterns
        self.block_requests = block_requests
        self.blocked: list[BlockedNavigation] = []
        self._redirects = RedirectGuard(self._refuses_redirect, self._record_redirect, every_resource=block_requests)

    @property
    def active(self) -> bool:
        return bool(self.patterns)

    def allows(self, url: str) -> bool:
        """True if `url` may be visited (always true without allowed_domains)."""
        if not self.patterns:
            return True
        if urlsplit(url).scheme.lower() in _ALWAYS_ALLOWED_SCHEMES:
            return True
        return self._hosts.matches(url)

    def message(self, blocked: BlockedNavigation) -> str:
        how = " (reached through a redirect)" if blocked.by_redirect else ""
        return (
            f"navigation to {blocked.url} blocked{how}: host not in allowed_domains "
            f"[{', '.join(self.patterns)}]"
        )

    def refuse(self, url: str, page: Page | None) -> ActionError:
        """Record a navigation stopped before it started; the error to raise for it."""
        blocked = BlockedNavigation(url=url, page=page, by_redirect=False)
        self.blocked.append(blocked)
        return ActionError(self.message(blocked))

    async def raise_if_blocked(self, page: Page, before: int, timeout_s: float) -> None:
        """After an action on `page`: if it caused blocked navigations (self.blocked[before:]), tidy up
        (close a new tab that never got anywhere, take a tab off a foreign host) and raise ActionError."""
        fresh = self.blocked[before:]
        if not fresh:
            return
        for blocked in fresh:
            tab = blocked.page
            if tab is None or tab.is_closed():
                continue
            if tab is not page and tab.url in ("", "about:blank"):
                await tab.close()  # a new tab whose only navigation was blocked
            elif not self.allows(tab.url):
                await self._leave(tab, timeout_s)
        raise ActionError(self.message(fresh[0]))

    async def _leave(self, page: Page, timeout_s: float) -> None:
        """A redirect took the tab onto a host it may not visit: go back, or else to a blank page."""
        try:
            await page.go_back(timeout=timeout_s * 1000, wait_until="commit")
            if not self.allows(page.url):
                await page.goto("about:blank", timeout=timeout_s * 1000)
        except PlaywrightError as error:
            if is_closed_error(error):
                raise BrowserCrashedError(f"leaving {page.url}: {first_line(error)}") from error
            raise ActionError(f"could not leave {page.url}: {first_line(error)}") from error

    async def install(self, context: BrowserContext) -> None:
        if not self.patterns:
            return
        await context.route("**/*", self._route)
        context.on("request", self._on_request)
        self._redirects.attach(context)

    async def ready(self) -> None:
        """Wait until the tabs opened so far are guarded against redirects (before navigating them)."""
        await self._redirects.ready()

    def _refuses_redirect(self, url: str, main_frame: bool) -> bool:
        return not self.allows(url) and (main_frame or self.block_requests)

    def _record_redirect(self, url: str, page: Page) -> None:
        self.blocked.append(BlockedNavigation(url=url, page=page, by_redirect=True))

    async def _route(self, route: Route, request: Request) -> None:
        url = request.url
        if self.allows(url):
            await route.fallback()
            return
        if request.is_navigation_request() and self._is_main_frame(request):
            self.blocked.append(BlockedNavigation(url=url, page=self._page_of(request), by_redirect=False))
            # "aborted" cancels the navigation and keeps the current page (no error page is committed).
            await route.abort("aborted")
        elif self.block_requests:
            await route.abort("blockedbyclient")
        else:
            await route.fallback()

    def _on_request(self, request: Request) -> None:
        if request.redirected_from is None or self.allows(request.url):
            return
        if request.is_navigation_request() and self._is_main_frame(request):
            self.blocked.append(BlockedNavigation(url=request.url, page=self._page_of(request), by_redirect=True))

    @staticmethod
    def _frame_of(request: Request) -> Frame | None:
        try:
            return request.frame
        except PlaywrightError as error:
            message = error.message.lower()
            # Service-worker requests have no frame; nor has the first navigation of a new tab yet.
            if "service worker" in message or "before the frame is created" in message:
                return None
            raise

    @classmethod
    def _is_main_frame(cls, request: Request) -> bool:
        frame = cls._frame_of(request)
        return frame.parent_frame is None if frame is not None else request.is_navigation_request()

    @classmethod
    def _page_of(cls, request: Request) -> Page | None:
        frame = cls._frame_of(request)
        return frame.page if frame is not None else None
