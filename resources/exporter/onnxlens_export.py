#!/usr/bin/python3
"""onnxlens's PyTorch exporter: one model to ONNX, with PyTorch's own outputs as reference data.

Started by onnxlens (Tools > Export from PyTorch & Benchmark) and by `onnxlens-cli export` as a
subprocess with a time limit. It writes into --out:

  model.onnx          torch.onnx.export with constant folding, names and dynamic axes
  test_data_set_0/    input_K.pb and PyTorch's output_K.pb (onnx TensorProto)
  test_data_set_1/    the same with batch 2, when every input has a dynamic batch axis
  export.json         versions, opset, export time, PyTorch latency statistics
  modules/            with --record-modules: each PyTorch module's output on test_data_set_0's
                      inputs (forward hooks) as .npy, and index.json mapping each module to the
                      ONNX value of its scope (see record_modules)

`onnxlens_export.py --serve-timing DIR [--threads N]` times PyTorch for onnxlens's latency ratio,
interleaved with the engine: it rebuilds the module exported into DIR (export.json's "arguments"),
loads test_data_set_0's inputs, prints "timing: ready", and answers each "run" line on stdin
with "timing: MS" (one timed forward pass), until stdin closes. A "record" line instead records
the modules' outputs into DIR/modules (as --record-modules does) and answers "record: N" (modules
mapped) or "record: error MESSAGE".

Log lines go to stdout as they happen. A failure is one line "error: ..." and one line
"hint: ..." on stderr and a distinct exit code (see EXIT_* below); argparse's usage errors
exit 2 as usual.
"""
import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
import warnings

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_NO_TORCH = 3
EXIT_SCRIPT_RAISED = 4
EXIT_UNSUPPORTED_OPERATOR = 5
EXIT_EXPORT_FAILED = 6

MAX_DEFAULT_OPSET = 17

# The text-model presets: the same input names and axes for every task, and which outputs the
# task keeps (names follow the usual Hugging Face exporter tasks).
TEXT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
TEXT_TASKS = {
    "default": {"outputs": ["last_hidden_state"], "axes": {"last_hidden_state": {0: "batch", 1: "sequence"}}},
    "pooling": {"outputs": ["embeddings"], "axes": {"embeddings": {0: "batch"}}},
    "text-classification": {"outputs": ["logits"], "axes": {"logits": {0: "batch"}}},
    "question-answering": {
        "outputs": ["start_logits", "end_logits"],
        "axes": {"start_logits": {0: "batch", 1: "sequence"}, "end_logits": {0: "batch", 1: "sequence"}},
    },
}


class ExportFailure(Exception):
    """A failure with its exit code and a hint for the person who ran the export."""

    def __init__(self, code, message, hint):
        super().__init__(message)
        self.code = code
        self.hint = hint


def log(message):
    print(message, flush=True)


def one_line(text):
    return " ".join(str(text).split())


def parse_arguments(argv):
    parser = argparse.ArgumentParser(prog="onnxlens_export.py", description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--torchvision", metavar="NAME", help="a torchvision model with random, seeded weights")
    source.add_argument("--script", metavar="FILE", help="a Python file defining model() and example_inputs()")
    source.add_argument("--torchscript", metavar="FILE", help="a TorchScript .pt file (needs --input-shape)")
    parser.add_argument("--input-shape", metavar="S", help="input shapes, e.g. 1x3x224x224 (several: comma-separated)")
    parser.add_argument("--out", required=True, metavar="DIR")
    parser.add_argument("--opset", type=int, default=0, help="ONNX opset (default: newest supported, at most 17)")
    parser.add_argument("--task", choices=sorted(TEXT_TASKS), help="text-model preset")
    parser.add_argument("--no-dynamic-batch", action="store_true", help="export with static shapes")
    parser.add_argument("--runs", type=int, default=10, help="timed PyTorch runs")
    parser.add_argument("--warmup", type=int, default=2, help="PyTorch warm-up runs (not timed)")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: every core)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--record-modules", action="store_true",
                        help="record each module's output on the first data set's inputs (modules/)")
    args = parser.parse_args(argv)
    if args.torchscript and not args.input_shape and not args.task:
        parser.error("--torchscript needs --input-shape")
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be >= 1 and --warmup >= 0")
    if args.opset and not 7 <= args.opset <= 30:
        parser.error("--opset must be between 7 and 30")
    return args


def import_torch():
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken installation raising anything else
        raise ExportFailure(
            EXIT_NO_TORCH,
            "this Python (%s) cannot import torch: %s" % (sys.executable, one_line(e)),
            "install PyTorch (Debian: apt install python3-torch python3-torchvision) or choose "
            "a Python that has it (--python PATH, or the Python setting of the export dialog)",
        )
    return torch


