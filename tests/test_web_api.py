"""The web table's HTTP API against a live local server: whole games, what a seat is shown, and bad input.

Every refused request must be a 4xx JSON error naming the problem, change no game and read no file
outside the replay folder; the server must go on answering.
"""

from __future__ import annotations

import http.client
import json
import os

import numpy as np
import pytest

from tests.web_server import request, running_server
from wizard_env.cli.main import main
from wizard_env.engine.replay import read_replays, replay_game
from wizard_env.web.library import MAX_UPLOAD_BYTES

SETTINGS = {"players": 4, "rounds": "3", "opponents": ["rule"], "seat": 1}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replays")
    with running_server(folder) as base:
        yield base, folder


def play_out(base: str, settings: dict, rng: np.random.Generator) -> dict:
    """Play a table to its end through the API with random legal moves; the last view."""
    status, answer = request(base, "POST", "/api/tables", settings)
    assert status == 200, answer
    view = answer["table"]
    while not view["over"]:
        assert view["current"] == view["seat"] and view["legal"]
        choice = view["legal"][int(rng.integers(len(view["legal"])))]
        status, answer = request(base, "POST", f"/api/tables/{view['id']}/move",
                                 {"seat": view["seat"], "move": view["move"], "action": choice["action"]})
        assert status == 200, answer
        assert answer["frames"][0]["move"] == view["move"] + 1  # the person's move comes first
        view = answer["table"]
    return view


def alive(base: str) -> bool:
    return request(base, "GET", "/api/config")[0] == 200


def test_a_game_played_through_the_api_is_saved_and_re_plays(server, capsys):
    base, folder = server
    view = play_out(base, {**SETTINGS, "seed": 11}, np.random.default_rng(0))
    assert view["replay"] and view["legal"] == []
    path = folder / view["replay"]
    (record,) = read_replays(path)
    assert record["seed"] == 11 and record["seats"] == ["rule", "human", "rule", "rule"]
    assert record["final_totals"] == [p["total"] for p in view["players"]]
    assert main(["replay", str(path), "--check"]) == 0
    assert "all 1 games re-play identically" in capsys.readouterr().out
    status, listing = request(base, "GET", "/api/replays")
    assert status == 200 and view["replay"] in [f["name"] for f in listing["files"]]
    status, opened = request(base, "GET", f"/api/replays/{view['replay']}")
    assert status == 200 and opened["record"] == record and opened["warning"] is None and opened["games"] == 1


def test_the_same_seed_and_moves_give_the_same_game(server):
    base, _ = server
    first = play_out(base, {**SETTINGS, "seed": 5, "opponents": ["random", "rule", "random"]}, np.random.default_rng(3))
    second = play_out(base, {**SETTINGS, "seed": 5, "opponents": ["random", "rule", "random"]}, np.random.default_rng(3))
    assert first["rounds"] == second["rounds"] and first["id"] != second["id"]


def test_a_seat_sees_only_its_own_hand_and_the_bids_its_variant_shows(server):
    base, _ = server
    status, answer = request(base, "POST", "/api/tables", {**SETTINGS, "seed": 2, "bidding": "secret", "seat": 3})
    assert status == 200
    view = answer["table"]
    assert view["phase"] == "bid" and view["current"] == 3
    for s, player in enumerate(view["players"]):
        assert (player["hand"] is not None) == (s == 3)
        assert player["bid"] is None  # secret bidding: the others' bids are not shown before the round ends
        assert player["has_bid"] == (s != 3 and (s - view["dealer"] - 1) % 4 < (3 - view["dealer"] - 1) % 4)
    assert len(view["players"][3]["hand"]) == 1
    assert [c["kind"] for c in view["legal"]] == ["bid", "bid"]
    assert all(frame["event"].endswith("has bid") for frame in answer["frames"])


def test_a_foresight_round_never_sends_the_seat_its_own_card(server):
    base, _ = server
    status, answer = request(base, "POST", "/api/tables", {**SETTINGS, "seed": 4, "rounds": "1", "foresight": True, "seat": 0})
    assert status == 200
    view = answer["table"]
    assert view["foresight"] and view["players"][0]["hand"] is None
    assert all(len(p["hand"]) == 1 for s, p in enumerate(view["players"]) if s != 0)
    while view["phase"] != "play" or view["current"] != 0:
        status, answer = request(base, "POST", f"/api/tables/{view['id']}/move",
                                 {"seat": 0, "move": view["move"], "action": view["legal"][0]["action"]})
        view = answer["table"]
    assert view["legal"] == [{"action": "unseen", "kind": "card", "label": "your unseen card"}]
    assert "your unseen card" in json.dumps(view) and view["players"][0]["hand"] is None
    status, answer = request(base, "POST", f"/api/tables/{view['id']}/move", {"seat": 0, "move": view["move"], "action": "unseen"})
    assert status == 200 and answer["table"]["over"]


