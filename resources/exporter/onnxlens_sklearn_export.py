#!/usr/bin/python3
"""onnxlens's scikit-learn exporter: a fitted pipeline to ONNX (ai.onnx.ml), with scikit-learn's
own predictions as reference data.

Started by `onnxlens-cli export --sklearn PIPELINE.pkl` and by the GUI's export dialog as a
subprocess, beside onnxlens_export.py (the PyTorch exporter). No converter library is needed: the
conversion for each supported estimator is below. It writes into --out:

  model.onnx          input "input" float [N, F]; outputs "label" and, for classifiers with
                      predict_proba, "probabilities" [N, C] (regressors: "variable" [N, T])
  test_data_set_0/    input_0.pb (held-out rows) and scikit-learn's predict / predict_proba
  export.json         versions, opsets, the estimators converted, scikit-learn's throughput

Held-out rows come from --data FILE.npy, or are drawn (seeded) from what the pipeline knows of
its inputs: categories of one-hot encoded columns, means and scales of scalers, else N(0, 1).

A failure is one line "error: ..." and one line "hint: ..." on stderr and an exit code:
2 usage, 4 the pickle cannot be loaded, 5 an estimator cannot be converted, 6 other failures.
"""
import argparse
import json
import os
import pickle
import platform
import sys
import time
import traceback

EXIT_USAGE = 2
EXIT_LOAD_FAILED = 4
EXIT_UNSUPPORTED = 5
EXIT_FAILED = 6

ML_OPSET = 3
DEFAULT_OPSET = 15


class ExportFailure(Exception):
    def __init__(self, code, message, hint):
        super().__init__(message)
        self.code = code
        self.hint = hint


def log(message):
    print(message, flush=True)


class Unsupported(ExportFailure):
    def __init__(self, what):
        super().__init__(
            EXIT_UNSUPPORTED,
            f"cannot convert {what}",
            "supported: StandardScaler, MinMaxScaler, Normalizer, OneHotEncoder, SimpleImputer, "
            "LogisticRegression, LinearRegression, Ridge, LinearSVC, SVC, SVR, DecisionTree*, "
            "RandomForest*, ExtraTrees*, GradientBoosting* (classifiers and regressors), "
            "Pipeline and ColumnTransformer of those",
        )


# ---- graph building -------------------------------------------------------------------------


class Graph:
    def __init__(self):
        from onnx import helper

        self.helper = helper
        self.nodes = []
        self.initializers = []
        self.names = set()
        self.converted = []

    def name(self, base):
        n, k = base, 0
        while n in self.names:
            k += 1
            n = f"{base}_{k}"
        self.names.add(n)
        return n

    def node(self, op, inputs, outputs=1, domain="", **attrs):
        outs = [self.name(f"{op.lower()}_out") for _ in range(outputs)] if isinstance(outputs, int) else outputs
        self.nodes.append(
            self.helper.make_node(op, inputs, outs, name=self.name(op), domain=domain, **attrs))
        return outs if len(outs) > 1 else outs[0]

    def ml(self, op, inputs, outputs=1, **attrs):
        return self.node(op, inputs, outputs, domain="ai.onnx.ml", **attrs)

    def constant(self, base, array):
        from onnx import numpy_helper

        n = self.name(base)
        self.initializers.append(numpy_helper.from_array(array, n))
        return n


def class_labels(classes, what, ints_name="classlabels_int64s"):
    import numpy as np

    classes = np.asarray(classes)
    if classes.dtype.kind in "OUS":
        return {"classlabels_strings": [str(c) for c in classes]}, "strings"
    if classes.dtype.kind in "iub" or (classes.dtype.kind == "f" and np.all(np.floor(classes) == classes)):
        return {ints_name: [int(c) for c in classes]}, "ints"
    raise Unsupported(f"{what} with non-integer numeric class labels {classes[:4].tolist()}")


def tensor_attr(name, values, dtype):
    import numpy as np
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)


# ---- transformers: (graph, estimator, input name, feature count) -> (output name, feature count)


