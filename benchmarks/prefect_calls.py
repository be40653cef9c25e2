"""Count the Prefect API calls this process makes, by method and route (ids folded to ``{id}``).

``with PrefectCalls() as calls: ...`` wraps the ``send`` of Prefect's own httpx clients (async and
sync), so every call of the flows, their task runs and the batch is counted, whichever code path made
it, and the seconds each route's calls took (a call awaited by a listing, or written beside it: where
a busy server's answers are slow). Events (task-run states, webtask's own events) go over Prefect's
websocket and are not calls. Used by ``batch_throughput.py`` (``prefect_api_calls_per_listing``).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import Any

__all__ = ["PrefectCalls"]

_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LABEL_ROUTE = "PATCH /flow_runs/{id}/labels"  # what a run spent, when it ends (webtask_flows.costs)
INPUT_ROUTE = "POST /flow_runs/{id}/input"  # what a run spent so far, after each priced step


def _route(request: Any) -> str:
    path = request.url.path
    api = path.find("/api/")
    return f"{request.method} {_ID.sub('{id}', path[api + 4:] if api >= 0 else path)}"


class PrefectCalls:
    """A counter of Prefect API calls by route while the ``with`` block runs."""

    def __init__(self) -> None:
        self.by_route: Counter[str] = Counter()
        self.seconds: Counter[str] = Counter()  # route -> seconds its calls took, all added

    def __enter__(self) -> PrefectCalls:
        from prefect.client.base import PrefectHttpxAsyncClient, PrefectHttpxSyncClient

        self._async, self._sync = PrefectHttpxAsyncClient.send, PrefectHttpxSyncClient.send
        counter, seconds = self.by_route, self.seconds
        original_async, original_sync = self._async, self._sync

        async def counted_async(client: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            route, started = _route(request), time.perf_counter()
            counter[route] += 1
            try:
                return await original_async(client, request, *args, **kwargs)
            finally:
                seconds[route] += time.perf_counter() - started

        def counted_sync(client: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
            route, started = _route(request), time.perf_counter()
            counter[route] += 1
            try:
                return original_sync(client, request, *args, **kwargs)
            finally:
                seconds[route] += time.perf_counter() - started

        PrefectHttpxAsyncClient.send = counted_async  # type: ignore[method-assign]
        PrefectHttpxSyncClient.send = counted_sync  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc_info: object) -> None:
        from prefect.client.base import PrefectHttpxAsyncClient, PrefectHttpxSyncClient

        PrefectHttpxAsyncClient.send = self._async  # type: ignore[method-assign]
        PrefectHttpxSyncClient.send = self._sync  # type: ignore[method-assign]

    @property
    def total(self) -> int:
        return sum(self.by_route.values())

    @property
    def label_writes(self) -> int:
        return self.by_route[LABEL_ROUTE]

    def per_listing(self, count: int, top: int = 8) -> dict[str, Any]:
        """Calls per listing: all, the spend-label writes and records, the ``top`` routes, and the seconds a
        listing's calls took (all, and the ``top`` routes by time)."""
        count = max(count, 1)
        return {"all": round(self.total / count, 1), "label_writes": round(self.label_writes / count, 2),
                "spent_records": round(self.by_route[INPUT_ROUTE] / count, 2),
                "routes": {route: round(n / count, 2) for route, n in self.by_route.most_common(top)},
                "seconds": round(sum(self.seconds.values()) / count, 2),
                "seconds_by_route": {route: round(s / count, 2) for route, s in self.seconds.most_common(top)}}
