"""The forward pass of ``PPOAgent``'s policy network, compiled with numba (no RL imports).

The network reads each row's observation, then (a policy with advice) RuleAgent's choice as a one-hot over
the actions, then (with features) RuleAgent's numbers by action; hidden layers, then the logits. Nearly
all of its inputs are zero, and so are most hidden units after a ReLU, so each layer adds up the weight rows
of the nonzero inputs only:

- ``first_layer``: the observation's nonzero entries (about 100 of 1,781 inputs), RuleAgent's choice as
  one weight row, its nonzero numbers; in groups of four, each group's products summed and then added.
- ``forward``: with ReLU hidden layers, the first layer and then each further one per row
  (``_dense_row``), the logits with the advice bonus on RuleAgent's choice. The further layers' sums are
  fused multiply-adds in blocks of 256 inputs, the blocks then added, then the bias: the order of OpenBLAS's
  ``sgemm`` on x86 with AVX-512 (``numpy``'s matrix product before), so that there the logits of a batch of
  16 rows or more are bit for bit those of the matrix product, and the decisions the same.
"""

from __future__ import annotations

import numba
import numpy as np

from wizard_env.engine.game import NUM_ACTIONS

#: Inputs a dense layer sums in one chain of fused multiply-adds before adding the chain to the total.
BLOCK = 256
#: Inputs the first layer tests for zero together.
SCAN = 8
#: Outputs of a dense layer are padded to a multiple of this (whole vector registers; the padding is zero).
LANES = 16


