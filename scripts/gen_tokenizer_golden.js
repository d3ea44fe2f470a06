// gen_tokenizer_golden.js writes testdata/tokenizer/: the ids that
// tiktoken's "gpt2" encoding (npm @dqbd/tiktoken, tiktoken's Rust core built
// for WASM) gives for a varied body of text, with "<|endoftext|>" allowed as
// a special token (nanoGPT's encode(..., allowed_special={"<|endoftext|>"})).
// Run it through scripts/gen_tokenizer_golden.sh, which installs the package.
//
// Usage: node gen_tokenizer_golden.js REPO_ROOT SHARED_DATA_DIR TIKTOKEN_VERSION
//
// It writes
//   go_source.txt  Go source: a snapshot of Wick's tensor package;
//   stress.txt     generated text (fixed seed): emoji, CJK, combining marks,
//                  other scripts, runs of spaces, tabs and newlines, numbers,
//                  contractions in both cases, <|endoftext|> mid-text;
//   gpt2.json      the ids of those files, of three 50,000-byte slices of
//                  tiny Shakespeare (read at test time from the shared data
//                  directory, so not committed), a count and SHA-256 of the
//                  ids of all of tiny Shakespeare, and a list of short cases
//                  each encoded on its own (where the text ends matters to
//                  the \s+(?!\S) rule).
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const { get_encoding } = require("@dqbd/tiktoken");

const [root, shared, version] = process.argv.slice(2);
const outDir = path.join(root, "testdata", "tokenizer");
fs.mkdirSync(outDir, { recursive: true });
const enc = get_encoding("gpt2");
const encode = (s) => Array.from(enc.encode(s, ["<|endoftext|>"]));
const sha256 = (b) => crypto.createHash("sha256").update(b).digest("hex");
// idsHash is the SHA-256 of the ids written as decimal numbers, one per line.
const idsHash = (ids) => sha256(ids.map((i) => i + "\n").join(""));

// A fixed-seed generator (mulberry32), so the stress text is reproducible.
let seed = 1337;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];

// Go source: the tensor package's files in name order, up to 80 KB.
let goSrc = "";
const tensorDir = path.join(root, "tensor");
for (const f of fs.readdirSync(tensorDir).sort()) {
  if (!f.endsWith(".go") || f.endsWith("_test.go")) continue;
  const src = fs.readFileSync(path.join(tensorDir, f), "utf8");
  if (goSrc.length + src.length > 80000) continue;
  goSrc += "// file " + f + "\n" + src;
}

const fragments = [
  // emoji, with skin tones, ZWJ sequences, flags, keycaps, variation selectors
  "😀", "🎉🎉🎉", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🇫🇷🇯🇵", "1️⃣", "❤️", "✨ sparkle ✨", "🦀🐹", "I ❤ Go",
  // CJK, kana, hangul, full-width forms
  "你好，世界。", "日本語のテキストです。", "カタカナとひらがな", "한국어 문장입니다.", "漢字", "ＡＢＣ１２３", "「引用」",
  // combining marks and other scripts
  "e\u0301cole", "cafe\u0301", "Zalgo: Z\u0351\u0363a\u0352l\u0357g\u0346o\u033e", "naïve résumé", "Ελληνικά κείμενο", "Русский текст",
  "עברית", "العربية ١٢٣", "हिन्दी भाषा", "ภาษาไทย", "Tiếng Việt có dấu", "ﬁ ligature", "ß ẞ ǅ",
  // white space: runs of spaces, tabs, newlines, CR LF, unicode spaces
  " ", "  ", "   ", "      ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", " \n ", "\t \t", "\u00a0", "a\u3000b", "\u2028", " \u00a0 ",
  // numbers
  "0", "42", "3.14159", "1,000,000", "2024-06-01", "0x1F", "1e-5", "½ ¾", "x² + y³", "Ⅻ", "١٢٣", "１２３", "007", " 12345678901234567890",
  // contractions, both cases
  "don't", "DON'T", "I'LL", "I'll", "we're", "WE'RE", "they've", "THEY'VE", "she'd", "SHE'D", "I'm", "I'M", "it's", "IT'S",
  "can't", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "''", "'''", "'S", "rock 'n' roll", "'tis", "o'clock",
  // special token, alone, doubled, mid-word, and near misses
  "<|endoftext|>", "<|endoftext|><|endoftext|>", "word<|endoftext|>word", " <|endoftext|> ", "<|endoftext", "endoftext|>", "<|ENDOFTEXT|>", "<|",
  // punctuation, code, markup
  "!!!", "?!", "...", "—", "–", "«quoted»", "\"double\"", "(parens)", "[1]", "{key: value}", "a->b", "x := y", "#include <stdio.h>",
  "https://example.com/path?q=1&r=2", "user@example.com", "<p>html</p>", "$100", "50%", "C++", "snake_case_name", "camelCaseName",
  // words
  "the", "The", "THE", "Hello", "world", "tokenizer", "antidisestablishmentarianism", "supercalifragilisticexpialidocious", "a", "I",
];
const separators = [" ", " ", " ", "", "\n", "  ", "\t", ", ", ". ", "\n\n"];