# -- bad input --------------------------------------------------------------------------------


@pytest.fixture()
def table(server):
    base, _ = server
    status, answer = request(base, "POST", "/api/tables", {**SETTINGS, "seed": 8})
    assert status == 200
    return answer["table"]


def refused(base: str, method: str, path: str, status: int, words: str, **kwargs) -> dict:
    got, body = request(base, method, path, **kwargs)
    assert got == status, body
    assert isinstance(body, dict) and words in body["error"], body
    assert alive(base)
    return body


def test_illegal_and_out_of_turn_moves_are_refused_and_change_nothing(server, table):
    base, _ = server
    move = f"/api/tables/{table['id']}/move"
    legal = {c["action"] for c in table["legal"]}
    illegal = next(a for a in range(79) if a not in legal)
    before = request(base, "GET", f"/api/tables/{table['id']}")[1]
    refused(base, "POST", move, 422, "is not legal", body={"seat": 1, "move": table["move"], "action": illegal})
    refused(base, "POST", move, 422, "not an integer action id", body={"seat": 1, "move": table["move"], "action": "Wiz"})
    refused(base, "POST", move, 422, "out of range", body={"seat": 1, "move": table["move"], "action": 999})
    refused(base, "POST", move, 409, "out of turn", body={"seat": 1, "move": table["move"] + 1, "action": min(legal)})
    refused(base, "POST", move, 409, "out of turn", body={"seat": 1, "move": table["move"] - 1, "action": min(legal)})
    refused(base, "POST", move, 403, "is not yours", body={"seat": 0, "move": table["move"], "action": min(legal)})
    refused(base, "POST", move, 422, "foresight", body={"seat": 1, "move": table["move"], "action": "unseen"})
    refused(base, "POST", move, 400, "'move' must be an integer", body={"seat": 1, "action": min(legal)})
    refused(base, "POST", move, 400, "not valid JSON", raw=b"{seat: 1", headers={"Content-Type": "application/json"})
    refused(base, "POST", move, 415, "as JSON", raw=b"seat=1&move=0", headers={"Content-Type": "application/x-www-form-urlencoded"})
    refused(base, "POST", "/api/tables/0123456789abcdef/move", 404, "no table", body={"seat": 1, "move": 0, "action": 0})
    refused(base, "GET", "/api/tables/..%2F..%2Fetc", 404, "Not Found")
    refused(base, "GET", "/api/tables/..", 404, "not a table id")
    assert request(base, "GET", f"/api/tables/{table['id']}")[1] == before
    status, answer = request(base, "POST", move, {"seat": 1, "move": table["move"], "action": min(legal)})
    assert status == 200 and answer["table"]["move"] > table["move"]  # the table still plays


def test_a_move_after_the_game_is_over_is_refused(server):
    base, _ = server
    view = play_out(base, {**SETTINGS, "rounds": "1", "seed": 3}, np.random.default_rng(1))
    refused(base, "POST", f"/api/tables/{view['id']}/move", 409, "the game is over",
            body={"seat": view["seat"], "move": view["move"], "action": 0})


@pytest.mark.parametrize("settings, words", [
    ({"players": 7}, "3 to 6 players"),
    ({"players": True}, "players: expected an integer"),
    ({"rounds": "many"}, "rounds: expected 'standard', 'amigo', a round count such as 5 or hand sizes such as 1,3,5, not 'many'"),
    ({"rounds": ["5"]}, "rounds: expected 'standard'"),
    ({"rounds": "30"}, "round"),
    ({"bidding": "loud"}, "bidding"),
    ({"foresight": "yes"}, "foresight: expected true or false"),
    ({"seat": 4}, "seats 0 to 3"),
    ({"opponents": ["rule", "rule"]}, "3 other seats need one agent each"),
    ({"opponents": ["nobody"]}, "opponents[0]: not an agent this table offers"),
    ({"opponents": ["ppo:/etc/passwd"]}, "opponents"),
    ({"seed": -1}, "seed must be an integer"),
    ({"colour": "red"}, "unknown field 'colour'"),
])
def test_impossible_settings_are_refused_with_the_reason(server, settings, words):
    base, _ = server
    refused(base, "POST", "/api/tables", 400, words, body=settings)


def test_a_request_for_another_host_is_refused(server):
    base, _ = server
    status, _ = request(base, "GET", "/api/config", headers={"Host": "evil.example:80"})
    assert status == 400 and alive(base)