def convert_standard_scaler(g, est, x, n):
    import numpy as np

    offset = est.mean_ if est.with_mean and est.mean_ is not None else np.zeros(n)
    scale = 1.0 / est.scale_ if est.with_std and est.scale_ is not None else np.ones(n)
    return g.ml("Scaler", [x], offset=[float(v) for v in offset], scale=[float(v) for v in scale]), n


def convert_min_max_scaler(g, est, x, n):
    # X * scale_ + min_ == (X - (-min_ / scale_)) * scale_
    offset = -est.min_ / est.scale_
    out = g.ml("Scaler", [x], offset=[float(v) for v in offset], scale=[float(v) for v in est.scale_])
    if est.clip:
        lo = g.constant("clip_min", __import__("numpy").array(est.feature_range[0], dtype="float32"))
        hi = g.constant("clip_max", __import__("numpy").array(est.feature_range[1], dtype="float32"))
        out = g.node("Clip", [out, lo, hi])
    return out, n


def convert_normalizer(g, est, x, n):
    import numpy as np

    if est.norm in ("l1", "l2"):
        return g.ml("Normalizer", [x], norm=est.norm.upper()), n
    # scikit-learn's "max" divides by the largest absolute value (the ml Normalizer's MAX by the
    # largest value), and leaves an all-zero row as it is.
    norm = g.node("ReduceMax", [g.node("Abs", [x])], axes=[1], keepdims=1)
    zero = g.node("Equal", [norm, g.constant("zero", np.array(0, dtype=np.float32))])
    safe = g.node("Where", [zero, g.constant("one", np.array(1, dtype=np.float32)), norm])
    return g.node("Div", [x, safe]), n


def convert_simple_imputer(g, est, x, n):
    import numpy as np

    if est.add_indicator:
        raise Unsupported("SimpleImputer(add_indicator=True)")
    missing = est.missing_values
    if missing is not None and not (isinstance(missing, float) and np.isnan(missing)) and not isinstance(missing, (int, float)):
        raise Unsupported(f"SimpleImputer(missing_values={missing!r})")
    stats = np.asarray(est.statistics_, dtype=np.float64)
    if np.any(np.isnan(stats)):
        raise Unsupported("SimpleImputer with an all-missing column (scikit-learn drops it)")
    return g.ml("Imputer", [x], imputed_value_floats=[float(v) for v in stats],
                replaced_value_float=float(missing if missing is not None else np.nan)), n


def convert_one_hot_encoder(g, est, x, n):
    import numpy as np

    if est.drop is not None:
        raise Unsupported(f"OneHotEncoder(drop={est.drop!r})")
    if getattr(est, "infrequent_categories_", None) is not None and any(
            c is not None for c in est.infrequent_categories_):
        raise Unsupported("OneHotEncoder with infrequent categories")
    columns, width = [], 0
    for j, cats in enumerate(est.categories_):
        cats = np.asarray(cats)
        if cats.dtype.kind not in "iuf" or not np.all(np.floor(cats) == cats):
            raise Unsupported("OneHotEncoder on non-integer categories (the model input is float)")
        column = g.ml("ArrayFeatureExtractor", [x, g.constant("column", np.array([j], dtype=np.int64))])
        onehot = g.ml("OneHotEncoder", [column], cats_int64s=[int(c) for c in cats],
                      zeros=1 if est.handle_unknown == "ignore" else 0)
        columns.append(g.node("Reshape", [onehot, g.constant("shape", np.array([-1, len(cats)], dtype=np.int64))]))
        width += len(cats)
    out = columns[0] if len(columns) == 1 else g.node("Concat", columns, axis=1)
    return out, width


