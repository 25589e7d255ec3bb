// Cross-checks the opset 18-24 test models of tests/app/newer_opsets against ONNX Runtime (npm
// onnxruntime-node): the numpy expectations those tests compare onnxlens with should also be what
// ONNX Runtime computes. Not a CI test (ONNX Runtime is never a dependency of onnxlens).
//   /usr/bin/python3 tests/app/newer_opsets/newer_opset_models.py build/release/app/onnxlens-cli --keep /tmp/opset-cases
//   NODE_PATH=~/.cache/onnxlens-bench/ort/node_modules node bench/ort_newer_opsets.mjs /tmp/opset-cases
// Prints one line per model: ok, MISMATCH (largest difference) or the error ONNX Runtime gave.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const ort = require("onnxruntime-node");
const root = process.argv[2];
if (!root) {
    console.error("usage: node bench/ort_newer_opsets.mjs CASES_DIR");
    process.exit(2);
}
const typed = {
    float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
    int16: Int16Array, uint16: Uint16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};
const ortType = { float32: "float32", float64: "float64", int64: "int64", int32: "int32",
    int16: "int16", uint16: "uint16", int8: "int8", uint8: "uint8", bool: "bool" };

function tensorOf(v) {
    const Kind = typed[v.dtype];
    const values = v.data.map(Number);  // NaN and infinities come as strings
    const data = v.dtype === "int64" ? Kind.from(values.map((x) => BigInt(Math.round(x)))) : Kind.from(values);
    return new ort.Tensor(ortType[v.dtype], data, v.shape);
}

let failures = 0;
for (const name of fs.readdirSync(root).sort()) {
    const file = path.join(root, name, "case.json");
    if (!fs.existsSync(file)) continue;
    const c = JSON.parse(fs.readFileSync(file, "utf8"));
    if (c.outputs.length === 0) continue;
    try {
        const session = await ort.InferenceSession.create(path.join(root, name, "model.onnx"));
        const feeds = {};
        for (const v of c.inputs) feeds[v.name] = tensorOf(v);
        const result = await session.run(feeds);
        let worst = 0;
        for (const v of c.outputs) {
            const got = Array.from(result[v.name].data, Number);
            for (let i = 0; i < got.length; i++) {
                const want = Number(v.data[i]);
                if (got[i] === want || (Number.isNaN(got[i]) && Number.isNaN(want))) continue;
                const diff = Math.abs(got[i] - want) / Math.max(1, Math.abs(want));
                worst = Math.max(worst, Number.isNaN(diff) ? Infinity : diff);
            }
        }
        const ok = worst <= 1e-3;
        if (!ok) failures++;
        console.log(`${name}: ${ok ? "ok" : "MISMATCH"} (largest relative difference ${worst.toExponential(2)})`);
    } catch (e) {
        console.log(`${name}: ONNX Runtime error: ${String(e.message).split("\n")[0]}`);
    }
}
process.exit(failures ? 1 : 0);