def test_an_unknown_route_is_a_json_404(server):
    base, _ = server
    refused(base, "GET", "/api/nothing", 404, "/api/nothing")


def test_a_method_a_route_does_not_have_is_a_json_405_naming_the_allowed_ones(server):
    base, _ = server
    host, port = base.removeprefix("http://").split(":")
    for method, path, allowed in (("DELETE", "/api/config", {"GET", "HEAD"}), ("PUT", "/api/tables", {"POST"}),
                                  ("GET", "/api/upload", {"POST"})):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            conn.request(method, path)
            response = conn.getresponse()
            status, body = response.status, json.loads(response.read())
        finally:
            conn.close()
        assert (status, set(response.headers["Allow"].split(", "))) == (405, allowed), (method, path)
        assert body["error"] == f"{method} {path}: Method Not Allowed"


def test_a_move_with_a_field_it_does_not_have_is_refused_naming_it_and_changes_nothing(server, table):
    base, _ = server
    before = request(base, "GET", f"/api/tables/{table['id']}")[1]
    move = {"seat": 1, "move": table["move"], "action": table["legal"][0]["action"]}
    refused(base, "POST", f"/api/tables/{table['id']}/move", 400, "unknown field 'seats': the fields are action, move, seat",
            body={**move, "seats": 1})
    assert request(base, "GET", f"/api/tables/{table['id']}")[1] == before
    status, answer = request(base, "POST", f"/api/tables/{table['id']}/move", move)
    assert status == 200 and answer["table"]["move"] > table["move"]


def test_only_the_pages_static_files_are_served_each_with_its_media_type(server):
    base, _ = server
    host, port = base.removeprefix("http://").split(":")
    for name, media in (("play.js", "text/javascript"), ("style.css", "text/css"), ("viewer.html", "text/html")):
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            conn.request("GET", f"/static/{name}")
            response = conn.getresponse()
            response.read()
        finally:
            conn.close()
        assert response.status == 200 and response.headers["Content-Type"].split(";")[0] == media, name
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    for path in ("/static/__init__.py", "/static/../app.py", "/static/..%2Fapp.py", "/static/", "/static/play.js/x"):
        body = refused(base, "GET", path, 404, "among the pages' static files")
        assert "import" not in body["error"]


# -- the replay folder and uploads ------------------------------------------------------------


def test_paths_outside_the_replay_folder_are_never_read(server, tmp_path):
    base, folder = server
    secret = folder.parent / "secret.jsonl"
    secret.write_text("not for the viewer\n")
    os.symlink(secret, folder / "link.jsonl")
    try:
        for path in ("/api/replays/..%2Fsecret.jsonl", "/api/replays/%2E%2E%2Fsecret.jsonl", "/api/replays/..",
                     "/api/replays/.hidden.jsonl", "/api/replays/%2Fetc%2Fpasswd", "/api/replays/a%5C..%5Cb"):
            body = refused(base, "GET", path, 400, "not a file name in the replay folder")
            assert "not for the viewer" not in json.dumps(body)
        body = refused(base, "GET", "/api/replays/link.jsonl", 400, "leads outside the replay folder")
        assert "not for the viewer" not in json.dumps(body)
        assert "link.jsonl" not in [f["name"] for f in request(base, "GET", "/api/replays")[1]["files"]]
        refused(base, "GET", "/api/replays/absent.jsonl", 404, "no replay file absent.jsonl")
    finally:
        (folder / "link.jsonl").unlink()


@pytest.mark.parametrize("content, words", [
    (b"hello, not json\n", "not valid JSON"),
    (b'{"format": "chess-pgn/2", "moves": []}\n', "is not 'wizard-replay/1'"),
    (b'{"format": "wizard-replay/1", "num_players": 4}\n', "missing key"),
    (b"\xff\xfe\x00binary", "not UTF-8"),
    (b"\n\n", "holds no games"),
    (b"[1, 2, 3]\n", "not a JSON object"),
])
def test_malformed_and_foreign_files_are_refused_from_the_folder_and_as_uploads(server, content, words):
    base, folder = server
    (folder / "bad.jsonl").write_bytes(content)
    try:
        refused(base, "GET", "/api/replays/bad.jsonl", 422, words)
        refused(base, "POST", "/api/upload?name=bad.jsonl", 422, words, raw=content)
    finally:
        (folder / "bad.jsonl").unlink()


def test_an_upload_over_the_limit_is_refused_before_it_is_read(server):
    base, _ = server
    refused(base, "POST", "/api/upload", 413, "at most", raw=b"x" * (MAX_UPLOAD_BYTES + 1))


