package nn

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wickml/wick/autograd"
	"github.com/wickml/wick/tensor"
)

func loraGPT(t *testing.T, dropout float32) *GPT {
	t.Helper()
	return NewGPTWith(GPTConfig{VocabSize: 17, BlockSize: 8, NLayer: 2, NHead: 2, NEmbd: 8, Dropout: dropout, Bias: true}, tensor.NewGenerator(3))
}

func loraTokens() *tensor.Tensor {
	return tensor.FromInts([]int{1, 5, 3, 16, 0, 2, 7, 7, 9, 11}, 2, 5)
}

// randomizeB gives every lora_B a non-zero value, as training would.
func randomizeB(l *LoRA, seed uint64) {
	g := tensor.NewGenerator(seed)
	for _, p := range l.NamedParameters() {
		if strings.HasSuffix(p.Name, "lora_B.weight") {
			autograd.NoGrad(func() { p.Param.NormalInitWith(0, 0.5, g) })
		}
	}
}

func TestLoRATargetsLikePEFT(t *testing.T) {
	// a Llama-shaped module: names as Hugging Face's
	layer := func() Module {
		return Container{Named("self_attn", Container{
			Named("q_proj", NewLinear(4, 4, false)), Named("k_proj", NewLinear(4, 2, false)),
			Named("v_proj", NewLinear(4, 2, false)), Named("o_proj", NewLinear(4, 4, false)),
			Named("xq_proj", NewLinear(4, 4, false)),
		})}
	}
	m := Container{Named("model", Container{Named("layers", ModuleList{layer(), layer()})}), Named("lm_head", NewLinear(4, 9, false))}
	for _, c := range []struct {
		cfg  LoRAConfig
		want []string
	}{
		{LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"q_proj", "v_proj"}}, []string{
			"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.v_proj",
			"model.layers.1.self_attn.q_proj", "model.layers.1.self_attn.v_proj"}},
		{LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"layers.1.self_attn.o_proj", "lm_head"}}, []string{
			"model.layers.1.self_attn.o_proj", "lm_head"}},
		// a string is a full match: "q_proj" alone matches nothing, ".*q_proj" both q_proj and xq_proj
		{LoRAConfig{R: 2, Alpha: 4, TargetRegexp: `.*\.0\..*[qk]_proj`}, []string{
			"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj", "model.layers.0.self_attn.xq_proj"}},
	} {
		mm := Container{Named("model", Container{Named("layers", ModuleList{layer(), layer()})}), Named("lm_head", NewLinear(4, 9, false))}
		l, err := ApplyLoRA(mm, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(l.Modules(), c.want) {
			t.Errorf("%+v: adapted %q, want %q", c.cfg, l.Modules(), c.want)
		}
	}
	if _, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, TargetRegexp: "q_proj"}); err == nil || !strings.Contains(err.Error(), "match no module") {
		t.Errorf("full-match regexp: err = %v", err)
	}
	if _, err := ApplyLoRA(m, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"self_attn"}}); err == nil || !strings.Contains(err.Error(), "only Linear layers") {
		t.Errorf("non-Linear target: err = %v", err)
	}
	if _, err := ApplyLoRA(m, LoRAConfig{R: 0, Alpha: 4, TargetModules: []string{"q_proj"}}); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("r=0: err = %v", err)
	}
}