def convert_column_transformer(g, est, x, n):
    import numpy as np

    parts, width = [], 0
    for name, trans, cols in est.transformers_:
        if trans == "drop":
            continue
        idx = np.arange(n)[cols] if not isinstance(cols, (list, tuple, np.ndarray)) or len(cols) == 0 \
            or not isinstance(np.asarray(cols).flat[0], (str, np.str_)) else None
        if idx is None:
            names = list(getattr(est, "feature_names_in_", []))
            idx = np.array([names.index(c) for c in cols])
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if idx.dtype == bool:
            idx = np.nonzero(idx)[0]
        if len(idx) == 0:
            continue
        sub = g.ml("ArrayFeatureExtractor", [x, g.constant(f"{name}_columns", idx)])
        if trans == "passthrough":
            out, w = sub, len(idx)
        else:
            out, w = convert_transformer(g, trans, sub, len(idx))
        parts.append(out)
        width += w
    if not parts:
        raise Unsupported("a ColumnTransformer that drops every column")
    return (parts[0] if len(parts) == 1 else g.node("Concat", parts, axis=1)), width


def convert_pipeline_steps(g, steps, x, n):
    for _, step in steps:
        if step is None or step == "passthrough":
            continue
        x, n = convert_transformer(g, step, x, n)
    return x, n


TRANSFORMERS = {
    "StandardScaler": convert_standard_scaler,
    "MinMaxScaler": convert_min_max_scaler,
    "Normalizer": convert_normalizer,
    "SimpleImputer": convert_simple_imputer,
    "OneHotEncoder": convert_one_hot_encoder,
    "ColumnTransformer": convert_column_transformer,
}


def convert_transformer(g, est, x, n):
    kind = type(est).__name__
    if kind == "Pipeline":
        return convert_pipeline_steps(g, est.steps, x, n)
    if kind not in TRANSFORMERS:
        raise Unsupported(f"{kind} (as a transformer)")
    g.converted.append(kind)
    return TRANSFORMERS[kind](g, est, x, n)


# ---- final estimators: -> list of (output name, kind) with kind "label", "probabilities", "value"


def convert_logistic_regression(g, est, x, n):
    import numpy as np

    labels, _ = class_labels(est.classes_, "LogisticRegression", "classlabels_ints")
    coef, intercept = np.asarray(est.coef_, dtype=np.float64), np.asarray(est.intercept_, dtype=np.float64)
    multinomial = est.multi_class == "multinomial" or (
        est.multi_class == "auto" and len(est.classes_) > 2 and est.solver != "liblinear")
    if coef.shape[0] == 1:
        # Binary: scores [-s, s] give probabilities [1 - p, p] through the logistic.
        coef, intercept, transform = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept]), "LOGISTIC"
    else:
        transform = "SOFTMAX" if multinomial else "LOGISTIC"
    label, scores = g.ml("LinearClassifier", [x], 2, coefficients=[float(v) for v in coef.ravel()],
                         intercepts=[float(v) for v in intercept], post_transform=transform, multi_class=0, **labels)
    if transform == "LOGISTIC" and len(est.classes_) > 2:
        scores = g.ml("Normalizer", [scores], norm="L1")  # one-vs-rest: p_k / sum(p)
    return [(label, "label"), (scores, "probabilities")]


def convert_linear_svc(g, est, x, n):
    import numpy as np

    labels, _ = class_labels(est.classes_, "LinearSVC", "classlabels_ints")
    coef, intercept = np.asarray(est.coef_, dtype=np.float64), np.asarray(est.intercept_, dtype=np.float64)
    if coef.shape[0] == 1:
        coef, intercept = np.vstack([-coef, coef]), np.concatenate([-intercept, intercept])
    label, scores = g.ml("LinearClassifier", [x], 2, coefficients=[float(v) for v in coef.ravel()],
                         intercepts=[float(v) for v in intercept], post_transform="NONE", **labels)
    return [(label, "label"), (scores, "scores")]


def convert_linear_regression(g, est, x, n):
    import numpy as np

    coef = np.atleast_2d(np.asarray(est.coef_, dtype=np.float64))
    intercept = np.atleast_1d(np.asarray(est.intercept_, dtype=np.float64)).reshape(-1)
    if intercept.size == 1 and coef.shape[0] > 1:
        intercept = np.repeat(intercept, coef.shape[0])
    y = g.ml("LinearRegressor", [x], coefficients=[float(v) for v in coef.ravel()],
             intercepts=[float(v) for v in intercept], targets=int(coef.shape[0]))
    return [(y, "value")]


