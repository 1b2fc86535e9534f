"""The web table's contract: every route of ``wizard serve`` as an OpenAPI 3.1 operation, in one declaration.

``OPERATIONS`` is the one list of routes: ``app.create_app`` builds its routes from it (each operation's ``name`` is
its handler), the running server answers ``GET /openapi.json`` with ``openapi_schema()``, docs/openapi.json is the
copy that ``python -m wizard_env.web.openapi`` prints, and the status and route tables of docs/web.md are the ones
that ``--tables`` prints (a test checks each copy). schemathesis tests the server against it (tests/test_web_contract.py,
benchmarks/schemathesis_web.py). No web framework is imported here.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

from wizard_env.engine.actions import Phase
from wizard_env.engine.batch import MAX_GAME_SEED
from wizard_env.engine.replay import FORMAT
from wizard_env.engine.rules import MAX_PLAYERS, MIN_PLAYERS, Bidding
from wizard_env.util.checks import MAX_JSON_DIGITS, SEED_LIMIT

from .library import FILE_NAME, MAX_LISTED, MAX_UPLOAD_BYTES
from .limits import MAX_OFFERED, MAX_WORKERS
from .tables import MAX_TABLES, MOVE_FIELDS, SETTINGS_FIELDS, TABLE_ID, UNSEEN

STATIC = Path(__file__).parent / "static"
#: The static files' media types: the files served under /static/ (nothing else of the folder, no path out of it).
MEDIA_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}
STATIC_FILES = frozenset(path.name for path in STATIC.iterdir() if path.suffix in MEDIA_TYPES)
#: The largest JSON body the API reads (settings or a move are a few hundred bytes).
MAX_JSON_BYTES = 64 << 10
#: Sent with every page and JSON answer (the schema requires them): scripts, styles and images from this server
#: only, nothing fetched from elsewhere.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: Statuses and what each means, shared by every operation that can answer it.
STATUS_WORDS = {
    400: "a malformed request: not JSON, an unknown or impossible field, an agent not offered, a name that is not a "
         "plain file name; a Host that is not this server's (`Invalid host header`, as text/plain)",
    403: "a move for a seat that is not yours",
    404: "no such table, replay file, game of a file, static file or route",
    409: "out of turn (the `move` number is not the table's), or the game is over",
    413: f"a body over its limit ({MAX_JSON_BYTES >> 10} KiB of JSON, {MAX_UPLOAD_BYTES >> 20} MiB of upload), refused before it is read",
    415: "a JSON route without `Content-Type: application/json`",
    422: "an illegal move, or a file that is not a `wizard-replay/1` file",
    503: f"the server is busy (all {MAX_WORKERS} work threads taken), stopping, or holds {MAX_TABLES} unfinished games; "
         "or a table's agents are still making an earlier request's moves: ask again",
    504: "the agents did not finish within the server's time per request (`--move-seconds`): the moves made are kept, "
         "and `GET /api/tables/{table}` goes on with the rest",
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _object(properties: dict, optional: tuple[str, ...] = (), **more: Any) -> dict:
    """A JSON object of exactly these properties, all required but ``optional``."""
    return {"type": "object", "properties": properties, "required": [k for k in properties if k not in optional],
            "additionalProperties": False, **more}


INT = {"type": "integer"}
COUNT = {"type": "integer", "minimum": 0}
SEAT = {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1}
NULLABLE_SEAT = {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_PLAYERS - 1}
TEXT = {"type": "string"}
FLAG = {"type": "boolean"}
CHOICE = {"type": ["string", "integer"], "description": "an offered agent by name, or by index into `agents` from 0"}
PLAY = _object({"seat": SEAT, "card": TEXT})
VIEW_FIELDS = {
    "id": {"type": "string", "pattern": f"^{TABLE_ID.pattern}$"},
    "seed": {"type": "integer", "minimum": 0, "maximum": SEED_LIMIT - 1},
    "replay": {"type": ["string", "null"], "description": "the saved file's name once the game is over"},
    "move": {**COUNT, "description": "the number of moves made: send it back with your move"},
    "seat": SEAT, "over": FLAG, "round": {"type": "integer", "minimum": 1}, "num_rounds": {"type": "integer", "minimum": 1},
    "hand_size": COUNT, "phase": {"enum": [phase.name.lower() for phase in Phase]}, "dealer": SEAT, "current": NULLABLE_SEAT,
    "trump_card": {"type": ["string", "null"]}, "trump": {"type": ["string", "null"]}, "foresight": FLAG,
    "players": {"type": "array", "items": _ref("Player"), "minItems": MIN_PLAYERS, "maxItems": MAX_PLAYERS},
    "trick": {"oneOf": [_ref("Trick"), {"type": "null"}], "description": "the trick in play"},
    "last_trick": {"oneOf": [_ref("LastTrick"), {"type": "null"}], "description": "the last trick won"},
    "rounds": {"type": "array", "items": _ref("RoundScore"), "description": "the finished rounds' scores"},
    "legal": {"type": "array", "items": _ref("Choice"), "description": "your legal moves when it is your turn"},
}
SCHEMAS: dict[str, dict] = {
    "Error": _object({"error": {"type": "string", "minLength": 1, "description": "one line saying why"}},
                     description="every refused request's body (4xx); the request changed nothing"),
    "Config": _object({
        "agents": {"type": "array", "items": TEXT, "minItems": 1, "maxItems": MAX_OFFERED,
                   "description": "the agents offered (`wizard serve --opponents`)"},
        "defaults": {"type": "object", "description": "the play page's default settings (from the variant options)"},
        "max_upload_bytes": {"const": MAX_UPLOAD_BYTES}, "move_seconds": {"type": "number", "exclusiveMinimum": 0},
    }),
    "Settings": _object({
        "players": {"type": "integer", "minimum": MIN_PLAYERS, "maximum": MAX_PLAYERS, "default": 4},
        "rounds": {"type": ["string", "integer"], "maxLength": 200, "default": "standard", "description":
                   "`standard`, `amigo`, a round count (`5` or `\"5\"`) or hand sizes (`\"1,3,5\"`)"},
        "bidding": {"enum": [b.value for b in Bidding], "default": Bidding.OPEN.value},
        "bid_total_rule": {**FLAG, "default": False}, "foresight": {**FLAG, "default": False},
        "seat": {**SEAT, "default": 0, "description": "your seat, below `players`"},
        "opponents": {"oneOf": [CHOICE, {"type": "array", "items": CHOICE, "minItems": 1, "maxItems": MAX_PLAYERS - 1}],
                      "description": "one offered agent for every other seat, or a list with one per other seat in seat "
                                     "order; each by name or by index into `agents` (default: the first offered agent)"},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": SEED_LIMIT - 1,
                 "description": f"the same seed and moves give the same game (default: drawn below 2**{MAX_GAME_SEED.bit_length() - 1})"},
    }, optional=SETTINGS_FIELDS, description="a new table; every field is optional"),
    "Move": _object({"seat": {**SEAT, "description": "the seat you play"},
                     "move": {**COUNT, "description": "the view's `move`: the number of moves you saw"},
                     "action": {"oneOf": [{"type": "integer", "minimum": 0}, {"const": UNSEEN}], "description":
                                f"an `action` of the view's `legal` list (`{UNSEEN}` plays a foresight round's hidden card)"}},
                    description=f"your move (the fields: {', '.join(MOVE_FIELDS)})"),
    "Player": _object({"name": TEXT, "hand": {"type": ["array", "null"], "items": TEXT, "description": "yours only"},
                       "cards": COUNT, "bid": {"type": ["integer", "null"], "description": "as the bidding variant shows it"},
                       "has_bid": FLAG, "tricks": COUNT, "total": INT, "played": FLAG}),
    "Trick": _object({"leader": SEAT, "plays": {"type": "array", "items": PLAY}, "winner": {"type": "null"}}),
    "LastTrick": _object({"round": {"type": "integer", "minimum": 1}, "leader": SEAT, "winner": SEAT,
                          "plays": {"type": "array", "items": PLAY}}),
    "RoundScore": _object({"round": INT, "scores": {"type": "array", "items": INT}, "totals": {"type": "array", "items": INT},
                           "bids": {"type": "array", "items": INT}, "tricks_won": {"type": "array", "items": COUNT}}),
    "Choice": _object({"action": {"oneOf": [COUNT, {"const": UNSEEN}]}, "kind": {"enum": ["trump", "bid", "card"]},
                       "label": TEXT}),
    "View": _object(VIEW_FIELDS, description="what your seat may know of the table now"),
    "Frame": _object({**VIEW_FIELDS, "event": {**TEXT, "description": "what the move showed you"}},
                     description="the view after one move, and what that move showed"),
    "TableAnswer": _object({"table": _ref("View"), "frames": {"type": "array", "items": _ref("Frame")}},
                           description="the view now, and the frames of the moves made (yours first)"),
    "Listing": _object({"files": {"type": "array", "maxItems": MAX_LISTED, "items": _object(
        {"name": {"type": "string", "pattern": f"^{FILE_NAME.pattern}$"}, "bytes": COUNT, "modified": {"type": "number"}})}},
        description=f"the replay folder's .jsonl and .json files, newest first (at most {MAX_LISTED:,})"),
    "ReplayGame": _object({
        "name": TEXT, "game": {"type": "integer", "minimum": 1}, "games": {"type": "integer", "minimum": 1},
        "record": {"type": "object", "properties": {"format": {"const": FORMAT}}, "required": ["format"],
                   "description": "the game's replay record, validated"},
        "warning": {"type": ["string", "null"], "description": "why the game does not re-play on this engine"},
    }, description="game K (from 1) of a replay file"),
}

HEADERS = {name: {"required": True, "schema": {"const": value}} for name, value in SECURITY_HEADERS.items()}
GAME = {"name": "game", "in": "query", "required": False, "description": "which game of the file, from 1",
        "schema": {"type": "integer", "minimum": 1, "maximum": 10**9 - 1, "default": 1}}
TABLE = {"name": "table", "in": "path", "required": True, "description": "the table's `id`",
         "schema": {"type": "string", "pattern": f"^{TABLE_ID.pattern}$"}}


@dataclass(frozen=True)
class Operation:
    """One route: its method, its Starlette path (converters included), its handler's name and its contract."""

    method: str
    route: str
    name: str
    summary: str
    answer: str | dict | None  # a schema name for JSON, or {media type: schema} (None: not described further)
    errors: tuple[int, ...] = ()
    parameters: tuple[dict, ...] = ()
    body: dict | None = None
    body_words: str = ""
    links: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        """The OpenAPI path (``{name:path}`` is ``{name}``)."""
        return re.sub(r"{(\w+):\w+}", r"{\1}", self.route)

    def spec(self) -> dict:
        """The operation as OpenAPI writes it."""
        content = {"application/json": {"schema": _ref(self.answer)}} if isinstance(self.answer, str) else self.answer
        responses: dict[str, dict] = {"200": {"description": self.summary, **({"content": content} if content else {}),
                                              **({"links": self.links} if self.links else {})}}
        for status in (400, *self.errors):
            body = {"application/json": {"schema": _ref("Error")}}
            responses[str(status)] = {"description": STATUS_WORDS[status], "content": body, "headers": HEADERS}
        responses["200"]["headers"] = HEADERS
        responses["400"]["content"]["text/plain"] = {"schema": TEXT}  # the Host refusal, sent before any route
        del responses["400"]["headers"]
        spec: dict[str, Any] = {"operationId": self.name, "summary": self.summary, "responses": responses}
        if self.parameters:
            spec["parameters"] = list(self.parameters)
        if self.body:
            spec["requestBody"] = {"required": True, "description": self.body_words, "content": self.body}
        return spec


