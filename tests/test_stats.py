"""Tests for the paper's statistics (benchmarks/stats.py, on scipy.stats).

The hand-computed values and the independent formulas below (exact integer sums, the Wilson
closed form, the binomial tail equations, the bootstrap re-derived with numpy) are cross-checks
of scipy against what the statistics mean, not of scipy against itself.
"""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.stats import (
    BootstrapResult,
    McNemarResult,
    binomial_ci,
    mcnemar_exact,
    paired_bootstrap_ci,
)

# ---------------------------------------------------------------------------
# McNemar
# ---------------------------------------------------------------------------


def test_mcnemar_all_discordant_one_way() -> None:
    # b01 = 0, b10 = 5: p = 2 * 0.5**5 = 0.0625.
    a = [True] * 5 + [True] * 3
    b = [False] * 5 + [True] * 3
    result = mcnemar_exact(a, b)
    assert result == McNemarResult(b01=0, b10=5, n=8, p_value=0.0625)
    assert result.discordant == 5


def test_mcnemar_balanced_discordance_gives_one() -> None:
    a = [True, True, False, False, True]
    b = [False, False, True, True, True]
    result = mcnemar_exact(a, b)
    assert (result.b01, result.b10) == (2, 2)
    assert result.p_value == 1.0


def test_mcnemar_no_discordant_pairs() -> None:
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0
    assert mcnemar_exact([], []) == McNemarResult(b01=0, b10=0, n=0, p_value=1.0)


def test_mcnemar_known_value() -> None:
    # b01 = 2, b10 = 10: p = 2 * sum_{i<=2} C(12, i) / 2**12 = 2 * 79 / 4096.
    a = [False] * 2 + [True] * 10
    b = [True] * 2 + [False] * 10
    assert mcnemar_exact(a, b).p_value == pytest.approx(2 * 79 / 4096, rel=1e-15)


def test_mcnemar_large_counts_do_not_overflow() -> None:
    a = [True] * 600 + [False] * 400
    b = [False] * 600 + [True] * 400
    p = mcnemar_exact(a, b).p_value
    assert 0.0 < p < 1e-9


def test_mcnemar_accepts_ints() -> None:
    assert mcnemar_exact([1, 1, 0], [0, 0, 0]).b10 == 2


def test_mcnemar_length_mismatch() -> None:
    with pytest.raises(ValueError, match=r"len\(a\)=3 and len\(b\)=2"):
        mcnemar_exact([True] * 3, [True] * 2)


_bools = st.lists(st.booleans(), max_size=200)


@given(st.data())
def test_mcnemar_p_in_unit_interval_and_symmetric(data: st.DataObject) -> None:
    a = data.draw(_bools)
    b = data.draw(st.lists(st.booleans(), min_size=len(a), max_size=len(a)))
    ab = mcnemar_exact(a, b)
    ba = mcnemar_exact(b, a)
    assert 0.0 <= ab.p_value <= 1.0
    assert ab.p_value == ba.p_value
    assert (ab.b01, ab.b10) == (ba.b10, ba.b01)
    assert ab.n == len(a)


# ---------------------------------------------------------------------------
# Paired bootstrap
# ---------------------------------------------------------------------------


def _outcomes(n: int, rate: float, seed: int) -> list[bool]:
    rng = random.Random(seed)
    return [rng.random() < rate for _ in range(n)]


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    a, b = _outcomes(200, 0.7, 1), _outcomes(200, 0.55, 2)
    first = paired_bootstrap_ci(a, b, iterations=2000, seed=7)
    second = paired_bootstrap_ci(a, b, iterations=2000, seed=7)
    assert first == second
    other = paired_bootstrap_ci(a, b, iterations=2000, seed=8)
    assert other.estimate == first.estimate
    assert (other.low, other.high) != (first.low, first.high)


