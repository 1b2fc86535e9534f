"""`wizard serve` against a hostile or careless client: only the operator's agents, bounded time, a server that
stops on Ctrl-C whatever it computes, and huge JSON integers refused with the field named.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from tests.web_server import request, running_server
from wizard_env.agents.registry import make_agent
from wizard_env.cli.main import main
from wizard_env.engine.game import WizardGame
from wizard_env.engine.rules import Rules, parse_rounds
from wizard_env.web import tables as tables_module
from wizard_env.web.tables import Tables

HUGE = "9" * 5000  # past Python's 4,300-digit limit on int(str)


def alive(base: str) -> bool:
    return request(base, "GET", "/api/config")[0] == 200


# -- item 7: a fixed list of agents, bounded time, Ctrl-C ----------------------------------------


def test_a_client_chooses_only_offered_agents_by_name_or_index(tmp_path):
    with running_server(tmp_path, offered=("rule", "random")) as base:
        assert request(base, "GET", "/api/config")[1]["agents"] == ["rule", "random"]
        for spec in ("pimc:samples=8192:rollout=ppo", "pimc", "ppo", 2, -1, True):
            status, body = request(base, "POST", "/api/tables", {"players": 3, "opponents": ["rule", spec]})
            assert status == 400, body
            assert body["error"] == ("opponents[1]: not an agent this table offers; choose by name or by index from 0: "
                                     "rule, random")
        status, body = request(base, "POST", "/api/tables", {"players": 3, "seat": 0, "opponents": [1, "rule"], "seed": 4})
        assert status == 200 and [p["name"] for p in body["table"]["players"]][1:] == ["random (seat 1)", "rule (seat 2)"]
        assert alive(base)


def test_serve_refuses_a_bad_offered_agent_or_time_before_listening(capsys, tmp_path):
    for args, words in ([["--opponents", "ppo:" + str(tmp_path / "none.npz")], "--opponents: offered agent 'ppo:"],
                        [["--opponents", "rule,rule"], "--opponents: agent 'rule' is offered twice"],
                        [["--opponents", "nobody"], "--opponents: unknown agent 'nobody'"],
                        [["--move-seconds", "0"], "argument --move-seconds: must be more than 0"]):
        assert main(["serve", "--port", "0", "--replays", str(tmp_path), *args]) == 2
        err = capsys.readouterr().err
        assert err.startswith("wizard: error: ") and words in err and err.count("\n") == 1, err


class SlowAgent:
    """An offered agent that thinks for ``SECONDS`` a move, then plays as its inner agent."""

    SECONDS = 0.4

    def __init__(self, inner):
        self.inner = inner

    def act_games(self, batch, games):
        time.sleep(self.SECONDS)
        return self.inner.act_games(batch, games)


def test_a_request_out_of_time_is_a_504_that_keeps_the_moves_and_the_table_goes_on(tmp_path, monkeypatch):
    rules = Rules.make(6, parse_rounds("2"), "open", False, False)
    seed = 9
    dealer = WizardGame(rules, seed).dealer  # the dealer bids last: five agents move before the person
    settings = {"players": 6, "rounds": "2", "seat": dealer, "opponents": ["rule"], "seed": seed}
    quick = Tables(tmp_path / "quick").create(settings)["table"]
    monkeypatch.setattr(tables_module, "make_agent", lambda spec, seed: SlowAgent(make_agent(spec, seed)))
    with running_server(tmp_path / "slow", offered=("rule",), move_seconds=0.5) as base:
        status, body = request(base, "POST", "/api/tables", settings)
        assert status == 504, body
        table_id = re.search(r"GET /api/tables/([0-9a-f]{16})", body["error"])[1]
        assert "the moves made are kept" in body["error"]
        for _ in range(20):  # each request makes a move or two within its time; a bound against a hang
            status, view = request(base, "GET", f"/api/tables/{table_id}")
            if status == 200:
                break
            assert status in (503, 504), view
        assert status == 200 and view["current"] == dealer and view["legal"]
        # the same moves as without a limit: no move was lost or made twice
        assert view["move"] == quick["move"] and [p["has_bid"] for p in view["players"]] == [p["has_bid"] for p in quick["players"]]
        assert [p["bid"] for p in view["players"]] == [p["bid"] for p in quick["players"]]
        status, answer = request(base, "POST", f"/api/tables/{table_id}/move",
                                 {"seat": dealer, "move": view["move"], "action": view["legal"][0]["action"]})
        assert status in (200, 504) and alive(base)


def test_ctrl_c_stops_the_server_within_seconds_while_an_agent_computes(tmp_path):
    slow = "pimc:samples=4096"  # about 20 s a move on 9-card hands: computing when Ctrl-C comes
    process = subprocess.Popen([sys.executable, "-m", "wizard_env", "serve", "--port", "0", "--replays", str(tmp_path),
                                "--opponents", slow, "--move-seconds", "600"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    answers = []
    try:
        line = process.stdout.readline()
        match = re.match(r"Wizard table: (http://127\.0\.0\.1:\d+)/ \(play\)", line)
        assert match, line + process.stderr.read()
        settings = {"players": 6, "rounds": "9,9", "seat": 5, "opponents": [slow], "seed": 1}
        asking = threading.Thread(target=lambda: answers.append(request(match[1], "POST", "/api/tables", settings, timeout=60)))
        asking.start()
        time.sleep(3)  # the request is in and an agent computes
        assert not answers, answers
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130  # before: still serving 40 s after two Ctrl-C
        assert process.stderr.read().strip() == "wizard: interrupted"
        asking.join(timeout=30)
        assert answers and answers[0][0] == 503 and answers[0][1] == {"error": "the server is stopping"}
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# -- item 8: a client cannot probe the disk ------------------------------------------------------


def test_path_bearing_specs_get_one_identical_refusal_that_says_nothing_of_the_path(tmp_path):
    (tmp_path / "folder").mkdir()
    with running_server(tmp_path / "replays") as base:
        answers = []
        for spec in ("ppo:/etc/passwd", f"ppo:{tmp_path / 'missing.npz'}", f"ppo:{tmp_path / 'folder'}",
                     "ppo:/etc/passwd:play=rule", "ppo-bid:/dev/zero"):
            answers.append(request(base, "POST", "/api/tables", {"players": 3, "opponents": [spec]}))
        assert all(answer == answers[0] for answer in answers), answers
        status, body = answers[0]
        assert status == 400 and "not an agent this table offers" in body["error"]
        assert not re.search(r"passwd|missing|folder|/etc|/dev|npz|file|director", body["error"])
        assert alive(base)


# -- item 9: huge JSON integers ------------------------------------------------------------------


def huge_json(settings: dict, field: str) -> bytes:
    """``settings`` as JSON with ``field``'s value a 5,000-digit integer (json.dumps cannot write one)."""
    return json.dumps({**settings, field: 0}).replace(f'"{field}": 0', f'"{field}": {HUGE}').encode()