def padded_layers(layers: list[tuple[np.ndarray, np.ndarray]]) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """``forward``'s weights and biases of the layers after the first: each weight transposed ([inputs, outputs],
    C order), inputs and outputs padded with zeros to a multiple of ``LANES``; float32."""
    weights, biases = [], []
    for w, b in layers:
        outputs, inputs = w.shape
        wide = -(-outputs // LANES) * LANES
        weight = np.zeros((-(-inputs // LANES) * LANES, wide), dtype=np.float32)
        weight[:inputs, :outputs] = w.T
        bias = np.zeros(wide, dtype=np.float32)
        bias[:outputs] = b
        weights.append(weight)
        biases.append(bias)
    return tuple(weights), tuple(biases)


@numba.njit(cache=True)
def first_layer(observations: np.ndarray, choice: np.ndarray, numbers: np.ndarray, weight: np.ndarray,
                bias: np.ndarray) -> np.ndarray:
    """The first layer's outputs before the activation (float32 [k, m]) for inputs that are each row's observation
    [k, n], then, where ``choice`` [k] is not empty, RuleAgent's choice as a one-hot over the actions, then its
    ``numbers`` [k, f]: ``bias`` plus the rows of ``weight`` [inputs, m] (the layer's weights transposed) of each
    row's nonzero inputs, times the input. A row's inputs are nearly all zeros (about 100 of 1,781 are not), so
    this reads a few percent of the weights that a matrix product would."""
    k, n = observations.shape
    out = np.empty((k, weight.shape[1]), dtype=np.float32)
    index, value = np.empty(n + 1 + numbers.shape[1], dtype=np.int64), np.empty(n + 1 + numbers.shape[1], dtype=np.float32)
    for row in range(k):
        _first_row(observations[row], choice[row] if len(choice) else -1, numbers[row], weight, bias, index, value, out[row])
    return out


@numba.njit(cache=True)
def _first_row(observation: np.ndarray, choice: int, numbers: np.ndarray, weight: np.ndarray, bias: np.ndarray,
               index: np.ndarray, value: np.ndarray, acc: np.ndarray) -> None:
    """``first_layer`` of one row into ``acc`` (``choice`` -1: none); ``index`` and ``value``: scratch."""
    n, m = len(observation), len(acc)
    nonzero = _nonzeros(observation, 0, index, value, 0)
    after = n
    if choice >= 0:
        index[nonzero], value[nonzero] = n + choice, 1.0
        nonzero += 1
        after += NUM_ACTIONS  # where the numbers' weights start
    nonzero = _nonzeros(numbers, after, index, value, nonzero)
    acc[:] = bias
    t = 0
    while t + 4 <= nonzero:  # four inputs a pass over the outputs: a quarter of the loads and stores of acc
        w0, w1, w2, w3 = weight[index[t]], weight[index[t + 1]], weight[index[t + 2]], weight[index[t + 3]]
        v0, v1, v2, v3 = value[t], value[t + 1], value[t + 2], value[t + 3]
        for c in range(m):
            acc[c] += v0 * w0[c] + v1 * w1[c] + v2 * w2[c] + v3 * w3[c]
        t += 4
    for t in range(t, nonzero):
        w0, v0 = weight[index[t]], value[t]
        for c in range(m):
            acc[c] += v0 * w0[c]


@numba.njit(cache=True)
def _nonzeros(x: np.ndarray, offset: int, index: np.ndarray, value: np.ndarray, nonzero: int) -> int:
    """Append the nonzero entries of ``x`` (float32, contiguous) to ``index`` (position plus ``offset``) and ``value``
    from ``nonzero`` on, in order; return the new count. Eight entries at a time are first tested together (their
    bits but the sign's), so the zero stretches of an observation cost one test each."""
    bits = x.view(np.uint32)
    full = len(x) - len(x) % SCAN
    for lo in range(0, full, SCAN):
        seen = np.uint32(0)
        for j in range(lo, lo + SCAN):
            seen |= bits[j] << 1
        if seen:
            for j in range(lo, lo + SCAN):  # without a branch: written always, kept where not zero
                index[nonzero], value[nonzero] = offset + j, x[j]
                nonzero += x[j] != 0
    for j in range(full, len(x)):
        index[nonzero], value[nonzero] = offset + j, x[j]
        nonzero += x[j] != 0
    return nonzero


@numba.njit(cache=True, fastmath={"contract"})
def _dense_row(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, out: np.ndarray, index: np.ndarray,
               block: np.ndarray) -> None:
    """``out`` = ReLU(``x``) times ``weight`` [inputs, outputs] plus ``bias``, over the positive inputs only: per
    ``BLOCK`` of inputs a chain of fused multiply-adds (``block``: scratch), the chains added in order."""
    n, m = len(x), len(out)
    out[:] = 0
    for lo in range(0, n, BLOCK):
        nonzero = 0
        for j in range(lo, min(lo + BLOCK, n)):  # without a branch: the positive inputs' indices
            index[nonzero] = j
            nonzero += x[j] > 0
        block[:m] = 0
        t = 0
        while t + 4 <= nonzero:
            i0, i1, i2, i3 = index[t], index[t + 1], index[t + 2], index[t + 3]
            v0, v1, v2, v3 = x[i0], x[i1], x[i2], x[i3]
            w0, w1, w2, w3 = weight[i0], weight[i1], weight[i2], weight[i3]
            for c in range(m):  # the chain, one fused multiply-add at a time
                block[c] = v3 * w3[c] + (v2 * w2[c] + (v1 * w1[c] + (v0 * w0[c] + block[c])))
            t += 4
        for t in range(t, nonzero):
            v0, w0 = x[index[t]], weight[index[t]]
            for c in range(m):
                block[c] = v0 * w0[c] + block[c]
        for c in range(m):
            out[c] += block[c]
    for c in range(m):
        out[c] += bias[c]


@numba.njit(cache=True)
def forward(observations: np.ndarray, rows: np.ndarray, choice: np.ndarray, numbers: np.ndarray, bonus: np.ndarray,
            first_weight: np.ndarray, first_bias: np.ndarray, weights: tuple, biases: tuple) -> np.ndarray:
    """The logits (float32 [len(rows), NUM_ACTIONS]) of a ReLU network for rows ``rows`` of ``observations``,
    with RuleAgent's ``choice`` and ``numbers`` of each row of the batch (as ``first_layer`` reads them; ``choice``
    empty: none) and ``bonus`` [len(rows)] added to the logit of the row's choice. ``weights`` and ``biases``:
    the further layers as ``padded_layers`` gives them."""
    n, f = observations.shape[1], numbers.shape[1]
    widest = first_weight.shape[1]
    for w in weights:
        widest = max(widest, w.shape[0], w.shape[1])
    index, value = np.empty(max(n + 1 + f, widest), dtype=np.int64), np.empty(n + 1 + f, dtype=np.float32)
    x, y, block = np.zeros(widest, dtype=np.float32), np.zeros(widest, dtype=np.float32), np.empty(widest, dtype=np.float32)
    logits = np.empty((len(rows), NUM_ACTIONS), dtype=np.float32)
    for i in range(len(rows)):
        row = rows[i]
        chosen = choice[row] if len(choice) else -1
        _first_row(observations[row], chosen, numbers[row], first_weight, first_bias, index, value, x[:first_weight.shape[1]])
        width = first_weight.shape[1]
        for layer in range(len(weights)):
            inputs, outputs = weights[layer].shape
            x[width:inputs] = 0
            _dense_row(x[:inputs], weights[layer], biases[layer], y[:outputs], index, block)
            x, y, width = y, x, outputs
        logits[i] = x[:NUM_ACTIONS]
        if chosen >= 0:
            logits[i, chosen] = np.float32(np.float64(logits[i, chosen]) + bonus[i])
    return logits


@numba.njit(cache=True)
def best_legal(logits: np.ndarray, legal: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The action with the highest logit (``logits`` [len(rows), NUM_ACTIONS]) among the legal ones of each row
    (``legal`` [k, NUM_ACTIONS] bool, row ``rows[i]`` for ``logits[i]``); ties: the lowest action id."""
    actions = np.empty(len(rows), dtype=np.int64)
    for i in range(len(rows)):
        best, top = -1, -np.inf
        for a in range(logits.shape[1]):
            if legal[rows[i], a] and (best < 0 or logits[i, a] > top):
                best, top = a, logits[i, a]
        actions[i] = best
    return actions