def test_bootstrap_records_settings_and_contains_estimate() -> None:
    a, b = _outcomes(300, 0.7, 3), _outcomes(300, 0.6, 4)
    result = paired_bootstrap_ci(a, b, iterations=3000, seed=11, confidence=0.9)
    assert isinstance(result, BootstrapResult)
    assert result.estimate == pytest.approx(sum(a) / 300 - sum(b) / 300)
    assert result.low <= result.estimate <= result.high
    assert (result.iterations, result.seed, result.confidence) == (3000, 11, 0.9)
    assert result.statistic == "mean_difference"
    assert result.n == 300


def test_bootstrap_wider_at_higher_confidence() -> None:
    a, b = _outcomes(200, 0.6, 5), _outcomes(200, 0.5, 6)
    narrow = paired_bootstrap_ci(a, b, iterations=2000, seed=0, confidence=0.8)
    wide = paired_bootstrap_ci(a, b, iterations=2000, seed=0, confidence=0.99)
    assert wide.low <= narrow.low and narrow.high <= wide.high


def test_bootstrap_identical_systems_give_zero_interval() -> None:
    a = _outcomes(50, 0.5, 9)
    result = paired_bootstrap_ci(a, list(a), iterations=500)
    assert (result.estimate, result.low, result.high) == (0.0, 0.0, 0.0)


def test_bootstrap_constant_difference() -> None:
    result = paired_bootstrap_ci([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], iterations=200)
    assert result.estimate == result.low == result.high == pytest.approx(0.5)


def test_bootstrap_interval_roughly_matches_normal_theory() -> None:
    # Paired accuracy difference, n = 500: the SE of the mean difference is sd(d)/sqrt(n).
    a, b = _outcomes(500, 0.7, 21), _outcomes(500, 0.6, 22)
    d = [x - y for x, y in zip(a, b, strict=True)]
    mean = sum(d) / len(d)
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1) / len(d))
    result = paired_bootstrap_ci(a, b)
    assert result.low == pytest.approx(mean - 1.96 * se, abs=0.01)
    assert result.high == pytest.approx(mean + 1.96 * se, abs=0.01)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iterations": 0}, "iterations"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"statistic": "median"}, "statistic"),
    ],
)
def test_bootstrap_rejects_bad_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_bootstrap_ci([True, False], [False, False], **kwargs)  # type: ignore[arg-type]


def test_bootstrap_rejects_empty_and_mismatched() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        paired_bootstrap_ci([], [])
    with pytest.raises(ValueError, match=r"len\(a\)=2 and len\(b\)=1"):
        paired_bootstrap_ci([True, False], [True])


# ---------------------------------------------------------------------------
# Binomial intervals
# ---------------------------------------------------------------------------


def test_wilson_7_of_10() -> None:
    low, high = binomial_ci(7, 10)
    assert low == pytest.approx(0.3968, abs=1e-4)
    assert high == pytest.approx(0.8922, abs=1e-4)


def test_clopper_pearson_7_of_10() -> None:
    low, high = binomial_ci(7, 10, method="clopper-pearson")
    assert low == pytest.approx(0.3475, abs=1e-4)
    assert high == pytest.approx(0.9333, abs=1e-4)


@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_clopper_pearson_edges_match_closed_form(n: int) -> None:
    # 0/n: upper = 1 - (alpha/2)**(1/n); n/n: lower = (alpha/2)**(1/n).
    assert binomial_ci(0, n, method="clopper-pearson") == pytest.approx(
        (0.0, 1 - 0.025 ** (1 / n)), rel=1e-9
    )
    assert binomial_ci(n, n, method="clopper-pearson") == pytest.approx(
        (0.025 ** (1 / n), 1.0), rel=1e-9
    )


@pytest.mark.parametrize("n", [1, 10, 100, 1000])
def test_wilson_edges(n: int) -> None:
    z2 = 1.959963984540054**2
    low, high = binomial_ci(0, n)
    assert low == 0.0
    assert high == pytest.approx(z2 / (n + z2), rel=1e-9)
    low, high = binomial_ci(n, n)
    assert high == 1.0
    assert low == pytest.approx(n / (n + z2), rel=1e-9)


