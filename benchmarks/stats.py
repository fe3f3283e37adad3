"""The statistics the paper reports, in pure standard-library Python.

* ``mcnemar_exact``: exact McNemar test on paired per-question outcomes. This is the
  two-sided exact binomial test on the discordant pairs, with p = 0.5.
* ``paired_bootstrap_ci``: paired (per-item) percentile bootstrap CI for a difference of
  means. It is seeded, and its settings are recorded so the result can be reproduced.
* ``binomial_ci``: a 95% (or any) interval for an accuracy, Wilson or Clopper-Pearson.

There are no numpy/scipy dependencies, so the harness's scoring path stays pure and the
results are bit-for-bit reproducible across machines.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "BootstrapResult",
    "McNemarResult",
    "binomial_ci",
    "mcnemar_exact",
    "paired_bootstrap_ci",
]


def _check_confidence(confidence: float) -> None:
    if not (isinstance(confidence, int | float) and 0.0 < confidence < 1.0):
        raise ValueError(
            f"confidence must be a number strictly between 0 and 1, got {confidence!r}"
        )


def _check_paired(a: Sequence[object], b: Sequence[object]) -> None:
    if len(a) != len(b):
        raise ValueError(
            f"paired samples must have the same length, got len(a)={len(a)} and len(b)={len(b)}"
        )


# ---------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class McNemarResult:
    """Outcome of an exact McNemar test.

    ``b01`` counts the pairs where ``a`` failed and ``b`` succeeded, and ``b10`` the pairs
    where ``a`` succeeded and ``b`` failed. ``n`` is the number of pairs (concordant ones
    included). ``p_value`` is the two-sided exact p-value.
    """

    b01: int
    b10: int
    n: int
    p_value: float

    @property
    def discordant(self) -> int:
        """Number of discordant pairs, the only pairs that carry information."""
        return self.b01 + self.b10


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemarResult:
    """Exact McNemar test: do systems ``a`` and ``b`` differ on the same items?

    Under H0 each discordant pair is equally likely to go either way. So the p-value is
    ``min(1, 2 * P(X <= min(b01, b10)))`` with ``X ~ Binomial(b01 + b10, 0.5)``. It is
    computed with exact integers, which stays correct for small samples, where the
    chi-square approximation does not. With no discordant pairs, p = 1.
    """
    _check_paired(a, b)
    b01 = sum(1 for x, y in zip(a, b, strict=True) if not x and y)
    b10 = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    m = b01 + b10
    if m == 0:
        p_value = 1.0
    else:
        tail = sum(math.comb(m, i) for i in range(min(b01, b10) + 1))
        # 2 * tail / 2**m as an exactly rounded int/int division, capped at 1.
        p_value = min(1.0, tail / 2 ** (m - 1))
    return McNemarResult(b01=b01, b10=b10, n=len(a), p_value=p_value)


# ---------------------------------------------------------------------------
# Paired bootstrap
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapResult:
    """A paired bootstrap CI, with the settings needed to reproduce it exactly."""

    estimate: float
    low: float
    high: float
    iterations: int
    seed: int
    confidence: float
    statistic: str = "mean_difference"
    n: int = 0


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Percentile with linear interpolation (numpy's default, Hyndman-Fan type 7)."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * frac


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    iterations: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    statistic: str = "mean_difference",
) -> BootstrapResult:
    """Percentile bootstrap CI for ``mean(a) - mean(b)`` that resamples items, not values.

    Items are resampled as pairs, so the correlation between the two systems on the same
    question is kept. That gives a much tighter, and correct, interval than resampling
    each system on its own. Outcomes may be bools (accuracy) or numbers (e.g. F1). The
    per-item differences are computed once, and each iteration draws ``n`` of them with
    ``random.Random(seed)``. The same inputs and seed always give the same interval.
    """
    _check_paired(a, b)
    if statistic != "mean_difference":
        raise ValueError(
            f"unsupported statistic {statistic!r}; only 'mean_difference' is implemented"
        )
    if len(a) == 0:
        raise ValueError("paired_bootstrap_ci needs at least one pair")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    _check_confidence(confidence)

    n = len(a)
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    estimate = math.fsum(diffs) / n
    rng = random.Random(seed)
    choices = rng.choices
    means = sorted(math.fsum(choices(diffs, k=n)) / n for _ in range(iterations))
    alpha = 1.0 - confidence
    low = _percentile(means, alpha / 2)
    high = _percentile(means, 1.0 - alpha / 2)
    return BootstrapResult(
        estimate=estimate,
        low=low,
        high=high,
        iterations=iterations,
        seed=seed,
        confidence=confidence,
        statistic=statistic,
        n=n,
    )


# ---------------------------------------------------------------------------
# Binomial intervals
# ---------------------------------------------------------------------------

_BINOMIAL_METHODS = ("wilson", "clopper-pearson")


def _log_binom_pmf(i: int, n: int, log_p: float, log_q: float) -> float:
    return (
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * log_p
        + (n - i) * log_q
    )


def _log_sum_decreasing(terms_start: int, stop: int, step: int, n: int, p: float) -> float:
    """Log of the sum of binomial pmf terms from ``terms_start`` towards ``stop`` (exclusive).

    The caller makes sure the terms decrease in the direction of ``step`` (they lie on
    one side of the mode). So the sum stops once a term is below 1e-20 of the running
    total, which keeps the cost at O(sqrt(n)) rather than O(n).
    """
    log_p, log_q = math.log(p), math.log1p(-p)
    first = _log_binom_pmf(terms_start, n, log_p, log_q)
    total = 1.0  # the running sum, scaled by exp(-first)
    for i in range(terms_start + step, stop, step):
        rel = math.exp(_log_binom_pmf(i, n, log_p, log_q) - first)
        total += rel
        if rel < 1e-20 * total:
            break
    return first + math.log(total)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """``P(X <= k)`` for ``X ~ Binomial(n, p)``, 0 < p < 1, summed in log space."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    mode = math.floor((n + 1) * p)
    if k < mode:
        # Terms i <= k rise with i, so sum downwards from k.
        return math.exp(_log_sum_decreasing(k, -1, -1, n, p))
    # Otherwise the upper tail i > k falls with i: sum it upwards and take the complement.
    return -math.expm1(_log_sum_decreasing(k + 1, n + 1, 1, n, p))


