"""Compact samples (``training.values.samples``, ``training.values.sample_stream``): every field of every variant comes back bit for
bit, chunks of the first format are read, and a fit that streams its data from disk gives the in-memory fit's weights."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from wizard_env.agents.rule_agent import RuleAgent
from wizard_env.engine.actions import NUM_ACTIONS, Phase
from wizard_env.engine.batch import WizardBatch
from wizard_env.engine.observation import OBS_SIZE, SLICES
from wizard_env.engine.rules import Rules
from wizard_env.training.values import rollout_values as rv
from wizard_env.training.values.sample_stream import ChunkSamples, epoch_order, load_samples, minibatches
from wizard_env.training.values.samples import CHUNK_FORMAT, ValueSamples, read_chunk, write_chunk

torch = pytest.importorskip("torch")

#: Every rules variant: each player count, the bidding modes, the bid total rule, foresight, amigo rounds.
VARIANTS = {
    "3 players, amigo": Rules.make(3, "amigo"),
    "4 players, hidden bids, foresight": Rules.make(4, 4, "hidden", foresight=True),
    "5 players, secret bids": Rules.make(5, 5, "secret"),
    "6 players, bid total rule, amigo": Rules.make(6, "amigo", bid_total_rule=True),
    "4 players, foresight, bid total rule": Rules.make(4, 3, bid_total_rule=True, foresight=True),
}


def played(rules: Rules, games: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Observations, masks, made-up values (round scores on legal actions, NaN elsewhere) and RuleAgent's advice of
    every decision of whole games."""
    rng, agent = np.random.default_rng(seed), RuleAgent(seed=seed)
    batch = WizardBatch(rules, games, seed=seed, autoreset=False)
    parts: list[tuple[np.ndarray, ...]] = []
    while (live := np.flatnonzero(batch.phase != Phase.OVER)).size:
        o, m = batch.observe(live), batch.legal_masks(live)
        a = agent.act_batch(o, m)
        values = np.where(m, 10 * rng.integers(-20, 23, m.shape), np.nan).astype(np.float32)
        parts.append((o, m, values, a))
        batch.step(a, live)
    return tuple(np.concatenate(p) for p in zip(*parts))  # type: ignore[return-value]


@pytest.fixture(scope="module")
def decisions() -> dict[str, tuple[np.ndarray, ...]]:
    return {name: played(rules) for name, rules in VARIANTS.items()}


def assert_same(samples: ValueSamples, o: np.ndarray, m: np.ndarray, v: np.ndarray, a: np.ndarray) -> None:
    """The decoded samples are the rollout loop's arrays, bit for bit (NaN where an action is illegal)."""
    m = m != 0
    assert samples.observations.dtype == np.float32
    assert np.array_equal(samples.observations.view(np.uint32), o.view(np.uint32))
    assert np.array_equal(samples.masks, m != 0)
    assert samples.values.dtype == np.float32 and np.array_equal(samples.values.view(np.uint32)[m], v.view(np.uint32)[m])
    assert np.isnan(samples.values[~m]).all()
    assert np.array_equal(samples.advice, a)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_field_of_every_variant_comes_back_bit_for_bit_in_memory_and_from_a_chunk(decisions, variant, tmp_path):
    o, m, v, a = decisions[variant]
    assert np.abs(o[:, SLICES["scores"]]).max() > 0  # games long enough to have scores
    samples = ValueSamples.of(o, m, v, a)
    assert samples.legal_values.dtype == np.int16  # round scores are whole numbers: two bytes each
    assert_same(samples, o, m, v, a)
    write_chunk(tmp_path / "chunk.npz", samples)
    assert_same(read_chunk(tmp_path / "chunk.npz"), o, m, v, a)
    rows = np.random.default_rng(1).permutation(len(a))[:50]
    assert_same(samples.take(rows), o[rows], m[rows], v[rows], a[rows])


