package nn

import (
	"slices"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

// TestGPTDecodeFused checks that GPT.ForwardCached's fused decoding step
// gives the eager step's bits, step after step (checkDecodeFused): with
// and without biases, both GELUs, from position 0 and after a prompt, rows
// that are not a multiple of four and weights large enough that the
// products split over the pool, in float32 and with bfloat16 weights.
func TestGPTDecodeFused(t *testing.T) {
	small := GPTConfig{VocabSize: 37, BlockSize: 16, NLayer: 2, NHead: 2, NEmbd: 12, Bias: true}
	wide := GPTConfig{VocabSize: 301, BlockSize: 16, NLayer: 2, NHead: 4, NEmbd: 64, Bias: true, Activation: ActGELUTanh}
	noBias := wide
	noBias.Bias, noBias.Activation = false, ActGELU
	for name, cfg := range map[string]GPTConfig{"small": small, "wide": wide, "nobias": noBias} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
			for _, prompt := range [][]int{nil, {1, 7, 3, 20, 5}} {
				m := NewGPTWith(cfg, tensor.NewGenerator(21))
				m.Eval()
				perturbVectors(m)
				ToDType(m, dt)
				taken := func(c *KVCache) bool {
					_, ok := m.fusedDecode(c, new(decodeScratch))
					return ok
				}
				checkDecodeFused(t, name+" "+dt.String(), m, prompt, taken)
			}
		}
	}
}

// TestGPTDecodeFusedTaken checks when GPT.ForwardCached takes the fused
// step: for a float32 or bfloat16 model on the CPU under NoGrad, and not
// in grad mode, inside an autocast region, with dropout drawing masks,
// for a float16 model or past BlockSize.
func TestGPTDecodeFusedTaken(t *testing.T) {
	m := NewGPTWith(GPTConfig{VocabSize: 11, BlockSize: 4, NLayer: 1, NHead: 2, NEmbd: 8, Dropout: 0.1}, tensor.NewGenerator(3))
	m.Eval()
	c := m.NewKVCache(1, 6)
	taken := func() bool {
		_, ok := m.fusedDecode(c, new(decodeScratch))
		return ok
	}
	check := func(what string, want bool) {
		t.Helper()
		var got bool
		autograd.NoGrad(func() { got = taken() })
		if got != want {
			t.Errorf("%s: fused step %v, want %v", what, got, want)
		}
	}
	check("float32 model", true)
	if taken() {
		t.Error("grad mode on: the fused step would record nothing")
	}
	autograd.NoGrad(func() {
		tensor.Autocast(tensor.BFloat16, func() {
			if taken() {
				t.Error("inside an autocast region: fused step")
			}
		})
	})
	m.Train()
	check("dropout in training mode", false)
	m.Eval()
	c.Len = 4
	check("position 4 of a block of 4", false)
	c.Len = 0
	ToDType(m, tensor.BFloat16)
	check("bfloat16 model", true)
	ToDType(m, tensor.Float16)
	check("float16 model", false)
}

// TestConcurrentDecodeFused runs greedy generation on one shared model
// from four goroutines at once, float32 and bfloat16, GPT and Llama (each
// step fused, with scratch from a pool and widened vectors of its own),
// and checks that every goroutine gets the tokens of a run alone; under
// -race it checks that the steps share no buffer.
func TestConcurrentDecodeFused(t *testing.T) {
	gpt := NewGPTWith(GPTConfig{VocabSize: 53, BlockSize: 32, NLayer: 2, NHead: 4, NEmbd: 32, Bias: true}, tensor.NewGenerator(5))
	gpt.Eval()
	llama := NewLlamaWith(LlamaConfig{ModelType: "llama", VocabSize: 53, HiddenSize: 32, IntermediateSize: 48, NumHiddenLayers: 2,
		NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 8, MaxPositionEmbeddings: 32, RMSNormEps: 1e-6, RopeTheta: 10000}, tensor.NewGenerator(6))
	for _, dt := range []tensor.DType{tensor.Float32, tensor.BFloat16} {
		for name, m := range map[string]CausalLM{"gpt": gpt, "llama": llama} {
			ToDType(m, dt)
			run := func(first int) []int {
				var out *tensor.Tensor
				var err error
				autograd.NoGrad(func() {
					out, err = Generate(m, tensor.FromInts([]int{first, 3, 1}, 1, 3), GenerateOptions{MaxNewTokens: 12, IgnoreEOS: true})
				})
				if err != nil {
					t.Errorf("%s %s: %v", name, dt, err)
					return nil
				}
				return out.Ints()
			}
			want := make([][]int, 4)
			for g := range want {
				want[g] = run(g + 7)
			}
			got := make([][]int, 4)
			done := make(chan int)
			for g := range got {
				go func() {
					got[g] = run(g + 7)
					done <- g
				}()
			}
			for range got {
				<-done
			}
			for g := range got {
				if !slices.Equal(got[g], want[g]) {
					t.Errorf("%s %s goroutine %d: %v, alone %v", name, dt, g, got[g], want[g])
				}
			}
		}
	}
}