#: Where an answer leads: a new table's (or a move's) view to the table and to its first legal move, a listing to its newest file.
TABLE_LINKS = {
    "view": {"operationId": "table_view", "parameters": {"table": "$response.body#/table/id"}},
    "move": {"operationId": "move", "parameters": {"table": "$response.body#/table/id"}, "requestBody": {
        "seat": "$response.body#/table/seat", "move": "$response.body#/table/move", "action": "$response.body#/table/legal/0/action"}},
}
FILE_LINKS = {"open": {"operationId": "replay_file", "parameters": {"name": "$response.body#/files/0/name"}}}
WORK = (503, 504)  # answers of a request that waits for a work thread
HTML = {"text/html": {"schema": TEXT}}
OPERATIONS = (
    Operation("GET", "/", "play_page", "the play page", HTML),
    Operation("GET", "/viewer", "viewer_page", "the replay viewer (`?file=NAME&game=K` opens a file: the page reads them)", HTML),
    Operation("GET", "/static/{file:path}", "static", "the pages' scripts and styles",
              {media: {"schema": TEXT} for media in MEDIA_TYPES.values()}, (404,),
              ({"name": "file", "in": "path", "required": True, "schema": {"enum": sorted(STATIC_FILES)}},)),
    Operation("GET", "/openapi.json", "openapi", "this contract (OpenAPI 3.1)", {"application/json": {"schema": {"type": "object"}}}),
    Operation("GET", "/api/config", "config", "the agents offered, the play page's defaults, the limits", "Config"),
    Operation("GET", "/api/replays", "replays", "the replay folder's files, newest first", "Listing", WORK, links=FILE_LINKS),
    Operation("GET", "/api/replays/{name:path}", "replay_file", "game K of a file of the replay folder, validated and re-played",
              "ReplayGame", (404, 422, *WORK), ({"name": "name", "in": "path", "required": True, "schema": {
                  "type": "string", "pattern": f"^{FILE_NAME.pattern}$"},
                  "description": "a plain file name of the folder (no `/`, no `..`, no leading `.`)"}, GAME)),
    Operation("POST", "/api/upload", "upload", "game K of an uploaded replay file, validated and re-played", "ReplayGame",
              (404, 413, 422, *WORK), (GAME, {"name": "name", "in": "query", "required": False, "schema": TEXT,
                                              "description": "the file's name, only shown in messages"}),
              {"application/octet-stream": {"schema": {"type": "string", "format": "binary", "maxLength": MAX_UPLOAD_BYTES}}},
              f"the replay file's bytes, at most {MAX_UPLOAD_BYTES >> 20} MiB"),
    Operation("POST", "/api/tables", "new_table", "a new game; the agents move until it is your turn", "TableAnswer",
              (413, 415, *WORK), body={"application/json": {"schema": _ref("Settings")}}, body_words="the settings",
              links=TABLE_LINKS),
    Operation("GET", "/api/tables/{table}", "table_view",
              "your view of a game (the agents first make any moves a request out of time left)", "View",
              (404, *WORK), (TABLE,)),
    Operation("POST", "/api/tables/{table}/move", "move", "your move, then the agents' until your turn or the end",
              "TableAnswer", (403, 404, 409, 413, 415, 422, *WORK), (TABLE,),
              {"application/json": {"schema": _ref("Move")}}, "your move", TABLE_LINKS),
)