def parse_shapes(text):
    shapes = []
    for part in text.split(","):
        try:
            dims = [int(d) for d in part.strip().lower().split("x")]
        except ValueError:
            dims = []
        if not dims or any(d < 1 for d in dims):
            raise ExportFailure(EXIT_USAGE, "--input-shape '%s' is not a shape like 1x3x224x224" % text,
                                "give positive dims separated by 'x', several inputs separated by ','")
        shapes.append(dims)
    return shapes


def call_user(what, function, *args):
    """Runs code of the user's script; anything it raises is that script's failure."""
    try:
        return function(*args)
    except ExportFailure:
        raise
    except Exception as e:
        frames = traceback.extract_tb(e.__traceback__)
        where = ""
        if frames:
            last = frames[-1]
            where = " (%s, line %d)" % (os.path.basename(last.filename), last.lineno)
        raise ExportFailure(EXIT_SCRIPT_RAISED, "%s raised %s: %s%s" % (what, type(e).__name__, one_line(e), where),
                            "fix the script and export again; the full traceback is in the log")


def as_tuple(value):
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return (value,)


class Source:
    """What to export: the module, example inputs and names."""

    def __init__(self):
        self.kind = ""
        self.name = ""
        self.module = None
        self.inputs = ()
        self.input_names = None
        self.output_names = None
        self.dynamic_axes = None
        self.vocab_size = None


def load_torchvision(torch, args):
    import torchvision

    name = args.torchvision
    builders = torchvision.models.__dict__
    if hasattr(torchvision.models, "list_models"):  # torchvision >= 0.14: the registered builders only
        known = set(torchvision.models.list_models())
    else:
        known = {n for n, f in builders.items() if n.islower() and not n.startswith("_") and callable(f)}
    if name not in known:
        raise ExportFailure(EXIT_USAGE, "torchvision %s has no model named '%s'" % (torchvision.__version__, name),
                            "use a name from torchvision.models, e.g. resnet18, mobilenet_v2, squeezenet1_1")
    torch.manual_seed(args.seed)
    # weights=None: random weights; onnxlens never downloads anything.
    try:
        module = builders[name](weights=None)
    except TypeError:
        module = builders[name](pretrained=False)
    size = 299 if name.startswith("inception") else 224
    source = Source()
    source.kind, source.name, source.module = "torchvision", name, module
    shapes = parse_shapes(args.input_shape) if args.input_shape else [[1, 3, size, size]]
    source.inputs = tuple(torch.randn(*s) for s in shapes)
    source.input_names = ["input"] if len(shapes) == 1 else ["input_%d" % i for i in range(len(shapes))]
    return source


def load_script(torch, args):
    path = os.path.abspath(args.script)
    if not os.path.isfile(path):
        raise ExportFailure(EXIT_USAGE, "%s: no such file" % args.script, "give the path of a Python file")
    torch.manual_seed(args.seed)
    spec = importlib.util.spec_from_file_location("onnxlens_user_model", path)
    script = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    call_user(os.path.basename(path), spec.loader.exec_module, script)
    if not callable(getattr(script, "model", None)):
        raise ExportFailure(EXIT_USAGE, "%s defines no model() function" % args.script,
                            "define model() returning a torch.nn.Module and example_inputs() returning a tuple")
    source = Source()
    source.kind, source.name = "script", os.path.basename(path)
    source.module = call_user("model()", script.model)
    if not isinstance(source.module, torch.nn.Module):
        raise ExportFailure(EXIT_USAGE, "%s: model() returned %s, not a torch.nn.Module"
                            % (args.script, type(source.module).__name__), "return an nn.Module instance")
    if callable(getattr(script, "example_inputs", None)):
        source.inputs = as_tuple(call_user("example_inputs()", script.example_inputs))
    elif args.input_shape:
        source.inputs = tuple(torch.randn(*s) for s in parse_shapes(args.input_shape))
    elif not args.task:
        raise ExportFailure(EXIT_USAGE, "%s defines no example_inputs()" % args.script,
                            "define example_inputs() returning a tuple of tensors, or pass --input-shape")
    for attribute in ("input_names", "output_names", "dynamic_axes", "vocab_size"):
        if callable(getattr(script, attribute, None)):
            setattr(source, attribute, call_user(attribute + "()", getattr(script, attribute)))
    return source


