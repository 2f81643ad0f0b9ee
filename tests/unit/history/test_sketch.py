"""The duration sketch: quantiles within 1 % of the exact ones, merge = union, bounded size."""

from __future__ import annotations

import math
import random

import pytest

from queues.history.sketch import ALPHA, MAX_BUCKETS, MAX_MS, Sketch

QS = (0.5, 0.95, 0.99)


def exact(values: list[float], q: float) -> float:
    """The value at rank q * (n - 1), the lower one: what the sketch estimates."""
    ordered = sorted(values)
    return ordered[math.floor(q * (len(ordered) - 1))]


def assert_close(estimate: float | None, true: float) -> None:
    assert estimate is not None
    if true == 0:
        assert estimate == 0
    else:
        assert abs(estimate - true) <= ALPHA * true + 1e-9, (estimate, true)


@pytest.mark.parametrize(
    "draw",
    [
        lambda r: r.randint(0, 50),
        lambda r: r.lognormvariate(5, 2),
        lambda r: r.expovariate(1 / 300),
        lambda r: r.choice([10, 10, 10, 5000]),
        lambda r: r.uniform(1, 86_400_000),
    ],
)
def test_quantiles_are_within_alpha_of_the_exact_ones(draw: object) -> None:
    rand = random.Random(7)
    # BullMQ stamps whole milliseconds: durations are whole too.
    values = [float(round(draw(rand))) for _ in range(20_000)]  # type: ignore[operator]
    sketch = Sketch.of(values)
    assert sketch.count == len(values)
    for q in (*QS, 0.0, 0.25, 1.0):
        assert_close(sketch.quantile(q), exact(values, q))


def test_merge_is_the_sketch_of_the_union() -> None:
    rand = random.Random(3)
    left = [rand.expovariate(1 / 40) for _ in range(5000)]
    right = [rand.expovariate(1 / 4000) for _ in range(3000)]
    merged = Sketch.of(left)
    merged.merge(Sketch.of(right))
    assert merged == Sketch.of(left + right)
    for q in QS:
        assert_close(merged.quantile(q), exact(left + right, q))


def test_round_trip_and_compact_form() -> None:
    sketch = Sketch.of([0, 0, 1, 2, 3, 1000, 1000, 123_456, 9e9])
    text = sketch.dumps()
    assert Sketch.loads(text) == sketch
    assert Sketch.loads("") == Sketch()
    assert len(text) < 60  # a few bytes a bucket
    with pytest.raises(ValueError):
        Sketch.loads("////")
    with pytest.raises(ValueError):
        Sketch.loads("bm90IHpsaWI")
    # A sketch of many buckets is stored compressed, and read back the same.
    rand = random.Random(5)
    wide = Sketch.of(round(rand.lognormvariate(4, 1.2)) for _ in range(5000))
    assert Sketch.loads(wide.dumps()) == wide
    assert len(wide.dumps()) < 3 * len(wide.buckets)


def test_buckets_are_bounded_whatever_the_values() -> None:
    sketch = Sketch.of(float(10**e) * m for e in range(13) for m in range(1, 100))
    sketch.add(MAX_MS * 1000)
    sketch.add(0.2)
    assert len(sketch.buckets) + 1 <= MAX_BUCKETS
    assert sketch.quantile(1.0) == pytest.approx(MAX_MS, rel=ALPHA)
    assert sketch.quantile(0.0) == 0


def test_empty_sketch_has_no_quantiles() -> None:
    assert Sketch().quantile(0.5) is None
    assert not Sketch()
