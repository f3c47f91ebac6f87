"""``cover schema calibrator``: the published JSON Schema of the calibrator file, checked
against files ``cover calibrate`` writes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from cli_files import synthetic
from cover.calibrate.calibrator_schema import calibrator_schema
from cover.cli import main


def test_prints_a_draft_2020_12_schema_a_written_calibrator_passes(tmp_path, capsys):
    assert main(["schema", "calibrator"]) == 0
    out = capsys.readouterr().out
    schema = json.loads(out)
    assert schema == calibrator_schema() and out.endswith("}\n")
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)

    preds, gt = synthetic(tmp_path)
    cal = tmp_path / "cal.json"
    for rule in ("split", "bonferroni"):
        assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", rule,
                     "-o", str(cal)]) == 0
        doc = json.loads(cal.read_text())
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    doc["thresholds"]["all"]["start"]["k"] = None  # bonferroni is rank-based
    with pytest.raises(jsonschema.ValidationError, match="None is not of type 'integer'"):
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)


def test_an_unknown_document_is_refused_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["schema", "regions"])
    assert exit_.value.code == 2
    assert "argument document: invalid choice: 'regions' (choose from calibrator)" in \
        capsys.readouterr().err.replace("'calibrator'", "calibrator")