def test_clopper_pearson_large_n_matches_known_values() -> None:
    # 3 / 10**7: the bounds are chi2(0.025, 6)/(2n) and chi2(0.975, 8)/(2n).
    low, high = binomial_ci(3, 10**7, method="clopper-pearson")
    assert low == pytest.approx(1.237344245791203 / 2e7, rel=1e-6)
    assert high == pytest.approx(17.53454613948465 / 2e7, rel=1e-6)
    # Reference values from scipy.stats.beta.ppf(0.025, k, n - k + 1) / ppf(0.975, k + 1, n - k).
    low, high = binomial_ci(50_000, 100_000, method="clopper-pearson")
    assert low == pytest.approx(0.4968960624918004, abs=1e-12)
    assert high == pytest.approx(0.5031039375081996, abs=1e-12)
    low, high = binomial_ci(123, 4567, method="clopper-pearson")
    assert low == pytest.approx(0.022432278104357845, abs=1e-12)
    assert high == pytest.approx(0.03205011206904826, abs=1e-12)


def test_clopper_pearson_is_wider_than_wilson() -> None:
    wilson = binomial_ci(30, 100)
    exact = binomial_ci(30, 100, method="clopper-pearson")
    assert exact[0] < wilson[0] and wilson[1] < exact[1]


def test_confidence_level_changes_width() -> None:
    for method in ("wilson", "clopper-pearson"):
        l90, h90 = binomial_ci(40, 80, confidence=0.9, method=method)
        l99, h99 = binomial_ci(40, 80, confidence=0.99, method=method)
        assert l99 < l90 < 0.5 < h90 < h99


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((5, 0), {}, "n must be positive"),
        ((-1, 10), {}, "successes must be between"),
        ((11, 10), {}, "successes must be between"),
        ((1.5, 10), {}, "successes must be an int"),
        ((True, 10), {}, "successes must be an int"),
        ((1, 10), {"confidence": 1.5}, "confidence"),
        ((1, 10), {"method": "agresti"}, "unknown method"),
    ],
)
def test_binomial_ci_validation(args: tuple, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        binomial_ci(*args, **kwargs)  # type: ignore[arg-type]


@given(
    st.integers(min_value=1, max_value=5000).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    ),
    st.sampled_from(["wilson", "clopper-pearson"]),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_binomial_ci_in_unit_interval_and_contains_estimate(
    kn: tuple[int, int], method: str, confidence: float
) -> None:
    k, n = kn
    low, high = binomial_ci(k, n, confidence=confidence, method=method)
    assert 0.0 <= low <= k / n <= high <= 1.0
    assert low < high


@given(
    st.integers(min_value=1, max_value=300).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    )
)
def test_binomial_ci_mirror_symmetry(kn: tuple[int, int]) -> None:
    # Swapping successes and failures mirrors the interval around 1/2.
    k, n = kn
    for method in ("wilson", "clopper-pearson"):
        low, high = binomial_ci(k, n, method=method)
        mlow, mhigh = binomial_ci(n - k, n, method=method)
        assert low == pytest.approx(1 - mhigh, abs=1e-9)
        assert high == pytest.approx(1 - mlow, abs=1e-9)


# ---------------------------------------------------------------------------
# Cross-checks: scipy.stats against independent formulas
# ---------------------------------------------------------------------------


def _mcnemar_by_comb(b01: int, b10: int) -> float:
    # The hand-written exact p-value: min(1, 2 * P(X <= min(b01, b10))), X ~ Bin(m, 1/2).
    m = b01 + b10
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(b01, b10) + 1))
    return min(1.0, tail / 2 ** (m - 1))


