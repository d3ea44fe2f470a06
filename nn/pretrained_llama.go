package nn

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/internal/boundedread"
	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// LoadCausalLM reads a causal language model saved in Hugging Face's
// format and returns it as the CausalLM of its family, chosen by
// config.json's model_type:
//
//   - "gpt2" (or no model_type): a *GPT, exactly as LoadPretrained reads it;
//   - "llama" (Llama 2, 3 and 3.x, TinyLlama, SmolLM2), "qwen2" (Qwen2,
//     Qwen2.5), "qwen3" and "mistral" (without a sliding window: Mistral
//     7B v0.2 and later): a *Llama (see ReadLlamaConfig for the fields),
//     with Hugging Face's parameter names, lm_head tied to
//     model.embed_tokens or not as tie_word_embeddings says.
//
// name is a directory or a hub name found in the Hugging Face cache (see
// PretrainedDir). The weights are model.safetensors or the shards of
// model.safetensors.index.json, F32, F16 or BF16 (converted to float32;
// LoadCausalLMWith keeps them in bfloat16 or float16), streamed into the
// model's tensors. config.json, the index, every
// header, name, shape, dtype and file length are checked before any weight
// is read, and every problem is reported, one line each naming the file
// and the tensor (wrapping ErrBadConfig, ErrMissingTensor,
// ErrUnexpectedTensor, ErrShapeMismatch, ErrDTypeMismatch, ErrTruncated,
// ErrNonFinite for a NaN or an infinity among the weights,
// or fs.ErrNotExist for a missing file). The model is on the default
// device, in training mode, its parameters requiring gradients.
func LoadCausalLM(name string) (CausalLM, error) { return LoadCausalLMWith(name, LoadOptions{}) }

// ReadModelType returns the model_type of the config.json of the Hugging
// Face model in dir (a directory or a hub name: see PretrainedDir): "gpt2"
// when absent, else one of gpt2, llama, mistral, qwen2, qwen3; any other is an error
// wrapping ErrBadConfig.
func ReadModelType(dir string) (string, error) {
	t, err := readDirConfig("ReadModelType", dir, readModelType)
	if err != nil {
		return "", err
	}
	if t == "" {
		t = "gpt2"
	}
	return t, nil
}

