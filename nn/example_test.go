package nn_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/optim"
	"github.com/wickml/wick/tensor"
)

// Train a tiny GPT to continue a repeating sequence.
func ExampleGPT() {
	tensor.ManualSeed(1337)
	data := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0}
	x := tensor.FromInts(data[:16], 1, 16) // inputs
	y := tensor.FromInts(data[1:], 1, 16)  // next tokens
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 8, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16})
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	for step := range 100 {
		loss := model.Loss(x, y)
		if step == 0 {
			fmt.Printf("initial loss %.1f\n", loss.Item())
		}
		loss.Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	fmt.Println("trained loss below 0.05:", model.Loss(x, y).Item() < 0.05)
	model.Eval()
	fmt.Println(model.Generate(tensor.FromInts(data[:4], 1, 4), 8, 1.0, 1).Ints())
	// Output:
	// initial loss 2.1
	// trained loss below 0.05: true
	// [0 1 2 3 4 5 6 7 0 1 2 3]
}

func ExampleGPT_String() {
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 65, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 8})
	fmt.Println(model)
	// Output:
	// GPT(  # 1,440 params
	//   (transformer): ModuleDict(  # 1,440 params
	//     (wte): Embedding(65, 8)  # 520 params
	//     (wpe): Embedding(16, 8)  # 128 params
	//     (drop): Dropout(p=0.0, inplace=False)
	//     (h): ModuleList(  # 784 params
	//       (0): Block(  # 784 params
	//         (ln_1): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//         (attn): CausalSelfAttention(  # 256 params
	//           (c_attn): Linear(in_features=8, out_features=24, bias=False)  # 192 params
	//           (c_proj): Linear(in_features=8, out_features=8, bias=False)  # 64 params
	//           (attn_dropout): Dropout(p=0.0, inplace=False)
	//           (resid_dropout): Dropout(p=0.0, inplace=False)
	//         )
	//         (ln_2): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//         (mlp): MLP(  # 512 params
	//           (c_fc): Linear(in_features=8, out_features=32, bias=False)  # 256 params
	//           (gelu): GELU(approximate='none')
	//           (c_proj): Linear(in_features=32, out_features=8, bias=False)  # 256 params
	//           (dropout): Dropout(p=0.0, inplace=False)
	//         )
	//       )
	//     )
	//     (ln_f): LayerNorm((8,), eps=1e-05, bias=False)  # 8 params
	//   )
	//   (lm_head): Linear(in_features=8, out_features=65, bias=False)  # tied to transformer.wte.weight
	// )
}

// mlp is a user-defined model: its Module methods come from the embedded
// Container, which lists the children by name.
type mlp struct {
	nn.Container
	FC1, FC2 *nn.Linear
}

func newMLP(in, hidden, out int) *mlp {
	m := &mlp{FC1: nn.NewLinear(in, hidden, true), FC2: nn.NewLinear(hidden, out, true)}
	m.Container = nn.NewContainer(m, nn.Named("fc1", m.FC1), nn.Named("fc2", m.FC2))
	return m
}

func (m *mlp) Forward(x *tensor.Tensor) *tensor.Tensor {
	return m.FC2.Forward(m.FC1.Forward(x).ReLU())
}

// A model of one's own gets PyTorch's parameter names from an
// nn.Container, and saves and loads by name.
func ExampleContainer() {
	tensor.ManualSeed(1)
	m := newMLP(4, 8, 2)
	for _, p := range m.NamedParameters() {
		fmt.Println(p.Name, p.Param.Shape())
	}
	path := filepath.Join(os.TempDir(), "wick-example-mlp.safetensors")
	defer os.Remove(path)
	if err := nn.SaveFile(path, m); err != nil {
		fmt.Println(err)
	}
	again := newMLP(4, 8, 2) // other random weights
	if err := nn.LoadFile(path, again); err != nil {
		fmt.Println(err)
	}
	x := tensor.Randn(3, 4)
	fmt.Println("same output after loading:", slices.Equal(m.Forward(x).Float32s(), again.Forward(x).Float32s()))
	// Output:
	// fc1.weight [8 4]
	// fc1.bias [8]
	// fc2.weight [2 8]
	// fc2.bias [2]
	// same output after loading: true
}