@given(st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=400))
def test_mcnemar_matches_exact_integer_sums(b01: int, b10: int) -> None:
    a = [False] * b01 + [True] * b10 + [True] * 3
    b = [True] * b01 + [False] * b10 + [True] * 3
    result = mcnemar_exact(a, b)
    assert (result.b01, result.b10, result.n) == (b01, b10, b01 + b10 + 3)
    assert result.p_value == pytest.approx(_mcnemar_by_comb(b01, b10), rel=1e-12)


def _wilson_closed_form(k: int, n: int, confidence: float) -> tuple[float, float]:
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p_hat, z2_n = k / n, z * z / n
    center = (p_hat + z2_n / 2) / (1 + z2_n)
    half = z * math.sqrt(p_hat * (1 - p_hat) / n + z2_n / (4 * n)) / (1 + z2_n)
    return max(0.0, center - half), min(1.0, center + half)


@given(
    st.integers(min_value=1, max_value=10**6).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    ),
    st.floats(min_value=0.5, max_value=0.999),
)
def test_wilson_matches_closed_form(kn: tuple[int, int], confidence: float) -> None:
    k, n = kn
    low, high = binomial_ci(k, n, confidence=confidence)
    ref_low, ref_high = _wilson_closed_form(k, n, confidence)
    assert low == pytest.approx(ref_low, abs=1e-12)
    assert high == pytest.approx(ref_high, abs=1e-12)


def _upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed term by term with math.comb."""
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


@given(
    st.integers(min_value=1, max_value=150).flatmap(
        lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
    ),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_clopper_pearson_bounds_solve_the_tail_equations(
    kn: tuple[int, int], confidence: float
) -> None:
    # The exact interval's definition: P(X >= k | low) = alpha/2 and P(X <= k | high) = alpha/2.
    # scipy finds the bounds by root-finding, so the tails hold to its tolerance (about 1e-9
    # relative seen at k=94, n=95), not to machine precision: 1e-6 still catches a wrong method.
    k, n = kn
    half_alpha = (1 - confidence) / 2
    low, high = binomial_ci(k, n, confidence=confidence, method="clopper-pearson")
    if k == 0:
        assert low == 0.0
    else:
        assert _upper_tail(k, n, low) == pytest.approx(half_alpha, rel=1e-6)
    if k == n:
        assert high == 1.0
    else:
        assert 1 - _upper_tail(k + 1, n, high) == pytest.approx(half_alpha, rel=1e-6)


@pytest.mark.parametrize(
    ("n", "iterations", "seed", "confidence"),
    [(2, 50, 0, 0.95), (137, 999, 5, 0.9), (400, 4321, 12, 0.99)],
)
def test_bootstrap_is_rederived_from_its_recorded_settings(
    n: int, iterations: int, seed: int, confidence: float
) -> None:
    # The recorded (seed, iterations, confidence) give the interval with plain numpy: draw
    # iterations x n item indices from default_rng(seed), average the per-item differences of
    # each draw, take the type-7 (linear) quantiles at alpha/2 and 1 - alpha/2.
    import numpy as np

    a, b = _outcomes(n, 0.6, seed + 100), _outcomes(n, 0.5, seed + 200)
    result = paired_bootstrap_ci(a, b, iterations=iterations, seed=seed, confidence=confidence)
    diffs = np.array(a, dtype=float) - np.array(b, dtype=float)
    draws = np.random.default_rng(seed).integers(0, n, size=(iterations, n))
    means = diffs[draws].mean(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    assert (result.low, result.high) == pytest.approx((low, high), abs=1e-12)


def test_bootstrap_one_pair_is_its_difference() -> None:
    result = paired_bootstrap_ci([0.75], [0.25], iterations=10, seed=3)
    assert (result.estimate, result.low, result.high, result.n) == (0.5, 0.5, 0.5, 1)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "0"])
def test_bootstrap_rejects_a_bad_seed(seed: object) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        paired_bootstrap_ci([True, False], [False, False], seed=seed)  # type: ignore[arg-type]
