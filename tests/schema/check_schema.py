#!/usr/bin/env python3
"""Checks the JSON Schemas of bundle format v1 (docs/bundle-v1.schema.json, docs/text-shard-v1.schema.json).

(a) the default bundle and all its text shards validate;
(b) the tiny example in docs/bundle-format.md is byte-identical to tests/fixtures/tiny-bundle.json and
    validates; the pandas snippet of the docs runs and prints what the docs show;
(c) malformed variants (wrong version, unknown top-level field, evidence 2, obtained "guess", codes with
    '#', missing metadata.title, ...) are rejected, and harmless variants are accepted;
(d) the clinical fixture tests/fixtures/clinical-bundle.json (docs/clinical.md) validates, malformed
    `clinical` objects are rejected at their field, harmless variants accepted;
(e) the score-direction and high-Abstain fixtures (tests/fixtures/target-50-bundle.json,
    high-abstain-bundle.json) validate, and a malformed `responses.selection.direction` (unknown
    `better`, a target missing, outside [0, 1] or given with "lower", an unknown key) is rejected there.

Prints one line per check and ends with "N passed, M failed"; exits 1 when a check fails.

Needs numpy, jsonschema and pandas. When they are missing, the script creates (if needed) the venv
~/.cache/audit-atlas/venv, installs them there and re-runs itself with it:
    python3 -m venv ~/.cache/audit-atlas/venv
    ~/.cache/audit-atlas/venv/bin/pip install numpy jsonschema pandas
"""

import copy
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV = os.path.join(os.environ.get("AUDIT_ATLAS_CACHE") or os.path.expanduser("~/.cache/audit-atlas"), "venv")


def ensure_packages():
    try:
        import jsonschema  # noqa: F401
        import numpy  # noqa: F401
        import pandas  # noqa: F401
        return
    except ImportError:
        pass
    python = os.path.join(VENV, "bin", "python")
    if os.environ.get("ATLAS_SCHEMA_REEXEC"):
        sys.exit(f"numpy, jsonschema and pandas are still missing in {VENV}")
    try:
        if not os.path.exists(python):
            print(f"creating the venv {VENV}", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        ready = subprocess.run([python, "-c", "import numpy, jsonschema, pandas"], capture_output=True).returncode == 0
        if not ready:
            print(f"installing numpy, jsonschema, pandas into {VENV}", file=sys.stderr)
            subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "numpy", "jsonschema", "pandas"], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"cannot set up {VENV} ({e}); install numpy, jsonschema and pandas there by hand")
    os.environ["ATLAS_SCHEMA_REEXEC"] = "1"
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


ensure_packages()

import jsonschema  # noqa: E402

BUNDLE_SCHEMA = os.path.join(ROOT, "docs", "bundle-v1.schema.json")
SHARD_SCHEMA = os.path.join(ROOT, "docs", "text-shard-v1.schema.json")
DOC = os.path.join(ROOT, "docs", "bundle-format.md")
TINY = os.path.join(ROOT, "tests", "fixtures", "tiny-bundle.json")
CLINICAL = os.path.join(ROOT, "tests", "fixtures", "clinical-bundle.json")
DEFAULT_DIR = os.path.join(ROOT, "static", "bundles", "decodingtrust-stereotype")

passed = 0
failed = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS  {name}" + (f"  ({detail})" if detail else ""))
    else:
        failed += 1
        print(f"FAIL  {name}" + (f": {detail}" if detail else ""))


def check(name, fn):
    """Runs fn(); it returns a detail string (pass) or raises AssertionError (fail)."""
    try:
        detail = fn()
        report(True, name, detail or "")
    except AssertionError as e:
        report(False, name, str(e))
    except Exception as e:  # a crash is a failure of that check, not of the script
        report(False, name, f"{type(e).__name__}: {e}")


def load_json(path):
    with open(path, encoding="utf-8-sig") as f:
        return json.load(f)


def doc_block(text, marker, fence):
    begin = f"<!-- begin: {marker} -->\n```{fence}\n"
    end = f"```\n<!-- end: {marker} -->"
    i = text.index(begin) + len(begin)
    j = text.index(end, i)
    return text[i:j]


def errors(validator, instance):
    return sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))


def path_of(error):
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def first_error(validator, instance):
    errs = errors(validator, instance)
    return f"{path_of(errs[0])}: {errs[0].message[:90]}" if errs else None


