// The play page: settings, then a game against agents. Only the server's legal moves are clickable; the
// other seats' moves are shown one by one with a short delay; the finished game opens in the viewer.

import { cardSVG, SUITS } from "./cards.js";
import { api, cardFigure, el, paintDots, roundLine, scoreChart, scoreTable, seatsView, showError, trickView } from "./table.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
/** Milliseconds each agent move stays on screen (?delay=MS changes it). */
const DELAY = params.has("delay") ? Math.max(0, Number(params.get("delay")) || 0) : 700;
const state = { config: null, table: null, busy: false, log: [] };

// -- settings ------------------------------------------------------------------------------

function opponentSelects() {
  const players = Number($("players").value);
  const seatSelect = $("seat");
  const seat = Math.min(Number(seatSelect.value) || 0, players - 1);
  seatSelect.replaceChildren(...Array.from({ length: players }, (_, s) => el("option", { value: String(s), text: `seat ${s}` })));
  seatSelect.value = String(seat);
  const box = $("opponents");
  const previous = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  let k = 0;
  for (let s = 0; s < players; s++) {
    if (s === seat) continue;
    const select = el("select", { "data-seat": s, "aria-label": `agent at seat ${s}` },
      state.config.agents.map((a) => el("option", { value: a, text: a })));
    select.value = previous[k] || "rule";
    if (select.selectedIndex < 0) select.selectedIndex = 0; // the server may not offer "rule"
    box.append(el("label", {}, [`seat ${s} `, select]));
    k++;
  }
}

function settings() {
  const seed = $("seed").value.trim();
  return {
    players: Number($("players").value),
    rounds: $("rounds").value.trim() || "standard",
    bidding: $("bidding").value,
    bid_total_rule: $("bid-total-rule").checked,
    foresight: $("foresight").checked,
    seat: Number($("seat").value),
    opponents: [...$("opponents").querySelectorAll("select")].map((s) => s.value),
    ...(seed ? { seed: Number(seed) } : {}),
  };
}

// -- drawing -------------------------------------------------------------------------------

function legalCards(view) {
  const map = new Map();
  for (const choice of view.legal) if (choice.kind === "card") map.set(choice.label, choice.action);
  return map;
}

function cardButton(name, action, enabled) {
  const button = el("button", {
    class: `card ${enabled ? "legal" : "illegal"}`, "data-card": name ?? "unseen", disabled: !enabled,
    "data-action": enabled ? String(action) : null, title: enabled ? "play this card" : "not a legal card now",
  });
  button.append(cardSVG(name));
  if (enabled) button.addEventListener("click", () => send(action));
  return button;
}

function ownHand(view, interactive) {
  return (s) => {
    if (s !== view.seat) return null;
    const legal = interactive ? legalCards(view) : new Map();
    const row = el("div", { class: "hand own", "data-testid": "own-hand" });
    const me = view.players[s];
    if (me.hand === null) {
      for (let i = 0; i < me.cards; i++) {
        row.append(legal.has("your unseen card") ? cardButton(null, "unseen", true) : cardFigure(null));
      }
      row.append(el("span", { class: "muted", text: " foresight round: your card is hidden from you" }));
      return row;
    }
    const choosing = interactive && view.phase === "play" && view.current === s;  // else the hand is only shown
    for (const name of me.hand) row.append(choosing ? cardButton(name, legal.get(name), legal.has(name)) : cardFigure(name));
    if (!me.hand.length) row.append(el("span", { class: "muted", text: "no cards" }));
    return row;
  };
}

function actionBar(view, interactive) {
  const bar = el("section", { class: "actions", "aria-label": "your move" });
  const mine = interactive && view.legal.length > 0;
  if (view.over) return bar;
  if (view.phase === "bid" && view.current === view.seat) {
    const legal = new Map(view.legal.filter((c) => c.kind === "bid").map((c) => [Number(c.label), c.action]));
    bar.append(el("span", { class: "prompt", text: "Your bid:" }));
    for (let b = 0; b <= view.hand_size; b++) {
      const ok = mine && legal.has(b);
      const button = el("button", { class: `bid ${ok ? "legal" : "illegal"}`, disabled: !ok, "data-action": ok ? String(legal.get(b)) : null, text: String(b),
        title: ok ? `bid ${b}` : "not a legal bid now" });
      if (ok) button.addEventListener("click", () => send(legal.get(b)));
      bar.append(button);
    }
    const seen = view.players.map((p) => p.bid).filter((b) => b !== null);
    bar.append(el("span", { class: "muted", text: ` bids so far: ${seen.reduce((a, b) => a + b, 0)} for ${view.hand_size}` }));
  } else if (view.phase === "trump" && view.current === view.seat) {
    bar.append(el("span", { class: "prompt", text: "A Wizard was turned: name trump" }));
    for (const choice of view.legal.filter((c) => c.kind === "trump")) {
      const suit = SUITS[choice.label];
      const button = el("button", { class: `trump-choice legal suit-${choice.label}`, "data-action": String(choice.action), text: `${suit.symbol} ${suit.name}`, disabled: !mine });
      button.addEventListener("click", () => send(choice.action));
      bar.append(button);
    }
  } else if (view.phase === "play" && view.current === view.seat) {
    bar.append(el("span", { class: "prompt", text: "Your turn: click a highlighted card." }));
  } else if (view.current !== null) {
    bar.append(el("span", { class: "muted", text: `${view.players[view.current].name} is thinking\u2026` }));
  }
  return bar;
}