def svm_kernel_attrs(est):
    kernel = est.kernel
    if callable(kernel) or kernel not in ("linear", "poly", "rbf", "sigmoid"):
        raise Unsupported(f"{type(est).__name__}(kernel={kernel!r})")
    return {
        "kernel_type": kernel.upper(),
        "kernel_params": [float(est._gamma), float(est.coef0), float(est.degree)],
    }


def convert_svc(g, est, x, n):
    import numpy as np

    if est.decision_function_shape not in ("ovr", "ovo"):
        raise Unsupported(f"SVC(decision_function_shape={est.decision_function_shape!r})")
    labels, _ = class_labels(est.classes_, "SVC", "classlabels_ints")
    # The libsvm-side values (scikit-learn flips the sign of the public ones for two classes).
    common = dict(
        svm_kernel_attrs(est),
        support_vectors=[float(v) for v in np.asarray(est.support_vectors_).ravel()],
        vectors_per_class=[int(v) for v in est.n_support_],
        coefficients=[float(v) for v in np.asarray(est._dual_coef_).ravel()],
        rho=[float(v) for v in np.asarray(est._intercept_).ravel()],
        **labels,
    )
    label, scores = g.ml("SVMClassifier", [x], 2, **common)
    outputs = [(label, "label"), (scores, "scores")]
    if est.probability:
        # predict() votes one-vs-one; predict_proba() couples Platt-scaled pairs: two nodes, so
        # the labels stay the votes' labels.
        _, proba = g.ml("SVMClassifier", [x], 2, prob_a=[float(v) for v in est.probA_],
                        prob_b=[float(v) for v in est.probB_], **common)
        outputs = [(label, "label"), (proba, "probabilities")]
    return outputs


def convert_svr(g, est, x, n):
    import numpy as np

    y = g.ml("SVMRegressor", [x], **svm_kernel_attrs(est),
             support_vectors=[float(v) for v in np.asarray(est.support_vectors_).ravel()],
             coefficients=[float(v) for v in np.asarray(est.dual_coef_).ravel()],
             rho=[float(np.asarray(est.intercept_).ravel()[0])], n_supports=int(len(est.support_)))
    return [(y, "value")]


class TreeAttrs:
    """The node and leaf attributes of a tree ensemble as float attributes (ONNX Runtime wants
    float thresholds for float input). scikit-learn compares float32 features with float64
    thresholds: the largest float32 not above each threshold gives the same branch for every
    float32 feature value."""

    def __init__(self):
        self.nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "modes", "truenodeids", "falsenodeids")}
        self.values = []
        self.leaf = {k: [] for k in ("treeids", "nodeids", "ids")}
        self.weights = []

    def add_tree(self, tree_id, tree, leaf_weights):
        """leaf_weights(node) -> list of (target or class id, weight)."""
        t = tree.tree_
        for node in range(t.node_count):
            left, right = int(t.children_left[node]), int(t.children_right[node])
            self.nodes["treeids"].append(tree_id)
            self.nodes["nodeids"].append(node)
            if left == -1:
                self.nodes["featureids"].append(0)
                self.nodes["modes"].append("LEAF")
                self.nodes["truenodeids"].append(0)
                self.nodes["falsenodeids"].append(0)
                self.values.append(0.0)
                for target, weight in leaf_weights(node):
                    self.leaf["treeids"].append(tree_id)
                    self.leaf["nodeids"].append(node)
                    self.leaf["ids"].append(int(target))
                    self.weights.append(float(weight))
            else:
                self.nodes["featureids"].append(int(t.feature[node]))
                self.nodes["modes"].append("BRANCH_LEQ")
                self.nodes["truenodeids"].append(left)
                self.nodes["falsenodeids"].append(right)
                self.values.append(float(t.threshold[node]))

    def attrs(self, prefix):
        import numpy as np

        a = {f"nodes_{k}": v for k, v in self.nodes.items()}
        t = np.asarray(self.values, dtype=np.float64)
        f = t.astype(np.float32)
        above = f.astype(np.float64) > t
        f[above] = np.nextafter(f[above], np.float32(-np.inf))
        a["nodes_values"] = [float(v) for v in f]
        for k, v in self.leaf.items():
            a[f"{prefix}_{k}"] = v
        a[f"{prefix}_weights"] = self.weights
        return a