def load_torchscript(torch, args):
    if not os.path.isfile(args.torchscript):
        raise ExportFailure(EXIT_USAGE, "%s: no such file" % args.torchscript, "give the path of a TorchScript .pt file")
    try:
        module = torch.jit.load(args.torchscript, map_location="cpu")
    except Exception as e:
        raise ExportFailure(EXIT_USAGE, "%s: not a TorchScript file torch can load: %s"
                            % (args.torchscript, one_line(e)), "save the model with torch.jit.save")
    source = Source()
    source.kind, source.name, source.module = "torchscript", os.path.basename(args.torchscript), module
    torch.manual_seed(args.seed)
    if args.input_shape and not args.task:
        shapes = parse_shapes(args.input_shape)
        source.inputs = tuple(torch.randn(*s) for s in shapes)
        source.input_names = ["input"] if len(shapes) == 1 else ["input_%d" % i for i in range(len(shapes))]
    return source


def first_embedding_size(torch, module):
    for m in module.modules():
        if isinstance(m, torch.nn.Embedding):
            return m.num_embeddings
    return None


def apply_text_task(torch, source, args):
    """Text presets: input_ids/attention_mask/token_type_ids with batch and sequence axes, and a
    wrapper that keeps the outputs the task names."""
    task = TEXT_TASKS[args.task]
    batch, sequence = 1, 16
    if args.input_shape:
        shape = parse_shapes(args.input_shape)[0]
        if len(shape) != 2:
            raise ExportFailure(EXIT_USAGE, "--input-shape for a text task is BATCHxSEQUENCE, got '%s'"
                                % args.input_shape, "e.g. --input-shape 1x16")
        batch, sequence = shape
    vocab = source.vocab_size or first_embedding_size(torch, source.module) or 100
    if not source.inputs:
        source.inputs = (
            torch.randint(0, vocab, (batch, sequence), dtype=torch.long),
            torch.ones(batch, sequence, dtype=torch.long),
            torch.zeros(batch, sequence, dtype=torch.long),
        )
    if len(source.inputs) != len(TEXT_INPUTS):
        raise ExportFailure(EXIT_USAGE, "task %s feeds %s, but the example inputs are %d tensors"
                            % (args.task, ", ".join(TEXT_INPUTS), len(source.inputs)),
                            "make example_inputs() return (input_ids, attention_mask, token_type_ids) or drop it")
    inner = source.module
    wanted = task["outputs"]

    class TaskOutputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            result = self.inner(input_ids, attention_mask, token_type_ids)
            named = dict(result) if hasattr(result, "keys") else None
            values = list(result.values()) if named is not None else list(as_tuple(result))
            if wanted == ["embeddings"]:
                if named is not None and "pooler_output" in named:
                    return named["pooler_output"]
                hidden = values[0]
                if hidden.dim() == 2:
                    return hidden
                # Mean over the tokens the attention mask keeps: sentence embeddings.
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            picked = [named[w] if named is not None and w in named else values[i] for i, w in enumerate(wanted)]
            return tuple(picked) if len(picked) > 1 else picked[0]

    source.module = TaskOutputs()
    source.input_names = list(TEXT_INPUTS)
    source.output_names = list(wanted)
    axes = {name: {0: "batch", 1: "sequence"} for name in TEXT_INPUTS}
    axes.update(task["axes"])
    source.dynamic_axes = axes


def load_source(torch, args):
    """The module and example inputs the arguments name (the same for export and --serve-timing)."""
    if args.torchvision:
        source = load_torchvision(torch, args)
    elif args.script:
        source = load_script(torch, args)
    else:
        source = load_torchscript(torch, args)
    if args.task:
        apply_text_task(torch, source, args)
    return source


def batch_axis(axes):
    """The axis named 'batch' in one dynamic_axes entry (a dict or a list of axes)."""
    if isinstance(axes, dict):
        for axis, name in axes.items():
            if "batch" in str(name).lower():
                return int(axis)
        return 0 if 0 in axes else None
    if isinstance(axes, (list, tuple)):
        return 0 if 0 in axes else None
    return None


def batch_of_two(torch, tensor, axis):
    """A batch twice as large along `axis`: the example plus a variation that stays valid data
    (new random floats; integers rolled along the last axis so token ids remain in range)."""
    if tensor.is_floating_point():
        extra = torch.randn_like(tensor)
    elif tensor.dtype == torch.bool or tensor.dim() == 0:
        extra = tensor.clone()
    else:
        extra = torch.roll(tensor, shifts=1, dims=-1)
    return torch.cat([tensor, extra], dim=axis)


