// The table both pages draw: the round line, every seat (hand, bid, tricks, total), the trick in the
// middle with its leader and winner marked, the score table and the chart of totals over the rounds.

import { cardSVG, svg, suitMark } from "./cards.js";

export const SEAT_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080"];

export function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "text") node.textContent = value;
    else if (key === "class") node.className = value;
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** A card as a figure (not clickable); `marked` outlines it (a card played at this step). */
export function cardFigure(name, marked = false) {
  const box = el("span", { class: `card${marked ? " marked" : ""}`, "data-card": name ?? "back" });
  box.append(cardSVG(name));
  return box;
}

/** A row of cards: the names given, or `count` backs when the hand is hidden (null). */
export function handRow(cards, count, marked = new Set()) {
  const row = el("div", { class: "hand" });
  if (cards === null) {
    for (let i = 0; i < count; i++) row.append(cardFigure(null));
    if (count === 0) row.append(el("span", { class: "muted", text: "no cards" }));
    return row;
  }
  for (const name of cards) row.append(cardFigure(name, marked.has(name)));
  if (cards.length === 0) row.append(el("span", { class: "muted", text: "no cards" }));
  return row;
}

function stat(label, value, testid) {
  return el("span", { class: "stat" }, [el("span", { class: "label", text: label }), el("b", { "data-testid": testid, text: String(value) })]);
}

/** The line above the table: round, cards, dealer, turned card and trump. */
export function roundLine(model) {
  const line = el("div", { class: "round-line", "data-testid": "round-line" });
  line.append(el("b", { text: `Round ${model.round}/${model.num_rounds}` }),
    ` \u00b7 ${model.hand_size} card${model.hand_size > 1 ? "s" : ""} each \u00b7 dealer ${model.names[model.dealer]} \u00b7 turned `);
  if (model.trump_card) {
    const mini = cardFigure(model.trump_card);
    mini.classList.add("mini");
    line.append(mini);
  } else line.append("none");
  line.append(" \u00b7 trump ", model.trump_pending ? "chosen by the dealer" : suitMark(model.trump));
  return line;
}

/** The seats: name with dealer and turn marks, bid, tricks won, total, and the hand (or `ownHand`'s element). */
export function seatsView(model, ownHand = null) {
  const seats = el("div", { class: "seats" });
  model.players.forEach((p, s) => {
    const classes = ["seat"];
    if (p.current) classes.push("current");
    if (model.me === s) classes.push("me");
    const box = el("section", { class: classes.join(" "), "data-seat": s, "aria-label": p.name });
    const head = el("div", { class: "seat-head" }, [
      el("span", { class: "dot", "data-colour": s }),
      el("span", { class: "name", text: p.name }),
      s === model.dealer ? el("span", { class: "badge", title: "dealer", text: "D" }) : null,
      p.current ? el("span", { class: "badge turn", title: "to act", text: "to act" }) : null,
    ]);
    const stats = el("div", { class: "stats" }, [
      stat("bid", p.bid ?? "\u2013", `bid-${s}`), stat("won", p.tricks, `won-${s}`), stat("total", p.total, `total-${s}`),
    ]);
    box.append(head, stats, (ownHand && ownHand(s)) || handRow(p.hand, p.count, p.marked || new Set()));
    seats.append(box);
  });
  return seats;
}

/** The trick in the middle: each card with its seat; the leader and (once known) the winner marked. */
export function trickView(model) {
  const box = el("section", { class: "trick-area", "aria-label": "trick" });
  const trick = model.trick;
  box.append(el("div", { class: "trick-title", text: model.trick_label || (trick ? "Trick" : "No cards played yet") }));
  const row = el("div", { class: "trick" });
  if (trick) {
    for (const play of trick.plays) {
      const classes = ["play"];
      if (play.seat === trick.leader) classes.push("leader");
      if (play.seat === trick.winner) classes.push("winner");
      const fig = el("figure", { class: classes.join(" "), "data-seat": play.seat }, [cardFigure(play.card)]);
      const marks = [play.seat === trick.leader ? "leads" : null, play.seat === trick.winner ? "wins \u2605" : null].filter(Boolean);
      fig.append(el("figcaption", {}, [el("span", { class: "dot", "data-colour": play.seat }), model.names[play.seat],
        marks.length ? el("b", { text: ` ${marks.join(", ")}` }) : null]));
      row.append(fig);
    }
  }
  box.append(row);
  if (model.note) box.append(el("div", { class: "note", "data-testid": "note", text: model.note }));
  return box;
}