func TestLoRAInitFreezeAndGradients(t *testing.T) {
	g := loraGPT(t, 0)
	idx := loraTokens()
	before := g.Forward(idx).Float32s()
	l, err := ApplyLoRA(g, LoRAConfig{R: 4, Alpha: 8, TargetModules: []string{"c_attn", "c_proj"}, Gen: tensor.NewGenerator(1)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"transformer.h.0.attn.c_attn", "transformer.h.0.attn.c_proj", "transformer.h.0.mlp.c_proj",
		"transformer.h.1.attn.c_attn", "transformer.h.1.attn.c_proj", "transformer.h.1.mlp.c_proj"}
	if !slices.Equal(l.Modules(), want) {
		t.Fatalf("modules %q, want %q", l.Modules(), want)
	}
	if got := g.Forward(idx).Float32s(); !slices.Equal(got, before) {
		t.Errorf("B = 0 must leave the logits unchanged")
	}
	for _, p := range g.Parameters() {
		if p.IsRequiringGrad() {
			t.Fatalf("a base parameter still requires grad")
		}
	}
	if len(l.Parameters()) != 12 {
		t.Fatalf("%d adapter parameters, want 12", len(l.Parameters()))
	}
	a := l.NamedParameters()[0]
	if a.Name != "transformer.h.0.attn.c_attn.lora_A.weight" || !slices.Equal(a.Param.Shape(), []int{4, 8}) {
		t.Errorf("first parameter %s %v", a.Name, a.Param.Shape())
	}
	for _, v := range a.Param.Float32s() { // kaiming-uniform(a=√5): ±1/√in
		if v < -1/2.8284272 || v > 1/2.8284272 {
			t.Fatalf("lora_A value %v outside ±1/√8", v)
		}
	}
	loss := g.Loss(idx, idx)
	loss.Backward()
	for _, p := range l.NamedParameters() {
		if p.Param.Grad() == nil {
			t.Errorf("%s has no gradient", p.Name)
		}
	}
	for _, p := range g.Parameters() {
		if p.Grad() != nil {
			t.Errorf("a frozen base parameter got a gradient")
		}
	}
}

func TestLoRAMergeUnmerge(t *testing.T) {
	g := loraGPT(t, 0)
	idx := loraTokens()
	l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 16, TargetModules: []string{"c_attn", "c_fc"}})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 5)
	w0 := g.H[0].Attn.CAttn.Weight
	bits0 := slices.Clone(w0.Float32s())
	adapted := g.Forward(idx).Float32s()
	l.Merge()
	if !l.Merged() || g.H[0].Attn.CAttn.Weight == w0 {
		t.Fatal("Merge did not replace the weights")
	}
	merged := g.Forward(idx).Float32s()
	for i := range merged {
		if d := merged[i] - adapted[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("merged logit %d = %v, adapted %v", i, merged[i], adapted[i])
		}
	}
	l.Unmerge()
	if g.H[0].Attn.CAttn.Weight != w0 || !slices.Equal(w0.Float32s(), bits0) {
		t.Fatal("Unmerge did not restore the weight bit for bit")
	}
	if got := g.Forward(idx).Float32s(); !slices.Equal(got, adapted) {
		t.Fatal("after Unmerge the logits differ from before Merge")
	}
	if err := tensor.Catch(l.Unmerge); err == nil {
		t.Error("Unmerge of unmerged adapters must panic")
	}
	l.MergeAndUnload()
	if g.H[0].Attn.CAttn.lora != nil {
		t.Fatal("MergeAndUnload left an adapter")
	}
	got := g.Forward(idx).Float32s()
	for i := range got {
		if d := got[i] - adapted[i]; d > 1e-4 || d < -1e-4 {
			t.Fatalf("unloaded logit %d = %v, adapted %v", i, got[i], adapted[i])
		}
	}
	if err := l.SaveAdapter(t.TempDir()); err == nil {
		t.Error("SaveAdapter after MergeAndUnload must fail")
	}
}