def flatten_outputs(torch, result):
    if isinstance(result, torch.Tensor):
        return [result]
    if hasattr(result, "values") and callable(result.values):
        result = list(result.values())
    flat = []
    for item in as_tuple(result):
        flat.extend(flatten_outputs(torch, item))
    return flat


def remove_previous_export(folder):
    """A new export replaces an old one in the same folder: a stale test_data_set_1 or report
    must not pass for this model's. Only the files this script and onnxlens write are touched."""
    import shutil

    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name.startswith("test_data_set_") and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif name in ("model.onnx", "export.json", "report.md", "report.json") and os.path.isfile(path):
            os.remove(path)
        elif (name == MODULES_FOLDER and os.path.isdir(path) and not os.path.islink(path)
              and os.path.isfile(os.path.join(path, "index.json"))):
            shutil.rmtree(path)


def write_data_set(torch, folder, inputs, outputs):
    import onnx.numpy_helper

    os.makedirs(folder, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for k, t in enumerate(tensors):
            proto = onnx.numpy_helper.from_array(t.detach().cpu().numpy())
            with open(os.path.join(folder, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(proto.SerializeToString())


def latency_statistics(samples_ms):
    """min, mean, median, p90, p99, max, stddev; percentiles interpolate linearly between the
    closest ranks, as onnxlens's engine statistics do."""
    s = sorted(samples_ms)
    n = len(s)

    def percentile(p):
        rank = p / 100.0 * (n - 1)
        low = int(rank)
        high = min(low + 1, n - 1)
        return s[low] + (s[high] - s[low]) * (rank - low)

    mean = sum(s) / n
    variance = sum((x - mean) ** 2 for x in s) / (n - 1) if n > 1 else 0.0
    return {
        "runs": n,
        "min_ms": s[0],
        "mean_ms": mean,
        "p10_ms": percentile(10),
        "median_ms": percentile(50),
        "p90_ms": percentile(90),
        "p99_ms": percentile(99),
        "max_ms": s[-1],
        "stddev_ms": variance ** 0.5,
    }


def time_pytorch(torch, module, inputs, warmup, runs):
    with torch.no_grad():
        for _ in range(warmup):
            module(*inputs)
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            module(*inputs)
            samples.append((time.perf_counter() - start) * 1000.0)
    return latency_statistics(samples)


def newest_opset(torch):
    try:
        from torch.onnx import _constants

        newest = int(getattr(_constants, "ONNX_MAX_OPSET", MAX_DEFAULT_OPSET))
    except Exception:
        newest = MAX_DEFAULT_OPSET
    return min(newest, MAX_DEFAULT_OPSET)


MODULES_FOLDER = "modules"


def node_scope(node_name):
    """The qualified name of the module whose forward made a node, from the scope path torch.onnx
    puts in node names ('/encoder/layer.0/attention/MatMul' -> 'encoder.layer.0.attention'); ''
    for the root module's own nodes ('/Softmax'); None for a name without a path ('Constant_16').
    torch names a component by the module's attribute name ('conv1', 'layer.0' for an item of a
    ModuleList nobody calls), and the children of a called Sequential by the Sequential's own
    component, a dot and their index ('/layer2/layer2.0/downsample/downsample.0/Conv'): a
    component that starts with the previous one and a dot adds only what follows."""
    if not node_name.startswith("/"):
        return None
    scope, previous = "", ""
    for part in node_name.split("/")[1:-1]:
        attribute = part[len(previous) + 1:] if previous and part.startswith(previous + ".") else part
        scope = attribute if not scope else scope + "." + attribute
        previous = part
    return scope


def shapes_compatible(recorded, inferred):
    """A recorded shape against a shape from ONNX shape inference (None: unknown; a None or
    string dim: symbolic, matches any size)."""
    if inferred is None:
        return True
    if len(recorded) != len(inferred):
        return False
    return all(not isinstance(d, int) or d == r for r, d in zip(recorded, inferred))


def map_module_outputs(nodes, graph_outputs, recorded, value_shapes=None):
    """Maps each recorded module output to the ONNX value of the module's scope.

    nodes: [(name, inputs, outputs)] in graph order (inputs: every value the node reads, its
    subgraphs' included); graph_outputs: the graph's output names; recorded: {module: [shape of
    each tensor it returned]}; value_shapes: {value:
    [dims]} from shape inference, when known.

    A module's output is the output of the last node in its scope (the module's nodes and its
    children's) that is read outside the scope or is a graph output, of the shape it returned (when
    shape inference knows it). A module returning several tensors: those of one shape take the
    last values of that shape in order, or stay unmapped when there are fewer such values.
    Returns {module: ([(value, node name) or None per element], problem)}."""
    value_shapes = value_shapes or {}
    scopes = [node_scope(name) for name, _, _ in nodes]
    consumers = {}
    for i, (_, inputs, _) in enumerate(nodes):
        for v in inputs:
            consumers.setdefault(v, []).append(i)
    outputs = set(graph_outputs)
    # The nodes of each scope prefix, so that each module finds its members without a scan.
    members_of = {}
    for i, scope in enumerate(scopes):
        if scope is None:
            continue
        parts = scope.split(".") if scope else []
        for k in range(1, len(parts) + 1):
            members_of.setdefault(".".join(parts[:k]), []).append(i)
    result = {}
    for module, shapes in recorded.items():
        # A scope prefix that is not the module ('layers.1' for 'layers.10') matched above: keep
        # only nodes whose scope is the module or below it.
        members = [i for i in members_of.get(module, [])
                   if scopes[i] == module or scopes[i].startswith(module + ".")]
        if not members:
            result[module] = ([None] * len(shapes), "no ONNX node in its scope (folded away, or it "
                              "returns a value computed elsewhere)")
            continue
        member_set = set(members)
        escaping = []
        for i in members:
            for v in nodes[i][2]:
                if v and (v in outputs or any(c not in member_set for c in consumers.get(v, []))):
                    escaping.append((v, nodes[i][0]))
        if not escaping:
            result[module] = ([None] * len(shapes), "no value of its scope is read outside it")
            continue
        # Tensors of one shape take the last values of that shape in order; fewer such values
        # than tensors is ambiguous (an LSTM's unused cell state): those stay unmapped.
        chosen = [None] * len(shapes)
        taken = set()
        groups = {}
        for j, shape in enumerate(shapes):
            groups.setdefault(tuple(shape), []).append(j)
        for shape, elements in groups.items():
            candidates = [e for e in escaping
                          if e[0] not in taken and shapes_compatible(list(shape), value_shapes.get(e[0]))]
            if len(candidates) < len(elements):
                continue
            for j, e in zip(elements, candidates[-len(elements):]):
                chosen[j] = e
                taken.add(e[0])
        missing = sum(c is None for c in chosen)
        problem = None
        if missing:
            problem = "%d of its %d outputs have no ONNX value of their shape read outside its scope" % (
                missing, len(chosen)) if len(chosen) > 1 else "no value of its shape is read outside its scope"
        result[module] = (chosen, problem)
    return result


def graph_for_mapping(model_path, inputs):
    """The (nodes, graph outputs, value shapes) map_module_outputs takes, from model.onnx; the
    value shapes come from ONNX shape inference with the graph inputs fixed to the example's."""
    import onnx

    model = onnx.load(model_path, load_external_data=False)

    def read_names(node, names):
        names.extend(node.input)
        for attribute in node.attribute:
            graphs = list(attribute.graphs) + ([attribute.g] if attribute.HasField("g") else [])
            for g in graphs:
                for inner in g.node:
                    read_names(inner, names)
        return names

    nodes = [(n.name, read_names(n, []), list(n.output)) for n in model.graph.node]
    graph_outputs = [o.name for o in model.graph.output]
    shapes = {}
    try:
        initializers = {t.name for t in model.graph.initializer}
        real_inputs = [i for i in model.graph.input if i.name not in initializers]
        for graph_input, tensor in zip(real_inputs, inputs):
            dims = graph_input.type.tensor_type.shape.dim
            if len(dims) == len(tensor.shape):
                for d, size in zip(dims, tensor.shape):
                    d.ClearField("dim_param")
                    d.dim_value = int(size)
        inferred = onnx.shape_inference.infer_shapes(model)
        for info in list(inferred.graph.value_info) + list(inferred.graph.output):
            if info.type.HasField("tensor_type") and info.type.tensor_type.HasField("shape"):
                shapes[info.name] = [d.dim_value if d.HasField("dim_value") else None
                                     for d in info.type.tensor_type.shape.dim]
    except Exception as e:  # shape inference is a help for tuples, not a requirement
        log("warning: shape inference for the module map failed: %s" % one_line(e))
    return nodes, graph_outputs, shapes


def module_tensors(torch, value):
    """The tensors a module returned, element by element (tuples, lists and dicts flattened);
    None for elements that are not tensors."""
    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "values") and callable(value.values):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        flat = []
        for item in value:
            flat.extend(module_tensors(torch, item))
        return flat
    return [None]


def record_modules(torch, module, inputs, folder):
    """Runs the module once on `inputs` with a forward hook on every submodule, writes each
    module's tensors to folder/modules/ as .npy and index.json mapping them to the ONNX values of
    the same scope in folder/model.onnx. Returns the number of module outputs mapped."""
    import shutil

    import numpy as np

    out = os.path.join(folder, MODULES_FOLDER)
    if os.path.isdir(out) and not os.path.islink(out):
        shutil.rmtree(out)
    os.makedirs(out)
    names = {m: name for name, m in module.named_modules() if name}
    calls, records, kinds = {}, {}, {}
    # Which tensor objects each module took and returned, with their version counters (an in-place
    # operation bumps it: ReLU(inplace=True) after a BatchNorm returns the same object changed);
    # the objects are kept alive for the pass, so that their ids stay unique. A module the
    # exporter folded into its producer is found by them.
    keep, first_input, returned, identity = [], {}, {}, set()

    def hook(m, hook_inputs, result):
        name = names.get(m)
        if name is None:
            return
        calls[name] = calls.get(name, 0) + 1
        if calls[name] == 1:
            kinds[name] = type(m).__name__
            tensors = module_tensors(torch, result)
            records[name] = [t.detach().cpu().numpy().copy() if t is not None and t.dtype.is_floating_point
                             else None for t in tensors]
            taken = [t for t in module_tensors(torch, hook_inputs) if t is not None]
            keep.extend(taken + [t for t in tensors if t is not None])
            returned[name] = {(id(t), t._version) for t in tensors if t is not None}
            if taken:
                first_input[name] = (id(taken[0]), taken[0]._version)
                if (len(tensors) == 1 and tensors[0] is not None and tensors[0].shape == taken[0].shape
                        and torch.equal(tensors[0], taken[0])):
                    identity.add(name)

    handles = [m.register_forward_hook(hook) for m in names]
    try:
        with torch.no_grad():
            module(*inputs)
    finally:
        for h in handles:
            h.remove()
    nodes, graph_outputs, shapes = graph_for_mapping(os.path.join(folder, "model.onnx"), inputs)
    tensors_of = {name: [t for t in ts if t is not None] for name, ts in records.items()}
    mapping = map_module_outputs(nodes, graph_outputs,
                                 {name: [list(t.shape) for t in ts] for name, ts in tensors_of.items() if ts},
                                 shapes)
    # A module without nodes (a BatchNorm the exporter folded into the Conv before it, a Dropout)
    # whose input is another module's output: the ONNX value of that producer is what the folded
    # module returned. An identity (Dropout) shares it; otherwise the producer's own output exists
    # nowhere in the graph and the value moves to the folded module.
    for name in records:
        chosen, problem = mapping.get(name, ([], None))
        if len(chosen) != 1 or chosen[0] is not None or not problem or not problem.startswith("no ONNX node"):
            continue
        producers = [p for p in records if p != name and first_input.get(name) in returned.get(p, ())
                     and mapping.get(p, ([None], None))[0][:1] != [None] and len(mapping[p][0]) == 1]
        if not producers:
            continue
        value = mapping[producers[0]][0][0]
        mapping[name] = ([value], None)
        if name not in identity:
            for p in producers:
                mapping[p] = ([None], "its ONNX value %s is %s's output: the exporter folded %s (%s) into it"
                              % (value[0], name, name, kinds[name]))
    entries, mapped = [], 0
    for index, name in enumerate(records):  # call order: a module after its children
        entry = {"module": name, "type": kinds[name], "calls": calls[name], "outputs": []}
        if calls[name] > 1:
            entry["problem"] = "called %d times in one forward pass (its scope holds every call)" % calls[name]
        elif not tensors_of[name]:
            entry["problem"] = "returns no floating-point tensor"
        else:
            chosen, problem = mapping[name]
            if problem:
                entry["problem"] = problem
            for element, (tensor, onnx_value) in enumerate(zip(tensors_of[name], chosen)):
                file = "m%04d_%d.npy" % (index, element)
                np.save(os.path.join(out, file), tensor)
                item = {"element": element, "file": file, "shape": list(tensor.shape), "dtype": str(tensor.dtype)}
                if onnx_value:
                    item["onnx_value"], item["onnx_node"] = onnx_value
                    mapped += 1
                entry["outputs"].append(item)
        entries.append(entry)
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"format": 1, "data_set": "test_data_set_0", "modules": entries}, f, indent=1)
    log("recorded %d module outputs of %d modules, %d mapped to ONNX values, in %s"
        % (sum(len(e["outputs"]) for e in entries), len(entries), mapped, out))
    return mapped