// readModelType returns config.json's model_type ("" when absent).
func readModelType(path string) (string, error) {
	b, err := boundedread.ReadFile(path, maxConfigBytes, "a model's config.json")
	if err != nil {
		return "", err
	}
	var c struct {
		ModelType *string `json:"model_type"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("%s: %w: not a JSON object of model settings: %v", path, ErrBadConfig, err)
	}
	if c.ModelType == nil {
		return "", nil
	}
	t := *c.ModelType
	if t != "gpt2" && !slices.Contains(llamaModelTypes, t) {
		return "", fmt.Errorf("%s: %w: model_type is %q, Wick reads gpt2, %s", path, ErrBadConfig, t, strings.Join(llamaModelTypes, ", "))
	}
	return t, nil
}

// ReadLlamaConfig reads the config.json of the Hugging Face model in dir
// (a directory or a hub name: see PretrainedDir) whose model_type is
// llama, mistral, qwen2 or qwen3, and returns the LlamaConfig that
// LoadCausalLM builds. Fields and their defaults are those of transformers'
// LlamaConfig, Qwen2Config and Qwen3Config: num_key_value_heads defaults
// to num_attention_heads, head_dim to hidden_size/num_attention_heads
// (128 for qwen3), max_position_embeddings to 2048 (llama), 131072
// (mistral) or 32768,
// rms_norm_eps to 1e-6, rope_theta to 10000; attention_bias puts biases on
// q/k/v/o_proj (qwen2 always has q/k/v biases and none on o_proj),
// mlp_bias on the MLP (llama), qwen3 has q_norm and k_norm;
// tie_word_embeddings defaults to false; eos_token_id is an int, a list or
// absent. rope_scaling (or transformers 5's rope_parameters) may be null or
// of type default, linear or llama3. It returns an error wrapping
// ErrBadConfig, one line per problem, for what Wick cannot build:
// a size missing or not positive, key/value heads that do not divide the
// heads, hidden_act other than silu, another rope type, sliding-window
// attention switched on (use_sliding_window, layer_types, Mistral's
// sliding_window below max_position_embeddings), mixture of
// experts (num_experts, num_local_experts, n_routed_experts),
// partial_rotary_factor other than 1, attention_dropout other than 0.
func ReadLlamaConfig(dir string) (LlamaConfig, error) {
	return readDirConfig("ReadLlamaConfig", dir, readLlamaConfig)
}

// hfRope is rope_scaling or rope_parameters.
type hfRope struct {
	RopeType                      *string  `json:"rope_type"`
	Type                          *string  `json:"type"`
	RopeTheta                     *float64 `json:"rope_theta"`
	Factor                        *float64 `json:"factor"`
	LowFreqFactor                 *float64 `json:"low_freq_factor"`
	HighFreqFactor                *float64 `json:"high_freq_factor"`
	OriginalMaxPositionEmbeddings *int     `json:"original_max_position_embeddings"`
	PartialRotaryFactor           *float64 `json:"partial_rotary_factor"`
}

// hfLlamaConfig holds the fields of the Llama family's configs that
// matter.
type hfLlamaConfig struct {
	ModelType             string          `json:"model_type"`
	VocabSize             *int            `json:"vocab_size"`
	HiddenSize            *int            `json:"hidden_size"`
	IntermediateSize      *int            `json:"intermediate_size"`
	NumHiddenLayers       *int            `json:"num_hidden_layers"`
	NumAttentionHeads     *int            `json:"num_attention_heads"`
	NumKeyValueHeads      *int            `json:"num_key_value_heads"`
	HeadDim               *int            `json:"head_dim"`
	MaxPositionEmbeddings *int            `json:"max_position_embeddings"`
	RMSNormEps            *float64        `json:"rms_norm_eps"`
	RopeTheta             *float64        `json:"rope_theta"`
	RopeScaling           *hfRope         `json:"rope_scaling"`
	RopeParameters        *hfRope         `json:"rope_parameters"`
	AttentionBias         *bool           `json:"attention_bias"`
	MLPBias               *bool           `json:"mlp_bias"`
	HiddenAct             *string         `json:"hidden_act"`
	TieWordEmbeddings     *bool           `json:"tie_word_embeddings"`
	EOSTokenID            json.RawMessage `json:"eos_token_id"`
	UseSlidingWindow      *bool           `json:"use_sliding_window"`
	SlidingWindow         *int            `json:"sliding_window"`
	LayerTypes            []string        `json:"layer_types"`
	NumExperts            *int            `json:"num_experts"`
	NumLocalExperts       *int            `json:"num_local_experts"`
	NRoutedExperts        *int            `json:"n_routed_experts"`
	PartialRotaryFactor   *float64        `json:"partial_rotary_factor"`
	AttentionDropout      *float64        `json:"attention_dropout"`
}

// readLlamaConfig reads and checks the config.json of a Llama-family
// model at path.
func readLlamaConfig(path string) (LlamaConfig, error) {
	b, err := boundedread.ReadFile(path, maxConfigBytes, "a model's config.json")
	if err != nil {
		return LlamaConfig{}, err
	}
	var c hfLlamaConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return LlamaConfig{}, fmt.Errorf("%s: %w: not a JSON object of Llama settings: %v", path, ErrBadConfig, err)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %w: "+format, append([]any{path, ErrBadConfig}, args...)...))
	}
	if !slices.Contains(llamaModelTypes, c.ModelType) {
		bad("model_type is %q, the Llama family is %s", c.ModelType, strings.Join(llamaModelTypes, ", "))
	}
	size := func(key string, v *int, def int) int {
		if v == nil {
			if def == 0 {
				bad("%s is missing", key)
			}
			return def
		}
		if *v <= 0 {
			bad("%s must be positive, got %d", key, *v)
		}
		return *v
	}
	cfg := LlamaConfig{
		ModelType:         c.ModelType,
		VocabSize:         size("vocab_size", c.VocabSize, 0),
		HiddenSize:        size("hidden_size", c.HiddenSize, 0),
		IntermediateSize:  size("intermediate_size", c.IntermediateSize, 0),
		NumHiddenLayers:   size("num_hidden_layers", c.NumHiddenLayers, 0),
		NumAttentionHeads: size("num_attention_heads", c.NumAttentionHeads, 0),
		RMSNormEps:        1e-6,
		RopeTheta:         10000,
	}
	cfg.NumKeyValueHeads = size("num_key_value_heads", c.NumKeyValueHeads, max(cfg.NumAttentionHeads, 1))
	defHead := 128
	if c.ModelType != "qwen3" && cfg.NumAttentionHeads > 0 {
		defHead = max(cfg.HiddenSize/cfg.NumAttentionHeads, 1)
	}
	cfg.HeadDim = size("head_dim", c.HeadDim, defHead)
	defPos := 32768
	switch c.ModelType {
	case "llama":
		defPos = 2048
	case "mistral":
		defPos = 131072
	}
	cfg.MaxPositionEmbeddings = size("max_position_embeddings", c.MaxPositionEmbeddings, defPos)
	if cfg.NumKeyValueHeads > 0 && cfg.NumAttentionHeads%cfg.NumKeyValueHeads != 0 {
		bad("num_key_value_heads %d does not divide num_attention_heads %d", cfg.NumKeyValueHeads, cfg.NumAttentionHeads)
	}
	if c.HeadDim == nil && c.ModelType != "qwen3" && cfg.NumAttentionHeads > 0 && cfg.HiddenSize%cfg.NumAttentionHeads != 0 {
		bad("hidden_size %d is not a multiple of num_attention_heads %d and head_dim is not given", cfg.HiddenSize, cfg.NumAttentionHeads)
	}
	if len(errs) == 0 && cfg.HeadDim%2 != 0 {
		bad("head_dim %d is odd (rotary embeddings rotate pairs)", cfg.HeadDim)
	}
	if c.RMSNormEps != nil {
		if !(*c.RMSNormEps >= 0) {
			bad("rms_norm_eps must be non-negative, got %v", *c.RMSNormEps)
		}
		cfg.RMSNormEps = float32(*c.RMSNormEps)
	}
	if c.HiddenAct != nil && *c.HiddenAct != "silu" {
		bad("hidden_act %q is not supported (Wick's Llama MLP uses silu)", *c.HiddenAct)
	}
	attnBias := c.AttentionBias != nil && *c.AttentionBias
	switch c.ModelType {
	case "qwen2":
		cfg.QKVBias = true
	default:
		cfg.QKVBias, cfg.OBias = attnBias, attnBias
	}
	cfg.MLPBias = c.MLPBias != nil && *c.MLPBias
	cfg.QKNorm = c.ModelType == "qwen3"
	cfg.TieWordEmbeddings = c.TieWordEmbeddings != nil && *c.TieWordEmbeddings

	// rotary embeddings: rope_theta and rope_scaling, or rope_parameters
	if c.RopeTheta != nil {
		cfg.RopeTheta = *c.RopeTheta
	}
	rope := c.RopeScaling
	ropeKey := "rope_scaling"
	if c.RopeParameters != nil {
		rope, ropeKey = c.RopeParameters, "rope_parameters"
	}
	partial := c.PartialRotaryFactor
	if rope != nil {
		if rope.RopeTheta != nil {
			cfg.RopeTheta = *rope.RopeTheta
		}
		t := "default"
		if rope.RopeType != nil {
			t = *rope.RopeType
		} else if rope.Type != nil {
			t = *rope.Type
		}
		f := func(v *float64) float64 {
			if v == nil {
				return 0
			}
			return *v
		}
		cfg.RopeScaling = RopeScaling{Type: t, Factor: f(rope.Factor), LowFreqFactor: f(rope.LowFreqFactor), HighFreqFactor: f(rope.HighFreqFactor)}
		if rope.OriginalMaxPositionEmbeddings != nil {
			cfg.RopeScaling.OriginalMaxPositionEmbeddings = *rope.OriginalMaxPositionEmbeddings
		}
		if t == "default" {
			cfg.RopeScaling = RopeScaling{}
		}
		if err := cfg.RopeScaling.Validate(); err != nil {
			bad("%s: %v", ropeKey, err)
		}
		if rope.PartialRotaryFactor != nil {
			partial = rope.PartialRotaryFactor
		}
	}
	if !(cfg.RopeTheta > 0) {
		bad("rope_theta must be positive, got %v", cfg.RopeTheta)
	}
	if partial != nil && *partial != 1 {
		bad("partial_rotary_factor %v is not supported (Wick rotates whole heads)", *partial)
	}

	// what Wick does not build
	if c.UseSlidingWindow != nil && *c.UseSlidingWindow {
		bad("use_sliding_window true is not supported (sliding-window attention)")
	}
	if c.ModelType == "mistral" && c.SlidingWindow != nil && *c.SlidingWindow < cfg.MaxPositionEmbeddings {
		bad("sliding_window %d is not supported (sliding-window attention; Mistral loads with sliding_window null or ≥ max_position_embeddings)", *c.SlidingWindow)
	}
	if slices.Contains(c.LayerTypes, "sliding_attention") {
		bad("layer_types has sliding_attention layers, which are not supported")
	}
	for _, e := range []struct {
		key string
		v   *int
	}{{"num_experts", c.NumExperts}, {"num_local_experts", c.NumLocalExperts}, {"n_routed_experts", c.NRoutedExperts}} {
		if e.v != nil && *e.v > 0 {
			bad("%s %d: mixture-of-experts models are not supported", e.key, *e.v)
		}
	}
	if c.AttentionDropout != nil && *c.AttentionDropout != 0 {
		bad("attention_dropout %v is not supported (Wick's Llama has no dropout)", *c.AttentionDropout)
	}

	// eos_token_id: an int, a list of ints, or null
	if len(c.EOSTokenID) > 0 && string(c.EOSTokenID) != "null" {
		var one int
		var many []int
		switch {
		case json.Unmarshal(c.EOSTokenID, &one) == nil:
			cfg.EOSTokenIDs = []int{one}
		case json.Unmarshal(c.EOSTokenID, &many) == nil:
			cfg.EOSTokenIDs = many
		default:
			bad("eos_token_id %s is neither an int nor a list of ints", c.EOSTokenID)
		}
		for _, id := range cfg.EOSTokenIDs {
			if id < 0 || (cfg.VocabSize > 0 && id >= cfg.VocabSize) {
				bad("eos_token_id %d is outside the vocabulary [0, %d)", id, cfg.VocabSize)
			}
		}
	}
	if len(errs) > 0 {
		return LlamaConfig{}, problemList(errs)
	}
	if err := cfg.Validate(); err != nil { // what the checks above missed
		return LlamaConfig{}, fmt.Errorf("%s: %w: %v", path, ErrBadConfig, strings.TrimPrefix(err.Error(), "nn: invalid LlamaConfig: "))
	}
	if err := cfg.checkSize(); err != nil { // before anything is built or read
		return LlamaConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// loadLlama is LoadCausalLM for a Llama-family directory.
func loadLlama(dir string, dt tensor.DType) (*Llama, error) {
	cfg, err := readLlamaConfig(filepath.Join(dir, hfConfigFile))
	if err != nil {
		return nil, err
	}
	files, index, err := weightFiles(dir)
	if err != nil {
		return nil, err
	}
	var problems []error
	srcs := map[string]*safetensors.Ref{}
	for _, file := range files {
		h, err := safetensors.ReadFileHeader(file)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		for _, e := range h.Entries {
			if rotaryBuffer.MatchString(e.Name) {
				continue
			}
			if prev := srcs[e.Name]; prev != nil {
				problems = append(problems, fmt.Errorf("%s: tensor %q: %w: %s already holds it", file, e.Name, ErrUnexpectedTensor, prev.File))
				continue
			}
			ref := h.Ref(e)
			srcs[e.Name] = &ref
		}
	}
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	m := newLlamaZeros(cfg, dt)
	sizes := fmt.Sprintf("%s, hidden_size %d, %d layers, %d heads, %d key/value heads, head_dim %d, intermediate_size %d, vocab_size %d",
		cfg.ModelType, cfg.HiddenSize, cfg.NumHiddenLayers, cfg.NumAttentionHeads, cfg.NumKeyValueHeads, cfg.HeadDim, cfg.IntermediateSize, cfg.VocabSize)
	checkSource := func(s *safetensors.Ref, want []int) bool {
		switch {
		case !s.Float():
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: dtype %s is not supported (Wick reads F32, F16 and BF16)", s.File, s.Name, ErrDTypeMismatch, s.DType))
		case !slices.Equal(s.Shape, want):
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: file has %v, config.json (%s) needs %v", s.File, s.Name, ErrShapeMismatch, s.Shape, sizes, want))
		default:
			return true
		}
		return false
	}
	type load struct {
		src *safetensors.Ref
		dst *tensor.Tensor
	}
	var loads []load
	used := map[string]bool{}
	for _, p := range m.NamedParameters() {
		used[p.Name] = true
		s := srcs[p.Name]
		if s == nil {
			where := strings.Join(baseNames(files), ", ")
			if f, ok := index[p.Name]; ok {
				where = f + ", where " + hfIndex + " puts it,"
			}
			problems = append(problems, fmt.Errorf("%s: tensor %q: %w: %s does not hold it (config.json: %s)", dir, p.Name, ErrMissingTensor, where, sizes))
			continue
		}
		if checkSource(s, p.Param.Shape()) {
			loads = append(loads, load{s, p.Param})
		}
	}
	var lmHead *safetensors.Ref
	if cfg.TieWordEmbeddings {
		if lmHead = srcs["lm_head.weight"]; lmHead != nil {
			used["lm_head.weight"] = true
			if !checkSource(lmHead, m.LMHead.Weight.Shape()) {
				lmHead = nil
			}
		}
	}
	problems = append(problems, unexpectedSources(srcs, used, "a model", sizes)...)
	if len(problems) > 0 {
		return nil, problemList(problems)
	}

	sort.Slice(loads, func(i, j int) bool { return fileOrder(loads[i].src, loads[j].src) })
	r := safetensors.NewReaderSize(chunkBytes)
	defer r.Close()
	r.RequireFinite(true) // a NaN or an infinity is an error naming the tensor (ErrNonFinite)
	var fill filler       // writes the values, checking that 16-bit parameters hold them
	for _, l := range loads {
		if err := r.Each(*l.src, fill.set(l.dst.Detach(), l.src)); err != nil {
			return nil, err
		}
	}
	if fill.err != nil {
		return nil, fill.err
	}
	if lmHead != nil {
		if err := sameValues(r, lmHead, srcs["model.embed_tokens.weight"]); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// hfArchitectures names the Hugging Face class of each model_type.
var hfArchitectures = map[string]string{"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}

// HFConfig returns c as the config.json that Hugging Face's transformers
// (and LoadCausalLM) read: model_type, architectures, the sizes,
// head_dim, rope_theta and rope_scaling, attention_bias, mlp_bias,
// tie_word_embeddings, hidden_act "silu" and eos_token_id (an int for one
// id, a list for more). It returns an error for a c that Hugging Face's
// classes cannot express (a Qwen2 without q/k/v biases, o_proj biases
// without q/k/v ones, q/k norms outside Qwen3).
func (c LlamaConfig) HFConfig() (map[string]any, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	switch {
	case c.ModelType == "qwen2" && (!c.QKVBias || c.OBias):
		return nil, fmt.Errorf("nn: LlamaConfig.HFConfig: qwen2 has biases on q/k/v_proj and none on o_proj, not QKVBias %v and OBias %v", c.QKVBias, c.OBias)
	case c.ModelType != "qwen2" && c.QKVBias != c.OBias:
		return nil, fmt.Errorf("nn: LlamaConfig.HFConfig: %s's attention_bias puts biases on all of q/k/v/o_proj or none, not QKVBias %v and OBias %v", c.ModelType, c.QKVBias, c.OBias)
	case c.QKNorm != (c.ModelType == "qwen3"):
		return nil, fmt.Errorf("nn: LlamaConfig.HFConfig: q/k norms are Qwen3's, QKNorm %v with model_type %s", c.QKNorm, c.ModelType)
	}
	m := map[string]any{
		"model_type": c.ModelType, "architectures": []string{hfArchitectures[c.ModelType]},
		"vocab_size": c.VocabSize, "hidden_size": c.HiddenSize, "intermediate_size": c.IntermediateSize,
		"num_hidden_layers": c.NumHiddenLayers, "num_attention_heads": c.NumAttentionHeads,
		"num_key_value_heads": c.NumKeyValueHeads, "head_dim": c.HeadDim,
		"max_position_embeddings": c.MaxPositionEmbeddings, "rms_norm_eps": c.RMSNormEps, "rope_theta": c.RopeTheta,
		"rope_scaling": nil, "hidden_act": "silu", "tie_word_embeddings": c.TieWordEmbeddings, "torch_dtype": "float32",
	}
	if c.ModelType != "qwen2" {
		m["attention_bias"] = c.QKVBias
	}
	if c.ModelType == "llama" {
		m["mlp_bias"] = c.MLPBias
	} else if c.MLPBias {
		return nil, fmt.Errorf("nn: LlamaConfig.HFConfig: MLP biases are Llama's (mlp_bias), not %s's", c.ModelType)
	}
	if s := c.RopeScaling; s.Type != "" && s.Type != "default" {
		m["rope_scaling"] = s
	}
	switch len(c.EOSTokenIDs) {
	case 0:
		m["eos_token_id"] = nil
	case 1:
		m["eos_token_id"] = c.EOSTokenIDs[0]
	default:
		m["eos_token_id"] = c.EOSTokenIDs
	}
	return m, nil
}

// SavePretrained writes m to dir in Hugging Face's layout, as
// save_pretrained does: config.json (LlamaConfig.HFConfig) and
// model.safetensors with Hugging Face's names, F32, lm_head.weight left out
// when it is tied. Each file is written atomically. LoadCausalLM (and
// transformers' from_pretrained) read the directory back.
func (m *Llama) SavePretrained(dir string) error {
	hf, err := m.Config.HFConfig()
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(hf, "", "  ")
	if err != nil {
		return fmt.Errorf("nn: SavePretrained: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nn: SavePretrained: %w", err)
	}
	sd := StateDict{}
	for _, p := range m.NamedParameters() {
		sd[p.Name] = p.Param.Detach()
	}
	if err := SaveStateDictFile(filepath.Join(dir, hfWeights), sd, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, hfConfigFile), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return fmt.Errorf("nn: SavePretrained: %w", err)
	}
	return nil
}