function draw(view, interactive) {
  const names = view.players.map((p) => p.name);
  let trick = view.trick;
  let label = null;
  if (trick) label = `Trick in play: ${names[trick.leader]} led`;
  else if (view.last_trick) {
    trick = view.last_trick;
    label = `Last trick${view.last_trick.round !== view.round ? ` of round ${view.last_trick.round}` : ""}: ${names[trick.winner]} won`;
  }
  const model = {
    round: view.round, num_rounds: view.num_rounds, hand_size: view.hand_size, dealer: view.dealer, names,
    trump_card: view.trump_card, trump: view.trump, trump_pending: view.phase === "trump",
    players: view.players.map((p, s) => ({
      name: p.name, hand: p.hand, count: p.cards, bid: p.bid ?? (p.has_bid ? "?" : null), tricks: p.tricks, total: p.total,
      current: view.current === s,
    })),
    trick, trick_label: label, note: null, rounds: view.rounds, me: view.seat,
  };
  $("table").replaceChildren(roundLine(model), trickView(model), actionBar(view, interactive), seatsView(model, ownHand(view, interactive)));
  $("events").replaceChildren(...state.log.slice(-8).reverse().map((line) => el("li", { text: line })));
  $("scoreboard").replaceChildren(scoreChart(names, view.rounds, view.num_rounds), scoreTable(names, view.rounds));
  const over = $("over");
  over.hidden = !view.over;
  if (view.over) {
    const totals = view.players.map((p) => p.total);
    const best = Math.max(...totals);
    const winners = names.filter((_, s) => totals[s] === best);
    const you = totals[view.seat] === best ? (winners.length > 1 ? "You share the win!" : "You win!") : `Winner: ${winners.join(", ")}.`;
    over.replaceChildren(el("b", { text: "Game over. " }), `Final totals: ${names.map((n, s) => `${n} ${totals[s]}`).join(", ")}. ${you} `,
      view.replay ? el("a", { href: `/viewer?file=${encodeURIComponent(view.replay)}`, "data-testid": "open-replay", text: "Open the replay in the viewer" }) : null,
      " ", el("button", { id: "again", text: "New game" }));
    $("again").addEventListener("click", () => { location.hash = ""; location.reload(); });
  }
  paintDots(document.body);
  document.body.dataset.move = String(view.move);
  document.body.dataset.state = view.over ? "over" : interactive && view.legal.length ? "your-turn" : "busy";
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Show the frames one by one (each agent move stays DELAY ms), then the table as it is now. */
async function play(frames, table) {
  state.busy = true;
  for (const frame of frames) {
    if (frame.event) state.log.push(frame.event);
    if (frame.current !== frame.seat || frame.over) {
      draw(frame, false);
      await sleep(DELAY);
    }
  }
  state.table = table;
  state.busy = false;
  draw(table, true);
}

async function send(action) {
  if (state.busy || !state.table) return;
  const view = state.table;
  state.busy = true;
  document.body.dataset.state = "busy";
  for (const button of document.querySelectorAll("button.legal")) button.disabled = true;
  const waiting = setTimeout(() => showStatus("The other seats are thinking\u2026"), 300);
  try {
    const answer = await api(`/api/tables/${view.id}/move`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ seat: view.seat, move: view.move, action }),
    });
    clearTimeout(waiting);
    showStatus("");
    showError("");
    await play(answer.frames, answer.table);
  } catch (err) {
    clearTimeout(waiting);
    showStatus("");
    showError(err.message);
    state.busy = false;
    draw(state.table, true);
  }
}

function showStatus(text) {
  const box = $("status");
  box.textContent = text;
  box.hidden = !text;
}

async function begin(event) {
  event.preventDefault();
  $("start").disabled = true;
  try {
    const answer = await api("/api/tables", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(settings()) });
    showError("");
    state.log = [`Game seed ${answer.table.seed ?? ""}`.trim()];
    location.hash = `t=${answer.table.id}`;
    $("setup").hidden = true;
    $("game").hidden = false;
    await play(answer.frames, answer.table);
  } catch (err) {
    showError(err.message);
  } finally {
    $("start").disabled = false;
  }
}

async function start() {
  try {
    state.config = await api("/api/config");
  } catch (err) {
    showError(err.message);
    return;
  }
  const d = state.config.defaults;
  if (d.players) $("players").value = String(d.players);
  if (d.rounds) $("rounds").value = d.rounds;
  if (d.bidding) $("bidding").value = d.bidding;
  $("bid-total-rule").checked = !!d.bid_total_rule;
  $("foresight").checked = !!d.foresight;
  opponentSelects();
  $("players").addEventListener("change", opponentSelects);
  $("seat").addEventListener("change", opponentSelects);
  $("setup").addEventListener("submit", begin);
  const id = new URLSearchParams(location.hash.slice(1)).get("t");
  if (id) {
    try {
      const view = await api(`/api/tables/${encodeURIComponent(id)}`);
      $("setup").hidden = true;
      $("game").hidden = false;
      state.table = view;
      draw(view, true);
      return;
    } catch (err) {
      showError(`${err.message}: start a new game`);
      location.hash = "";
    }
  }
  document.body.dataset.state = "setup";
}

start();