@pytest.mark.parametrize("field", ["seed", "players", "seat", "rounds", "opponents"])
def test_a_huge_integer_in_table_settings_is_a_400_naming_the_field(tmp_path, field):
    with running_server(tmp_path) as base:
        status, body = request(base, "POST", "/api/tables", raw=huge_json({"players": 3, "seed": 1}, field),
                               headers={"Content-Type": "application/json"})
        assert status == 400, body
        assert body["error"] == f"{field}: an integer of 5,000 digits; at most 40 are read"


@pytest.mark.parametrize("field", ["action", "move", "seat"])
def test_a_huge_integer_in_a_move_is_a_400_naming_the_field_and_changes_nothing(tmp_path, field):
    with running_server(tmp_path) as base:
        view = request(base, "POST", "/api/tables", {"players": 3, "seat": 0, "seed": 2})[1]["table"]
        move = {"seat": 0, "move": view["move"], "action": view["legal"][0]["action"]}
        status, body = request(base, "POST", f"/api/tables/{view['id']}/move", raw=huge_json(move, field),
                               headers={"Content-Type": "application/json"})
        assert status == 400 and body["error"] == f"{field}: an integer of 5,000 digits; at most 40 are read", body
        assert request(base, "GET", f"/api/tables/{view['id']}")[1] == view
        assert request(base, "POST", f"/api/tables/{view['id']}/move", move)[0] == 200


