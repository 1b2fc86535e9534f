"""`wizard serve`: loaded only when run, one error line for what it cannot do, and a server that stops on Ctrl-C or SIGTERM."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import pytest

from helpers import loaded_by_import_and_help, uninstalled
from tests.web_server import request
from wizard_env.cli.main import main

WEB_INSTALL = "pip install -c constraints.txt -e '.[web]'"


def test_import_and_help_load_no_web_package():
    assert loaded_by_import_and_help(["starlette", "uvicorn", "PIL", "playwright"]) == []


@pytest.mark.parametrize("package", ["starlette", "uvicorn"])
def test_serve_without_the_web_extra_is_one_line_naming_the_install_command(package, monkeypatch, capsys, tmp_path):
    uninstalled(monkeypatch, package)
    assert main(["serve", "--replays", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err == f"wizard: error: wizard serve needs {package}, from the web extra: {WEB_INSTALL}\n"


def test_serve_refuses_a_taken_port_with_one_line(capsys, tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--replays", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"wizard: error: cannot listen on 127.0.0.1:{port}: ") and err.count("\n") == 1


@pytest.mark.parametrize("args, words", [
    (["--port", "70000"], "argument --port: must be at least 0 and at most 65535"),
    (["--port", "http"], "expected an integer"),
    (["--players", "9"], "argument --players: must be at least 3 and at most 6, not 9"),
    (["--host", "no.such.host.invalid"], "--host 'no.such.host.invalid': not an address of this machine"),
])
def test_serve_refuses_bad_options_before_listening(args, words, capsys, tmp_path):
    assert main(["serve", "--replays", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wizard: error: ") and words in err and "Traceback" not in err


def test_serve_refuses_a_replay_folder_that_is_a_file(capsys, tmp_path):
    (tmp_path / "file").write_text("x")
    assert main(["serve", "--replays", str(tmp_path / "file")]) == 2
    assert "is not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("stop, code, said", [(signal.SIGINT, 130, "wizard: interrupted"), (signal.SIGTERM, 143, "wizard: terminated")])
def test_serve_answers_with_the_variant_options_as_defaults_and_stops_on_a_signal(stop, code, said, tmp_path):
    process = subprocess.Popen([sys.executable, "-m", "wizard_env", "serve", "--port", "0", "--replays", str(tmp_path / "r"),
                                "--players", "3", "--bidding", "hidden", "--rounds", "5"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.match(r"Wizard table: (http://127\.0\.0\.1:\d+)/ \(play\)", line)
        assert match, line + process.stderr.read()
        status, config = request(match[1], "GET", "/api/config")
        assert status == 200
        assert config["defaults"] == {"players": 3, "rounds": "5", "bidding": "hidden", "bid_total_rule": False, "foresight": False}
        assert set(config["agents"]) == {"rule", "ppo", "random", "pimc", "search"}
        status, page = request(match[1], "GET", "/")
        assert status == 200 and "<title>Wizard: play against the agents</title>" in page
        assert request(match[1], "GET", "/api/config", headers={"Host": "attacker.example"})[0] == 400
        process.send_signal(stop)
        assert process.wait(timeout=60) == code  # the command's status after Ctrl-C or SIGTERM, as every command's
        assert process.stderr.read().strip() == said
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
