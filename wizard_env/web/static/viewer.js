// The replay viewer: a wizard-replay/1 game stepped deal, bids, then trick by trick, forwards and backwards.

import { api, el, paintDots, roundLine, scoreChart, scoreTable, seatsView, showError, trickView } from "./table.js";

const state = { record: null, steps: [], index: 0, view: "all", source: null, game: 1, games: 1, maxUpload: 8 << 20 };
const $ = (id) => document.getElementById(id);

/** The steps of a game: per round its deal, its bids, then each trick. */
function buildSteps(record) {
  const steps = [];
  record.rounds.forEach((rnd, r) => {
    steps.push({ r, kind: "deal" }, { r, kind: "bids" });
    rnd.tricks.forEach((_, t) => steps.push({ r, kind: "trick", t }));
  });
  return steps;
}

function without(cards, gone) {
  const left = [...cards];
  for (const card of gone) {
    const i = left.indexOf(card);
    if (i >= 0) left.splice(i, 1);
  }
  return left;
}

/** What the table shows at a step, for every seat ("all") or as one seat sees it. */
function modelAt(record, step, view) {
  const n = record.num_players;
  const rnd = record.rounds[step.r];
  const names = record.seats.map((agent, s) => `seat ${s} (${agent})`);
  const size = rnd.hands[0].length;
  const viewer = view === "all" ? null : Number(view);
  const foresight = record.rules.foresight && size === 1;
  const before = step.kind === "trick" ? rnd.tricks.slice(0, step.t) : [];
  const upTo = step.kind === "trick" ? rnd.tricks.slice(0, step.t + 1) : [];
  const trick = step.kind === "trick" ? rnd.tricks[step.t] : null;
  const over = step.kind === "trick" && step.t === rnd.tricks.length - 1;
  const rounds = record.rounds.slice(0, step.r + (over ? 1 : 0)).map((x) => ({
    round: x.round, scores: x.scores, totals: x.totals, tricks_won: x.tricks_won,
    bids: Array.from({ length: n }, (_, s) => (x.bids.find((b) => b.seat === s) || { bid: "-" }).bid),
  }));
  const totals = rounds.length ? rounds[rounds.length - 1].totals : Array(n).fill(0);
  const bidOf = Object.fromEntries(rnd.bids.map((b) => [b.seat, b.bid]));
  const players = Array.from({ length: n }, (_, s) => {
    const played = before.flatMap((t) => t.plays.filter((p) => p.seat === s).map((p) => p.card));
    const hidden = viewer !== null && (foresight ? s === viewer : s !== viewer);
    const cards = without(rnd.hands[s], played);
    let bid = step.kind === "deal" ? null : bidOf[s];
    if (bid !== undefined && bid !== null && viewer !== null && s !== viewer && record.rules.bidding === "secret" && !over) bid = "?";
    return {
      name: names[s],
      hand: hidden ? null : cards,
      count: cards.length,
      bid,
      tricks: upTo.filter((t) => t.winner === s).length,
      total: totals[s],
      marked: new Set(trick ? trick.plays.filter((p) => p.seat === s).map((p) => p.card) : []),
      current: false,
    };
  });
  let trickLabel = null;
  let note = null;
  if (step.kind === "deal") {
    note = `Round ${rnd.round}: ${names[rnd.dealer]} deals ${size} card${size > 1 ? "s" : ""} each.`;
    trickLabel = "Dealt: bidding next";
  } else if (step.kind === "bids") {
    const shown = rnd.bids.map((b) => `${names[b.seat]} ${viewer !== null && b.seat !== viewer && record.rules.bidding === "secret" ? "?" : b.bid}`);
    const sum = rnd.bids.reduce((acc, b) => acc + b.bid, 0);
    note = `Bids in order: ${shown.join(", ")}` + (viewer === null || record.rules.bidding !== "secret" ? ` (${sum} for ${size} trick${size > 1 ? "s" : ""})` : "");
    trickLabel = "Bidding done: play next";
  } else {
    trickLabel = `Trick ${step.t + 1} of ${size}: ${names[trick.leader]} leads, ${names[trick.winner]} wins`;
    if (over) {
      note = "Round over. Scores: " + rnd.scores.map((sc, s) => `${names[s]} ${sc > 0 ? "+" : ""}${sc}`).join(", ");
    }
  }
  return {
    round: rnd.round, num_rounds: record.rounds.length, hand_size: size, dealer: rnd.dealer, names,
    trump_card: rnd.trump_card, trump: rnd.trump, trump_pending: false, players, trick, trick_label: trickLabel,
    note, rounds, me: viewer,
  };
}

function render() {
  const record = state.record;
  if (!record) return;
  const step = state.steps[state.index];
  const model = modelAt(record, step, state.view);
  const table = $("table");
  table.replaceChildren(roundLine(model), trickView(model), seatsView(model));
  const last = state.index === state.steps.length - 1;
  const final = $("final");
  final.hidden = !last;
  if (last) {
    const best = Math.max(...record.final_totals);
    const winners = record.final_totals.map((t, s) => (t === best ? model.names[s] : null)).filter(Boolean);
    final.replaceChildren(el("b", { text: "Game over. " }),
      `Final totals: ${record.final_totals.map((t, s) => `${model.names[s]} ${t}`).join(", ")}. `,
      `${winners.length > 1 ? "Shared win" : "Winner"}: ${winners.join(", ")}.`);
  }
  $("scoreboard").replaceChildren(scoreChart(model.names, model.rounds, record.rounds.length), scoreTable(model.names, model.rounds));
  $("position").textContent = `step ${state.index + 1} of ${state.steps.length}`;
  $("slider").max = String(state.steps.length - 1);
  $("slider").value = String(state.index);
  paintDots(document.body);
  document.body.dataset.step = String(state.index);
}

