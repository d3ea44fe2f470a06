package nn_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"
)

var smallGPT = nn.GPTConfig{VocabSize: 11, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 16, Dropout: 0.1, Bias: true}

func paramValues(m nn.Module) map[string][]float32 {
	out := map[string][]float32{}
	for _, p := range m.NamedParameters() {
		out[p.Name] = p.Param.Float32s()
	}
	return out
}

func sameParams(a, b map[string][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestNewGPTWith checks that NewGPTWith with NewGenerator(s) builds the
// weights that ManualSeed(s) and NewGPT build, also when several
// goroutines build models at once while another reseeds the global
// generator, and that it hands the generator to the dropout layers.
func TestNewGPTWith(t *testing.T) {
	tensor.ManualSeed(21)
	want := paramValues(nn.NewGPT(smallGPT))
	if got := paramValues(nn.NewGPTWith(smallGPT, tensor.NewGenerator(21))); !sameParams(got, want) {
		t.Fatalf("NewGPTWith(NewGenerator(21)) differs from ManualSeed(21) + NewGPT")
	}
	if got := paramValues(nn.NewGPTWith(smallGPT, tensor.NewGenerator(22))); sameParams(got, want) {
		t.Fatalf("seeds 21 and 22 built the same weights")
	}
	models := make([]*nn.GPT, 4)
	var wg sync.WaitGroup
	for i := range models {
		wg.Go(func() { models[i] = nn.NewGPTWith(smallGPT, tensor.NewGenerator(21)) })
	}
	wg.Go(func() {
		for i := range 50 {
			tensor.ManualSeed(uint64(i))
			tensor.Randn(100)
		}
	})
	wg.Wait()
	for i, m := range models {
		if !sameParams(paramValues(m), want) {
			t.Errorf("model %d, built beside other goroutines, differs from one built alone", i)
		}
	}
	gen := tensor.NewGenerator(1)
	m := nn.NewGPTWith(smallGPT, gen)
	drops := []*nn.Dropout{m.Drop}
	for _, b := range m.H {
		drops = append(drops, b.Attn.AttnDropout, b.Attn.ResidDrop, b.MLP.Drop)
	}
	for i, d := range drops {
		if d.Gen != gen {
			t.Errorf("dropout layer %d does not draw from the model's generator", i)
		}
	}
	m.SetDropoutGenerator(nil)
	for i, d := range drops {
		if d.Gen != nil {
			t.Errorf("dropout layer %d kept its generator after SetDropoutGenerator(nil)", i)
		}
	}
}

// TestDropoutModuleGenerator checks that nn.Dropout draws its masks from
// Gen, and from the global generator when Gen is nil.
func TestDropoutModuleGenerator(t *testing.T) {
	x := tensor.Ones(6, 7)
	want := x.DropoutWith(0.4, true, tensor.NewGenerator(3)).Float32s()
	d := nn.NewDropout(0.4)
	d.Gen = tensor.NewGenerator(3)
	tensor.ManualSeed(99)
	if got := d.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Errorf("Dropout with Gen: %v, want %v", got, want)
	}
	d.Gen = nil
	tensor.ManualSeed(3)
	if got := d.Forward(x).Float32s(); !slices.Equal(got, want) {
		t.Errorf("Dropout with a nil Gen after ManualSeed(3): %v, want %v", got, want)
	}
	d.Eval()
	d.Gen = tensor.NewGenerator(3)
	if got := d.Forward(x).Float32s(); !slices.Equal(got, x.Float32s()) {
		t.Errorf("Dropout in eval mode changed its input: %v", got)
	}
}

// TestGenerateWithSeed checks that GenerateWith with NewGenerator(s)
// samples what ManualSeed(s) and Generate sample, whatever the global
// generator's state.
func TestGenerateWithSeed(t *testing.T) {
	m := nn.NewGPTWith(smallGPT, tensor.NewGenerator(5))
	m.Eval()
	prompt := tensor.FromInts([]int{1, 2, 3, 4, 5, 6}, 2, 3)
	tensor.ManualSeed(17)
	want := m.Generate(prompt, 10, 1.0, 0).Ints()
	tensor.ManualSeed(1234)
	if got := m.GenerateWith(prompt, 10, 1.0, 0, tensor.NewGenerator(17)).Ints(); !slices.Equal(got, want) {
		t.Errorf("GenerateWith(NewGenerator(17)) = %v, want ManualSeed(17) + Generate's %v", got, want)
	}
	tensor.ManualSeed(17)
	if got := m.GenerateWith(prompt, 10, 1.0, 0, nil).Ints(); !slices.Equal(got, want) {
		t.Errorf("GenerateWith(nil) after ManualSeed(17) = %v, want %v", got, want)
	}
}

// TestGenerateWithSharedModel runs GenerateWith on one shared model from 8
// goroutines at once, each with a generator of its own, then Forward (and
// one more goroutine reseeds and samples with the global generator): each
// output must equal the same call run alone. Under -race this also shows that a
// model's forward pass shares no mutable state between callers.
func TestGenerateWithSharedModel(t *testing.T) {
	m := nn.NewGPTWith(smallGPT, tensor.NewGenerator(7))
	m.Eval()
	const workers = 8
	prompt := func(i int) *tensor.Tensor {
		return tensor.FromInts([]int{i % 11, (3 * i) % 11, 1, (i + 5) % 11}, 2, 2)
	}
	sample := func(p *tensor.Tensor, seed uint64) []int {
		// 12 new tokens: the context outgrows BlockSize 8 and is cropped
		return m.GenerateWith(p, 12, 0.9, 6, tensor.NewGenerator(seed)).Ints()
	}
	run := func(i int) []int { return sample(prompt(i), uint64(100+i)) }
	if a, b := sample(prompt(0), 1), sample(prompt(0), 2); slices.Equal(a, b) {
		t.Fatalf("seeds 1 and 2 sampled the same tokens %v: the test could not tell generators apart", a)
	}
	want := make([][]int, workers)
	for i := range want {
		want[i] = run(i)
	}
	wantLogits := m.Forward(prompt(0)).Float32s()
	got := make([][]int, workers)
	gotLogits := make([][]float32, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			<-start
			got[i] = run(i)
			gotLogits[i] = m.Forward(prompt(0)).Float32s() // recorded: the parameters require grad
		})
	}
	wg.Go(func() {
		<-start
		for i := range 20 {
			tensor.ManualSeed(uint64(i))
			m.Generate(prompt(i), 2, 1.0, 0)
		}
	})
	close(start)
	wg.Wait()
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("goroutine %d generated %v, want %v as run alone", i, got[i], want[i])
		}
		if !slices.Equal(gotLogits[i], wantLogits) {
			t.Errorf("goroutine %d: Forward's logits differ from those computed alone", i)
		}
	}
}

// An explicit generator makes each sampling call reproducible on its own,
// whatever other goroutines do with the global generator.
func ExampleGPT_GenerateWith() {
	model := nn.NewGPTWith(nn.GPTConfig{VocabSize: 10, BlockSize: 8, NLayer: 1, NHead: 2, NEmbd: 8}, tensor.NewGenerator(1))
	model.Eval()
	prompt := tensor.FromInts([]int{1, 2, 3}, 1, 3)
	a := model.GenerateWith(prompt, 5, 1.0, 0, tensor.NewGenerator(42))
	tensor.ManualSeed(7) // the global generator does not matter
	b := model.GenerateWith(prompt, 5, 1.0, 0, tensor.NewGenerator(42))
	fmt.Println(a.Shape(), slices.Equal(a.Ints(), b.Ints()))
	// Output:
	// [1 8] true
}
