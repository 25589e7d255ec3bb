// Times one model on ONNX Runtime (npm onnxruntime-node) the way `onnxlens-cli bench --json`
// does: session creation (load), warm-up runs, then timed runs; prints one JSON document.
// Used only by bench/compare_ort*.py, never by the application or its tests.
//
// usage: node ort_bench.mjs --ort NODE_MODULES_DIR --manifest FILE [--threads N] [--warmup N]
//                           [--runs N] [--dump DIR] [--opt-level all|extended|basic|disabled]
//                           [--profile PREFIX] [--save-optimized FILE]
//                           | --baseline
//   --manifest  written by make_bench_models.py: {"model": path, "inputs": [{"name", "file"}]}
//   --dump      also writes each output as DIR/output_K.npy (for the agreement check)
//   --profile   ONNX Runtime's own per-node profile of the timed runs, written as PREFIX_<date>.json
//               (Chrome trace JSON)
//   --save-optimized  ONNX Runtime writes the graph it runs, after its optimizer at --opt-level, to
//               FILE (at `extended`: its transformer fusions, Attention, SkipLayerNormalization,
//               EmbedLayerNormalization, BiasGelu...: SessionOptions.optimizedModelFilePath;
//               bench/compare_ort_optimized.py)
//   --baseline  loads the addon only and reports the process's peak RSS (Node's own share)
import { createRequire } from "node:module";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

function parseArgs(argv) {
  const args = { threads: 1, warmup: 5, runs: 50, "opt-level": "all" };
  for (let i = 0; i < argv.length; ++i) {
    const key = argv[i].replace(/^--/, "");
    if (key === "baseline") args.baseline = true;
    else args[key] = argv[++i];
  }
  return args;
}

function peakRssKb() {
  const m = readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+) kB/);
  return m ? Number(m[1]) : 0;
}

// .npy version 1-3, little-endian, C order; the formats make_bench_models.py writes.
const NPY_TYPES = {
  "<f4": ["float32", Float32Array],
  "<f8": ["float64", Float64Array],
  "<i8": ["int64", BigInt64Array],
  "<i4": ["int32", Int32Array],
  "|b1": ["bool", Uint8Array],
  "|u1": ["uint8", Uint8Array],
  "|i1": ["int8", Int8Array],
  "<f2": ["float16", Uint16Array], // raw half bits, as onnxruntime-node takes them
};

function readNpy(ort, file) {
  const buf = readFileSync(file);
  if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = (major === 1 ? 10 : 12) + headerLen;
  const header = buf.toString("latin1", major === 1 ? 10 : 12, start);
  const descr = header.match(/'descr':\s*'([^']+)'/)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const dims = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  const [type, Ctor] = NPY_TYPES[descr] ?? [];
  if (!type) throw new Error(`${file}: element type ${descr} not handled`);
  const bytes = buf.subarray(start);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const data = new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT);
  return new ort.Tensor(type, type === "bool" ? Uint8Array.from(data) : data, dims);
}

function writeNpy(file, tensor) {
  const descr = { float32: "<f4", float64: "<f8", int64: "<i8", int32: "<i4", bool: "|b1", uint8: "|u1", int8: "|i1",
                  float16: "<f2" }[tensor.type];
  if (!descr) return;
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const prefix = Buffer.alloc(10);
  prefix.writeUInt32BE(0x934e554d, 0);
  prefix[4] = 0x50; // 'P'
  prefix[5] = 0x59; // 'Y'
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, "latin1"), data]));
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(join(args.ort, "node_modules", "x.js"));
  const ort = require("onnxruntime-node");
  if (args.baseline) {
    console.log(JSON.stringify({ peak_rss_kb: peakRssKb() }));
    return;
  }
  const manifest = JSON.parse(readFileSync(args.manifest, "utf8"));
  const feeds = {};
  for (const input of manifest.inputs) feeds[input.name] = readNpy(ort, input.file);

  const threads = Number(args.threads);
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(manifest.model, {
    graphOptimizationLevel: args["opt-level"],
    executionMode: "sequential",
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    ...(args.profile ? { enableProfiling: true, profileFilePrefix: args.profile } : {}),
    ...(args["save-optimized"] ? { optimizedModelFilePath: args["save-optimized"] } : {}),
  });
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;

  let outputs;
  let firstRunMs = null;
  for (let i = 0; i < Number(args.warmup); ++i) {
    const start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    if (i === 0) firstRunMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const samples = [];
  for (let i = 0; i < Number(args.runs); ++i) {
    const start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (firstRunMs === null) firstRunMs = samples[0];
  if (args.profile) session.endProfiling();
  if (args.dump) {
    mkdirSync(args.dump, { recursive: true });
    if (!outputs) outputs = await session.run(feeds);
    session.outputNames.forEach((name, k) => writeNpy(join(args.dump, `output_${k}.npy`), outputs[name]));
  }
  console.log(JSON.stringify({
    model: manifest.model,
    threads,
    runs: samples.length,
    load_ms: loadMs,
    first_run_ms: firstRunMs,
    median_ms: median(samples),
    min_ms: Math.min(...samples),
    peak_rss_kb: peakRssKb(),
  }));
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(2);
});
