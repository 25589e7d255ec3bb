#!/usr/bin/python3
"""The ai.onnx.ml kernels and the scikit-learn exporter, end to end through onnxlens-cli.

Part 1 builds a one-node model per operator (onnx.helper), runs it with `onnxlens-cli run --out`
and compares every output with values computed here independently (numpy, scipy), including
string labels, maps (DictVectorizer, CastMap) and sequences of maps (ZipMap), which also checks
that maps are read and written as MapProto / SequenceProto test data.

Part 2 fits tiny scikit-learn pipelines, exports them with `onnxlens-cli export --sklearn` and
requires the export report to pass: labels equal to predict() exactly, probabilities (or values)
within 1e-5 of predict_proba() (predict()); and an estimator the exporter does not know must fail
with its name in the error.

usage: ml_ops_check.py --cli PATH [--only SUBSTRING]
"""
import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("skipped: numpy or onnx is not installed for", sys.executable)
    sys.exit(77)

FAILURES = []


def fail(case, message):
    FAILURES.append(f"{case}: {message}")
    print(f"FAIL {case}: {message}")


# ---- part 1: one operator at a time ---------------------------------------------------------------


def tensor_type(elem, shape=None):
    return helper.make_tensor_type_proto(elem, shape)


def map_type(key, value_elem):
    t = onnx.TypeProto()  # onnx 1.12 has no helper.make_map_type_proto
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(tensor_type(value_elem, []))
    return t


def seq_map_type(key, value_elem):
    return helper.make_sequence_type_proto(map_type(key, value_elem))