def single_output(est):
    if getattr(est, "n_outputs_", 1) != 1:
        raise Unsupported(f"{type(est).__name__} with {est.n_outputs_} outputs")


def convert_forest_classifier(g, est, x, n):
    import numpy as np

    single_output(est)
    labels, _ = class_labels(est.classes_, type(est).__name__)
    trees = est.estimators_ if hasattr(est, "estimators_") else [est]
    attrs = TreeAttrs()
    for i, tree in enumerate(trees):
        value = tree.tree_.value[:, 0, :]

        def weights(node, value=value, keep_zeros=len(est.classes_) == 2):
            # Two classes keep their zero weights: ONNX Runtime reads a binary ensemble with one
            # scored class as a margin.
            total = value[node].sum()
            return [(c, v / total) for c, v in enumerate(value[node]) if v != 0 or keep_zeros] if total > 0 else []

        attrs.add_tree(i, tree, weights)
    # The per-tree probabilities are summed and divided once, as scikit-learn averages them, so
    # that ties between classes break the same way.
    label, scores = g.ml("TreeEnsembleClassifier", [x], 2, post_transform="NONE", **attrs.attrs("class"), **labels)
    if len(trees) > 1:
        scores = g.node("Div", [scores, g.constant("tree_count", np.array(len(trees), dtype=np.float32))])
    return [(label, "label"), (scores, "probabilities")]


def convert_forest_regressor(g, est, x, n):
    single_output(est)
    trees = est.estimators_ if hasattr(est, "estimators_") else [est]
    attrs = TreeAttrs()
    for i, tree in enumerate(trees):
        value = tree.tree_.value[:, 0, 0]
        attrs.add_tree(i, tree, lambda node, value=value: [(0, value[node])])
    y = g.ml("TreeEnsembleRegressor", [x], n_targets=1, post_transform="NONE",
             aggregate_function="AVERAGE" if len(trees) > 1 else "SUM", **attrs.attrs("target"))
    return [(y, "value")]


def gradient_boosting_init(est, n):
    import numpy as np

    # The raw prediction before the first stage: constant for the init estimators that the
    # library offers by default (a prior or a mean); a fitted init estimator is not supported.
    if est.init not in (None, "zero") and not isinstance(est.init, str):
        raise Unsupported(f"{type(est).__name__} with a custom init estimator")
    probe = np.zeros((2, n))
    raw = est._raw_predict_init(probe)
    if not np.allclose(raw[0], raw[1]):
        raise Unsupported(f"{type(est).__name__} whose initial prediction depends on the input")
    return raw[0]


def convert_gradient_boosting_classifier(g, est, x, n):
    import numpy as np

    labels, _ = class_labels(est.classes_, "GradientBoostingClassifier")
    if getattr(est, "loss", "log_loss") not in ("log_loss", "deviance"):
        raise Unsupported(f"GradientBoostingClassifier(loss={est.loss!r})")
    base = gradient_boosting_init(est, n)
    attrs = TreeAttrs()
    k = est.estimators_.shape[1]
    tree_id = 0
    for stage in est.estimators_:
        for c, tree in enumerate(stage):
            value = tree.tree_.value[:, 0, 0] * est.learning_rate
            # Two classes: one margin s (class id 0 for every leaf), which the binary form of
            # TreeEnsembleClassifier turns into [1 - p, p] with p = logistic(s).
            attrs.add_tree(tree_id, tree, lambda node, value=value, c=c: [(c, value[node])])
            tree_id += 1
    if k == 1:
        base_values, transform = [float(base[0])], "LOGISTIC"
    else:
        base_values, transform = [float(b) for b in base], "SOFTMAX"
    label, scores = g.ml("TreeEnsembleClassifier", [x], 2, post_transform=transform,
                         base_values=base_values,
                         **attrs.attrs("class"), **labels)
    return [(label, "label"), (scores, "probabilities")]


