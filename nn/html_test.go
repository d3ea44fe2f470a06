package nn

import (
	"strings"
	"testing"
)

// TestModulesHTML checks that every module renders its own parameters,
// and only those, in the notebook table.
func TestModulesHTML(t *testing.T) {
	cfg := GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8, Bias: true}
	gpt := NewGPT(cfg)
	blk := gpt.H[0]
	cases := []struct {
		name string
		html string
		m    Module
	}{
		{"GPT", gpt.HTML(), gpt},
		{"Block", blk.HTML(), blk},
		{"CausalSelfAttention", blk.Attn.HTML(), blk.Attn},
		{"MLP", blk.MLP.HTML(), blk.MLP},
		{"Linear", blk.MLP.CFc.HTML(), blk.MLP.CFc},
		{"Embedding", gpt.Wte.HTML(), gpt.Wte},
		{"LayerNorm", gpt.LnF.HTML(), gpt.LnF},
		{"Dropout", gpt.Drop.HTML(), gpt.Drop},
		{"GELU", GELU{}.HTML(), GELU{}},
	}
	for _, c := range cases {
		if !strings.HasPrefix(c.html, "<table") {
			t.Errorf("%s.HTML() is not a table: %.60q", c.name, c.html)
		}
		if c.html != ParamsHTML(c.m) {
			t.Errorf("%s.HTML() differs from ParamsHTML", c.name)
		}
		for _, p := range c.m.NamedParameters() {
			if !strings.Contains(c.html, ">"+p.Name+"<") {
				t.Errorf("%s.HTML() lacks parameter %s", c.name, p.Name)
			}
		}
	}
}
