// bench_tokenizer.js times tiktoken's core (npm @dqbd/tiktoken: the Rust
// library built for WASM) encoding a text file with the "gpt2" encoding and
// "<|endoftext|>" allowed, after one untimed warm-up encoding, and prints
//
//   tiktoken s=0.3123 ids=338025 bytes=1115394
//
// Usage: node bench_tokenizer.js FILE (scripts/bench_tokenizer.sh runs it).
"use strict";
const fs = require("fs");
const { get_encoding } = require("@dqbd/tiktoken");

const bytes = fs.readFileSync(process.argv[2]);
const text = bytes.toString("utf8");
const enc = get_encoding("gpt2");
enc.encode(text, ["<|endoftext|>"]);
const t0 = process.hrtime.bigint();
const ids = enc.encode(text, ["<|endoftext|>"]);
const s = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`tiktoken s=${s.toFixed(4)} ids=${ids.length} bytes=${bytes.length}`);
enc.free();