def convert_gradient_boosting_regressor(g, est, x, n):
    if getattr(est, "loss", "squared_error") not in ("squared_error", "ls", "absolute_error", "lad", "huber"):
        raise Unsupported(f"GradientBoostingRegressor(loss={est.loss!r})")
    base = gradient_boosting_init(est, n)
    attrs = TreeAttrs()
    for i, stage in enumerate(est.estimators_):
        tree = stage[0]
        value = tree.tree_.value[:, 0, 0] * est.learning_rate
        attrs.add_tree(i, tree, lambda node, value=value: [(0, value[node])])
    y = g.ml("TreeEnsembleRegressor", [x], n_targets=1, aggregate_function="SUM", post_transform="NONE",
             base_values=[float(base[0])], **attrs.attrs("target"))
    return [(y, "value")]


ESTIMATORS = {
    "LogisticRegression": convert_logistic_regression,
    "LinearSVC": convert_linear_svc,
    "LinearRegression": convert_linear_regression,
    "Ridge": convert_linear_regression,
    "SVC": convert_svc,
    "SVR": convert_svr,
    "DecisionTreeClassifier": convert_forest_classifier,
    "RandomForestClassifier": convert_forest_classifier,
    "ExtraTreesClassifier": convert_forest_classifier,
    "DecisionTreeRegressor": convert_forest_regressor,
    "RandomForestRegressor": convert_forest_regressor,
    "ExtraTreesRegressor": convert_forest_regressor,
    "GradientBoostingClassifier": convert_gradient_boosting_classifier,
    "GradientBoostingRegressor": convert_gradient_boosting_regressor,
}