/** The score table (in a box that scrolls sideways): per seat the score of each round so far, and the total. */
export function scoreTable(names, rounds) {
  const table = el("table", { class: "scores", "data-testid": "scores" });
  const head = el("tr", {}, [el("th", { text: "round" }), ...names.map((n, s) => el("th", {}, [el("span", { class: "dot", "data-colour": s }), n]))]);
  table.append(el("thead", {}, [head]));
  const body = el("tbody");
  for (const r of rounds) {
    body.append(el("tr", {}, [el("td", { text: String(r.round) }), ...names.map((_, s) =>
      el("td", { title: `bid ${r.bids[s]}, won ${r.tricks_won[s]}` }, [
        el("span", { class: r.scores[s] > 0 ? "made" : "missed", text: `${r.scores[s] > 0 ? "+" : ""}${r.scores[s]}` }),
        el("span", { class: "muted", text: ` ${r.totals[s]}` })]))]));
  }
  table.append(body);
  return el("div", { class: "scroll" }, [table]);  // a narrow screen scrolls the table, not the page
}

/** A line chart of every seat's running total after each round (SVG, its own scale). */
export function scoreChart(names, rounds, numRounds) {
  const width = 600, height = 220, left = 44, right = 12, top = 12, bottom = 28;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img", "aria-label": "running totals by round" });
  const values = rounds.flatMap((r) => r.totals).concat([0]);
  let low = Math.min(...values), high = Math.max(...values);
  if (high === low) high = low + 10;
  const pad = (high - low) * 0.08;
  low -= pad; high += pad;
  const x = (i) => left + ((width - left - right) * i) / Math.max(1, numRounds);
  const y = (v) => top + ((height - top - bottom) * (high - v)) / (high - low);
  chart.append(svg("line", { x1: left, x2: width - right, y1: y(0), y2: y(0), stroke: "#999", "stroke-dasharray": "4 3" }));
  chart.append(svg("line", { x1: left, x2: left, y1: top, y2: height - bottom, stroke: "#bbb" }));
  const rough = (high - low) / 6;
  const unit = 10 ** Math.floor(Math.log10(rough));
  const tick = [1, 2, 5, 10].map((m) => m * unit).find((t) => t >= rough);  // a round step: 10, 20, 50, 100...
  for (let v = Math.ceil(low / tick) * tick; v <= high; v += tick) {
    chart.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#eee" }));
    chart.append(svg("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", "font-size": 11, fill: "#666" }, [String(v)]));
  }
  const step = Math.max(1, Math.ceil(numRounds / 10));
  for (let r = 0; r <= numRounds; r += step) {
    chart.append(svg("text", { x: x(r), y: height - 10, "text-anchor": "middle", "font-size": 11, fill: "#666" }, [String(r)]));
  }
  names.forEach((_, s) => {
    const points = [[x(0), y(0)], ...rounds.map((r, i) => [x(i + 1), y(r.totals[s])])];
    chart.append(svg("polyline", { points: points.map((p) => p.join(",")).join(" "), fill: "none", stroke: SEAT_COLOURS[s], "stroke-width": 2.5 }));
    for (const [px, py] of points.slice(1)) chart.append(svg("circle", { cx: px, cy: py, r: 3, fill: SEAT_COLOURS[s] }));
  });
  return chart;
}

/** Colour every seat dot by its data-colour (CSS cannot read an attribute as a colour; CSSOM is allowed by the CSP). */
export function paintDots(root) {
  for (const dot of root.querySelectorAll(".dot[data-colour]")) dot.style.background = SEAT_COLOURS[Number(dot.dataset.colour)];
}

/** Show an error line in the page's alert box (empty text hides it). */
export function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message || "";
  box.hidden = !message;
}

/** fetch returning the JSON body; a 4xx/5xx answer throws an Error with the server's message. */
export async function api(path, options = {}) {
  const response = await fetch(path, options);
  let body = null;
  try {
    body = await response.json();
  } catch {
    throw new Error(`${response.status} ${response.statusText}: the server's answer is not JSON`);
  }
  if (!response.ok) throw new Error(body && body.error ? body.error : `${response.status} ${response.statusText}`);
  return body;
}
