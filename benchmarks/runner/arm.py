"""The one interface every memory arm implements, P-Mem's and the baselines' alike.

An arm is built per episode with the services it may use (its writer and embedder models), sees
the episode's events once in arrival order (`ingest`), may save and restore what it built
(`save` / `load`, so reruns never re-pay ingestion), and turns a question into the context the
shared reader answers from (`read`). Same reader, prompts and budget for every arm: only the
context differs (the paper's Eq. 1).

It lives in the runner because the runner is what calls it: arms (`baselines/`) depend on the
harness, never the reverse.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchmarks.models.protocols import ChatClient, EmbeddingClient
from benchmarks.runner.types import Event, Question, Wording
from pmem.protocols import Completion

if TYPE_CHECKING:
    from pmem.protocols import Writer


@dataclass(frozen=True, slots=True)
class Context:
    text: str
    ids: tuple[str, ...] = ()  # which stored items were read (events, cells, chunks)
    meta: dict[str, Any] = field(default_factory=dict)


#: the benchmark's answer prompt around a context, sent to the shared reader: context -> reply
Ask = Callable[[str], Awaitable[Completion]]


@dataclass(slots=True)
class Services:
    """Model clients an arm may call; None when the profile has no such model. The harness
    passes `benchmarks.models.ChatModel` and `Embedder` clients; a test, any object with the
    protocols' methods."""

    writer: ChatClient | None = None
    embedder: EmbeddingClient | None = None
    judge: ChatClient | None = None  # a larger chat model some read paths consult (Table 9)


if TYPE_CHECKING:
    # A writer an arm is given is one the library's write paths take (checked by mypy, never
    # run). The embedder is the library's `Embedder` at run time too (an array's rows are
    # sequences of floats), though not to a type checker: numpy's array is no `Sequence`.
    def _writes_for_the_library(writer: ChatClient) -> Writer:
        return writer


@dataclass(frozen=True, slots=True)
class Change:
    """A change to what an arm reads or writes, declared by the arm that changed: a run of the
    arm first started before `since` no longer shows what the code does, and no table cites it
    (`benchmarks.runner.currency`). `configs`: the arm configs (`arm.name`) it touches, all of
    the class's when empty."""

    since: str  # when it landed, an ISO 8601 time with its offset
    what: str  # one line: what the arm does differently now
    configs: tuple[str, ...] = ()


class MemoryArm(abc.ABC):
    """Subclass, implement `ingest` and `read`, and register a config under configs/arm/."""

    #: prompts the arm sends to models, by name; hashed into the run manifest
    prompts: ClassVar[dict[str, str]] = {}
    #: what changed in what this arm reads or writes, oldest first (prompts are compared by
    #: their hashes instead): runs made before a change are refused as sources of a table
    changes: ClassVar[tuple[Change, ...]] = ()
    #: model roles the arm calls (writer, embedder); the runner starts and passes only these
    needs: ClassVar[tuple[str, ...]] = ()
    #: whether the arm runs on the scripted models in process (`benchmarks.runner.probe`), so a
    #: run records its fingerprint; a peer reaches its models through its own package instead
    probed: ClassVar[bool] = True

    def __init__(self, services: Services | None = None) -> None:
        self.services = services or Services()
        #: set by the runner before `ingest`: an arm whose ingest is a long stream of units
        #: calls it with (units done, units in the stream) after each, so a run killed
        #: mid-ingest still says how far its stream got (`pipeline.INGEST_PROGRESS_FILE`)
        self.on_progress: Callable[[int, int], None] | None = None
        #: set by the runner before `ingest`: the benchmark's `Wording`, for arms that read
        #: labels (template-oracle writers, oracle routing, routing audits); None otherwise
        self.wording: Wording | None = None

    def report_progress(self, done: int, total: int) -> None:
        """Tell the runner how far the ingest has got (a no-op outside a run)."""
        if self.on_progress is not None:
            self.on_progress(done, total)

    @abc.abstractmethod
    async def ingest(self, events: Sequence[Event]) -> None: ...

    @abc.abstractmethod
    async def read(self, question: Question) -> Context: ...

    async def respond(self, question: Question, ask: Ask) -> tuple[Context, Completion]:
        """Read, then let the reader answer: (the context it answered from, its reply).

        Arms whose read is a dialogue with the reader (P-Mem's iterative readout, B.4) override
        this; the prompt, the reader and the budget stay the benchmark's (`ask`).
        """
        context = await self.read(question)
        return context, await ask(context.text)

    async def aclose(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Release what the arm holds (servers, open files); the runner calls it once the
        episode's questions are answered."""

    def save(self, directory: Path) -> bool:
        """Persist what ingest built; return False if the arm cannot (it is re-ingested)."""
        return False

    def load(self, directory: Path) -> bool:
        """Restore a saved ingest; return False if there is nothing usable."""
        return False