def convert(model, n_features, zipmap=False):
    """The ONNX ModelProto of a fitted estimator or pipeline, and the converted estimator names."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    g = Graph()
    x = "input"
    g.names.add(x)
    steps = model.steps if type(model).__name__ == "Pipeline" else [("model", model)]
    x, n = convert_pipeline_steps(g, steps[:-1], x, n_features)
    final = steps[-1][1]
    kind = type(final).__name__
    if kind in TRANSFORMERS or kind == "Pipeline":
        y, width = convert_transformer(g, final, x, n)
        outputs = [(y, "value")]
    elif kind in ESTIMATORS:
        g.converted.append(kind)
        outputs = ESTIMATORS[kind](g, final, x, n)
    else:
        raise Unsupported(kind)

    graph_outputs = []
    for name, what in outputs:
        if what == "label":
            final_name = "label"
            labels_are_strings = np.asarray(final.classes_).dtype.kind in "OUS"
            elem = TensorProto.STRING if labels_are_strings else TensorProto.INT64
            shape = ["N"]
        elif what == "probabilities" and zipmap:
            labels, _ = class_labels(final.classes_, kind)
            g.ml("ZipMap", [name], ["probabilities"], **labels)
            key = TensorProto.STRING if "classlabels_strings" in labels else TensorProto.INT64
            map_type = onnx.TypeProto()  # onnx 1.12 has no helper.make_map_type_proto
            map_type.map_type.key_type = key
            map_type.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, []))
            graph_outputs.append(helper.make_value_info("probabilities", helper.make_sequence_type_proto(map_type)))
            continue
        else:
            final_name = {"probabilities": "probabilities", "scores": "scores", "value": "variable"}[what]
            elem, shape = TensorProto.FLOAT, ["N", None]
        g.nodes.append(helper.make_node("Identity", [name], [final_name], name=g.name(f"output_{final_name}")))
        graph_outputs.append(helper.make_tensor_value_info(final_name, elem, shape))

    graph = helper.make_graph(
        g.nodes, "sklearn_pipeline",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", n_features])],
        graph_outputs, initializer=g.initializers)
    model_proto = helper.make_model(
        graph, producer_name="onnxlens_sklearn_export",
        opset_imports=[helper.make_opsetid("", DEFAULT_OPSET), helper.make_opsetid("ai.onnx.ml", ML_OPSET)])
    model_proto.ir_version = 8
    return model_proto, g.converted


# ---- reference data, timing, the command line ---------------------------------------------------


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


def held_out_rows(model, rows, n_features, seed):
    """Rows scikit-learn accepts: one-hot columns take known categories, others follow scalers."""
    import numpy as np

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, n_features))
    steps = model.steps if type(model).__name__ == "Pipeline" else [("model", model)]
    first = steps[0][1]

    def fill(est, columns):
        kind = type(est).__name__
        if kind == "Pipeline":
            fill(est.steps[0][1], columns)
        elif kind == "OneHotEncoder":
            for j, cats in zip(columns, est.categories_):
                X[:, j] = rng.choice(np.asarray(cats, dtype=np.float64), rows)
        elif kind == "StandardScaler" and est.with_mean:
            X[:, columns] = X[:, columns] * est.scale_ + est.mean_
        elif kind == "MinMaxScaler":
            X[:, columns] = rng.uniform(est.data_min_, est.data_max_, (rows, len(columns)))
        elif kind == "ColumnTransformer":
            for _, trans, cols in est.transformers_:
                if trans in ("drop", "passthrough"):
                    continue
                idx = np.arange(n_features)[cols] if not isinstance(cols, list) or not cols or not isinstance(cols[0], str) \
                    else [list(est.feature_names_in_).index(c) for c in cols]
                fill(trans, list(np.asarray(idx).reshape(-1)))

    fill(first, list(range(n_features)))
    return X.astype(np.float32)


def time_rows_per_second(fn, X, batch, runs, warmup):
    import numpy as np

    reps = int(np.ceil(batch / len(X)))
    data = np.tile(X, (reps, 1))[:batch]
    for _ in range(warmup):
        fn(data)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(data)
        times.append(time.perf_counter() - start)
    median = float(np.median(times))
    return {"batch": batch, "runs": runs, "median_ms": median * 1000, "rows_per_second": batch / median if median > 0 else 0}


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="onnxlens_sklearn_export.py", description=__doc__.split("\n")[0])
    parser.add_argument("--pickle", required=True, metavar="FILE", help="a fitted estimator or Pipeline (pickle/joblib)")
    parser.add_argument("--input-shape", required=True, metavar="N,F", help="held-out rows N and features F")
    parser.add_argument("--out", required=True, metavar="DIR")
    parser.add_argument("--data", metavar="FILE.npy", help="held-out rows [N, F] instead of drawn ones")
    parser.add_argument("--zipmap", action="store_true", help="probabilities as a sequence of maps (ZipMap)")
    parser.add_argument("--bench", action="store_true", help="time scikit-learn at batch 1 and 1,000")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def load_estimator(path):
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception as e:  # pickle raises whatever the pickled classes raise
        try:
            import joblib

            return joblib.load(path)
        except Exception:
            raise ExportFailure(EXIT_LOAD_FAILED, f"{path}: cannot be loaded ({type(e).__name__}: {e})",
                                "give a fitted scikit-learn estimator saved with pickle or joblib, "
                                "with the scikit-learn version of this Python")


def export(args):
    import numpy as np
    import onnx
    import sklearn
    from onnx import numpy_helper

    try:
        rows, features = (int(v) for v in args.input_shape.replace("x", ",").split(","))
        if rows < 1 or features < 1:
            raise ValueError
    except ValueError:
        raise ExportFailure(EXIT_USAGE, f"--input-shape '{args.input_shape}' is not N,F (rows, features)",
                            "for example --input-shape 100,8")
    model = load_estimator(args.pickle)
    expected = getattr(model, "n_features_in_", None)
    if expected is not None and expected != features:
        raise ExportFailure(EXIT_USAGE, f"{args.pickle}: the model takes {expected} features, --input-shape says {features}",
                            f"use --input-shape {rows},{expected}")
    log(f"converting {type(model).__name__} ({features} features)")
    start = time.perf_counter()
    proto, converted = convert(model, features, zipmap=args.zipmap)
    onnx.checker.check_model(proto)
    export_seconds = time.perf_counter() - start

    if args.data:
        X = np.load(args.data).astype(np.float32)
        if X.ndim != 2 or X.shape[1] != features:
            raise ExportFailure(EXIT_USAGE, f"{args.data}: shape {X.shape} is not [N, {features}]", "give rows [N, F]")
    else:
        X = held_out_rows(model, rows, features, args.seed)
    X64 = X.astype(np.float64)

    os.makedirs(args.out, exist_ok=True)
    onnx.save(proto, os.path.join(args.out, "model.onnx"))
    data_dir = os.path.join(args.out, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    for f in os.listdir(data_dir):
        if f.endswith(".pb"):
            os.remove(os.path.join(data_dir, f))

    def write(name, proto_message):
        with open(os.path.join(data_dir, name), "wb") as f:
            f.write(proto_message.SerializeToString())

    write("input_0.pb", numpy_helper.from_array(X, "input"))
    outputs = [o.name for o in proto.graph.output]
    predicted = model.predict(X64)
    for k, name in enumerate(outputs):
        if name == "label":
            labels = np.asarray(predicted)
            array = labels.astype(object) if labels.dtype.kind in "OUS" else labels.astype(np.int64)
            write(f"output_{k}.pb", numpy_helper.from_array(np.asarray(array), "label"))
        elif name == "variable":
            write(f"output_{k}.pb", numpy_helper.from_array(
                np.asarray(predicted, dtype=np.float32).reshape(len(X), -1), "variable"))
        elif name == "probabilities":
            proba = model.predict_proba(X64).astype(np.float32)
            if args.zipmap:
                keys = list(model.classes_)
                keys = [str(c) for c in keys] if np.asarray(keys).dtype.kind in "OUS" else [int(c) for c in keys]
                maps = [map_proto({k: np.float32(v) for k, v in zip(keys, row)}) for row in proba]
                seq = onnx.SequenceProto(name="probabilities", elem_type=onnx.SequenceProto.MAP)
                seq.map_values.extend(maps)
                write(f"output_{k}.pb", seq)
            else:
                write(f"output_{k}.pb", numpy_helper.from_array(proba, "probabilities"))
        elif name == "scores":
            continue  # no scikit-learn counterpart of the same layout; not a reference
    log(f"wrote model.onnx and test_data_set_0 ({len(X)} rows)")

    info = {
        "source": {"kind": "sklearn", "name": os.path.basename(args.pickle)},
        "estimator": type(model).__name__,
        "converted": converted,
        "sklearn_version": sklearn.__version__,
        "onnx_version": onnx.__version__,
        "python_version": platform.python_version(),
        "opset": DEFAULT_OPSET,
        "ml_opset": ML_OPSET,
        "export_seconds": export_seconds,
        "rows": int(len(X)),
        "features": features,
        "outputs": outputs,
        "tolerance": {"labels": "exact", "probabilities_atol": 1e-5},
    }
    if args.bench:
        predict = model.predict_proba if hasattr(model, "predict_proba") and "probabilities" in outputs else model.predict
        info["sklearn_throughput"] = [
            time_rows_per_second(predict, X64, batch, args.runs, args.warmup) for batch in (1, 1000)]
        for t in info["sklearn_throughput"]:
            log(f"scikit-learn batch {t['batch']}: {t['rows_per_second']:.0f} rows/s (median {t['median_ms']:.3f} ms)")
    with open(os.path.join(args.out, "export.json"), "w") as f:
        json.dump(info, f, indent=2)
    log("wrote export.json")


def main(argv):
    args = parse_arguments(argv)
    try:
        try:
            import numpy  # noqa: F401
            import onnx  # noqa: F401
            import sklearn  # noqa: F401
        except ImportError as e:
            raise ExportFailure(EXIT_FAILED, f"this Python lacks {e.name}",
                                "install python3-sklearn and python3-onnx, or choose another Python")
        export(args)
    except ExportFailure as e:
        print(f"error: {e}", file=sys.stderr)
        print(f"hint: {e.hint}", file=sys.stderr)
        return e.code
    except Exception as e:  # the conversion of an unexpected estimator state
        traceback.print_exc()
        print(f"error: the export failed: {type(e).__name__}: {' '.join(str(e).split())}", file=sys.stderr)
        print("hint: the traceback above shows where", file=sys.stderr)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
