// Cards drawn as inline SVG: suited cards by rank and suit (four colours), Wizards, Jesters and card backs.

const NS = "http://www.w3.org/2000/svg";

export const SUITS = {
  c: { symbol: "\u2663", colour: "#1b7f3b", name: "clubs" },
  d: { symbol: "\u2666", colour: "#1f5fbf", name: "diamonds" },
  h: { symbol: "\u2665", colour: "#c62828", name: "hearts" },
  s: { symbol: "\u2660", colour: "#222222", name: "spades" },
};
const RANK_NAMES = { T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace" };
// The two unsuited cards: one layout, these colours and symbols.
const SPECIALS = {
  Wiz: { face: "#23206a", edge: "#111", corner: "W", cornerFill: "#ffd54a", symbol: "\u2605", symbolSize: 34, symbolFill: "#ffd54a", wordFill: "#ffffff" },
  Jes: { face: "#eceff1", edge: "#777", corner: "J", cornerFill: "#555", symbol: "\u263A", symbolSize: 32, symbolFill: "#666", wordFill: "#444" },
};

export function svg(tag, attrs = {}, children = []) {
  const el = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  for (const child of children) el.append(child);
  return el;
}

function text(x, y, content, attrs = {}) {
  return svg("text", { x, y, "text-anchor": "middle", "font-family": "system-ui, sans-serif", ...attrs }, [content]);
}

/** A card's name for people: "Ace of hearts", "10 of clubs", "Wizard", "Jester". */
export function cardTitle(name) {
  if (name === "Wiz") return "Wizard";
  if (name === "Jes") return "Jester";
  const rank = RANK_NAMES[name[0]] || name[0];
  return `${rank} of ${SUITS[name[1]].name}`;
}

/** The rank as printed on the card ("10" for T). */
function rankText(name) {
  return name[0] === "T" ? "10" : name[0];
}

/** An SVG card for a card name ("Ah", "Tc", "Wiz", "Jes"); null draws the back. */
export function cardSVG(name) {
  const label = name === null ? "face-down card" : cardTitle(name);
  const root = svg("svg", { viewBox: "0 0 60 84", class: "card-face", role: "img", "aria-label": label });
  root.append(svg("title", {}, [label]));
  if (name === null) {
    root.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: "#4b3a8c", stroke: "#2e2459" }));
    root.append(svg("rect", { x: 6, y: 6, width: 48, height: 72, rx: 4, fill: "none", stroke: "#c9b8ff", "stroke-width": 1.5 }));
    root.append(text(30, 50, "\u2605", { "font-size": 22, fill: "#c9b8ff" }));
    return root;
  }
  const special = SPECIALS[name];
  if (special) {
    root.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: special.face, stroke: special.edge }));
    root.append(text(13, 19, special.corner, { "font-size": 15, "font-weight": 700, fill: special.cornerFill }));
    root.append(text(30, 56, special.symbol, { "font-size": special.symbolSize, fill: special.symbolFill }));
    root.append(text(30, 76, cardTitle(name), { "font-size": 10, fill: special.wordFill }));
    return root;
  }
  const suit = SUITS[name[1]];
  root.append(svg("rect", { x: 1, y: 1, width: 58, height: 82, rx: 6, fill: "#ffffff", stroke: "#8a8a8a" }));
  root.append(text(14, 21, rankText(name), { "font-size": 17, "font-weight": 700, fill: suit.colour }));
  root.append(text(14, 37, suit.symbol, { "font-size": 15, fill: suit.colour }));
  root.append(text(36, 68, suit.symbol, { "font-size": 36, fill: suit.colour }));
  return root;
}

/** A small inline suit mark, coloured ("none" when there is no trump). */
export function suitMark(letter) {
  const span = document.createElement("span");
  if (!letter) {
    span.textContent = "none";
    return span;
  }
  const suit = SUITS[letter];
  span.className = `suit suit-${letter}`;
  span.textContent = `${suit.symbol} ${suit.name}`;
  return span;
}
