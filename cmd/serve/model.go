package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/wickml/wick/chat"
	"github.com/wickml/wick/internal/boundedread"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tokenizer"
)

// model is what the server serves: the model, its tokenizer and how to
// chat with it.
type model struct {
	lm   nn.CausalLM
	tok  tokenizer.Tokenizer
	kind string // "train checkpoint" or "Hugging Face model"
	chat *chat.Config
	tmpl *chat.Template
	// notFinite names a parameter holding NaN or Inf ("" when none).
	notFinite string
}

// loadModel loads --model: a checkpoint written by train (its file, or
// the out_dir holding ckpt.safetensors), a Hugging Face model directory
// or a hub name in the Hugging Face cache. tokDir, when set, is the
// directory of a Hugging Face model's tokenizer (and chat template), in
// place of the model's own. templateFile, when set, is a Jinja chat
// template that replaces the model's.
func loadModel(path, tokDir, templateFile string) (*model, error) {
	m, err := load(path, tokDir)
	if err != nil {
		return nil, err
	}
	if templateFile != "" {
		src, err := boundedread.ReadFile(templateFile, 1<<20, "chat template")
		if err != nil {
			return nil, fmt.Errorf("--chat_template: %v", err)
		}
		bos, eos := "", ""
		if m.chat != nil {
			bos, eos = m.chat.BOSToken, m.chat.EOSToken
		}
		if m.tmpl, err = chat.Compile(string(src), bos, eos); err != nil {
			return nil, fmt.Errorf("--chat_template=%s: %v", templateFile, strings.TrimPrefix(err.Error(), "chat: "))
		}
	}
	if n, v := m.tok.VocabSize(), m.lm.VocabSize(); n > v {
		return nil, fmt.Errorf("--model=%s: the tokenizer has %d tokens, more than the model's %d", path, n, v)
	}
	m.lm.Eval()
	m.notFinite = nonFiniteParam(m.lm)
	return m, nil
}

func load(path, tokDir string) (*model, error) {
	fail := func(err error) error {
		msg := err.Error()
		for _, p := range []string{"nn: ", "LoadCausalLM: ", "LoadCheckpoint: "} {
			msg = strings.TrimPrefix(msg, p)
		}
		return fmt.Errorf("--model=%s: %s", path, msg)
	}
	ckpt := path
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		ckpt = filepath.Join(path, "ckpt.safetensors")
		if _, err := os.Stat(ckpt); err != nil {
			ckpt = "" // a Hugging Face directory
			if _, err := os.Stat(filepath.Join(path, "config.json")); err != nil {
				return nil, fmt.Errorf("--model=%s: the directory holds neither ckpt.safetensors (a train checkpoint) nor config.json (a Hugging Face model)", path)
			}
		}
	} else if err != nil {
		ckpt = "" // a hub name
	}
	if ckpt != "" {
		ck, err := nn.LoadCheckpoint(ckpt)
		if err != nil {
			return nil, fail(err)
		}
		if tokDir != "" {
			return nil, fmt.Errorf("--tokenizer_dir: --model=%s is a train checkpoint, which holds its own tokenizer", path)
		}
		return &model{lm: ck.LM, tok: ck.Tokenizer, kind: "train checkpoint"}, nil
	}
	dir, err := nn.PretrainedDir(path)
	if err != nil {
		return nil, fail(err)
	}
	lm, err := nn.LoadCausalLM(dir)
	if err != nil {
		return nil, fail(err)
	}
	m := &model{lm: lm, kind: "Hugging Face model"}
	if tokDir != "" {
		if m.tok, err = tokenizer.LoadPretrained(tokDir); err != nil {
			return nil, fmt.Errorf("--tokenizer_dir=%s: %s", tokDir, strings.TrimPrefix(err.Error(), "tokenizer: "))
		}
		dir = tokDir // and its chat template
	} else if lm.ModelType() == "gpt2" && !exists(dir, "tokenizer.json", "vocab.json", "encoder.json") {
		m.tok = tokenizer.NewGPT2() // GPT-2's vocabulary, built in
	} else if m.tok, err = tokenizer.LoadPretrained(dir); err != nil {
		return nil, fail(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tokenizer_config.json")); err == nil {
		if m.chat, err = chat.LoadConfig(dir); err != nil {
			return nil, fmt.Errorf("--model=%s: %s", path, strings.TrimPrefix(err.Error(), "chat: "))
		}
		if len(m.chat.Templates) > 0 {
			if m.tmpl, err = m.chat.Template(""); err != nil {
				return nil, fail(err)
			}
		}
	}
	return m, nil
}

// exists reports whether dir holds one of the files.
func exists(dir string, files ...string) bool {
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// nonFiniteParam returns "NaN in NAME" (or Inf) for the first parameter
// of m with a non-finite value, or "".
func nonFiniteParam(m nn.Module) string {
	for _, p := range m.NamedParameters() {
		for _, v := range p.Param.Float32s() {
			if v != v {
				return "NaN in " + p.Name
			}
			if math.IsInf(float64(v), 0) {
				return "Inf in " + p.Name
			}
		}
	}
	return ""
}
