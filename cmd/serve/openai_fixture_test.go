package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
	"github.com/wickml/wick/tokenizer"
)

var openaiModelDir = flag.String("openai_model_dir", "", "TestOpenAIClientModel writes its model there (scripts/openai_client_test.sh) instead of a temporary folder")

// asciiChars is the vocabulary of the OpenAI client's model: printable
// ASCII and the newline.
func asciiChars() []byte {
	b := []byte{'\n'}
	for c := byte(' '); c <= '~'; c++ {
		b = append(b, c)
	}
	return b
}

// openaiChatTemplate is the chat template scripts/openai_client_test.sh
// serves its model with.
const openaiChatTemplate = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}"

// TestOpenAIClientModel writes the model that scripts/openai_client_test.sh
// serves to the official openai client (a train checkpoint of a random GPT
// over printable ASCII, its weights scaled so that greedy answers vary, and
// a chat template beside it) and checks that it loads and that its greedy
// answers are varied text, as the script's comparisons need.
func TestOpenAIClientModel(t *testing.T) {
	dir := *openaiModelDir
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tok := tokenizer.NewChar(asciiChars())
	cfg := nn.GPTConfig{VocabSize: tok.VocabSize(), BlockSize: 128, NLayer: 2, NHead: 2, NEmbd: 32, Bias: true}
	m := nn.NewGPTWith(cfg, tensor.NewGenerator(7))
	autograd.NoGrad(func() {
		for _, p := range m.Parameters() {
			p.Detach().CopyFrom(p.Detach().MulScalar(10))
		}
	})
	// "config" as train writes it (its flags), so that train sample reads it
	ck := &nn.Checkpoint{Tokenizer: tok, LM: m, Metadata: json.RawMessage(`{"config": {}}`)}
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := nn.SaveCheckpoint(path, ck); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat.jinja"), []byte(openaiChatTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := nn.LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, prompt := range []string{"ROMEO:", "user: hi\nassistant:"} {
		p := tok.Encode(prompt)
		out, err := nn.Generate(back.LM, tensor.FromInts(p, 1, len(p)), nn.GenerateOptions{MaxNewTokens: 40})
		if err != nil {
			t.Fatal(err)
		}
		text := tok.Decode(out.Ints()[len(p):])
		distinct := map[rune]bool{}
		for _, r := range text {
			distinct[r] = true
		}
		if len(distinct) < 8 {
			t.Errorf("greedy answer to %q: %q, want 40 varied characters", prompt, text)
		}
	}
}
