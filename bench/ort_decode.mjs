// The greedy decoding loop of `onnxlens-cli generate` on ONNX Runtime (npm onnxruntime-node):
// the prefill with past tensors of length 0, then one run per new token, each feeding every
// present output into the next past input, the attention mask grown by one and the position ids
// moved on. Prints one JSON document. Used only by bench/compare_decode_ort.py, never by the
// application or its tests.
//
// usage: node ort_decode.mjs --ort NODE_MODULES_DIR --manifest FILE --prompt-ids 1,2,3
//                            --new-tokens M [--threads N] [--logits FILE.npy]
//   --manifest  written by make_decoder_models.py: the model, its inputs and cache pairs
//   --logits    the last position's logits of every run (prefill first) as float32 [M, vocab]
//
// New tokens: the prefill chooses the first, each of the M - 1 steps after it one more (the same
// count as `onnxlens-cli generate --new-tokens M`); tokens per second is over those steps.
import { createRequire } from "node:module";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function parseArgs(argv) {
  const args = { threads: 1 };
  for (let i = 0; i < argv.length; ++i) args[argv[i].replace(/^--/, "")] = argv[++i];
  return args;
}

function peakRssKb() {
  const m = readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+) kB/);
  return m ? Number(m[1]) : 0;
}

function writeNpyFloat32(file, rows, width) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows.length}, ${width}), }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const prefix = Buffer.alloc(10);
  prefix.writeUInt32BE(0x934e554d, 0);
  prefix[4] = 0x50;
  prefix[5] = 0x59;
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const data = new Float32Array(rows.length * width);
  rows.forEach((row, i) => data.set(row, i * width));
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, "latin1"), Buffer.from(data.buffer)]));
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function int64Tensor(ort, values, dims) {
  return new ort.Tensor("int64", BigInt64Array.from(values.map((v) => BigInt(v))), dims);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const require = createRequire(join(args.ort, "node_modules", "x.js"));
  const ort = require("onnxruntime-node");
  const manifest = JSON.parse(readFileSync(args.manifest, "utf8"));
  const prompt = args["prompt-ids"].split(",").map(Number);
  const newTokens = Number(args["new-tokens"]);
  const threads = Number(args.threads);
  const session = await ort.InferenceSession.create(manifest.model, {
    graphOptimizationLevel: "all",
    executionMode: "sequential",
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
  });

  const feeds = {};
  for (const entry of manifest.cache) {
    const dims = [...entry.shape];
    dims[entry.batch_axis] = 1;
    dims[entry.past_axis] = 0;
    feeds[entry.past] = new ort.Tensor("float32", new Float32Array(0), dims);
  }
  let context = prompt.length;
  let current = prompt;
  const ids = [];
  const logitRows = [];
  const stepMs = [];
  let prefillMs = 0;
  for (let run = 0; run < newTokens; ++run) {
    const past = context - current.length;
    feeds[manifest.input_ids] = int64Tensor(ort, current, [1, current.length]);
    feeds[manifest.attention_mask] = int64Tensor(ort, new Array(context).fill(1), [1, context]);
    if (manifest.position_ids)  // genai's GroupQueryAttention decoders take none
      feeds[manifest.position_ids] = int64Tensor(ort, current.map((_, i) => past + i), [1, current.length]);
    const start = process.hrtime.bigint();
    const out = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (run === 0) prefillMs = ms;
    else stepMs.push(ms);
    const logits = out[manifest.logits];
    const vocab = logits.dims[logits.dims.length - 1];
    const last = logits.data.subarray(logits.data.length - vocab);
    let best = 0;
    for (let v = 1; v < vocab; ++v) if (last[v] > last[best]) best = v;
    ids.push(best);
    if (args.logits) logitRows.push(Float32Array.from(last));
    for (const entry of manifest.cache) feeds[entry.past] = out[entry.present];
    current = [best];
    context += 1;
  }
  if (args.logits) writeNpyFloat32(args.logits, logitRows, logitRows[0].length);
  const decodeMs = stepMs.reduce((a, b) => a + b, 0);
  console.log(JSON.stringify({
    model: manifest.model,
    threads,
    prompt_tokens: prompt.length,
    generated_ids: ids,
    prefill_ms: prefillMs,
    step_ms: stepMs,
    step_median_ms: stepMs.length ? median(stepMs) : null,
    tokens_per_second: decodeMs > 0 ? stepMs.length / (decodeMs / 1000) : null,
    peak_rss_kb: peakRssKb(),
  }));
}

main().catch((e) => {
  console.error(`ort_decode: ${e.message}`);
  process.exit(2);
});
