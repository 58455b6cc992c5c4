"""Writes one of the test models of test/python/onnx_models.py for a lit test.

Usage: make_model.py NAME OUT.onnx [MUTATION]

NAME is a builder of onnx_models (mlp, attention, loop, if_model, scan,
optional_inputs, big_weights, custom_domain, ...); MUTATION breaks the model
for the error tests. Models are generated, not committed, so that no binary
file needs review.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import onnx_models as om  # noqa: E402


def mutate(model, mutation):
    if mutation == "opset999":
        model.opset_import[0].version = 999
    elif mutation == "loop-body-inputs":
        del model.graph.node[0].attribute[0].g.input[0]
    elif mutation == "undefined-input":
        model.graph.node[1].input[0] = "nowhere"
    elif mutation == "truncate":
        return model.SerializeToString()[:100]
    elif mutation:
        raise SystemExit(f"unknown mutation {mutation}")
    return model


def main():
    name, out = sys.argv[1], Path(sys.argv[2])
    mutation = sys.argv[3] if len(sys.argv) > 3 else ""
    case = getattr(om, name)()
    if case.external:
        case.name = out.stem
        om.save(case, out.parent)
        return
    result = mutate(case.model, mutation)
    out.write_bytes(result if isinstance(result, bytes) else result.SerializeToString())


if __name__ == "__main__":
    main()