def test_an_upload_without_a_length_is_cut_off_at_the_limit(server):
    base, _ = server
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    chunk = b"y" * (1 << 20)
    try:  # chunked: no Content-Length, so the limit is applied while reading
        conn.request("POST", "/api/upload", body=(chunk for _ in range((MAX_UPLOAD_BYTES >> 20) + 2)), encode_chunked=True)
        response = conn.getresponse()
        status, body = response.status, json.loads(response.read())
    finally:
        conn.close()
    assert status == 413 and "at most" in body["error"] and alive(base)


def test_an_upload_opens_the_chosen_game_and_warns_when_it_does_not_re_play(server):
    base, folder = server
    view = play_out(base, {**SETTINGS, "rounds": "2", "seed": 21}, np.random.default_rng(2))
    line = (folder / view["replay"]).read_bytes()
    record = json.loads(line)
    status, answer = request(base, "POST", "/api/upload?game=2&name=two.jsonl", raw=line + line)
    assert status == 200 and answer["game"] == 2 and answer["games"] == 2 and answer["record"] == record
    refused(base, "POST", "/api/upload?game=3", 404, "game must be 1 to 2", raw=line + line)
    refused(base, "POST", "/api/upload?game=0", 400, "game counts from 1, not 0", raw=line)
    refused(base, "POST", "/api/upload?game=two", 400, "game must be a number from 1", raw=line)
    record["final_totals"][0] += 10  # still well-formed, but not what the engine plays
    status, answer = request(base, "POST", "/api/upload", raw=json.dumps(record).encode())
    assert status == 200 and "does not re-play" in answer["warning"]


# -- under load --------------------------------------------------------------------------------


def test_fifty_concurrent_games_all_finish_and_re_play(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    games = 50
    with running_server(tmp_path) as base, ThreadPoolExecutor(games) as pool:
        settings = [{"players": 4, "rounds": "4", "opponents": ["rule", "random", "rule"], "seat": k % 4, "seed": 1000 + k}
                    for k in range(games)]
        # the timeout bounds a hang; it is no speed check
        views = list(pool.map(lambda k: play_out(base, settings[k], np.random.default_rng(k)), range(games), timeout=600))
        assert alive(base)
    assert all(v["over"] for v in views) and len({v["id"] for v in views}) == games
    files = sorted(tmp_path.glob("*.jsonl"))
    assert len(files) == games and {f.name for f in files} == {v["replay"] for v in views}
    for view in views:
        (record,) = read_replays(tmp_path / view["replay"])
        assert record["seed"] == view["seed"]
        assert replay_game(record).totals.tolist() == [p["total"] for p in view["players"]]


def test_every_offered_agent_plays_at_the_table(server):
    base, folder = server
    status, config = request(base, "GET", "/api/config")
    assert config["agents"] == ["rule", "ppo", "random", "pimc", "search"]
    settings = {"players": 6, "rounds": "2", "seat": 2, "seed": 17, "opponents": ["rule", "ppo", "random", "pimc", "search"]}
    view = play_out(base, settings, np.random.default_rng(5))
    (record,) = read_replays(folder / view["replay"])
    assert record["seats"] == ["rule", "ppo", "human", "random", "pimc", "search"]
    assert replay_game(record).totals.tolist() == record["final_totals"]


def test_a_full_room_drops_finished_then_abandoned_tables_and_refuses_the_rest(tmp_path, monkeypatch):
    from wizard_env.web import tables as tables_module
    from wizard_env.web.tables import RequestError, Tables

    room = Tables(tmp_path, max_tables=2)
    settings = {"players": 3, "rounds": "1", "seat": 0, "opponents": ["random"]}
    first = room.create({**settings, "seed": 1})["table"]
    second = room.create({**settings, "seed": 2})["table"]
    with pytest.raises(RequestError, match="2 games are being played") as refusal:
        room.create({**settings, "seed": 3})
    assert refusal.value.status == 503 and len(room) == 2
    view = first
    while not view["over"]:
        view = room.move(first["id"], {"seat": 0, "move": view["move"], "action": view["legal"][0]["action"]})["table"]
    third = room.create({**settings, "seed": 3})["table"]  # the finished game makes room
    with pytest.raises(RequestError, match="no table"):
        room.get(first["id"])
    assert room.view(second["id"])["move"] == second["move"] and room.view(third["id"])["seed"] == 3
    monkeypatch.setattr(tables_module, "ABANDONED_SECONDS", -1.0)  # every unfinished table now counts as abandoned
    room.view(third["id"])  # used just now: the second table is the least recently used
    room.create({**settings, "seed": 4})
    with pytest.raises(RequestError, match="no table"):
        room.get(second["id"])
    assert room.view(third["id"])["seed"] == 3
