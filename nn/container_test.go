package nn_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/nn"
	"github.com/wickml/wick/tensor"

	"github.com/wickml/wick/internal/approx"
)

// The PyTorch side of these tests is gen_containers in
// scripts/gen_golden_nn.py: the same layers, built there, saved by name.

var updateWickFile = flag.Bool("update-wick-file", false, "rewrite testdata/nn/sequential_wick.safetensors, which scripts/gen_golden_nn.py loads into PyTorch")

func newGoldenSequential() nn.Sequential { return newGoldenSequentialWith(nil) }

// newGoldenSequentialWith is the golden Sequential with its weights drawn
// from gen (the global generator if nil).
func newGoldenSequentialWith(gen *tensor.Generator) nn.Sequential {
	return nn.Sequential{
		nn.NewLinearWith(4, 8, true, gen), nn.ReLU{}, nn.NewLinearWith(8, 8, true, gen), nn.Tanh{},
		nn.NewLinearWith(8, 6, true, gen), nn.GELU{}, nn.NewLinearWith(6, 3, true, gen), nn.Sigmoid{},
	}
}

// TestWickFileLoadsInPyTorch is the direction Wick → PyTorch: the file that
// Wick writes for this Sequential (committed, byte for byte what SaveFile
// writes today) was loaded by gen_golden_nn.py into a torch.nn.Sequential
// of the same layers with load_state_dict(strict=True), and PyTorch's
// output on its x must equal Wick's.
func TestWickFileLoadsInPyTorch(t *testing.T) {
	s := newGoldenSequentialWith(tensor.NewGenerator(21))
	committed := filepath.Join("..", "testdata", "nn", "sequential_wick.safetensors")
	fresh := filepath.Join(t.TempDir(), "s.safetensors")
	if err := nn.SaveFile(fresh, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if *updateWickFile {
		if err := os.WriteFile(committed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s; now run /usr/bin/python3 scripts/gen_golden_nn.py", committed)
	}
	want, err := os.ReadFile(committed)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("SaveFile no longer writes %s byte for byte; rewrite it with -update-wick-file and rerun gen_golden_nn.py", committed)
	}
	sd := readGolden(t, "sequential_wick_golden.safetensors")
	approx.EqualTensor(t, "PyTorch's output of Wick's file", s.Forward(get(t, sd, "x")), get(t, sd, "y"), 1e-4, 1e-8)
}

// net is the golden Net: a user module whose Module methods come from an
// nn.Container.
type net struct {
	nn.Container
	Embed  *nn.Linear
	Layers nn.ModuleList
	Act    nn.GELU
	Head   nn.Sequential
}

func newNet() *net {
	m := &net{
		Embed:  nn.NewLinear(3, 5, true),
		Layers: nn.ModuleList{nn.NewLinear(5, 5, true), nn.NewLinear(5, 5, false)},
		Head:   nn.Sequential{nn.NewLinear(5, 2, true), nn.Sigmoid{}},
	}
	m.Container = nn.NewContainer(m,
		nn.Named("embed", m.Embed), nn.Named("layers", m.Layers), nn.Named("act", m.Act), nn.Named("head", m.Head),
	)
	return m
}

func (m *net) Forward(x *tensor.Tensor) *tensor.Tensor {
	x = m.Act.Forward(m.Embed.Forward(x))
	for _, l := range m.Layers {
		x = l.(*nn.Linear).Forward(x).Tanh()
	}
	return m.Head.Forward(x)
}

// checkContainerGolden loads PyTorch's weights into m by name, then
// compares the names, the output and every gradient with PyTorch's.
func checkContainerGolden(t *testing.T, name string, m nn.Module, forward func(*tensor.Tensor) *tensor.Tensor) {
	t.Helper()
	path := filepath.Join("..", "testdata", "nn", name+".safetensors")
	if err := nn.LoadFile(path, m); err != nil {
		t.Fatal(err)
	}
	gsd, meta, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", name+"_golden.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal([]byte(meta["named_parameters"]), &want); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range m.NamedParameters() {
		got = append(got, p.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("names %q, PyTorch's named_parameters %q", got, want)
	}
	x := get(t, gsd, "x").Clone().RequiresGrad()
	y := forward(x)
	approx.EqualTensor(t, name+" y", y, get(t, gsd, "y"), 1e-4, 1e-8)
	y.Mul(get(t, gsd, "g")).Sum().Backward()
	approx.EqualTensor(t, name+" grad_x", x.Grad(), get(t, gsd, "grad_x"), 1e-4, 1e-8)
	for _, p := range m.NamedParameters() {
		approx.EqualTensor(t, name+" grad."+p.Name, p.Param.Grad(), get(t, gsd, "grad."+p.Name), 1e-4, 1e-8)
	}
}

func TestSequentialMatchesPyTorch(t *testing.T) {
	s := newGoldenSequential()
	checkContainerGolden(t, "sequential", s, s.Forward)
}

func TestContainerMatchesPyTorch(t *testing.T) {
	m := newNet()
	checkContainerGolden(t, "container", m, m.Forward)
}

// TestContainerSaveLoad saves Wick's models and loads them into fresh ones:
// the names in the files are PyTorch's state_dict keys (those of the
// files PyTorch wrote), so torch's load_state_dict accepts them by name.
func TestContainerSaveLoad(t *testing.T) {
	dir := t.TempDir()
	for name, mk := range map[string]func() (nn.Module, func(*tensor.Tensor) *tensor.Tensor, *tensor.Tensor){
		"sequential": func() (nn.Module, func(*tensor.Tensor) *tensor.Tensor, *tensor.Tensor) {
			s := newGoldenSequential()
			return s, s.Forward, tensor.Randn(2, 4)
		},
		"container": func() (nn.Module, func(*tensor.Tensor) *tensor.Tensor, *tensor.Tensor) {
			m := newNet()
			return m, m.Forward, tensor.Randn(2, 3)
		},
	} {
		tensor.ManualSeed(5)
		a, fa, x := mk()
		b, fb, _ := mk() // other random weights
		path := filepath.Join(dir, name+".safetensors")
		if err := nn.SaveFile(path, a); err != nil {
			t.Fatal(err)
		}
		saved, _, err := nn.LoadStateDictFile(path)
		if err != nil {
			t.Fatal(err)
		}
		torchFile, _, err := nn.LoadStateDictFile(filepath.Join("..", "testdata", "nn", name+".safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(saved.Names(), torchFile.Names()) {
			t.Errorf("%s: Wick saves %q, PyTorch's state_dict has %q", name, saved.Names(), torchFile.Names())
		}
		if slices.Equal(fa(x).Float32s(), fb(x).Float32s()) {
			t.Fatalf("%s: two fresh models agree before loading", name)
		}
		if err := nn.LoadFile(path, b); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fa(x).Float32s(), fb(x).Float32s()) {
			t.Errorf("%s: the loaded model computes something else", name)
		}
	}
}

func TestContainerNamesAndModes(t *testing.T) {
	shared := nn.NewLinear(2, 2, true)
	drop := nn.NewDropout(0.5)
	scale := tensor.Ones(2).RequiresGrad()
	c := nn.Container{
		nn.Named("enc", nn.Sequential{shared, nn.ReLU{}, drop}),
		nn.Named("blocks", nn.ModuleList{nn.NewLinear(2, 3, false), nn.Sequential{nn.Tanh{}, nn.NewLinear(3, 2, true)}}),
		nn.Named("dec", shared), // tied: listed once, under its first name
		nn.Param("scale", scale),
	}
	var names []string
	for _, p := range c.NamedParameters() {
		names = append(names, p.Name)
	}
	want := []string{"enc.0.weight", "enc.0.bias", "blocks.0.weight", "blocks.1.1.weight", "blocks.1.1.bias", "scale"}
	if !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if ps := c.Parameters(); len(ps) != 6 || ps[0] != shared.Weight || ps[5] != scale {
		t.Errorf("Parameters do not follow NamedParameters: %v", ps)
	}
	c.Eval()
	if drop.Training {
		t.Error("Eval did not reach the Dropout inside the Sequential")
	}
	c.Train()
	if !drop.Training {
		t.Error("Train did not reach the Dropout inside the Sequential")
	}
	wantString := `Container(  # 22 params
  (enc): Sequential(  # 6 params
    (0): Linear(in_features=2, out_features=2, bias=True)  # 6 params
    (1): ReLU()
    (2): Dropout(p=0.5, inplace=False)
  )
  (blocks): ModuleList(  # 14 params
    (0): Linear(in_features=2, out_features=3, bias=False)  # 6 params
    (1): Sequential(  # 8 params
      (0): Tanh()
      (1): Linear(in_features=3, out_features=2, bias=True)  # 8 params
    )
  )
  (dec): Linear(in_features=2, out_features=2, bias=True)  # 6 params
  (scale): Parameter(shape=[2])
)`
	if got := c.String(); got != wantString {
		t.Errorf("String:\n%s\nwant:\n%s", got, wantString)
	}
	if got := (nn.Sequential{}).Forward(scale); got != scale {
		t.Error("an empty Sequential should be the identity")
	}
}

func TestContainerPanics(t *testing.T) {
	l := nn.NewLinear(2, 2, true)
	for name, c := range map[string]struct {
		f    func()
		want string
	}{
		"duplicate":  {func() { nn.Container{nn.Named("a", l), nn.Named("a", nn.ReLU{})}.NamedParameters() }, `Container: two children are named "a"`},
		"empty name": {func() { nn.Container{nn.Named("", l)}.NamedParameters() }, `child 0 has the name ""`},
		"dotted":     {func() { nn.Container{nn.Named("a.b", l)}.NamedParameters() }, `child 0 has the name "a.b"`},
		"nil child":  {func() { nn.Container{nn.Named("a", nil)}.NamedParameters() }, `child 0 ("a") is nil`},
		"nil layer":  {func() { nn.Sequential{l, nil}.Forward(tensor.Zeros(1, 2)) }, "Sequential: layer 1 of 2 is nil"},
		"nil module": {func() { nn.ModuleList{nil}.NamedParameters() }, `ModuleList: child 0 ("0") is nil`},
	} {
		err := tensor.Catch(c.f)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a *tensor.Error containing %q", name, err, c.want)
		}
	}
}

// owner is a user module with fields of every kind that NewContainer
// checks.
type owner struct {
	nn.Container
	Enc     *nn.Linear
	Blocks  []*nn.Linear
	Scale   *tensor.Tensor
	Act     nn.Layer       // an interface: here a module without parameters
	Tied    *nn.Linear     // an alias of Enc's weight through another Linear
	Mask    *tensor.Tensor // a buffer: no grad, needs no listing
	Nothing *nn.Dropout    // nil
	private *nn.Linear     // unexported: not checked
}

func newOwner() *owner {
	enc := nn.NewLinear(2, 2, false)
	return &owner{
		Enc:     enc,
		Blocks:  []*nn.Linear{nn.NewLinear(2, 2, true), nn.NewLinear(2, 2, true)},
		Scale:   tensor.Ones(2).RequiresGrad(),
		Act:     nn.ReLU{},
		Tied:    &nn.Linear{Weight: enc.Weight, In: 2, Out: 2},
		Mask:    tensor.Ones(2, 2),
		private: nn.NewLinear(2, 2, true),
	}
}

// all is the full list of o's children.
func (o *owner) all() []nn.NamedModule {
	return []nn.NamedModule{nn.Named("enc", o.Enc), nn.Named("blocks", nn.ModuleList{o.Blocks[0], o.Blocks[1]}), nn.Param("scale", o.Scale)}
}

// TestNewContainer checks that NewContainer accepts a full list and names
// each field that holds parameters and is left out, and the bad names.
func TestNewContainer(t *testing.T) {
	o := newOwner()
	o.Container = nn.NewContainer(o, o.all()...)
	if got := len(o.NamedParameters()); got != 6 {
		t.Errorf("%d parameters, want 6", got)
	}
	for _, c := range []struct {
		name     string
		children func(o *owner) []nn.NamedModule
		want     string
	}{
		{"a module left out", func(o *owner) []nn.NamedModule { return o.all()[1:] }, "field Enc (*nn.Linear)"},
		{"a slice element left out", func(o *owner) []nn.NamedModule {
			return []nn.NamedModule{nn.Named("enc", o.Enc), nn.Named("b0", o.Blocks[0]), nn.Param("scale", o.Scale)}
		}, "field Blocks[1] (*nn.Linear)"},
		{"a tensor left out", func(o *owner) []nn.NamedModule { return o.all()[:2] }, "field Scale (a tensor that requires grad)"},
		{"two left out", func(o *owner) []nn.NamedModule { return o.all()[2:] }, "field Enc (*nn.Linear), field Blocks[0] (*nn.Linear), field Blocks[1] (*nn.Linear), field Tied (*nn.Linear) hold parameters"},
		{"a duplicate name", func(o *owner) []nn.NamedModule { return append(o.all(), nn.Named("enc", nn.ReLU{})) }, `NewContainer: two children are named "enc"`},
		{"a nil child", func(o *owner) []nn.NamedModule { return append(o.all(), nn.Named("x", nil)) }, `child 3 ("x") is nil`},
	} {
		o := newOwner()
		err := tensor.Catch(func() { nn.NewContainer(o, c.children(o)...) })
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a *tensor.Error containing %q", c.name, err, c.want)
		}
	}
	for _, bad := range []any{nil, owner{}, (*owner)(nil), nn.NewLinear(1, 1, true)} {
		err := tensor.Catch(func() { nn.NewContainer(bad) })
		if err == nil || !strings.Contains(err.Error(), "want a non-nil pointer to the struct") && !strings.Contains(err.Error(), "parameters that no child") {
			t.Errorf("NewContainer(%T): %v", bad, err)
		}
	}
}

