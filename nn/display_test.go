package nn_test

import (
	"encoding/xml"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wickml/wick/internal/golden"
	"github.com/wickml/wick/nn"
)

// displayGolden compares got with ../testdata/display/nn/<name>
// (-update-golden rewrites it).
func displayGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("..", "testdata", "display", "nn", name), got)
}

func tinyGPT() *nn.GPT {
	return nn.NewGPT(nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8, Bias: true})
}

// TestModuleStringGolden pins the PyTorch-style repr of each module, with
// parameter counts.
func TestModuleStringGolden(t *testing.T) {
	cfg := nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8, Bias: false}
	for name, m := range map[string]interface{ String() string }{
		"linear":    nn.NewLinear(4, 3, true),
		"linear_nb": nn.NewLinear(4, 3, false),
		"embedding": nn.NewEmbedding(11, 8),
		"layernorm": nn.NewLayerNorm(8, true),
		"dropout":   nn.NewDropout(0.1),
		"gelu":      nn.GELU{},
		"block":     nn.NewBlock(cfg),
		"gpt":       tinyGPT(),
	} {
		displayGolden(t, name+".txt.golden", m.String()+"\n")
	}
}

// TestModuleHTMLGolden pins the notebook table of a model's parameters.
func TestModuleHTMLGolden(t *testing.T) {
	g := tinyGPT()
	h := g.HTML()
	d := xml.NewDecoder(strings.NewReader(h))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("GPT.HTML is not well-formed: %v\n%s", err, h)
		}
	}
	displayGolden(t, "gpt.html.golden", h+"\n")
	displayGolden(t, "linear.html.golden", nn.ParamsHTML(nn.NewLinear(4, 3, true))+"\n")
	// One row per named parameter, between the header and the total.
	if got, want := strings.Count(h, "<tr>")-2, len(g.NamedParameters()); got != want {
		t.Errorf("GPT.HTML has %d parameter rows, want %d", got, want)
	}
}