function go(index) {
  if (!state.record) return;
  state.index = Math.max(0, Math.min(state.steps.length - 1, index));
  render();
}

/** The next round's deal, or back to this round's deal (from its deal: the previous round's). */
function goRound(delta) {
  if (!state.record) return;
  const current = state.steps[state.index].r;
  const atDeal = state.steps[state.index].kind === "deal";
  const r = delta < 0 && !atDeal ? current : current + delta;
  const first = state.steps.findIndex((s) => s.r === Math.max(0, Math.min(state.record.rounds.length - 1, r)));
  go(delta > 0 && r >= state.record.rounds.length ? state.steps.length - 1 : first);
}

function show(answer) {
  const record = answer.record;
  state.record = record;
  state.steps = buildSteps(record);
  state.index = 0;
  state.game = answer.game;
  state.games = answer.games;
  if (state.view !== "all" && Number(state.view) >= record.num_players) state.view = "all";
  const select = $("view");
  select.replaceChildren(el("option", { value: "all", text: "every hand" }),
    ...record.seats.map((agent, s) => el("option", { value: String(s), text: `seat ${s} (${agent}) only` })));
  select.value = state.view;
  $("game").max = String(answer.games);
  $("game").value = String(answer.game);
  $("games").textContent = `of ${answer.games}`;
  $("title").textContent = `${answer.name}: game ${answer.game} of ${answer.games} \u00b7 seed ${record.seed} \u00b7 ` +
    `${record.num_players} players, ${record.rules.bidding} bidding` + (record.rules.bid_total_rule ? ", bid total rule" : "") +
    (record.rules.foresight ? ", foresight" : "");
  const warning = $("warning");
  warning.textContent = answer.warning || "";
  warning.hidden = !answer.warning;
  $("viewer").hidden = false;
  showError("");
  render();
  document.body.dataset.state = "loaded";
}

async function load(source, game = 1) {
  try {
    let answer;
    if (source.kind === "folder") {
      answer = await api(`/api/replays/${encodeURIComponent(source.name)}?game=${game}`);
      history.replaceState(null, "", `/viewer?file=${encodeURIComponent(source.name)}&game=${game}`);
    } else {
      answer = await api(`/api/upload?game=${game}&name=${encodeURIComponent(source.name)}`,
        { method: "POST", body: source.bytes, headers: { "Content-Type": "application/octet-stream" } });
    }
    state.source = source;
    show(answer);
    if (source.kind === "folder") $("files").value = source.name;
  } catch (err) {
    showError(err.message);
    document.body.dataset.state = "error";
  }
}

async function listFolder() {
  try {
    const answer = await api("/api/replays");
    const list = $("files");
    list.replaceChildren(el("option", { value: "", text: answer.files.length ? "choose a file\u2026" : "(no replay files yet)" }),
      ...answer.files.map((f) => el("option", { value: f.name, text: `${f.name} (${Math.ceil(f.bytes / 1024)} kB)` })));
  } catch (err) {
    showError(err.message);
  }
}

function onKey(event) {
  if (event.target.closest("input, select, textarea")) return;
  const keys = {
    ArrowRight: () => (event.shiftKey ? goRound(1) : go(state.index + 1)),
    ArrowLeft: () => (event.shiftKey ? goRound(-1) : go(state.index - 1)),
    l: () => go(state.index + 1), h: () => go(state.index - 1),
    PageDown: () => goRound(1), PageUp: () => goRound(-1), n: () => goRound(1), p: () => goRound(-1),
    Home: () => go(0), End: () => go(state.steps.length - 1),
    v: () => {
      const options = [...$("view").options].map((o) => o.value);
      state.view = options[(options.indexOf(state.view) + 1) % options.length];
      $("view").value = state.view;
      render();
    },
  };
  if (keys[event.key]) {
    event.preventDefault();
    keys[event.key]();
  }
}

async function start() {
  try {
    state.maxUpload = (await api("/api/config")).max_upload_bytes;
  } catch (err) {
    showError(err.message);
  }
  await listFolder();
  $("files").addEventListener("change", (e) => e.target.value && load({ kind: "folder", name: e.target.value }));
  $("upload").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    if (file.size > state.maxUpload) {
      showError(`${file.name} is ${file.size.toLocaleString()} bytes; the viewer reads at most ${(state.maxUpload >> 20)} MiB`);
      return;
    }
    load({ kind: "upload", name: file.name, bytes: await file.arrayBuffer() });
  });
  $("game").addEventListener("change", (e) => state.source && load(state.source, Number(e.target.value) || 1));
  $("view").addEventListener("change", (e) => { state.view = e.target.value; render(); });
  $("slider").addEventListener("input", (e) => go(Number(e.target.value)));
  $("first").addEventListener("click", () => go(0));
  $("prev-round").addEventListener("click", () => goRound(-1));
  $("prev").addEventListener("click", () => go(state.index - 1));
  $("next").addEventListener("click", () => go(state.index + 1));
  $("next-round").addEventListener("click", () => goRound(1));
  $("last").addEventListener("click", () => go(state.steps.length - 1));
  document.addEventListener("keydown", onKey);
  const params = new URLSearchParams(location.search);
  if (params.get("file")) await load({ kind: "folder", name: params.get("file") }, Number(params.get("game")) || 1);
  else document.body.dataset.state = "empty";
}

start();
