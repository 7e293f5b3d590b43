"""Executing one run on its own thread, with its progress and a local model's tokens as signals.

:func:`thoughtdesk.core.generation.runs.execute_run_async` blocks its thread with an asyncio loop, so each
active run gets a :class:`RunWorker` (a ``QThread``). The executor's progress callback and the
local model's streamed text arrive on that thread and are re-emitted as Qt signals, which Qt
queues to the GUI thread; the GUI never waits for the run.

Streaming: the core executor does not pass a token callback, so for streaming-capable
(local llama.cpp) models the worker builds the backend itself and wraps it in
:class:`StreamingTap`, which hands every piece of text to the worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from thoughtdesk.core.generation.backends import Backend, BackendError, PriceTable, Request, Response, TokenCallback
from thoughtdesk.core.generation.runs import (
    RunControl,
    RunLimits,
    RunProgress,
    build_backend,
    execute_run_async,
    run_spec,
)
from thoughtdesk.core.generation.runs.kind_specs import RationaleRunSpec
from thoughtdesk.core.library.store import Library
from thoughtdesk.ui.qt import QObject, QThread, Signal


class StreamingTap(Backend):
    """A backend that forwards to ``inner`` and reports each request's prompt and streamed text."""

    def __init__(self, inner: Backend, on_start: Callable[[str], None], on_token: Callable[[str], None]) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.capabilities = inner.capabilities
        self._on_start, self._on_token = on_start, on_token

    @property
    def label(self) -> str:
        return self.inner.label

    async def complete(self, request: Request, on_token: TokenCallback | None = None) -> Response:
        prompt = request.prompt if request.prompt is not None else "\n".join(m.content for m in request.chat_messages())
        self._on_start(prompt)

        def forward(index: int, piece: str) -> None:
            if index == 0:  # the first sample is shown; others of n > 1 would interleave
                self._on_token(piece)
            if on_token is not None:
                on_token(index, piece)

        return await self.inner.complete(request, forward)

    async def aclose(self) -> None:
        await self.inner.aclose()


class RunWorker(QThread):
    """Runs (or resumes) run ``run_id`` of the library at ``library_path`` until it ends.

    Signals (queued to the GUI thread): ``progress(RunProgress)`` after every stored result and
    status change; ``request_started(str)`` with the prompt of a local model's new request;
    ``token(str)`` with each streamed piece; ``ended(RunProgress | None, str)`` once, with the
    final progress and an error message (empty when the run ended normally).
    """

    progress = Signal(object)
    request_started = Signal(str)
    token = Signal(str)
    ended = Signal(object, str)

    def __init__(
        self,
        library_path: Path,
        run_id: int,
        *,
        limits: RunLimits | None = None,
        prices: PriceTable | None = None,
        stream_local: bool = True,
        parent: QObject | None = None,
    ) -> None:
        # A parent makes Qt own the thread object: it is destroyed on the GUI thread, never by
        # Python's cycle collector running on some worker thread.
        super().__init__(parent)
        self.library_path = Path(library_path)
        self.run_id = run_id
        self.limits = limits or RunLimits()
        self.prices = prices
        self.stream_local = stream_local
        self.control = RunControl()
        self.final: RunProgress | None = None
        self.error = ""
        #: The error that stopped the run, if any (the panel tells a model-not-found apart).
        self.stop_error: BaseException | None = None

    def _taps(self) -> dict[int, Backend]:
        """Streaming taps for local models; other models are built by the executor itself."""
        if not self.stream_local:
            return {}
        with Library.open(self.library_path, create=False) as lib:
            spec = run_spec(lib, self.run_id)
        if isinstance(spec, RationaleRunSpec):  # a scorer is not streamed (the tap cannot score)
            return {}
        taps: dict[int, Backend] = {}
        for index, model in enumerate(spec.models):
            if model.provider != "llamacpp":
                continue
            try:
                inner = build_backend(model)
            except BackendError:
                continue  # the executor builds it again and records the error with the run
            taps[index] = StreamingTap(inner, self.request_started.emit, self.token.emit)
        return taps

    async def _main(self) -> RunProgress:
        # Rationale runs' steps are core/rationales/runs.py's, above the engine: registered by importing it.
        import thoughtdesk.core.rationales.runs  # noqa: F401

        taps = self._taps()
        try:
            return await execute_run_async(
                self.library_path,
                self.run_id,
                backends=taps or None,
                limits=self.limits,
                progress=self.progress.emit,
                control=self.control,
                prices=self.prices,
            )
        finally:
            for backend in taps.values():
                await backend.aclose()

    def run(self) -> None:  # the worker thread
        try:
            self.final = asyncio.run(self._main())
        except BackendError as error:
            self.error = str(error)  # names the provider and says what to do
            self.stop_error = error
        except Exception as error:  # shown to the user, the run stays resumable
            self.error = f"{type(error).__name__}: {error}"
            self.stop_error = error
        self.ended.emit(self.final, self.error)

    def pause(self) -> None:
        self.control.pause()

    def resume(self) -> None:
        self.control.resume()

    def cancel(self) -> None:
        self.control.cancel()
