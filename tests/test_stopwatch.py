"""The benchmarks' one timer, ``wizard_env.tools.bench.Stopwatch``, and ``rate`` built on it, read on a fake clock."""

from __future__ import annotations

import pytest

from wizard_env.util import stopwatch as bench


class FakeClock:
    """A wall clock and a CPU clock that move only when told to."""

    def __init__(self) -> None:
        self.wall, self.cpu = 100.0, 5.0

    def advance(self, wall: float, cpu: float = 0.0) -> None:
        self.wall += wall
        self.cpu += cpu


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(bench.time, "perf_counter", lambda: fake.wall)
    monkeypatch.setattr(bench.time, "process_time", lambda: fake.cpu)
    return fake


def test_stopwatch_reads_wall_and_cpu_seconds_and_freezes_at_the_end_of_the_block(clock: FakeClock):
    with bench.Stopwatch() as watch:
        clock.advance(2.5, cpu=1.25)
        assert (watch.seconds, watch.cpu_seconds) == (2.5, 1.25)  # running: up to now
        clock.advance(0.5)
    clock.advance(10.0, cpu=3.0)
    assert (watch.seconds, watch.cpu_seconds) == (3.0, 1.25)  # frozen where the block ended
    watch.stop()
    assert watch.seconds == 3.0  # a second stop keeps the first readings


def test_rate_counts_units_over_the_measured_window_after_the_warm_up(clock: FakeClock):
    calls = []

    def step() -> int:
        calls.append(clock.wall)
        clock.advance(0.25)
        return 3

    per_second = bench.rate(step, seconds=1.0, warmup=0.5)
    assert len(calls) == 2 + 4  # two warm-up steps (0.5 s), then four steps until 1 s has passed
    assert per_second == pytest.approx(4 * 3 / 1.0)


def test_rates_in_turn_takes_the_loops_in_turn_round_after_round(clock: FakeClock):
    order = []

    def loop(name: str, seconds_per_step: float):
        def step() -> int:
            order.append(name)
            clock.advance(seconds_per_step)
            return 1
        return step

    rates = bench.rates_in_turn({"fast": loop("fast", 0.1), "slow": loop("slow", 0.5)}, seconds=1.0, rounds=2)
    assert rates == {"fast": [pytest.approx(10.0)] * 2, "slow": [pytest.approx(2.0)] * 2}
    runs = [name for i, name in enumerate(order) if i == 0 or order[i - 1] != name]
    assert runs == ["fast", "slow", "fast", "slow"]
