"""What the scripted server's "model" computes: a whitespace tokenizer, token ids, and
deterministic embeddings from hashed word vectors.

Apart from the server (`benchmarks.models.scripted`) because tests and dry runs compute the same
things to predict the server's replies (`embed_text` gives the vector the server would send,
`message_text` the text a rule is matched against), and because these choices, not the HTTP
plumbing, decide how retrieval behaves in a scripted run.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
import re
import zlib
from typing import Any

__all__ = ["embed_text", "message_text", "token_id", "unit_vector", "whitespace_tokens"]


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