def _bisect_decreasing(
    f_minus_target: Callable[[float], float], lo: float = 0.0, hi: float = 1.0
) -> float:
    """Root of a decreasing function on (lo, hi) by bisection, to float resolution."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f_minus_target(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _clopper_pearson(successes: int, n: int, alpha: float) -> tuple[float, float]:
    # Lower bound: the p at which P(X >= k) = alpha/2, i.e. CDF(k-1; p) = 1 - alpha/2.
    if successes == 0:
        low = 0.0
    else:
        low = _bisect_decreasing(lambda p: _binom_cdf(successes - 1, n, p) - (1 - alpha / 2))
    # Upper bound: the p at which P(X <= k) = alpha/2.
    if successes == n:
        high = 1.0
    else:
        high = _bisect_decreasing(lambda p: _binom_cdf(successes, n, p) - alpha / 2)
    return low, high


def _wilson(successes: int, n: int, alpha: float) -> tuple[float, float]:
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p_hat = successes / n
    z2_n = z * z / n
    denom = 1 + z2_n
    center = (p_hat + z2_n / 2) / denom
    half = z * math.sqrt(p_hat * (1 - p_hat) / n + z2_n / (4 * n)) / denom
    # At 0/n and n/n the matching bound is exactly 0 or 1 (rounding would make it 1e-17).
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return low, high


def binomial_ci(
    successes: int, n: int, confidence: float = 0.95, method: str = "wilson"
) -> tuple[float, float]:
    """Confidence interval for a proportion (an accuracy of ``successes`` out of ``n``).

    ``"wilson"`` is the score interval. It has good coverage and sensible behaviour at 0/n
    and n/n. ``"clopper-pearson"`` is the exact, conservative interval, found by bisection
    on the exact binomial CDF (no scipy), for readers who want guaranteed coverage.
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, got {value!r}")
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    _check_confidence(confidence)
    alpha = 1.0 - confidence
    if method == "wilson":
        return _wilson(successes, n, alpha)
    if method == "clopper-pearson":
        return _clopper_pearson(successes, n, alpha)
    raise ValueError(f"unknown method {method!r}; expected one of {', '.join(_BINOMIAL_METHODS)}")
