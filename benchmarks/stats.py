"""The statistics the paper reports, computed by ``scipy.stats``.

``mcnemar_exact`` (exact binomial test of the discordant pairs at p = 0.5),
``paired_bootstrap_ci`` (seeded percentile bootstrap of the per-item differences, its settings
recorded) and ``binomial_ci`` (Wilson or Clopper-Pearson). Ours are only the argument checks,
the mapping of settings onto scipy's and the conversion to plain floats; tests/test_stats.py
cross-checks scipy against closed forms to 1e-12. scipy is imported on first use, so importing
this module, as the runner does, stays cheap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

__all__ = [
    "BootstrapResult",
    "McNemarResult",
    "binomial_ci",
    "fisher_exact",
    "mann_whitney",
    "mcnemar_exact",
    "paired_bootstrap_ci",
    "sign_test",
    "unpaired_bootstrap_ci",
]

# Resamples drawn per batch by scipy.stats.bootstrap: bounds memory, does not change the draws.
_BOOTSTRAP_BATCH = 1000


def _scipy_stats() -> ModuleType:
    """``scipy.stats``, imported on first use (it takes seconds to import)."""
    import scipy.stats  # lazy: importing this module stays cheap

    return scipy.stats


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

    Under H0 each discordant pair is equally likely to go either way, so the p-value is the
    two-sided exact binomial test of ``b10`` successes in ``b01 + b10`` trials at p = 0.5.
    Binomial(m, 0.5) is symmetric, so this is ``min(1, 2 * P(X <= min(b01, b10)))``. Exact
    rather than chi-square, which is wrong for small samples. With no discordant pairs, p = 1.
    """
    _check_paired(a, b)
    b01 = sum(1 for x, y in zip(a, b, strict=True) if not x and y)
    b10 = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    m = b01 + b10
    if m == 0:
        p_value = 1.0
    else:
        test = _scipy_stats().binomtest(b10, m, 0.5, alternative="two-sided")
        p_value = min(1.0, float(test.pvalue))
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


def _mean(diffs: Any, axis: int = -1) -> Any:
    """The mean along ``axis``: the vectorized statistic scipy computes on each resample."""
    return diffs.mean(axis=axis)


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
    question is kept. That gives a much tighter, and correct, interval than resampling each
    system on its own. Outcomes may be bools (accuracy) or numbers (e.g. F1). The per-item
    differences are computed once and are the one sample ``scipy.stats.bootstrap`` resamples
    (drawing items of it is drawing pairs; and a constant difference stays exactly constant,
    which ``mean(a*) - mean(b*)`` would not). ``iterations`` resamples come from
    ``numpy.random.default_rng(seed)``; the same inputs and seed always give the same interval.

    The settings map one for one onto scipy's: ``seed`` seeds ``default_rng`` (PCG64),
    ``iterations`` is ``n_resamples``, ``confidence`` is ``confidence_level``, and
    ``method="percentile"`` takes quantiles with linear interpolation (Hyndman-Fan type 7). The
    same inputs, seed and numpy version give the same interval (the tests re-derive it with
    plain numpy). One pair is handled here (scipy needs two): every resample is that pair, so
    the interval is the point.
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
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    _check_confidence(confidence)

    n = len(a)
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    estimate = math.fsum(diffs) / n
    if n == 1:  # every resample is the one pair (scipy.stats.bootstrap needs two)
        low = high = estimate
    else:
        import numpy as np  # with scipy, on first use

        result = _scipy_stats().bootstrap(
            (np.asarray(diffs),),
            _mean,
            n_resamples=iterations,
            batch=_BOOTSTRAP_BATCH,
            vectorized=True,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        low = float(result.confidence_interval.low)
        high = float(result.confidence_interval.high)
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

# Our method names, and scipy's for each.
_BINOMIAL_METHODS = {"wilson": "wilson", "clopper-pearson": "exact"}


def binomial_ci(
    successes: int, n: int, confidence: float = 0.95, method: str = "wilson"
) -> tuple[float, float]:
    """Confidence interval for a proportion (an accuracy of ``successes`` out of ``n``).

    ``"wilson"`` is the score interval. It has good coverage and sensible behaviour at 0/n
    and n/n (the matching bound is exactly 0 or 1). ``"clopper-pearson"`` is the exact,
    conservative interval (scipy's ``"exact"``, from the beta quantiles), for readers who
    want guaranteed coverage.
    """
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, got {value!r}")
    if n <= 0:
        raise ValueError(f"n must be positive, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n={n}, got {successes}")
    _check_confidence(confidence)
    if method not in _BINOMIAL_METHODS:
        raise ValueError(
            f"unknown method {method!r}; expected one of {', '.join(_BINOMIAL_METHODS)}"
        )
    ci = (
        _scipy_stats()
        .binomtest(successes, n)
        .proportion_ci(confidence_level=confidence, method=_BINOMIAL_METHODS[method])
    )
    # Clamped to [0, 1], and exact at 0/n and n/n, whatever the float rounding.
    low = 0.0 if successes == 0 else max(0.0, float(ci.low))
    high = 1.0 if successes == n else min(1.0, float(ci.high))
    return low, high


# ---------------------------------------------------------------------------
# Two independent samples
# ---------------------------------------------------------------------------


def fisher_exact(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided p-value of Fisher's exact test: do two independent samples (different items)
    succeed at different rates? The unpaired counterpart of `mcnemar_exact`."""
    if not a or not b:
        raise ValueError("fisher_exact needs at least one item on each side")
    ka, kb = sum(map(bool, a)), sum(map(bool, b))
    table = [[ka, len(a) - ka], [kb, len(b) - kb]]
    return min(1.0, float(_scipy_stats().fisher_exact(table, alternative="two-sided").pvalue))


def unpaired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    iterations: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Percentile bootstrap CI for ``mean(a) - mean(b)`` of two independent samples, each
    resampled on its own (``numpy.random.default_rng(seed)``; the same inputs, seed and numpy
    version give the same interval)."""
    if not a or not b:
        raise ValueError("unpaired_bootstrap_ci needs at least one item on each side")
    _check_confidence(confidence)
    import numpy as np

    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diffs = np.empty(iterations)
    for start in range(0, iterations, _BOOTSTRAP_BATCH):
        size = min(_BOOTSTRAP_BATCH, iterations - start)
        ra = xa[rng.integers(0, len(xa), (size, len(xa)))].mean(axis=1)
        rb = xb[rng.integers(0, len(xb), (size, len(xb)))].mean(axis=1)
        diffs[start : start + size] = ra - rb
    alpha = (1 - confidence) / 2
    low, high = np.quantile(diffs, [alpha, 1 - alpha])
    return BootstrapResult(
        estimate=float(xa.mean() - xb.mean()),
        low=float(low),
        high=float(high),
        iterations=iterations,
        seed=seed,
        confidence=confidence,
        n=len(xa) + len(xb),
    )


def sign_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided exact sign test of paired numbers (ties dropped): the `mcnemar_exact` of
    measurements, e.g. read sizes of two arms on the same questions."""
    _check_paired(a, b)
    up = sum(1 for x, y in zip(a, b, strict=True) if x > y)
    down = sum(1 for x, y in zip(a, b, strict=True) if x < y)
    if up + down == 0:
        return 1.0
    return min(1.0, float(_scipy_stats().binomtest(up, up + down, 0.5).pvalue))


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test of two independent samples of numbers."""
    if not a or not b:
        raise ValueError("mann_whitney needs at least one item on each side")
    if len(set(a) | set(b)) == 1:
        return 1.0
    return float(_scipy_stats().mannwhitneyu(a, b, alternative="two-sided").pvalue)