def test_extreme_rounds_and_scores_and_fractional_values_come_back_exactly(decisions):
    o, m, v, a = (x[:40].copy() for x in decisions["3 players, amigo"])
    o[:, SLICES["round"]] = o[:, SLICES["num_rounds"]] = np.float32(1000 / 20)  # the most rounds a game may have
    o[:20, SLICES["scores"]] = (np.array([-20_000, 220_000, -10, 0, 12_340, 5]) * (1 / 100)).astype(np.float32)
    v = np.where(m, v + 0.25, np.nan).astype(np.float32)  # values that are not whole numbers are kept as float32
    samples = ValueSamples.of(o, m, v, a)
    assert samples.legal_values.dtype == np.float32
    assert_same(samples, o, m, v, a)


def test_a_chunk_takes_at_least_eight_times_less_than_the_first_format(decisions, tmp_path):
    o, m, v, a = decisions["4 players, hidden bids, foresight"]
    write_chunk(tmp_path / "new.npz", ValueSamples.of(o, m, v, a))
    with open(tmp_path / "old.npz", "wb") as f:
        np.savez(f, observations=o.astype(np.float16), masks=m != 0, values=v, advice=a.astype(np.int64))
    assert (tmp_path / "old.npz").stat().st_size >= 8 * (tmp_path / "new.npz").stat().st_size


def test_observations_the_layout_cannot_hold_are_refused_with_the_field_named(decisions):
    o, m, v, a = (x[:5].copy() for x in decisions["5 players, secret bids"])
    o[3, SLICES["hand"].start] = 0.5
    with pytest.raises(ValueError, match=r"observation 3 holds 0\.5 in column \d+ \(field 'hand'\)"):
        ValueSamples.of(o, m, v, a)
    with pytest.raises(ValueError, match=r"masks of shape \(5, 3\), expected \(5, 79\)"):
        ValueSamples.of(o, m[:, :3], v, a)


def test_a_chunk_of_the_first_format_is_read_as_the_observations_it_was_written_from(decisions, tmp_path):
    o, m, v, a = decisions["6 players, bid total rule, amigo"]
    path = tmp_path / "chunk-00000.npz"
    with open(path, "wb") as f:  # the layout written before the compact format: float16 observations, all values
        np.savez(f, observations=o.astype(np.float16), masks=m != 0, values=v, advice=a.astype(np.int64))
    with zipfile.ZipFile(path) as archive:
        assert sorted(archive.namelist()) == ["advice.npy", "masks.npy", "observations.npy", "values.npy"]
    assert_same(read_chunk(path), o, m, v, a)  # float16 told every number of these games apart
    write_chunk(tmp_path / "chunk-00001.npz", ValueSamples.of(o, m, v, a))
    both, chunk = load_samples([path, tmp_path / "chunk-00001.npz"])
    assert isinstance(both, ValueSamples) and np.array_equal(chunk, np.repeat([0, 1], len(a)))
    assert_same(both, *(np.concatenate([x, x]) for x in (o, m, v, a)))


def test_a_chunk_of_another_format_is_named_with_the_formats_this_code_reads(decisions, tmp_path):
    path = tmp_path / "chunk.npz"
    write_chunk(path, ValueSamples.of(*(x[:10] for x in decisions["5 players, secret bids"])))
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    with open(path, "wb") as f:
        np.savez(f, **(arrays | {"format": np.array([CHUNK_FORMAT + 1, 1])}))
    with pytest.raises(ValueError, match=rf"data chunk {path}: it is of chunk format {CHUNK_FORMAT + 1}, 1: this code reads"):
        read_chunk(path)


def chunks(folder: Path, decisions, sizes: list[int]) -> list[Path]:
    """Chunk files of ``sizes`` decisions, cut from the decisions of every variant in turn."""
    o, m, v, a = (np.concatenate(x) for x in zip(*decisions.values()))
    paths, at = [], 0
    for i, size in enumerate(sizes):
        paths.append(folder / f"chunk-{i:05d}.npz")
        write_chunk(paths[-1], ValueSamples.of(o[at:at + size], m[at:at + size], v[at:at + size], a[at:at + size]))
        at += size
    return paths


