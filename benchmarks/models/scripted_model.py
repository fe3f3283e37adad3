"""What the scripted server's "model" computes: a whitespace tokenizer, token ids,
deterministic embeddings from hashed word vectors, and the request a reply rule reads.

Apart from the server (`benchmarks.models.scripted`) because tests and dry runs compute the same
things to predict the server's replies (`embed_text` gives the vector the server would send,
`message_text` the text a rule is matched against), and because these choices, not the HTTP
plumbing, decide how retrieval behaves in a scripted run. The reply rules themselves are
`benchmarks.models.scripted_rules` and the modules it names.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Request",
    "content_words",
    "embed_text",
    "message_text",
    "token_id",
    "unit_vector",
    "whitespace_tokens",
]


def whitespace_tokens(text: str) -> list[str]:
    """The scripted tokenizer: whitespace-separated pieces (what usage counts are based on)."""
    return text.split()


def token_id(piece: str) -> int:
    return zlib.crc32(piece.encode("utf-8")) % 50_000


@functools.lru_cache(maxsize=65_536)
def _word_vector(word: str, dim: int) -> tuple[float, ...]:
    rng = random.Random(f"scripted-embedding:{dim}:{word}")
    return tuple(rng.gauss(0.0, 1.0) for _ in range(dim))


def unit_vector(vec: list[float]) -> list[float]:
    """`vec` scaled to length 1 (a zero vector stays zero)."""
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else vec


def embed_text(text: str, dim: int = 64) -> list[float]:
    """A deterministic unit vector: hashed word vectors summed, plus a little of the whole text.

    The word part makes texts that share words similar (so retrieval in a dry run behaves
    sensibly); the whole-text part keeps distinct texts, even permutations, distinct.
    """
    acc = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        for i, x in enumerate(_word_vector(word, dim)):
            acc[i] += x
    acc = unit_vector(acc)
    whole = unit_vector(list(_word_vector("\x00" + hashlib.sha256(text.encode()).hexdigest(), dim)))
    return unit_vector([a + 0.25 * w for a, w in zip(acc, whole, strict=True)])


def message_text(content: Any) -> str:
    """Text of a message's content: a string, or OpenAI content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass(frozen=True, slots=True)
class Request:
    """One chat request as a reply rule sees it: the messages and the whole body (a rule that
    answers a json_schema call reads the schema it must satisfy from `response_format`)."""

    messages: tuple[Mapping[str, Any], ...]
    body: Mapping[str, Any]

    @property
    def text(self) -> str:
        """The last user message: what rules are matched against."""
        return next(
            (
                message_text(m.get("content"))
                for m in reversed(self.messages)
                if m.get("role") == "user"
            ),
            "",
        )

    @property
    def schema(self) -> Mapping[str, Any] | None:
        """The json_schema the reply must satisfy, if the request sets one."""
        fmt = self.body.get("response_format")
        if not isinstance(fmt, Mapping):
            return None
        schema = (fmt.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, Mapping) else None


# Words that carry no topic: a question and a line sharing only these share nothing. The
# scripted readers compare content words, so this list decides what "relevant" means there.
_STOPWORD_TEXT = """
    a about after again all am an and any anyway are as at be been before being but by can
    could did do does doing done during each for from had has have how i if in into is it its
    just me more most my myself no nor not now of off on once only or other our out over own
    same she should since so some such than that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom
    why will with would you your yours many much"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _stem(word: str) -> str:
    """A crude suffix strip, so "appointments" meets "appointment" and "shoes" meets "shoe"."""
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """The stemmed, lower-cased words of `text` that are not stopwords."""
    words = re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower())
    return {_stem(w) for w in words if w not in STOPWORDS}
