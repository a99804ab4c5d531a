"""The fake Notion API, answering each request after a pause: a sync lasts long enough that a
second copy of it started at the same time really overlaps it."""

from __future__ import annotations

import time

from tests.fakes.notion import FakeNotion

DELAY_S = 0.15


class SlowNotion(FakeNotion):
    def route(self, request):
        time.sleep(DELAY_S)
        return super().route(request)