def export(args):
    torch = import_torch()
    import onnx

    # Warnings of torch and of the user's script belong in the streamed log, not on stderr,
    # which carries only the failure message.
    warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: log(
        "warning: %s: %s" % (category.__name__, one_line(message)))
    # Both sides use the same thread count: the engine's default is every core, and some torch
    # builds (Debian's) start with one thread.
    torch.set_num_threads(args.threads if args.threads > 0 else (os.cpu_count() or 1))
    log("torch %s, onnx %s, Python %s" % (torch.__version__, onnx.__version__, platform.python_version()))

    source = load_source(torch, args)
    if not source.inputs:
        raise ExportFailure(EXIT_USAGE, "no example inputs for %s" % source.name, "pass --input-shape")
    source.module.eval()
    log("source: %s %s, %d input(s): %s" % (source.kind, source.name, len(source.inputs),
                                           ", ".join("x".join(map(str, t.shape)) for t in source.inputs)))

    with torch.no_grad():
        reference = flatten_outputs(torch, call_user("the model's forward", source.module, *source.inputs))
    input_names = list(source.input_names or (["input"] if len(source.inputs) == 1 else
                                              ["input_%d" % i for i in range(len(source.inputs))]))
    output_names = list(source.output_names or (["output"] if len(reference) == 1 else
                                                ["output_%d" % i for i in range(len(reference))]))
    dynamic_axes = source.dynamic_axes
    if dynamic_axes is None and not args.no_dynamic_batch:
        dynamic_axes = {name: {0: "batch"} for name in input_names + output_names}
    if args.no_dynamic_batch:
        dynamic_axes = None
    opset = args.opset or newest_opset(torch)

    os.makedirs(args.out, exist_ok=True)
    remove_previous_export(args.out)
    model_path = os.path.join(args.out, "model.onnx")
    log("exporting to %s (opset %d, constant folding, dynamic axes: %s)"
        % (model_path, opset, json.dumps(dynamic_axes) if dynamic_axes else "none"))
    start = time.perf_counter()
    try:
        torch.onnx.export(source.module, source.inputs, model_path, opset_version=opset, do_constant_folding=True,
                          input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes or {})
    except Exception as e:
        unsupported = type(e).__name__ == "UnsupportedOperatorError" or "is not supported" in str(e)
        if unsupported:
            raise ExportFailure(EXIT_UNSUPPORTED_OPERATOR, "torch.onnx.export: %s" % one_line(e).split(" Please")[0],
                                "rewrite that part of the model with supported operations, try another --opset, "
                                "or register a custom symbolic (torch.onnx.register_custom_op_symbolic)")
        raise ExportFailure(EXIT_EXPORT_FAILED, "torch.onnx.export failed: %s: %s" % (type(e).__name__, one_line(e)),
                            "the log holds the traceback; models with data-dependent control flow may need "
                            "torch.jit.script or a simpler forward")
    export_seconds = time.perf_counter() - start
    log("exported in %.2f s, %d bytes" % (export_seconds, os.path.getsize(model_path)))

    data_sets = ["test_data_set_0"]
    write_data_set(torch, os.path.join(args.out, "test_data_set_0"), source.inputs, reference)
    log("wrote test_data_set_0 (PyTorch's outputs)")
    batch_axes = [batch_axis((dynamic_axes or {}).get(name)) for name in input_names]
    dynamic_batch = bool(dynamic_axes) and all(a is not None for a in batch_axes)
    if dynamic_batch:
        torch.manual_seed(args.seed + 1)
        doubled = tuple(batch_of_two(torch, t, a) for t, a in zip(source.inputs, batch_axes))
        with torch.no_grad():
            doubled_reference = flatten_outputs(torch, call_user("the model's forward", source.module, *doubled))
        write_data_set(torch, os.path.join(args.out, "test_data_set_1"), doubled, doubled_reference)
        data_sets.append("test_data_set_1")
        log("wrote test_data_set_1 (batch %s)" % "x".join(str(doubled[0].shape[batch_axes[0]])))

    if args.record_modules:
        record_modules(torch, source.module, source.inputs, args.out)

    log("timing PyTorch: %d warm-up, %d runs, %d threads" % (args.warmup, args.runs, torch.get_num_threads()))
    latency = time_pytorch(torch, source.module, source.inputs, args.warmup, args.runs)
    log("PyTorch median %.3f ms" % latency["median_ms"])

    try:
        import torchvision

        torchvision_version = torchvision.__version__
    except Exception:
        torchvision_version = None
    summary = {
        "source": {"kind": source.kind, "name": source.name},
        "task": args.task,
        "torch_version": torch.__version__,
        "torchvision_version": torchvision_version,
        "onnx_version": onnx.__version__,
        "python_version": platform.python_version(),
        "opset": opset,
        "export_seconds": export_seconds,
        "model": "model.onnx",
        "model_bytes": os.path.getsize(model_path),
        "input_names": input_names,
        "output_names": output_names,
        "input_shapes": [list(t.shape) for t in source.inputs],
        "dynamic_axes": {k: {str(a): n for a, n in v.items()} if isinstance(v, dict) else v
                         for k, v in (dynamic_axes or {}).items()},
        "dynamic_batch": dynamic_batch,
        "data_sets": data_sets,
        "pytorch_latency": dict(latency, warmup=args.warmup, threads=torch.get_num_threads()),
        # What --serve-timing needs to rebuild the same module.
        "arguments": {"torchvision": args.torchvision, "script": os.path.abspath(args.script) if args.script else None,
                      "torchscript": os.path.abspath(args.torchscript) if args.torchscript else None,
                      "input_shape": args.input_shape, "task": args.task, "seed": args.seed},
    }
    with open(os.path.join(args.out, "export.json"), "w") as f:
        json.dump(summary, f, indent=2)
    log("wrote export.json")