def test_a_huge_integer_in_a_replay_is_a_422_naming_file_line_and_field_from_the_folder_an_upload_and_the_cli(tmp_path, capsys):
    replays = tmp_path / "replays"
    with running_server(replays) as base:
        view = request(base, "POST", "/api/tables", {"players": 3, "rounds": "1", "seat": 0, "seed": 3})[1]["table"]
        rng = np.random.default_rng(0)
        while not view["over"]:
            choice = view["legal"][int(rng.integers(len(view["legal"])))]
            view = request(base, "POST", f"/api/tables/{view['id']}/move",
                           {"seat": 0, "move": view["move"], "action": choice["action"]})[1]["table"]
        line = (replays / view["replay"]).read_bytes()
        bad = re.sub(rb'"bid": \d+', b'"bid": ' + HUGE.encode(), line, count=1)
        assert bad != line
        (replays / "huge.jsonl").write_bytes(line + bad)
        words = "huge.jsonl, line 2: rounds[0].bids[0].bid: an integer of 5,000 digits; at most 40 are read"
        status, body = request(base, "GET", "/api/replays/huge.jsonl?game=2")
        assert status == 422 and body["error"] == words, body
        status, body = request(base, "POST", "/api/upload?game=2&name=huge.jsonl", raw=line + bad)
        assert status == 422 and body["error"] == words, body
        assert alive(base)
    assert main(["replay", str(replays / "huge.jsonl"), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 2: rounds[0].bids[0].bid: an integer of 5,000 digits" in err, err


# -- item 18: docs/web.md names the app's routes -------------------------------------------------


def test_every_route_of_docs_web_md_and_its_curl_session_is_a_route_of_the_app_and_back(tmp_path):
    from pathlib import Path

    from starlette.routing import Match

    from wizard_env.web.app import create_app

    doc = (Path(__file__).parent.parent / "docs" / "web.md").read_text()
    app = create_app(tmp_path, offered=("rule",))

    def matches(method: str, path: str) -> bool:
        scope = {"type": "http", "method": method, "path": path}
        return any(route.matches(scope)[0] == Match.FULL for route in app.routes)

    documented = re.findall(r"^\| `(GET|POST) (/api/[^ `?]*)", doc, flags=re.M)
    assert len(documented) == 7
    sample = {"{table}": "0123456789abcdef", "{name}": "x.jsonl"}
    for method, path in documented:
        for key, value in sample.items():
            path = path.replace(key, value)
        assert matches(method, path), (method, path)
    session = doc.split("## A session with `curl`")[1]
    sent = re.findall(r"curl -s (?:-w '[^']*' )?(-X POST )?(?:--data-binary \S+ )?\"?\$URL(/api/[^\s\"'?)]*)", session)
    assert len(sent) == session.count("curl -s") >= 10
    for post, path in sent:
        path = path.replace("$TABLE", sample["{table}"]).replace("$FILE", sample["{name}"])
        assert matches("POST" if post else "GET", path), (post, path)
    api = {route.path for route in app.routes if route.path.startswith("/api/")}
    shown = {re.sub(r"\{\w+(:\w+)?\}", "{}", path) for _, path in documented}
    assert {re.sub(r"\{\w+(:\w+)?\}", "{}", path) for path in api} == shown
