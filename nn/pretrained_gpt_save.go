package nn

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wickml/wick/internal/atomicfile"
)

// SavePretrained writes g to dir in Hugging Face's GPT-2 layout, the one
// LoadPretrained reads (and transformers' GPT2LMHeadModel): config.json
// (model_type gpt2, n_embd, n_layer, n_head, n_positions = BlockSize,
// vocab_size, activation_function from Activation) and model.safetensors
// with the names prefixed "transformer.", the Conv1D weights
// (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj) transposed to [in, out],
// and lm_head left out (tied to wte). The tensors are F32 (bfloat16 and
// float16 weights widened exactly). Each file is written atomically. A GPT
// without biases (Bias false) has no GPT-2 layout: SavePretrained returns
// an error for it, as it does for one the hub loader would refuse.
func (g *GPT) SavePretrained(dir string) error {
	fail := func(err error) error { return fmt.Errorf("nn: SavePretrained: %w", err) }
	c := g.Config
	if !c.Bias {
		return fail(fmt.Errorf("%w: a GPT without biases (bias false) has no GPT-2 layout", ErrBadConfig))
	}
	act := "gelu"
	if c.Activation == ActGELUTanh {
		act = "gelu_new"
	}
	hf := map[string]any{
		"architectures": []string{"GPT2LMHeadModel"}, "model_type": "gpt2",
		"vocab_size": c.VocabSize, "n_positions": c.BlockSize, "n_ctx": c.BlockSize,
		"n_embd": c.NEmbd, "n_layer": c.NLayer, "n_head": c.NHead, "n_inner": nil,
		"layer_norm_epsilon": 1e-5, "activation_function": act, "tie_word_embeddings": true,
		"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
	}
	b, err := json.MarshalIndent(hf, "", "  ")
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	sd := StateDict{}
	for _, p := range g.NamedParameters() {
		w := p.Param.Detach()
		if conv1D(p.Name) {
			w = w.T().Contiguous()
		}
		sd[p.Name] = w
	}
	if err := SaveStateDictFile(filepath.Join(dir, hfWeights), sd, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, hfConfigFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return fail(err)
	}
	return nil
}