// Sequential names its layers' parameters by position, as PyTorch does.
func ExampleSequential() {
	model := nn.Sequential{nn.NewLinear(4, 16, true), nn.ReLU{}, nn.NewLinear(16, 2, true)}
	for _, p := range model.NamedParameters() {
		fmt.Println(p.Name, p.Param.Shape())
	}
	y := model.Forward(tensor.Ones(5, 4))
	fmt.Println(y.Shape())
	fmt.Println(model)
	// Output:
	// 0.weight [16 4]
	// 0.bias [16]
	// 2.weight [2 16]
	// 2.bias [2]
	// [5 2]
	// Sequential(  # 114 params
	//   (0): Linear(in_features=4, out_features=16, bias=True)  # 80 params
	//   (1): ReLU()
	//   (2): Linear(in_features=16, out_features=2, bias=True)  # 34 params
	// )
}

// Losses take a reduction, like PyTorch's reduction argument.
func ExampleMSELoss() {
	pred := tensor.New([]float32{1, 2, 3})
	target := tensor.New([]float32{1, 0, 0})
	fmt.Println(nn.MSELoss(pred, target, nn.ReduceMean).Item())
	fmt.Println(nn.MSELoss(pred, target, nn.ReduceSum).Item())
	fmt.Println(nn.MSELoss(pred, target, nn.ReduceNone).Float32s())
	// Output:
	// 4.3333335
	// 13
	// [0 4 9]
}

// The README's training loop: a tiny GPT learns a repeating sequence and
// continues it greedily (top_k 1).
func ExampleNewGPT() {
	tensor.ManualSeed(1337)
	data := []int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0}
	x := tensor.FromInts(data[:16], 1, 16) // inputs
	y := tensor.FromInts(data[1:], 1, 16)  // next tokens
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 8, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16})
	opt := optim.NewAdamW(model.Parameters(), optim.AdamWConfig{LR: 1e-2})
	for range 100 {
		loss := model.Loss(x, y)
		loss.Backward()
		opt.Step()
		opt.ZeroGrad()
	}
	model.Eval()
	fmt.Println(model.Generate(tensor.FromInts(data[:4], 1, 4), 8, 1.0, 1).Ints())
	// Output:
	// [0 1 2 3 4 5 6 7 0 1 2 3]
}

// Sample from the checkpoint that `go run ./cmd/train` leaves in out/.
// (Compiled, not run: the file exists only after a training run.)
func ExampleLoadCheckpoint() {
	ck, err := nn.LoadCheckpoint("out/ckpt.safetensors")
	if err != nil {
		log.Fatal(err)
	}
	ids := ck.Tokenizer.Encode("ROMEO:")
	out := ck.Model.GenerateWith(tensor.FromInts(ids, 1, len(ids)), 200, 0.8, 200, tensor.NewGenerator(1337))
	fmt.Println(ck.Tokenizer.Decode(out.Ints()))
	fmt.Println(ck.Config, ck.Iter)
}

// A model of one's own with a list of layers: ModuleList names its
// children by position inside the parent, as torch.nn.ModuleList does.
func ExampleContainer_moduleList() {
	type Net struct {
		nn.Container // Parameters, NamedParameters, Train, Eval and String from the list below
		Embed        *nn.Linear
		Layers       nn.ModuleList
	}
	m := &Net{Embed: nn.NewLinear(3, 8, true), Layers: nn.ModuleList{nn.NewLinear(8, 8, true), nn.NewLinear(8, 8, false)}}
	m.Container = nn.NewContainer(m, nn.Named("embed", m.Embed), nn.Named("layers", m.Layers)) // a field left out panics here
	for _, p := range m.NamedParameters() {
		fmt.Println(p.Name, p.Param.Shape())
	}
	fmt.Println(nn.NumParams(m))
	// Output:
	// embed.weight [8 3]
	// embed.bias [8]
	// layers.0.weight [8 8]
	// layers.0.bias [8]
	// layers.1.weight [8 8]
	// 168
}

// One model shared by goroutines that generate at once, each with a
// generator of its own: each gets the tokens it would get alone.
func ExampleGPT_GenerateWith_goroutines() {
	model := nn.NewGPT(nn.GPTConfig{VocabSize: 8, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16})
	model.Eval() // nobody trains it while it serves
	prompt := tensor.FromInts([]int{0, 1, 2}, 1, 3)
	outs := make([][]int, 4)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Go(func() {
			gen := tensor.NewGenerator(uint64(i)) // one per request or goroutine
			outs[i] = model.GenerateWith(prompt, 10, 0.8, 200, gen).Ints()
		})
	}
	wg.Wait()
	alone := model.GenerateWith(prompt, 10, 0.8, 200, tensor.NewGenerator(2)).Ints()
	fmt.Println(slices.Equal(outs[2], alone))
	// Output:
	// true
}
