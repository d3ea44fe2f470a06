package chat

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadConfigShipped(t *testing.T) {
	dir := filepath.Join("..", "testdata", "chat")
	for _, tc := range []struct {
		name     string
		bos, eos string
		stop     []string
		ids      []int
	}{
		// Llama 3's base config says <|end_of_text|>; its template ends
		// turns with <|eot_id|>, an added token: both stop.
		{"llama3", "<|begin_of_text|>", "<|end_of_text|>", []string{"<|end_of_text|>", "<|eot_id|>"}, []int{128001, 128009}},
		{"llama3.1", "<|begin_of_text|>", "<|eot_id|>", []string{"<|eot_id|>"}, []int{128009}},
		{"qwen3", "", "<|im_end|>", []string{"<|im_end|>"}, []int{151645}},
	} {
		cfg, err := LoadConfig(filepath.Join(dir, tc.name))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.BOSToken != tc.bos || cfg.EOSToken != tc.eos {
			t.Errorf("%s: bos %q eos %q, want %q %q", tc.name, cfg.BOSToken, cfg.EOSToken, tc.bos, tc.eos)
		}
		if !slices.Equal(cfg.Stop, tc.stop) || !slices.Equal(cfg.StopTokenIDs, tc.ids) {
			t.Errorf("%s: stop %q %v, want %q %v", tc.name, cfg.Stop, cfg.StopTokenIDs, tc.stop, tc.ids)
		}
		for _, id := range cfg.StopTokenIDs {
			if !slices.Contains(cfg.Stop, cfg.AddedTokens[id]) {
				t.Errorf("%s: stop id %d is %q, not one of %q", tc.name, id, cfg.AddedTokens[id], cfg.Stop)
			}
		}
		if _, err := cfg.Template(""); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestParseConfigForms(t *testing.T) {
	tc := `{
		"bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": false},
		"eos_token": {"__type": "AddedToken", "content": "</s>"},
		"chat_template": [
			{"name": "default", "template": "{{ bos_token }}{% for m in messages %}{{ m.content }}<|end|>{% endfor %}"},
			{"name": "rag", "template": "{{ messages | length }}"}
		],
		"added_tokens_decoder": {
			"1": {"content": "<s>"}, "2": {"content": "</s>"},
			"32007": {"content": "<|end|>", "special": true},
			"32000": {"content": "<|endoftext|>"}
		}
	}`
	gc := `{"bos_token_id": 1, "eos_token_id": [32000, 2, 32007]}`
	cfg, err := ParseConfig([]byte(tc), []byte(gc))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BOSToken != "<s>" || cfg.EOSToken != "</s>" {
		t.Errorf("bos %q eos %q", cfg.BOSToken, cfg.EOSToken)
	}
	if want := []string{"</s>", "<|endoftext|>", "<|end|>"}; !slices.Equal(cfg.Stop, want) {
		t.Errorf("stop %q, want %q", cfg.Stop, want)
	}
	if want := []int{2, 32000, 32007}; !slices.Equal(cfg.StopTokenIDs, want) {
		t.Errorf("stop ids %v, want %v", cfg.StopTokenIDs, want)
	}
	rag, err := cfg.Template("rag")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{Role: "user", Content: "a"}, {Role: "assistant", Content: "b"}}
	if got, err := rag.Render(msgs, Options{}); err != nil || got != "2" {
		t.Errorf("rag: %q, %v", got, err)
	}
	def, err := cfg.Template("")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := def.Render(msgs, Options{}); err != nil || got != "<s>a<|end|>b<|end|>" {
		t.Errorf("default: %q, %v", got, err)
	}
	if _, err := cfg.Template("tool_use"); err == nil || !strings.Contains(err.Error(), "default, rag") {
		t.Errorf("unknown name: %v", err)
	}

	// generation_config.json with one id, null tokens, no template.
	cfg, err = ParseConfig([]byte(`{"bos_token": null, "eos_token": null, "added_tokens_decoder": {"7": {"content": "<eos>"}}}`), []byte(`{"eos_token_id": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BOSToken != "" || !slices.Equal(cfg.Stop, []string{"<eos>"}) || !slices.Equal(cfg.StopTokenIDs, []int{7}) {
		t.Errorf("%+v", cfg)
	}
	if _, err := cfg.Template(""); err == nil || !strings.Contains(err.Error(), "no chat template") {
		t.Errorf("no template: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ tok, gen, want string }{
		{`{`, ``, "tokenizer_config.json"},
		{`{"chat_template": 3}`, ``, "chat_template"},
		{`{"chat_template": [{"name": "x"}]}`, ``, "entry 0"},
		{`{"chat_template": [{"name": "x", "template": ""}, {"name": "x", "template": ""}]}`, ``, "named twice"},
		{`{"eos_token": 5}`, ``, "eos_token"},
		{`{"bos_token": {"lstrip": true}}`, ``, "bos_token"},
		{`{"added_tokens_decoder": {"x": {"content": "a"}}}`, ``, "not a token id"},
		{`{}`, `{"eos_token_id": "2"}`, "generation_config.json"},
		{`{}`, `[`, "generation_config.json"},
	} {
		var gen []byte
		if tc.gen != "" {
			gen = []byte(tc.gen)
		}
		_, err := ParseConfig([]byte(tc.tok), gen)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: error %v, want one naming %q", tc.tok, tc.gen, err, tc.want)
		}
	}
	cfg, err := ParseConfig([]byte(`{"chat_template": "{% if %}"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Template(""); err == nil || !strings.Contains(err.Error(), "compile") {
		t.Errorf("bad source: %v", err)
	}
}

func TestLoadConfigFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), "tokenizer_config.json") {
		t.Errorf("missing file: %v", err)
	}
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer_config.json", `{"eos_token": "<|im_end|>", "chat_template": "old", "added_tokens_decoder": {"5": {"content": "<|im_end|>"}, "6": {"content": "<|endoftext|>"}}}`)
	write("chat_template.jinja", "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}")
	write("generation_config.json", `{"eos_token_id": [5, 6]}`)
	cfg, err := LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cfg.Templates[DefaultTemplate], "{% for") {
		t.Errorf("chat_template.jinja does not replace the config's template: %q", cfg.Templates[DefaultTemplate])
	}
	if !slices.Equal(cfg.Stop, []string{"<|im_end|>", "<|endoftext|>"}) || !slices.Equal(cfg.StopTokenIDs, []int{5, 6}) {
		t.Errorf("stop %q %v", cfg.Stop, cfg.StopTokenIDs)
	}
	write("generation_config.json", `{"eos_token_id": {}}`)
	if _, err := LoadConfig(dir); err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "generation_config.json") {
		t.Errorf("bad generation config: %v", err)
	}
}