func TestLoRASaveLoadPEFTLayout(t *testing.T) {
	g := loraGPT(t, 0)
	idx := loraTokens()
	l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.1, TargetModules: []string{"c_attn"}, BaseModel: "gpt2"})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 9)
	l.Eval()
	want := g.Forward(idx).Float32s()
	dir := t.TempDir()
	if err := l.SaveAdapter(dir); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	raw, _ := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 2.0, "lora_alpha": 4.0, "bias": "none", "fan_in_fan_out": false, "base_model_name_or_path": "gpt2"} {
		if cfg[k] != v {
			t.Errorf("%s = %v, want %v", k, cfg[k], v)
		}
	}
	sd, _, err := LoadStateDictFile(filepath.Join(dir, AdapterWeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	names := sd.Names()
	if len(names) != 4 || names[0] != "base_model.model.transformer.h.0.attn.c_attn.lora_A.weight" || !slices.Equal(sd[names[1]].Shape(), []int{24, 2}) {
		t.Errorf("tensors %q", names)
	}
	g2 := loraGPT(t, 0)
	g2.Eval()
	l2, err := LoadAdapter(dir, g2)
	if err != nil {
		t.Fatal(err)
	}
	if got := g2.Forward(idx).Float32s(); !slices.Equal(got, want) {
		t.Errorf("logits after LoadAdapter differ")
	}
	if !slices.Equal(l2.Modules(), l.Modules()) {
		t.Errorf("modules %q, want %q", l2.Modules(), l.Modules())
	}
}

func TestLoadAdapterErrors(t *testing.T) {
	g := loraGPT(t, 0)
	l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 4, TargetModules: []string{"c_attn"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := l.SaveAdapter(dir); err != nil {
		t.Fatal(err)
	}
	edit := func(t *testing.T, f func(cfg map[string]any)) string {
		d := t.TempDir()
		raw, _ := os.ReadFile(filepath.Join(dir, AdapterConfigFile))
		var cfg map[string]any
		json.Unmarshal(raw, &cfg)
		f(cfg)
		js, _ := json.Marshal(cfg)
		os.WriteFile(filepath.Join(d, AdapterConfigFile), js, 0o644)
		w, _ := os.ReadFile(filepath.Join(dir, AdapterWeightsFile))
		os.WriteFile(filepath.Join(d, AdapterWeightsFile), w, 0o644)
		return d
	}
	for _, c := range []struct {
		name, want string
		dir        string
	}{
		{"wrong rank", `has shape [2 8]; want [3 8] (r=3`, edit(t, func(c map[string]any) { c["r"] = 3 })},
		{"names match nothing", `target_modules ["q_proj"] match no Linear layer`, edit(t, func(c map[string]any) { c["target_modules"] = []string{"q_proj"} })},
		{"tensor without target", `is for module "transformer.h.0.attn.c_attn", which is not a targeted`, edit(t, func(c map[string]any) { c["target_modules"] = []string{"c_fc"} })},
		{"missing target tensors", `target module "transformer.h.0.mlp.c_fc" has no tensor`, edit(t, func(c map[string]any) { c["target_modules"] = []string{"c_attn", "c_fc"} })},
		{"not lora", `peft_type is "IA3"`, edit(t, func(c map[string]any) { c["peft_type"] = "IA3" })},
		{"no config", AdapterConfigFile, t.TempDir()},
	} {
		g := loraGPT(t, 0)
		_, err := LoadAdapter(c.dir, g)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line containing %q", c.name, err, c.want)
		}
		if g.H[0].Attn.CAttn.lora != nil || !g.Wte.Weight.IsRequiringGrad() {
			t.Errorf("%s: a failed load changed the model", c.name)
		}
	}
}

func TestLoRAFollowsTrainEval(t *testing.T) {
	g := loraGPT(t, 0)
	l, err := ApplyLoRA(g, LoRAConfig{R: 2, Alpha: 4, Dropout: 0.5, TargetModules: []string{"c_attn", "c_fc"}, Gen: tensor.NewGenerator(2)})
	if err != nil {
		t.Fatal(err)
	}
	randomizeB(l, 3)
	idx := loraTokens()
	g.Eval()
	a, b := g.Forward(idx).Float32s(), g.Forward(idx).Float32s()
	if !slices.Equal(a, b) {
		t.Error("in eval mode the adapters' dropout must be off")
	}
	g.Train()
	if c := g.Forward(idx).Float32s(); slices.Equal(a, c) {
		t.Error("in training mode the adapters' dropout must be on")
	}
}