def main():
    bundle_schema = load_json(BUNDLE_SCHEMA)
    shard_schema = load_json(SHARD_SCHEMA)
    Validator = jsonschema.Draft202012Validator

    def schemas_are_valid():
        Validator.check_schema(bundle_schema)
        Validator.check_schema(shard_schema)
        return "draft 2020-12 metaschema"

    check("schemas are valid JSON Schemas", schemas_are_valid)
    bv = Validator(bundle_schema)
    sv = Validator(shard_schema)

    # (a) the default bundle and its shards
    default = load_json(os.path.join(DEFAULT_DIR, "bundle.json"))

    def default_bundle():
        err = first_error(bv, default)
        assert err is None, err
        return f"{len(default['responses']['selection']['codes']):,} cells"

    check("default bundle validates", default_bundle)
    refs = [s["path"] for s in ((default.get("texts") or {}).get("rationale") or {}).get("shards", [])]

    def shards_listed():
        present = sorted(p for p in os.listdir(DEFAULT_DIR) if p != "bundle.json" and p.endswith(".json"))
        assert sorted(refs) == present, f"listed {sorted(refs)} but the folder has {present}"
        return f"{len(refs)} shards"

    check("default bundle lists exactly the shard files next to it", shards_listed)
    for ref in refs:
        def one_shard(ref=ref):
            shard = load_json(os.path.join(DEFAULT_DIR, ref))
            err = first_error(sv, shard)
            assert err is None, err
            assert shard["bundle"] == default["metadata"]["id"], "shard names another bundle"
            return f"{len(shard['texts'])} texts"

        check(f"shard {ref} validates", one_shard)

    # (b) the tiny example: doc block == fixture, valid
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    with open(TINY, encoding="utf-8") as f:
        tiny_text = f.read()

    def doc_block_identical():
        block = doc_block(doc, "tests/fixtures/tiny-bundle.json", "json")
        assert block == tiny_text, "the ```json block in docs/bundle-format.md differs from tests/fixtures/tiny-bundle.json"
        return f"{len(block)} bytes"

    check("docs example block is identical to tests/fixtures/tiny-bundle.json", doc_block_identical)
    tiny = json.loads(tiny_text)

    def tiny_valid():
        err = first_error(bv, tiny)
        assert err is None, err
        return f"{len(tiny['responses']['selection']['codes'])} cells"

    check("tiny example validates", tiny_valid)

    def tiny_cells():
        n = 1
        levels = {f["id"]: len(f["levels"]) for f in tiny["facets"]}
        for a in tiny["responses"]["axes"]:
            n *= levels[a]
        cols = [tiny["responses"]["selection"]["codes"]] + [j["labels"] for j in tiny["responses"]["judges"]]
        for h in tiny["responses"]["human"]:
            cols += [h[k] for k in ("selection", "rationale") if h.get(k) is not None]
        assert all(len(c) == n for c in cols), "a dense column does not have one character per cell"
        assert sorted(tiny["responses"]["axes"]) == sorted(levels), "axes are not a permutation of the facets"
        return f"{len(cols)} columns of {n} characters"

    check("tiny example passes the reader-only length and axes rules", tiny_cells)

    def pandas_snippet():
        snippet = doc_block(doc, "pandas snippet", "python")
        shown = doc.split("<!-- end: pandas snippet -->", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
        run = subprocess.run([sys.executable, "-c", snippet], cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr.strip()[-500:]
        norm = lambda s: [" ".join(line.split()) for line in s.strip().splitlines()]
        assert norm(run.stdout) == norm(shown), "the snippet's output differs from the output shown in the docs:\n" + run.stdout
        return norm(run.stdout)[5]

    check("docs pandas snippet runs and prints the documented output", pandas_snippet)

    # (c) malformed variants are rejected (for the expected field), harmless ones accepted
    def variant(mutate):
        b = copy.deepcopy(tiny)
        mutate(b)
        return b

    def setp(path, value):
        def m(b):
            o = b
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = value
        return m

    def delp(path):
        def m(b):
            o = b
            for k in path[:-1]:
                o = o[k]
            del o[path[-1]]
        return m

    codes = tiny["responses"]["selection"]["codes"]
    # responses.likelihood over the tiny example's 32 cells: readouts on the first two cells only.
    n = len(codes)
    LIKELIHOOD = {
        "description": "test readouts",
        "candidates": 2,
        "stereotyped": "01" + "-" * (n - 2),
        "logprob_sum": [-6.0, -5.0, -4.0, -2.0] + [None] * (2 * n - 4),
        "token_count": [3, 2, 2, 1] + [None] * (2 * n - 4),
    }
    rejected = [
        ("wrong version (2)", setp(["version"], 2), "version"),
        ("wrong format", setp(["format"], "audit-atlas-text-shard"), "format"),
        ("unknown top-level field", setp(["extra"], True), "(top level)"),
        ("evidence 2", setp(["responses", "selection", "values", 0, "evidence"], 2), "responses/selection/values/0/evidence"),
        ("evidence true", setp(["responses", "selection", "values", 0, "evidence"], True), "responses/selection/values/0/evidence"),
        ("evidence key missing", delp(["responses", "selection", "values", 0, "evidence"]), "responses/selection/values/0"),
        ('obtained "guess"', setp(["responses", "selection", "values", 4, "obtained"], "guess"), "responses/selection/values/4/obtained"),
        ("evidence 0 on a refusal", setp(["responses", "selection", "values", 5, "evidence"], 0), "responses/selection/values/5/evidence"),
        ("63 selection values", setp(["responses", "selection", "values"], [{"raw": str(i), "evidence": 0, "obtained": "regex"} for i in range(63)]), "responses/selection/values"),
        ("codes with '#'", setp(["responses", "selection", "codes"], "#" + codes[1:]), "responses/selection/codes"),
        ("judge label 'e'", setp(["responses", "judges", 0, "labels"], "e" + tiny["responses"]["judges"][0]["labels"][1:]), "responses/judges/0/labels"),
        ("human selection 'X'", setp(["responses", "human", 0, "selection"], "X" * len(codes)), "responses/human/0/selection"),
        ("judges null", setp(["responses", "judges"], None), "responses/judges"),
        ("missing metadata.title", delp(["metadata", "title"]), "metadata"),
        ("missing metadata.content_warning", delp(["metadata", "content_warning"]), "metadata"),
        ("blank metadata.id", setp(["metadata", "id"], "  "), "metadata/id"),
        ("unknown key in metadata.source", setp(["metadata", "source", "doi"], "10.1/x"), "metadata/source"),
        ("no facets", setp(["facets"], []), "facets"),
        ("no statement facet", setp(["facets", 2, "id"], "question"), "facets"),
        ("empty facet id", setp(["facets", 4, "id"], ""), "facets/4/id"),
        ("facet without levels", setp(["facets", 4, "levels"], []), "facets/4/levels"),
        ("condition level without has_selection", delp(["facets", 1, "levels", 0, "has_selection"]), "facets/1/levels/0"),
        ("has_selection null", setp(["facets", 1, "levels", 0, "has_selection"], None), "facets/1/levels/0/has_selection"),
        ("in_reference true without has_selection", setp(["facets", 1, "levels", 1, "has_selection"], False), "facets/1/levels/1/in_reference"),
        ("statement level without text", delp(["facets", 2, "levels", 0, "text"]), "facets/2/levels/0"),
        ("statement category 5", setp(["facets", 2, "levels", 0, "category"], 5), "facets/2/levels/0/category"),
        ("template condition 5", setp(["facets", 3, "levels", 0, "condition"], 5), "facets/3/levels/0/condition"),
        ("level id not a string", setp(["facets", 0, "levels", 0, "id"], 5), "facets/0/levels/0/id"),
        ("duplicate axis", setp(["responses", "axes"], ["model", "condition", "statement", "template", "model"]), "responses/axes"),
        ("negative text cell", setp(["texts", "rationale", "inline", "cells"], [-1, 1, 7, 13, 20]), "texts/rationale/inline/cells/0"),
        ("shard ref without count", setp(["texts", "rationale", "shards"], [{"path": "x.json", "first_cell": 0, "last_cell": 3}]), "texts/rationale/shards/0"),
        ('direction "lowest"', setp(["responses", "selection", "direction"], {"better": "lowest"}), "responses/selection/direction/better"),
        ("target direction without target", setp(["responses", "selection", "direction"], {"better": "target"}), "responses/selection/direction"),
        ("target 50 (a percentage)", setp(["responses", "selection", "direction"], {"better": "target", "target": 50}), "responses/selection/direction/target"),
        ("target -0.1", setp(["responses", "selection", "direction"], {"better": "target", "target": -0.1}), "responses/selection/direction/target"),
        ('target with "lower"', setp(["responses", "selection", "direction"], {"better": "lower", "target": 0.5}), "responses/selection/direction"),
        ("target as a string", setp(["responses", "selection", "direction"], {"better": "target", "target": "50%"}), "responses/selection/direction/target"),
        ("unknown key in direction", setp(["responses", "selection", "direction"], {"better": "higher", "ideal": 1}), "responses/selection/direction"),
        ("likelihood candidates 1", setp(["responses", "likelihood"], {**LIKELIHOOD, "candidates": 1}), "responses/likelihood/candidates"),
        ("likelihood mark 'x'", setp(["responses", "likelihood"], {**LIKELIHOOD, "stereotyped": "x" + LIKELIHOOD["stereotyped"][1:]}), "responses/likelihood/stereotyped"),
        ("likelihood positive log-probability", setp(["responses", "likelihood"], {**LIKELIHOOD, "logprob_sum": [0.5] + LIKELIHOOD["logprob_sum"][1:]}), "responses/likelihood/logprob_sum/0"),
        ("likelihood token count 0", setp(["responses", "likelihood"], {**LIKELIHOOD, "token_count": [0] + LIKELIHOOD["token_count"][1:]}), "responses/likelihood/token_count/0"),
        ("likelihood unknown key", setp(["responses", "likelihood"], {**LIKELIHOOD, "prefix": 3}), "responses/likelihood"),
        ("likelihood null", setp(["responses", "likelihood"], None), "responses/likelihood"),
    ]
    for name, mutate, where in rejected:
        def must_reject(mutate=mutate, where=where):
            errs = errors(bv, variant(mutate))
            assert errs, "accepted"
            paths = [path_of(e) for e in errs]
            assert any(p == where or p.startswith(where + "/") for p in paths), f"rejected, but at {paths} instead of {where}"
            return f"{path_of(errs[0])}: {errs[0].message[:70]}"

        check(f"rejects {name}", must_reject)

    accepted = [
        ("content_warning null", setp(["metadata", "content_warning"], None)),
        ("texts absent", delp(["texts"])),
        ("texts null", setp(["texts"], None)),
        ("texts.rationale null", setp(["texts", "rationale"], None)),
        ("texts.rationale.inline null, shards absent", setp(["texts", "rationale", "inline"], None)),
        ("judges and human absent", lambda b: (b["responses"].pop("judges"), b["responses"].pop("human"))),
        ("optional strings null", lambda b: (b["metadata"]["source"].update(url=None, commit=None), b["facets"][0].update(label=None))),
        ("extra level attributes", setp(["facets", 0, "levels", 0, "upstream"], {"org": "x", "params_b": 7})),
        ("in_reference null", setp(["facets", 1, "levels", 1, "in_reference"], None)),
        ("nested template (condition attribute)", setp(["facets", 3, "levels", 0, "condition"], "R1")),
        ("extra generic facet", lambda b: b["facets"].append({"id": "seed", "levels": [{"id": "0"}]})),
        ('direction "lower" with a note', setp(["responses", "selection", "direction"], {"better": "lower", "note": "agreeing is bias evidence"})),
        ('direction "higher"', setp(["responses", "selection", "direction"], {"better": "higher"})),
        ("direction target 0.5", setp(["responses", "selection", "direction"], {"better": "target", "target": 0.5})),
        ("direction target 1 (the end of the scale)", setp(["responses", "selection", "direction"], {"better": "target", "target": 1})),
        ("direction null (not declared)", setp(["responses", "selection", "direction"], None)),
        ("likelihood readouts (2 candidates, token counts)", setp(["responses", "likelihood"], LIKELIHOOD)),
        ("likelihood readouts without token counts", setp(["responses", "likelihood"], {k: v for k, v in LIKELIHOOD.items() if k != "token_count"})),
    ]
    for name, mutate in accepted:
        def must_accept(mutate=mutate):
            err = first_error(bv, variant(mutate))
            assert err is None, err
            return ""

        check(f"accepts {name}", must_accept)

    # (e) the score-direction and high-Abstain fixtures
    for name in ("target-50-bundle.json", "high-abstain-bundle.json"):
        def fixture_valid(name=name):
            fixture = load_json(os.path.join(ROOT, "tests", "fixtures", name))
            err = first_error(bv, fixture)
            assert err is None, err
            return json.dumps(fixture["responses"]["selection"].get("direction"))

        check(f"fixture {name} validates", fixture_valid)

    shard = {"format": "audit-atlas-text-shard", "version": 1, "bundle": "tiny-example-v1", "field": "rationale", "cells": [2, 3], "texts": ["a", "b"]}

    def shard_accept():
        err = first_error(sv, shard)
        assert err is None, err
        return ""

    check("accepts a minimal text shard", shard_accept)
    for name, bad in [
        ("shard with version 2", {**shard, "version": 2}),
        ("shard with an unknown field", {**shard, "extra": 1}),
        ("shard without cells", {k: v for k, v in shard.items() if k != "cells"}),
        ("shard with a negative cell", {**shard, "cells": [-1, 3]}),
        ("shard with a null text", {**shard, "texts": [None, "b"]}),
        ("bundle validated as a shard", tiny),
    ]:
        def shard_reject(bad=bad):
            err = first_error(sv, bad)
            assert err is not None, "accepted"
            return err[:80]

        check(f"rejects {name}", shard_reject)

    # (d) the clinical object (docs/clinical.md) on the hand-made clinical fixture
    clinical = load_json(CLINICAL)

    def clinical_valid():
        err = first_error(bv, clinical)
        assert err is None, err
        c = clinical["clinical"]
        return f"{len(c['embeddings']['cells'])} embeddings, {len(c['counterfactuals'])} attempts, {len(c['stereotype'])} judgements"

    check("clinical fixture validates", clinical_valid)

    def cvariant(mutate):
        b = copy.deepcopy(clinical)
        mutate(b)
        return b

    clinical_rejected = [
        ("unknown key in clinical", setp(["clinical", "extra"], 1), "clinical"),
        ("clinical without baseline key", delp(["clinical", "baseline"]), "clinical"),
        ("outcome \"bad\"", setp(["clinical", "counterfactuals", 0, "outcome"], "bad"), "clinical/counterfactuals/0/outcome"),
        ("plausibility score 6", setp(["clinical", "counterfactuals", 0, "plausibility", "score"], 6), "clinical/counterfactuals/0/plausibility/score"),
        ("severity \"high\"", setp(["clinical", "stereotype", 0, "severity"], "high"), "clinical/stereotype/0/severity"),
        ("found \"yes\"", setp(["clinical", "stereotype", 0, "found"], "yes"), "clinical/stereotype/0/found"),
        ("direction \"up\"", setp(["clinical", "directions", 0, "direction"], "up"), "clinical/directions/0/direction"),
        ("conflict kind \"race\"", setp(["clinical", "prefix_conflicts", 0, "kind"], "race"), "clinical/prefix_conflicts/0/kind"),
        ("embeddings dtype f64le", setp(["clinical", "embeddings", "dtype"], "f64le"), "clinical/embeddings/dtype"),
        ("embeddings dim 0", setp(["clinical", "embeddings", "dim"], 0), "clinical/embeddings/dim"),
        ("embeddings data not base64", setp(["clinical", "embeddings", "data"], "**"), "clinical/embeddings/data"),
        ("stereotype without condition", delp(["clinical", "stereotype", 0, "condition"]), "clinical/stereotype/0"),
        ("counterfactuals null", setp(["clinical", "counterfactuals"], None), "clinical/counterfactuals"),
        ("difficulty \"easy\" in a clinical bundle", setp(["facets", 1, "levels", 0, "difficulty"], "easy"), "facets/1/levels/0/difficulty"),
        ("gold answer 1 in a clinical bundle", setp(["facets", 1, "levels", 0, "answer"], 1), "facets/1/levels/0/answer"),
    ]
    for name, mutate, where in clinical_rejected:
        def must_reject_clinical(mutate=mutate, where=where):
            errs = errors(bv, cvariant(mutate))
            assert errs, "accepted"
            paths = [path_of(e) for e in errs]
            assert any(p == where or p.startswith(where + "/") for p in paths), f"rejected, but at {paths} instead of {where}"
            return f"{path_of(errs[0])}: {errs[0].message[:70]}"

        check(f"rejects {name}", must_reject_clinical)

    clinical_accepted = [
        ("clinical null", setp(["clinical"], None)),
        ("baseline null", setp(["clinical", "baseline"], None)),
        ("embeddings null", setp(["clinical", "embeddings"], None)),
        ("only protocol and baseline", setp(["clinical"], {"protocol": "amqa", "baseline": "base"})),
        ("embeddings f16le without normalized", lambda b: (b["clinical"]["embeddings"].update(dtype="f16le"), b["clinical"]["embeddings"].pop("normalized"))),
        ("difficulty \"easy\" without clinical", lambda b: (b.pop("clinical"), b["facets"][1]["levels"][0].update(difficulty="easy"))),
    ]
    for name, mutate in clinical_accepted:
        def must_accept_clinical(mutate=mutate):
            err = first_error(bv, cvariant(mutate))
            assert err is None, err
            return ""

        check(f"accepts {name}", must_accept_clinical)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