def test_past_the_budget_the_data_stay_on_disk_and_read_as_the_same_rows(decisions, tmp_path):
    paths = chunks(tmp_path, decisions, [70, 0, 130, 45])
    held, chunk = load_samples(paths)
    streamed, same = load_samples(paths, budget=1000)
    assert isinstance(held, ValueSamples) and isinstance(streamed, ChunkSamples)
    assert np.array_equal(chunk, same) and len(streamed) == len(held) == 245 and np.array_equal(streamed.advice, held.advice)
    rows = np.random.default_rng(2).integers(0, 245, 300)  # across chunks, in any order, repeated
    a, b = held.take(rows), streamed.take(rows)
    assert all(np.array_equal(getattr(a, name), getattr(b, name)) for name in ("obs_bits", "obs_small", "obs_wide", "legal",
                                                                               "legal_values", "advice"))
    with pytest.raises(IndexError):
        streamed.take(np.array([245]))


def test_an_epoch_streamed_window_by_window_gives_the_minibatches_held_in_memory(decisions, tmp_path):
    paths = chunks(tmp_path, decisions, [90, 130, 45, 200])
    held, _ = load_samples(paths)
    streamed, _ = load_samples(paths, budget=0)
    train = np.flatnonzero(np.random.default_rng(3).random(len(held)) < 0.8)
    windows = epoch_order(np.random.default_rng(4), train, len(held), window=64)
    assert len(windows) > 3 and all(len(w) <= 64 for w in windows)
    assert np.array_equal(np.sort(np.concatenate(windows)), train)  # every training row once
    for batch_size in (25, 64, 150):  # minibatches within a window, across two, across several
        ours = list(minibatches(held, windows, batch_size))
        theirs = list(minibatches(streamed, windows, batch_size))
        assert len(ours) == len(theirs) == len(train) // batch_size
        assert all(np.array_equal(x.legal_values, y.legal_values) and np.array_equal(x.obs_bits, y.obs_bits) for x, y in zip(ours, theirs))


def test_a_fit_streamed_from_disk_gives_the_weights_of_the_fit_in_memory(decisions, tmp_path):
    paths = chunks(tmp_path, decisions, [150, 100, 250])
    held_out = np.arange(100, 150)
    train = np.setdiff1d(np.arange(500), held_out)
    weights = []
    for budget in (None, 0):
        samples, _ = load_samples(paths, budget=budget)
        torch.manual_seed(0)
        net = rv.value_network(rv.input_width(True), [16])
        loss = rv.fit(net, samples, train, epochs=2, lr=1e-2, batch_size=32, seed=5, features=True, window=128)
        bonus = np.full(len(Phase), 0.3)
        weights.append((loss, rv.network_weights(net), rv.gains(net, samples, held_out, bonus, True),
                        rv.chosen_actions(net, samples, held_out, bonus, True)))
    (loss, ours, gains, chosen), (same_loss, theirs, same_gains, same_chosen) = weights
    assert np.isfinite(loss) and loss == same_loss and gains == same_gains and np.array_equal(chosen, same_chosen)
    assert all(np.array_equal(ours[k], theirs[k]) for k in ours)


def test_inputs_expand_rows_to_the_float32_the_network_reads(decisions):
    o, m, v, a = decisions["4 players, foresight, bid total rule"]
    samples = ValueSamples.of(o, m, v, a)
    rows = np.array([5, 0, 17])
    x = rv.inputs(samples, rows, features=False)
    assert x.dtype == np.float32 and x.shape == (3, OBS_SIZE + NUM_ACTIONS)
    assert np.array_equal(x[:, :OBS_SIZE], o[rows]) and np.array_equal(x[:, OBS_SIZE:].argmax(axis=1), a[rows])
    at = np.arange(len(a))
    assert np.array_equal(samples.value_of(a), v[at, a])  # the values gains compares, read without the dense table
    illegal = np.argmin(m, axis=1)
    assert np.isnan(samples.value_of(illegal)[~m[at, illegal].astype(bool)]).all()