def serve_timing(argv):
    """--serve-timing DIR [--threads N]: see the module docstring."""
    parser = argparse.ArgumentParser(prog="onnxlens_export.py --serve-timing")
    parser.add_argument("--serve-timing", required=True, metavar="DIR")
    parser.add_argument("--threads", type=int, default=0)
    options = parser.parse_args(argv)
    torch = import_torch()
    import onnx
    import onnx.numpy_helper

    folder = options.serve_timing
    try:
        with open(os.path.join(folder, "export.json")) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        raise ExportFailure(EXIT_USAGE, "%s/export.json: %s" % (folder, one_line(e)), "export the model again")
    recorded = summary.get("arguments")
    if not isinstance(recorded, dict):
        raise ExportFailure(EXIT_USAGE, "%s/export.json does not say how the model was made" % folder,
                            "export it again with this version of onnxlens")
    args = argparse.Namespace(torchvision=None, script=None, torchscript=None, input_shape=None, task=None, seed=0)
    for key, value in recorded.items():
        setattr(args, key, value)
    threads = options.threads or int(summary.get("pytorch_latency", {}).get("threads", 0) or 0)
    torch.set_num_threads(threads if threads > 0 else (os.cpu_count() or 1))
    source = load_source(torch, args)
    source.module.eval()
    inputs = []
    data_set = os.path.join(folder, "test_data_set_0")
    k = 0
    while os.path.exists(os.path.join(data_set, "input_%d.pb" % k)):
        proto = onnx.TensorProto()
        with open(os.path.join(data_set, "input_%d.pb" % k), "rb") as f:
            proto.ParseFromString(f.read())
        inputs.append(torch.from_numpy(onnx.numpy_helper.to_array(proto).copy()))
        k += 1
    if not inputs:
        raise ExportFailure(EXIT_USAGE, "%s has no input_0.pb" % data_set, "export the model again")
    print("timing: ready", flush=True)
    while True:
        request = sys.stdin.readline().strip()
        if request == "run":
            with torch.no_grad():
                start = time.perf_counter()
                source.module(*inputs)
                print("timing: %.6f" % ((time.perf_counter() - start) * 1000.0), flush=True)
        elif request == "record":
            try:
                print("record: %d" % record_modules(torch, source.module, inputs, folder), flush=True)
            except Exception as e:
                traceback.print_exc(file=sys.stdout)
                print("record: error %s: %s" % (type(e).__name__, one_line(e)), flush=True)
        else:
            break


def main(argv):
    if argv and argv[0] == "--serve-timing":
        try:
            serve_timing(argv)
        except ExportFailure as failure:
            sys.stderr.write("error: %s\nhint: %s\n" % (failure, failure.hint))
            return failure.code
        return EXIT_OK
    args = parse_arguments(argv)
    try:
        export(args)
    except ExportFailure as failure:
        if failure.code == EXIT_SCRIPT_RAISED:
            traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        sys.stderr.write("error: %s\nhint: %s\n" % (failure, failure.hint))
        return failure.code
    except Exception as e:
        traceback.print_exc(file=sys.stdout)
        sys.stdout.flush()
        sys.stderr.write("error: %s: %s\nhint: the log holds the traceback\n" % (type(e).__name__, one_line(e)))
        return EXIT_EXPORT_FAILED
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