// TestContainerLiteralChecked checks that a literal Container that leaves
// a field out fails where the whole module is used (SaveFile, LoadFile,
// ParameterCount, Summary, To), naming the field, and that a literal with
// a duplicate name fails on first use, Train and Eval included.
func TestContainerLiteralChecked(t *testing.T) {
	o := newOwner()
	o.Container = nn.Container(o.all()[1:])
	path := filepath.Join(t.TempDir(), "m.safetensors")
	for name, f := range map[string]func(){
		"SaveFile":       func() { nn.SaveFile(path, o) },
		"LoadStateDict":  func() { nn.LoadStateDict(o, nn.StateDict{}) },
		"StateDictOf":    func() { nn.StateDictOf(o) },
		"ParameterCount": func() { nn.ParameterCount(o) },
		"Summary":        func() { nn.Summary(o) },
		"To":             func() { nn.To(o, tensor.CPU) },
	} {
		err := tensor.Catch(f)
		var te *tensor.Error
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "field Enc (*nn.Linear), field Tied (*nn.Linear) hold parameters") {
			t.Errorf("%s: %v, want a *tensor.Error naming field Enc", name, err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SaveFile wrote a file without Enc (%v)", err)
	}
	// Replacing a field after NewContainer without updating the list.
	o = newOwner()
	o.Container = nn.NewContainer(o, o.all()...)
	o.Enc = nn.NewLinear(2, 2, false)
	if err := tensor.Catch(func() { nn.StateDictOf(o) }); err == nil || !strings.Contains(err.Error(), "field Enc") {
		t.Errorf("a replaced field: %v", err)
	}
	dup := nn.Container{nn.Named("a", nn.NewLinear(1, 1, true)), nn.Named("a", nn.NewDropout(0.1))}
	for name, f := range map[string]func(){"Train": dup.Train, "Eval": dup.Eval, "Parameters": func() { dup.Parameters() }} {
		if err := tensor.Catch(f); err == nil || !strings.Contains(err.Error(), `two children are named "a"`) {
			t.Errorf("%s of a duplicate name: %v", name, err)
		}
	}
}