let stress = "";
// Every fragment on its own line, then with spaces and before a word.
for (const f of fragments) stress += f + "\n" + " " + f + " x" + f + "\n";
while (Buffer.byteLength(stress) < 40000) {
  const n = 1 + Math.floor(rand() * 8);
  for (let i = 0; i < n; i++) stress += pick(fragments) + pick(separators);
  if (rand() < 0.1) stress += " ".repeat(1 + Math.floor(rand() * 12));
  if (rand() < 0.05) stress += "\n".repeat(1 + Math.floor(rand() * 4));
}

// Short cases, each encoded on its own.
const cases = [...fragments];
for (const f of fragments) cases.push(f + " ", " " + f, f + "  ", f + "\n", "\n" + f, f + "\t", "  " + f);
for (let i = 0; i < 200; i++) {
  let s = "";
  const n = 1 + Math.floor(rand() * 4);
  for (let j = 0; j < n; j++) s += pick(fragments) + pick(separators);
  cases.push(s);
}
cases.push("", " ", "  ", "\n", "\t\n ", " \t", "a  ", "a \n", "a\n ", "  a", "\t\ta", "\n\n a", " 1", " !", " 😀", " 你");

fs.writeFileSync(path.join(outDir, "go_source.txt"), goSrc);
fs.writeFileSync(path.join(outDir, "stress.txt"), stress);

const files = [];
function addFile(name, file, rel, offset, length) {
  const all = fs.readFileSync(file);
  const end = length < 0 ? all.length : offset + length;
  const bytes = all.subarray(offset, end);
  const ids = encode(bytes.toString("utf8"));
  files.push({ name, path: rel, offset, length: bytes.length, sha256: sha256(bytes), ids });
}
const shakespeare = path.join(shared, "tinyshakespeare.txt");
const shakespeareRel = "../shared/data/tinyshakespeare.txt";
const total = fs.statSync(shakespeare).size;
addFile("shakespeare-head", shakespeare, shakespeareRel, 0, 50000);
addFile("shakespeare-middle", shakespeare, shakespeareRel, 500000, 50000);
addFile("shakespeare-tail", shakespeare, shakespeareRel, total - 50000, 50000);
addFile("go-source", path.join(outDir, "go_source.txt"), "testdata/tokenizer/go_source.txt", 0, -1);
addFile("stress", path.join(outDir, "stress.txt"), "testdata/tokenizer/stress.txt", 0, -1);

const whole = fs.readFileSync(shakespeare);
const wholeIds = encode(whole.toString("utf8"));
const out = {
  generator: "scripts/gen_tokenizer_golden.sh",
  tiktoken: "@dqbd/tiktoken " + version + ", get_encoding(\"gpt2\"), allowed_special [\"<|endoftext|>\"]",
  files,
  whole: { path: shakespeareRel, sha256: sha256(whole), count: wholeIds.length, ids_sha256: idsHash(wholeIds) },
  cases: cases.map((text) => ({ text, ids: encode(text) })),
};
// One file or case per line keeps diffs readable.
let json = "{\n";
json += `"generator": ${JSON.stringify(out.generator)},\n`;
json += `"tiktoken": ${JSON.stringify(out.tiktoken)},\n`;
json += `"whole": ${JSON.stringify(out.whole)},\n`;
json += `"files": [\n${files.map((f) => JSON.stringify(f)).join(",\n")}\n],\n`;
json += `"cases": [\n${out.cases.map((c) => JSON.stringify(c)).join(",\n")}\n]\n}\n`;
fs.writeFileSync(path.join(outDir, "gpt2.json"), json);
enc.free();
let textBytes = files.reduce((n, f) => n + f.length, 0) + out.cases.reduce((n, c) => n + Buffer.byteLength(c.text), 0);
console.log(`wrote ${outDir}: ${files.length} files and ${cases.length} cases, ${textBytes} bytes of text, plus all ${total} bytes of tiny Shakespeare (${wholeIds.length} ids)`);
