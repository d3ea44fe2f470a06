// bench_tokenizer_json.js times Hugging Face tokenizers (npm "tokenizers",
// its Rust core as a native Node module) encoding a text file as one string
// with a tokenizer.json (gzipped or not), without special tokens, after one
// untimed warm-up encoding (which fills its word cache, as Wick's "warm"
// runs have theirs), and prints the fastest of -runs encodings:
//
//   hf name=llama3 s=0.4123 ids=301768 bytes=1115394
//
// Usage: node bench_tokenizer_json.js NAME TOKENIZER_JSON[.gz] FILE RUNS
// (scripts/bench_tokenizer_json.sh runs it).
"use strict";
const fs = require("fs");
const zlib = require("zlib");
const { Tokenizer } = require("tokenizers");

const [name, tokPath, file, runs] = process.argv.slice(2);
let json = fs.readFileSync(tokPath);
if (tokPath.endsWith(".gz")) json = zlib.gunzipSync(json);
const tok = Tokenizer.fromString(json.toString("utf8"));
const bytes = fs.readFileSync(file);
const text = bytes.toString("utf8");
(async () => {
  let ids = (await tok.encode(text, null, { addSpecialTokens: false })).getIds();
  let best = Infinity;
  for (let i = 0; i < +runs; i++) {
    const t0 = process.hrtime.bigint();
    const e = await tok.encode(text, null, { addSpecialTokens: false });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    ids = e.getIds();
    best = Math.min(best, s);
  }
  console.log(`hf name=${name} s=${best.toFixed(4)} ids=${ids.length} bytes=${bytes.length}`);
})();
