"""Is our k of n consistent with the paper's figure? One exact, pure definition, used by the report.

Could a reader model as good as the paper's have produced our k at our n? Our k is **inside**
when it lies in the central 95% acceptance interval of Binomial(n, p_paper):

    low  = the smallest k with P(X <= k) >  alpha/2
    high = the largest  k with P(X >= k) >  alpha/2        X ~ Binomial(n, p_paper)

Equivalently the exact equal-tailed binomial test does not reject, and p_paper lies in the
Clopper-Pearson interval of k/n. p_paper = 1.0 admits only k = n; 0.0 only k = 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

__all__ = ["CONFIDENCE", "Verdict", "acceptance_interval", "as_probability", "verdict"]

CONFIDENCE = Fraction(95, 100)


def as_probability(value: float | int | str | Fraction, *, percent: bool = False) -> Fraction:
    """An exact probability from a printed figure: ``as_probability(72.9, percent=True)`` is
    729/1000 (read through its decimal text, not its binary float, so 72.9 stays 72.9)."""
    p = value if isinstance(value, Fraction) else Fraction(str(value))
    if percent:
        p /= 100
    if not 0 <= p <= 1:
        raise ValueError(f"a probability lies in [0, 1], got {value!r}{' %' if percent else ''}")
    return p


def _check_counts(k: int | None, n: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise ValueError(f"n must be a positive int, got {n!r}")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= n):
        raise ValueError(f"k must be an int between 0 and n={n}, got {k!r}")


def acceptance_interval(
    n: int, p: float | Fraction, confidence: float | Fraction = CONFIDENCE
) -> tuple[int, int]:
    """The central acceptance interval [low, high] of Binomial(n, p) at `confidence`, in counts.

    Each tail outside it has probability at most (1 - confidence) / 2; computed with exact
    integers.

    The paper's figures are decimals (72.9% is 729/1000), so every tail is a sum of integers
    over 1000**n and the comparison with alpha/2 is exact: no rounding decides a borderline
    cell, in O(n) big-integer steps. Not scipy.stats.binom (which benchmarks.stats uses): its
    floats decide a tail equal to alpha/2 by rounding. At n = 1, p = 97.5%, P(X <= 0) is exactly
    alpha/2, so 0 of 1 is outside, yet ``binom.ppf(0.025, 1, 0.975)`` is 0. A float version on
    ``binom.cdf``/``binom.sf`` agreed on all 84,084 cases checked (n = 1..80, 100, 140, 200,
    500; p = 0.0% to 100.0% by 0.1%), but only rounding keeps it so.
    """
    _check_counts(None, n)
    p = as_probability(p)
    tail = (1 - as_probability(confidence)) / 2  # alpha / 2
    if not 0 < tail < Fraction(1, 2):
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    if p == 0:
        return 0, 0
    if p == 1:
        return n, n
    a, d = p.numerator, p.denominator  # p = a/d; P(X = k) = C(n,k) a^k (d-a)^(n-k) / d^n
    b = d - a
    terms = [0] * (n + 1)
    term = b**n  # k = 0
    for k in range(n + 1):
        terms[k] = term
        if k < n:  # C(n,k+1) a^(k+1) b^(n-k-1) = C(n,k) a^k b^(n-k) * (n-k)/(k+1) * a/b
            term = term * (n - k) * a // ((k + 1) * b)
    total = d**n
    # tail probability > alpha/2  <=>  sum * tail.denominator > tail.numerator * total
    bound = tail.numerator * total
    low, running = 0, 0
    for k in range(n + 1):
        running += terms[k]
        if running * tail.denominator > bound:
            low = k
            break
    high, running = n, 0
    for k in range(n, -1, -1):
        running += terms[k]
        if running * tail.denominator > bound:
            high = k
            break
    return low, high


@dataclass(frozen=True, slots=True)
class Verdict:
    """Our k of n against the paper's p: the acceptance interval [low, high] (counts) and
    whether k lies in it. `label` is the word the report prints."""

    k: int
    n: int
    p: Fraction
    low: int
    high: int

    @property
    def inside(self) -> bool:
        return self.low <= self.k <= self.high

    @property
    def label(self) -> str:
        return "inside" if self.inside else "outside"


def verdict(
    k: int, n: int, p: float | Fraction, confidence: float | Fraction = CONFIDENCE
) -> Verdict:
    """Is our k of n inside the paper's figure's central 95% binomial acceptance interval?"""
    _check_counts(k, n)
    low, high = acceptance_interval(n, p, confidence)
    return Verdict(k=k, n=n, p=as_probability(p), low=low, high=high)
