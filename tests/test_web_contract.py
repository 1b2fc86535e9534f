"""The web API against its own contract (wizard_env/web/openapi.py): the schema the server serves is the one its
routes are built from and the one docs/ copies; whole games answer what the schema says; and schemathesis,
driven by the schema, finds no server error and no answer that breaks it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.web_server import request, running_server
from wizard_env.web.openapi import OPERATIONS, openapi_schema, schema_text

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the dev extra (schemathesis)")
DOCS = Path(__file__).resolve().parent.parent / "docs"


def validator(component: str) -> "jsonschema.protocols.Validator":
    """A validator of one of the schema's components, its references resolved in the schema."""
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{component}", **openapi_schema()})


def test_the_running_server_serves_the_schema_its_routes_are_built_from(tmp_path):
    from wizard_env.web.app import create_app

    app = create_app(tmp_path, offered=("rule",))
    served = {(route.path, method) for route in app.routes for method in route.methods - {"HEAD"}}
    assert served == {(op.route, op.method) for op in OPERATIONS}
    schema = openapi_schema()
    assert schema["openapi"].startswith("3.1")
    assert {(path, method.upper()) for path, item in schema["paths"].items() for method in item} == \
        {(op.path, op.method) for op in OPERATIONS}
    for name, component in schema["components"]["schemas"].items():
        jsonschema.Draft202012Validator.check_schema(component)  # a well-formed JSON Schema
    for item in schema["paths"].values():
        for spec in item.values():
            assert all(status == "200" or "Error" in json.dumps(answer) for status, answer in spec["responses"].items())
    with running_server(tmp_path, offered=("rule",)) as base:
        status, body = request(base, "GET", "/openapi.json")
    assert status == 200 and body == schema


def test_the_docs_copy_of_the_schema_is_the_servers():
    assert (DOCS / "openapi.json").read_text(encoding="utf-8") == schema_text(), \
        "docs/openapi.json is not the schema: python -m wizard_env.web.openapi > docs/openapi.json"


def test_every_answer_of_whole_games_matches_the_schema(tmp_path):
    answers, views = validator("TableAnswer"), validator("View")
    rng = np.random.default_rng(0)
    with running_server(tmp_path, offered=("rule", "random")) as base:
        for settings in ({"players": 3, "rounds": "2", "seat": 2, "opponents": ["random", 0], "seed": 1},
                         {"players": 4, "rounds": "1", "foresight": True, "bidding": "secret", "seed": 2},
                         {"players": 5, "rounds": "1,2", "bid_total_rule": True, "seed": 3}):
            status, answer = request(base, "POST", "/api/tables", settings)
            assert status == 200, answer
            answers.validate(answer)
            view = answer["table"]
            while not view["over"]:
                choice = view["legal"][int(rng.integers(len(view["legal"])))]["action"]
                status, answer = request(base, "POST", f"/api/tables/{view['id']}/move",
                                         {"seat": view["seat"], "move": view["move"], "action": choice})
                assert status == 200, answer
                answers.validate(answer)
                view = answer["table"]
            assert view["replay"] is not None
            views.validate(request(base, "GET", f"/api/tables/{view['id']}")[1])
            status, opened = request(base, "GET", f"/api/replays/{view['replay']}")
            assert status == 200
            validator("ReplayGame").validate(opened)
        listing = request(base, "GET", "/api/replays")[1]
        validator("Listing").validate(listing)
        assert len(listing["files"]) == 3
        validator("Config").validate(request(base, "GET", "/api/config")[1])
        for method, path, kwargs in (("GET", "/api/tables/0123456789abcdef", {}), ("POST", "/api/tables", {"body": {"seat": 9}}),
                                     ("GET", "/api/replays/.x", {}), ("POST", "/api/upload", {"raw": b"{}\n"}),
                                     ("DELETE", "/api/config", {})):
            status, error = request(base, method, path, **kwargs)
            assert 400 <= status < 500, (path, error)
            validator("Error").validate(error)


def test_schemathesis_finds_no_server_error_and_no_answer_that_breaks_the_schema(tmp_path):
    pytest.importorskip("schemathesis", reason="schemathesis comes with the dev extra")
    from benchmarks.schemathesis_web import campaign, warm_up

    with running_server(tmp_path / "replays", offered=("rule", "random")) as base:
        warm_up(base)  # plays a game to its end: the viewer's routes have a file to open
        counts, output = campaign(base, examples=5, seed=0, folder=tmp_path)
    assert (counts.failures, counts.server_errors, counts.errors) == (0, 0, 0), output
    assert counts.operations == len(OPERATIONS) - 1, output  # all but GET /openapi.json, the schema schemathesis reads
    assert counts.test_cases >= 10 * counts.operations, output
    assert counts.report["phases"]["stateful"]["status"] == "success", output