def map_proto(d, name=""):
    """A MapProto (onnx 1.12's numpy_helper.from_dict refuses string keys)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.MapProto(name=name)
    keys = list(d)
    if keys and isinstance(keys[0], str):
        m.key_type = onnx.TensorProto.STRING
        m.string_keys.extend(k.encode() for k in keys)
    else:
        m.key_type = onnx.TensorProto.INT64
        m.keys.extend(int(k) for k in keys)
    m.values.elem_type = onnx.SequenceProto.TENSOR
    m.values.tensor_values.extend(numpy_helper.from_array(np.asarray(d[k])) for k in keys)
    return m


def run_node(cli, work, case, op, inputs, outputs, attrs, ml_opset=3):
    """inputs: [(name, TypeProto, value)], outputs: [(name, TypeProto)]. Returns the outputs."""
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _ in outputs], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], case, [helper.make_value_info(n, t) for n, t, _ in inputs],
                              [helper.make_value_info(n, t) for n, t in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                    helper.make_opsetid("ai.onnx.ml", ml_opset)])
    model.ir_version = 8
    folder = os.path.join(work, case)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(model, path)
    args = [cli, "run", path, "--out", os.path.join(folder, "out")]
    for name, t, value in inputs:
        file = os.path.join(folder, f"{name}.pb")
        if t.HasField("map_type"):
            message = map_proto(value, name)
        else:
            message = numpy_helper.from_array(value, name)
        with open(file, "wb") as f:
            f.write(message.SerializeToString())
        args += ["--input", f"{name}={file}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        fail(case, f"onnxlens-cli run failed: {done.stderr.strip()}")
        return None
    results = []
    for k, (name, t) in enumerate(outputs):
        with open(os.path.join(folder, "out", f"output_{k}.pb"), "rb") as f:
            data = f.read()
        if t.HasField("sequence_type"):
            seq = onnx.SequenceProto()
            seq.ParseFromString(data)
            results.append([map_to_dict(m) for m in seq.map_values])
        elif t.HasField("map_type"):
            m = onnx.MapProto()
            m.ParseFromString(data)
            results.append(map_to_dict(m))
        else:
            tp = onnx.TensorProto()
            tp.ParseFromString(data)
            array = numpy_helper.to_array(tp)
            results.append(array.astype(str) if array.dtype == object else array)
    return results


def map_to_dict(m):
    keys = [k.decode() for k in m.string_keys] if m.key_type == TensorProto.STRING else list(m.keys)
    values = [numpy_helper.to_array(t).reshape(()).item() for t in m.values.tensor_values]
    return dict(zip(keys, values))


def expect_close(case, got, expected, atol=1e-5):
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        fail(case, f"shape {got.shape}, expected {expected.shape}")
    elif expected.dtype.kind in "OUS" or got.dtype.kind in "OUS":
        if not np.array_equal(got.astype(str), expected.astype(str)):
            fail(case, f"{got.tolist()} != {expected.tolist()}")
    elif not np.allclose(got, expected, atol=atol, rtol=1e-5, equal_nan=True):
        fail(case, f"max abs error {np.nanmax(np.abs(got - expected)):.3g}\n  got {got.tolist()}\n  expected {expected.tolist()}")


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def logistic(z):
    return 1 / (1 + np.exp(-z))


FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64
STRING = TensorProto.STRING


def operator_cases(cli, work):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 4)).astype(np.float32)
    x_in = [("X", tensor_type(FLOAT, [5, 4]), X)]

    # LinearClassifier: three classes with string labels and SOFTMAX; the binary one-row form.
    W = rng.standard_normal((3, 4))
    b = rng.standard_normal(3)
    out = run_node(cli, work, "linear_classifier_softmax", "LinearClassifier", x_in,
                   [("Y", tensor_type(STRING)), ("Z", tensor_type(FLOAT))],
                   dict(coefficients=W.ravel().tolist(), intercepts=b.tolist(), post_transform="SOFTMAX",
                        classlabels_strings=["ant", "bee", "cow"]))
    if out:
        scores = X.astype(np.float64) @ W.T + b
        expect_close("linear_classifier_softmax.Y", out[0], np.array(["ant", "bee", "cow"])[scores.argmax(1)])
        expect_close("linear_classifier_softmax.Z", out[1], softmax(scores))
    out = run_node(cli, work, "linear_classifier_binary", "LinearClassifier", x_in,
                   [("Y", tensor_type(INT64)), ("Z", tensor_type(FLOAT))],
                   dict(coefficients=W[0].tolist(), intercepts=[0.25], post_transform="LOGISTIC",
                        classlabels_ints=[4, 9]))
    if out:
        s = X.astype(np.float64) @ W[0] + 0.25
        expect_close("linear_classifier_binary.Y", out[0], np.where(s > 0, 9, 4))
        expect_close("linear_classifier_binary.Z", out[1], np.stack([logistic(-s), logistic(s)], 1))

    out = run_node(cli, work, "linear_regressor", "LinearRegressor", x_in, [("Y", tensor_type(FLOAT))],
                   dict(coefficients=W[:2].ravel().tolist(), intercepts=b[:2].tolist(), targets=2))
    if out:
        expect_close("linear_regressor", out[0], X.astype(np.float64) @ W[:2].T + b[:2])

    for norm in ("MAX", "L1", "L2"):
        out = run_node(cli, work, f"normalizer_{norm}", "Normalizer", x_in, [("Y", tensor_type(FLOAT))], dict(norm=norm))
        if out:
            Xd = X.astype(np.float64)
            n = {"MAX": Xd.max(1), "L1": np.abs(Xd).sum(1), "L2": np.sqrt((Xd ** 2).sum(1))}[norm]
            expect_close(f"normalizer_{norm}", out[0], Xd / n[:, None])

    out = run_node(cli, work, "scaler", "Scaler", x_in, [("Y", tensor_type(FLOAT))],
                   dict(offset=[0.5, -1, 0, 2], scale=[2, 0.5, 1, -1]))
    if out:
        expect_close("scaler", out[0], (X - np.array([0.5, -1, 0, 2])) * np.array([2, 0.5, 1, -1]))

    out = run_node(cli, work, "binarizer", "Binarizer", x_in, [("Y", tensor_type(FLOAT))], dict(threshold=0.3))
    if out:
        expect_close("binarizer", out[0], (X > 0.3).astype(np.float32))

    Xn = X.copy()
    Xn[1, 2] = np.nan
    Xn[3, 0] = np.nan
    out = run_node(cli, work, "imputer", "Imputer", [("X", tensor_type(FLOAT, [5, 4]), Xn)], [("Y", tensor_type(FLOAT))],
                   dict(imputed_value_floats=[10.0, 20.0, 30.0, 40.0], replaced_value_float=float("nan")))
    if out:
        expect_close("imputer", out[0], np.where(np.isnan(Xn), np.array([10, 20, 30, 40.0]), Xn))

    out = run_node(cli, work, "array_feature_extractor", "ArrayFeatureExtractor",
                   x_in + [("I", tensor_type(INT64, [2]), np.array([3, 1], dtype=np.int64))], [("Z", tensor_type(FLOAT))], {})
    if out:
        expect_close("array_feature_extractor", out[0], X[:, [3, 1]])

    A = rng.standard_normal((5, 2)).astype(np.float32)
    out = run_node(cli, work, "feature_vectorizer", "FeatureVectorizer",
                   x_in + [("A", tensor_type(FLOAT, [5, 2]), A)], [("Y", tensor_type(FLOAT))], dict(inputdimensions=[3, 4]))
    if out:
        expect_close("feature_vectorizer", out[0], np.concatenate([X[:, :3], A, np.zeros((5, 2))], 1))

    cats = np.array([[1, 5], [7, 1]], dtype=np.int64)
    out = run_node(cli, work, "one_hot_encoder", "OneHotEncoder", [("C", tensor_type(INT64, [2, 2]), cats)],
                   [("Y", tensor_type(FLOAT))], dict(cats_int64s=[1, 5, 9]))
    if out:
        expect_close("one_hot_encoder", out[0], (cats[..., None] == np.array([1, 5, 9])).astype(np.float32))

    words = np.array(["b", "zz", "a", "c"], dtype=object)
    out = run_node(cli, work, "label_encoder", "LabelEncoder", [("S", tensor_type(STRING, [4]), words)],
                   [("Y", tensor_type(INT64))], dict(keys_strings=["a", "b", "c"], values_int64s=[10, 20, 30], default_int64=-7))
    if out:
        expect_close("label_encoder", out[0], np.array([20, -7, 10, 30]))
    out = run_node(cli, work, "label_encoder_float_to_string", "LabelEncoder",
                   [("F", tensor_type(FLOAT, [3]), np.array([0.5, 2.0, 1.5], dtype=np.float32))], [("Y", tensor_type(STRING))],
                   dict(keys_floats=[0.5, 1.5], values_strings=["half", "one and a half"], default_string="?"))
    if out:
        expect_close("label_encoder_float_to_string", out[0], np.array(["half", "?", "one and a half"]))

    out = run_node(cli, work, "category_mapper", "CategoryMapper", [("S", tensor_type(STRING, [4]), words)],
                   [("Y", tensor_type(INT64))], dict(cats_strings=["a", "b", "c"], cats_int64s=[3, 4, 5]))
    if out:
        expect_close("category_mapper", out[0], np.array([4, -1, 3, 5]))
    out = run_node(cli, work, "category_mapper_reverse", "CategoryMapper",
                   [("I", tensor_type(INT64, [3]), np.array([5, 8, 3], dtype=np.int64))], [("Y", tensor_type(STRING))],
                   dict(cats_strings=["a", "b", "c"], cats_int64s=[3, 4, 5], default_string="none"))
    if out:
        expect_close("category_mapper_reverse", out[0], np.array(["c", "none", "a"]))

    P = softmax(X[:, :3].astype(np.float64)).astype(np.float32)
    out = run_node(cli, work, "zipmap_strings", "ZipMap", [("P", tensor_type(FLOAT, [5, 3]), P)],
                   [("Z", seq_map_type(STRING, FLOAT))], dict(classlabels_strings=["x", "y", "z"]))
    if out:
        expected = [{"x": r[0], "y": r[1], "z": r[2]} for r in P.tolist()]
        if len(out[0]) != 5 or any(set(g) != set(e) or any(abs(g[k] - e[k]) > 1e-7 for k in e)
                                   for g, e in zip(out[0], expected)):
            fail("zipmap_strings", f"{out[0]} != {expected}")
    out = run_node(cli, work, "zipmap_ints", "ZipMap", [("P", tensor_type(FLOAT, [5, 3]), P)],
                   [("Z", seq_map_type(INT64, FLOAT))], dict(classlabels_int64s=[10, 20, 30]))
    if out and [sorted(m) for m in out[0]] != [[10, 20, 30]] * 5:
        fail("zipmap_ints", f"keys {out[0]}")

    out = run_node(cli, work, "dict_vectorizer", "DictVectorizer",
                   [("M", map_type(STRING, FLOAT), {"c": np.float32(8.0), "a": np.float32(4.0)})],
                   [("Y", tensor_type(FLOAT))], dict(string_vocabulary=["a", "c", "b", "z"]))
    if out:
        expect_close("dict_vectorizer", out[0], np.array([[4.0, 8.0, 0.0, 0.0]]))

    m = {5: np.float32(1.5), 2: np.float32(-3.0), 0: np.float32(7.0)}
    out = run_node(cli, work, "cast_map_dense", "CastMap", [("M", map_type(INT64, FLOAT), m)], [("Y", tensor_type(FLOAT))],
                   dict(cast_to="TO_FLOAT", map_form="DENSE"))
    if out:
        expect_close("cast_map_dense", out[0], np.array([[7.0, -3.0, 1.5]]))
    out = run_node(cli, work, "cast_map_sparse", "CastMap", [("M", map_type(INT64, FLOAT), m)], [("Y", tensor_type(INT64))],
                   dict(cast_to="TO_INT64", map_form="SPARSE", max_map=7))
    if out:
        expect_close("cast_map_sparse", out[0], np.array([[7, 0, -3, 0, 0, 1, 0]]))

    tree_cases(cli, work, rng)
    svm_cases(cli, work, rng)


# Two hand-written trees over 3 features using every branch mode and a missing-value track; the
# expected values come from the small traversal below, written for this test.
TREES = {
    # (tree, node): (mode, feature, threshold, true, false, missing_true)
    (0, 0): ("BRANCH_LEQ", 0, 0.0, 1, 2, 1),
    (0, 1): ("BRANCH_LT", 1, 0.5, 3, 4, 0),
    (0, 2): ("LEAF",),
    (0, 3): ("LEAF",),
    (0, 4): ("BRANCH_GTE", 2, -0.25, 5, 6, 0),
    (0, 5): ("LEAF",),
    (0, 6): ("LEAF",),
    (1, 0): ("BRANCH_GT", 2, 0.1, 1, 2, 0),
    (1, 1): ("BRANCH_EQ", 0, 1.0, 3, 4, 0),
    (1, 2): ("BRANCH_NEQ", 1, 2.0, 5, 6, 0),
    (1, 3): ("LEAF",),
    (1, 4): ("LEAF",),
    (1, 5): ("LEAF",),
    (1, 6): ("LEAF",),
}


def tree_attrs(leaf_weights, prefix):
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_modes", "nodes_featureids", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true")}
    w = {f"{prefix}_{k}": [] for k in ("treeids", "nodeids", "ids", "weights")}
    for (t, n), spec in TREES.items():
        a["nodes_treeids"].append(t)
        a["nodes_nodeids"].append(n)
        a["nodes_modes"].append(spec[0])
        leaf = spec[0] == "LEAF"
        a["nodes_featureids"].append(0 if leaf else spec[1])
        a["nodes_values"].append(0.0 if leaf else spec[2])
        a["nodes_truenodeids"].append(0 if leaf else spec[3])
        a["nodes_falsenodeids"].append(0 if leaf else spec[4])
        a["nodes_missing_value_tracks_true"].append(0 if leaf else spec[5])
        if leaf:
            for target, weight in leaf_weights[(t, n)]:
                w[f"{prefix}_treeids"].append(t)
                w[f"{prefix}_nodeids"].append(n)
                w[f"{prefix}_ids"].append(target)
                w[f"{prefix}_weights"].append(weight)
    a.update(w)
    return a


def traverse(tree, row):
    node = 0
    while True:
        spec = TREES[(tree, node)]
        if spec[0] == "LEAF":
            return node
        mode, f, v, t, fa, missing = spec
        x = row[f]
        v = np.float32(v)
        if np.isnan(x):
            taken = bool(missing) or mode == "BRANCH_NEQ"
        else:
            taken = {"BRANCH_LEQ": x <= v, "BRANCH_LT": x < v, "BRANCH_GTE": x >= v, "BRANCH_GT": x > v,
                     "BRANCH_EQ": x == v, "BRANCH_NEQ": x != v}[mode]
        node = t if taken else fa


def tree_cases(cli, work, rng):
    X = rng.standard_normal((40, 3)).astype(np.float32)
    X[:4, 0] = 1.0  # BRANCH_EQ hits
    X[4:8, 1] = 2.0  # BRANCH_NEQ misses
    X[8, 0] = np.nan  # the missing-value track
    X[9, 0] = 0.0  # threshold equality for BRANCH_LEQ
    leaves = [k for k, s in TREES.items() if s[0] == "LEAF"]
    x_in = [("X", tensor_type(FLOAT, [40, 3]), X)]

    # Regressor: two targets, each aggregate, base values.
    weights = {k: [(0, float(rng.integers(-8, 9)) / 4), (1, float(rng.integers(-8, 9)) / 4)] for k in leaves}
    per_tree = np.array([[dict(weights[(t, traverse(t, r))])[j] for j in (0, 1)] for r in X for t in (0, 1)]).reshape(40, 2, 2)
    base = np.array([0.5, -1.0])
    for aggregate, combine in (("SUM", lambda v: v.sum(1)), ("AVERAGE", lambda v: v.mean(1)),
                               ("MIN", lambda v: v.min(1)), ("MAX", lambda v: v.max(1))):
        out = run_node(cli, work, f"tree_regressor_{aggregate}", "TreeEnsembleRegressor", x_in, [("Y", tensor_type(FLOAT))],
                       dict(tree_attrs(weights, "target"), n_targets=2, aggregate_function=aggregate, base_values=base.tolist()))
        if out:
            expect_close(f"tree_regressor_{aggregate}", out[0], combine(per_tree) + base)

    # Classifier: three classes, every post transform.
    cw = {k: [(c, float(rng.integers(0, 5)) / 4) for c in range(3)] for k in leaves}
    sums = np.zeros((40, 3))
    for i, r in enumerate(X):
        for t in (0, 1):
            for c, w in cw[(t, traverse(t, r))]:
                sums[i, c] += w
    from math import erf  # noqa: F401  (scipy gives the inverse)
    try:
        from scipy.special import erfinv
    except ImportError:
        erfinv = None
    for transform in ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"):
        if transform == "PROBIT" and erfinv is None:
            continue
        out = run_node(cli, work, f"tree_classifier_{transform}", "TreeEnsembleClassifier", x_in,
                       [("Y", tensor_type(STRING)), ("Z", tensor_type(FLOAT))],
                       dict(tree_attrs(cw, "class"), classlabels_strings=["r", "g", "b"], post_transform=transform))
        if not out:
            continue
        z = sums.copy()
        if transform == "SOFTMAX":
            z = softmax(z)
        elif transform == "LOGISTIC":
            z = logistic(z)
        elif transform == "SOFTMAX_ZERO":
            e = np.where(z != 0, np.exp(z - np.max(np.where(z != 0, z, -np.inf), 1, keepdims=True)), 0)
            z = e / e.sum(1, keepdims=True)
        elif transform == "PROBIT":
            z = np.sqrt(2) * erfinv(2 * np.clip(z, 0, 1) - 1)
        expect_close(f"tree_classifier_{transform}.Y", out[0], np.array(["r", "g", "b"])[sums.argmax(1)])
        if transform != "PROBIT":
            expect_close(f"tree_classifier_{transform}.Z", out[1], z)
        else:
            finite = np.isfinite(z)
            expect_close("tree_classifier_PROBIT.Z", np.asarray(out[1])[finite], z[finite], atol=1e-4)

    # Binary form: one margin per leaf (class id 0 only), base value, LOGISTIC: [1 - p, p].
    mw = {k: [(0, float(rng.integers(-8, 9)) / 4)] for k in leaves}
    margin = np.array([sum(dict(mw[(t, traverse(t, r))])[0] for t in (0, 1)) for r in X]) + 0.3
    out = run_node(cli, work, "tree_classifier_binary", "TreeEnsembleClassifier", x_in,
                   [("Y", tensor_type(INT64)), ("Z", tensor_type(FLOAT))],
                   dict(tree_attrs(mw, "class"), classlabels_int64s=[0, 1], base_values=[0.3], post_transform="LOGISTIC"))
    if out:
        expect_close("tree_classifier_binary.Y", out[0], (margin > 0).astype(np.int64))
        expect_close("tree_classifier_binary.Z", out[1], np.stack([logistic(-margin), logistic(margin)], 1))


def svm_cases(cli, work, rng):
    X = rng.standard_normal((6, 3)).astype(np.float32)
    Xd = X.astype(np.float64)
    x_in = [("X", tensor_type(FLOAT, [6, 3]), X)]
    sv = rng.standard_normal((4, 3)).astype(np.float32)
    coef = rng.standard_normal(4).astype(np.float32)
    gamma, coef0, degree = 0.5, 1.0, 2.0
    kernels = {
        "LINEAR": lambda a, b: a @ b.T,
        "POLY": lambda a, b: (gamma * (a @ b.T) + coef0) ** degree,
        "RBF": lambda a, b: np.exp(-gamma * ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)),
        "SIGMOID": lambda a, b: np.tanh(gamma * (a @ b.T) + coef0),
    }
    for name, k in kernels.items():
        out = run_node(cli, work, f"svm_regressor_{name}", "SVMRegressor", x_in, [("Y", tensor_type(FLOAT))],
                       dict(kernel_type=name, kernel_params=[gamma, coef0, degree], support_vectors=sv.ravel().tolist(),
                            coefficients=coef.tolist(), rho=[0.25], n_supports=4))
        if out:
            expect_close(f"svm_regressor_{name}", out[0], (k(Xd, sv.astype(np.float64)) @ coef + 0.25)[:, None], atol=1e-4)
    out = run_node(cli, work, "svm_regressor_one_class", "SVMRegressor", x_in, [("Y", tensor_type(FLOAT))],
                   dict(kernel_type="RBF", kernel_params=[gamma, 0, 0], support_vectors=sv.ravel().tolist(),
                        coefficients=coef.tolist(), rho=[0.1], n_supports=4, one_class=1))
    if out:
        expect_close("svm_regressor_one_class", out[0],
                     np.where(kernels["RBF"](Xd, sv.astype(np.float64)) @ coef + 0.1 > 0, 1.0, -1.0)[:, None])

    # One-vs-one votes over three classes, support vectors split 1, 2, 1.
    dual = rng.standard_normal((2, 4)).astype(np.float32)
    rho = rng.standard_normal(3).astype(np.float32)
    out = run_node(cli, work, "svm_classifier_votes", "SVMClassifier", x_in,
                   [("Y", tensor_type(STRING)), ("Z", tensor_type(FLOAT))],
                   dict(kernel_type="RBF", kernel_params=[gamma, 0, 0], support_vectors=sv.ravel().tolist(),
                        vectors_per_class=[1, 2, 1], coefficients=dual.ravel().tolist(), rho=rho.tolist(),
                        classlabels_strings=["p", "q", "s"]))
    if out:
        K = kernels["RBF"](Xd, sv.astype(np.float64))
        start = [0, 1, 3, 4]
        labels, decisions = [], []
        for r in range(6):
            votes, pair, row = [0, 0, 0], 0, []
            for i in range(3):
                for j in range(i + 1, 3):
                    d = rho[pair] + sum(dual[j - 1, v] * K[r, v] for v in range(start[i], start[i + 1])) \
                        + sum(dual[i, v] * K[r, v] for v in range(start[j], start[j + 1]))
                    votes[i if d > 0 else j] += 1
                    row.append(d)
                    pair += 1
            labels.append("pqs"[int(np.argmax(votes))])
            decisions.append(row)
        expect_close("svm_classifier_votes.Y", out[0], np.array(labels))
        expect_close("svm_classifier_votes.Z", out[1], np.array(decisions), atol=1e-4)


# ---- part 2: exported scikit-learn pipelines ------------------------------------------------------


def pipeline_cases(cli, work):
    try:
        import sklearn  # noqa: F401
    except ImportError:
        print("skipped part 2: scikit-learn is not installed for", sys.executable)
        return
    from sklearn.compose import ColumnTransformer
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
                                  GradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor)
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler
    from sklearn.svm import SVC, SVR, LinearSVC
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    X3, y3 = make_classification(160, 5, n_informative=3, n_classes=3, random_state=0)
    X2, y2 = make_classification(160, 5, random_state=1)
    Xr, yr = make_regression(160, 5, noise=1.0, random_state=2)
    names = np.array(["setosa", "versicolor", "virginica"])[y3]
    Xc = X3.copy()
    Xc[:, 0] = np.random.default_rng(0).integers(0, 4, len(Xc))
    Xc[::17, 3] = np.nan
    cases = {
        "logistic_ovr_strings": (Pipeline([("s", StandardScaler()), ("m", LogisticRegression(multi_class="ovr"))]), X3, names),
        "logistic_binary": (LogisticRegression(), X2, y2),
        "linear_svc": (Pipeline([("mm", MinMaxScaler()), ("m", LinearSVC(max_iter=5000))]), X3, y3),
        "svc_rbf_proba": (SVC(probability=True, random_state=0), X3, names),
        "svc_linear_binary": (SVC(kernel="linear", probability=True, random_state=0), X2, y2),
        "decision_tree": (DecisionTreeClassifier(max_depth=6, random_state=0), X3, y3),
        "random_forest": (RandomForestClassifier(15, max_depth=8, random_state=0), X3, names),
        "extra_trees_binary": (ExtraTreesClassifier(10, random_state=0), X2, y2),
        "gradient_boosting": (GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0), X3, y3),
        "gradient_boosting_binary": (GradientBoostingClassifier(n_estimators=15, random_state=0), X2, y2),
        "column_transformer": (Pipeline([
            ("ct", ColumnTransformer([("onehot", OneHotEncoder(handle_unknown="ignore"), [0]),
                                      ("num", Pipeline([("imp", SimpleImputer()), ("sc", StandardScaler())]), [1, 2, 3]),
                                      ("norm", Normalizer(norm="max"), [4])])),
            ("m", RandomForestClassifier(10, random_state=0))]), Xc, y3),
        "linear_regression": (Pipeline([("n", Normalizer()), ("m", LinearRegression())]), Xr, yr),
        "ridge": (Ridge(alpha=0.5), Xr, yr),
        "svr": (Pipeline([("s", StandardScaler()), ("m", SVR(C=10.0))]), Xr, yr),
        "decision_tree_regressor": (DecisionTreeRegressor(max_depth=5, random_state=0), Xr, yr),
        "random_forest_regressor": (RandomForestRegressor(10, max_depth=6, random_state=0), Xr, yr),
        "extra_trees_regressor": (ExtraTreesRegressor(8, max_depth=6, random_state=0), Xr, yr),
        "gradient_boosting_regressor": (GradientBoostingRegressor(n_estimators=20, random_state=0), Xr, yr),
    }
    for name, (model, X, y) in cases.items():
        model.fit(X, y)
        folder = os.path.join(work, "export", name)
        os.makedirs(folder, exist_ok=True)
        pkl = os.path.join(folder, "pipeline.pkl")
        with open(pkl, "wb") as f:
            pickle.dump(model, f)
        done = subprocess.run([cli, "export", "--sklearn", pkl, "--input-shape", f"100,{X.shape[1]}",
                               "--out", os.path.join(folder, "onnx"), "--json"], capture_output=True, text=True)
        try:
            report = json.loads(done.stdout)
        except json.JSONDecodeError:
            fail(f"export.{name}", f"exit {done.returncode}: {done.stderr.strip()[-400:]}")
            continue
        if not report.get("passed") or report.get("label_mismatches", 0) != 0:
            lines = "; ".join(f"{l['title']}: {l['status']} {l['figure']}" for l in report.get("lines", []))
            fail(f"export.{name}", lines or done.stderr.strip()[-400:])
        else:
            print(f"ok   export.{name}: {report.get('rows')} rows, max probability/value error "
                  f"{report.get('max_probability_error', 0):.2g}")

    # An estimator the exporter does not know is named in the error.
    model = KNeighborsClassifier(3).fit(X3, y3)
    pkl = os.path.join(work, "export", "knn.pkl")
    with open(pkl, "wb") as f:
        pickle.dump(model, f)
    done = subprocess.run([cli, "export", "--sklearn", pkl, "--input-shape", "10,5", "--out",
                           os.path.join(work, "export", "knn")], capture_output=True, text=True)
    if done.returncode != 2 or "KNeighborsClassifier" not in done.stderr:
        fail("export.unsupported", f"exit {done.returncode}, stderr: {done.stderr.strip()}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--skip-export", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="onnxlens_ml_") as work:
        operator_cases(args.cli, work)
        if not args.skip_export:
            pipeline_cases(args.cli, work)
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("every ai.onnx.ml check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
