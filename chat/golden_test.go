package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goldenFile is testdata/chat/goldens.json, written by
// scripts/gen_chat_golden.sh with @huggingface/jinja.
type goldenFile struct {
	Generator string `json:"generator"`
	Now       string `json:"now"`
	Cases     []struct {
		Template string `json:"template"`
		Name     string `json:"name"`
		Messages []struct {
			Role             string `json:"role"`
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
		} `json:"messages"`
		AddGenerationPrompt bool           `json:"add_generation_prompt"`
		Vars                map[string]any `json:"vars"`
		Output              *string        `json:"output"`
		Error               string         `json:"error"`
	} `json:"cases"`
}

func readGoldens(t testing.TB) *goldenFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "chat", "goldens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return &g
}

// goldenTemplates compiles the templates the goldens use, from the files
// beside them: the tokenizer configs through LoadConfig, the others with
// the BOS and EOS tokens the generator gave them.
func goldenTemplates(t testing.TB) map[string]*Template {
	t.Helper()
	dir := filepath.Join("..", "testdata", "chat")
	out := map[string]*Template{}
	for _, name := range []string{"llama3", "llama3.1", "qwen3"} {
		cfg, err := LoadConfig(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if out[name], err = cfg.Template(""); err != nil {
			t.Fatal(err)
		}
	}
	for name, file := range map[string]string{"llama3.2": "llama3.2/chat_template.jinja", "alternate": "alternate.jinja"} {
		src, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		bos, eos := "<|begin_of_text|>", "<|eot_id|>"
		if name == "alternate" {
			bos, eos = "<s>", "</s>"
		}
		if out[name], err = Compile(strings.TrimSuffix(string(src), "\n"), bos, eos); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestGolden renders every conversation of the goldens and compares the
// prompt with @huggingface/jinja's byte for byte (and the failures of
// raise_exception by their message).
func TestGolden(t *testing.T) {
	g := readGoldens(t)
	now, err := time.Parse(time.RFC3339, g.Now)
	if err != nil {
		t.Fatal(err)
	}
	tmpls := goldenTemplates(t)
	seen := map[string]int{}
	for _, c := range g.Cases {
		tmpl := tmpls[c.Template]
		if tmpl == nil {
			t.Fatalf("case %s/%s: unknown template", c.Template, c.Name)
		}
		msgs := make([]Message, len(c.Messages))
		for i, m := range c.Messages {
			msgs[i] = Message{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent}
		}
		got, err := tmpl.Render(msgs, Options{AddGenerationPrompt: c.AddGenerationPrompt, Now: now, Vars: c.Vars})
		id := c.Template + "/" + c.Name
		if c.AddGenerationPrompt {
			id += "+gen"
		}
		seen[c.Template]++
		switch {
		case c.Output == nil:
			if err == nil || !strings.Contains(err.Error(), c.Error) {
				t.Errorf("%s: got %q, %v; want the error %q", id, got, err, c.Error)
			}
		case err != nil:
			t.Errorf("%s: %v", id, err)
		case got != *c.Output:
			t.Errorf("%s:\n got %q\nwant %q", id, got, *c.Output)
		}
	}
	for _, name := range []string{"llama3", "llama3.1", "llama3.2", "qwen3", "alternate"} {
		if seen[name] < 4 {
			t.Errorf("template %s: %d golden cases, want at least 4", name, seen[name])
		}
	}
}