def openapi_schema() -> dict:
    """The OpenAPI 3.1 document of the web table's routes."""
    paths: dict[str, dict] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = op.spec()
    return {
        "openapi": "3.1.0",
        "info": {"title": "wizard serve: the web table", "version": version("wizard-env"), "description": (
            "The JSON API of the play page and the replay viewer (docs/web.md). A refused request is a 4xx answer "
            "with the body `{\"error\": \"...\"}` and changes nothing; an unexpected error is a 500 with one line, "
            f"and the server goes on. JSON integers have at most {MAX_JSON_DIGITS} digits.")},
        "paths": paths,
        "components": {"schemas": SCHEMAS},
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def route_table() -> str:
    """The routes as the Markdown table of docs/web.md: method and path, parameters, body, answer, error statuses."""
    rows = ["| route | parameters | body | answer | errors |", "| --- | --- | --- | --- | --- |"]
    for op in OPERATIONS:
        params = ", ".join(f"`{p['name']}`" for p in op.parameters)
        body = f"{op.body_words} ({', '.join(f'`{media}`' for media in op.body)})" if op.body else ""
        if op.body and "application/json" in op.body:
            body = f"{op.body_words}: `{op.body['application/json']['schema']['$ref'].rsplit('/', 1)[1]}`"
        answer = f"`{op.answer}`: {op.summary}" if isinstance(op.answer, str) else op.summary
        errors = ", ".join(str(s) for s in (400, *op.errors))
        rows.append(f"| `{op.method} {op.path}` | {params} | {_cell(body)} | {_cell(answer)} | {errors} |")
    return "\n".join(rows) + "\n"


def status_table() -> str:
    """The error statuses as the Markdown table of docs/web.md."""
    return "\n".join(["| status | means |", "| --- | --- |", *(f"| {s} | {_cell(w)} |" for s, w in STATUS_WORDS.items())]) + "\n"


def settings_table() -> str:
    """The fields of a new table's settings as the Markdown table of docs/web.md: default and values."""
    rows = ["| field | default | values |", "| --- | --- | --- |"]
    for name, prop in SCHEMAS["Settings"]["properties"].items():
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else "see values"
        if "enum" in prop:
            values = ", ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
        elif prop.get("type") == "boolean":
            values = "`true` or `false`"
        else:
            values = prop.get("description", "")
            if "minimum" in prop:
                limit = prop["maximum"] if prop["maximum"] < 1000 else f"2**{int(prop['maximum']).bit_length()} - 1"
                values = f"{prop['minimum']} to {limit}" + (f": {values}" if values else "")
        rows.append(f"| `{name}` | {default} | {_cell(values)} |")
    return "\n".join(rows) + "\n"


def schema_text() -> str:
    """The schema as docs/openapi.json holds it."""
    return json.dumps(openapi_schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the schema (as docs/openapi.json holds it), or the route table of docs/web.md."""
    parser = argparse.ArgumentParser(prog="python -m wizard_env.web.openapi", description=__doc__.splitlines()[0])
    parser.add_argument("--tables", action="store_true", help="print the tables of docs/web.md instead")
    tables = "\n".join([status_table(), route_table(), settings_table()])
    print(tables if parser.parse_args(argv).tables else schema_text(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
