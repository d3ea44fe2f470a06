package nn

import (
	"fmt"
	"math"

	"github.com/wickml/wick/tensor"
)

// RopeScaling is the rope_scaling entry of a Hugging Face config.json: how
// the rotary frequencies are stretched for long contexts. Type "" and
// "default" leave them alone; "linear" divides every frequency by Factor;
// "llama3" is Llama 3.1's scheme (frequencies whose wavelength exceeds
// OriginalMaxPositionEmbeddings/LowFreqFactor divided by Factor, those
// below OriginalMaxPositionEmbeddings/HighFreqFactor kept, a smooth blend
// between). Other types (dynamic, yarn, longrope, …) are refused by name.
type RopeScaling struct {
	Type                          string  `json:"rope_type"`
	Factor                        float64 `json:"factor,omitempty"`
	LowFreqFactor                 float64 `json:"low_freq_factor,omitempty"`
	HighFreqFactor                float64 `json:"high_freq_factor,omitempty"`
	OriginalMaxPositionEmbeddings int     `json:"original_max_position_embeddings,omitempty"`
}

// Validate reports what is wrong with s, or nil.
func (s RopeScaling) Validate() error {
	switch s.Type {
	case "", "default":
		return nil
	case "linear":
		if !(s.Factor > 0) {
			return fmt.Errorf("rope_scaling linear needs a positive factor, got %v", s.Factor)
		}
		return nil
	case "llama3":
		if !(s.Factor > 0) || !(s.LowFreqFactor > 0) || !(s.HighFreqFactor > s.LowFreqFactor) || s.OriginalMaxPositionEmbeddings <= 0 {
			return fmt.Errorf("rope_scaling llama3 needs factor > 0, 0 < low_freq_factor < high_freq_factor and original_max_position_embeddings > 0, got %v, %v, %v, %d",
				s.Factor, s.LowFreqFactor, s.HighFreqFactor, s.OriginalMaxPositionEmbeddings)
		}
		return nil
	}
	return fmt.Errorf("rope_scaling type %q is not supported (Wick knows default, linear and llama3)", s.Type)
}

// RopeInvFreq returns the headDim/2 inverse frequencies of rotary
// embeddings with base theta under scaling, as Hugging Face's
// modeling_rope_utils computes them: 1/theta^(2i/headDim), then scaled.
// It panics if headDim is not even and positive, theta is not positive or
// scaling is invalid (see RopeScaling.Validate).
func RopeInvFreq(headDim int, theta float64, scaling RopeScaling) []float32 {
	if headDim <= 0 || headDim%2 != 0 || !(theta > 0) {
		panic(&tensor.Error{Pkg: "nn", Op: "RopeInvFreq", Msg: fmt.Sprintf("expected an even positive head_dim and a positive theta, got %d and %v", headDim, theta)})
	}
	if err := scaling.Validate(); err != nil {
		panic(&tensor.Error{Pkg: "nn", Op: "RopeInvFreq", Msg: err.Error()})
	}
	inv := make([]float32, headDim/2)
	for i := range inv {
		// float32 steps, like torch's 1.0 / (base ** (arange(0, dim, 2).float() / dim))
		e := float32(2*i) / float32(headDim)
		f := 1 / float32(math.Pow(theta, float64(e)))
		switch scaling.Type {
		case "linear":
			f = float32(float64(f) / scaling.Factor)
		case "llama3":
			f = llama3Freq(f, scaling)
		}
		inv[i] = f
	}
	return inv
}

// llama3Freq scales one inverse frequency by Llama 3.1's rule.
func llama3Freq(f float32, s RopeScaling) float32 {
	old := float64(s.OriginalMaxPositionEmbeddings)
	lowWavelen := old / s.LowFreqFactor
	highWavelen := old / s.HighFreqFactor
	wavelen := 2 * math.Pi / float64(f)
	scaled := f
	if wavelen > lowWavelen {
		scaled = float32(float64(f) / s.Factor)
	}
	if !(wavelen < highWavelen) && !(wavelen > lowWavelen) {
		smooth := (old/wavelen - s.LowFreqFactor) / (s.HighFreqFactor - s.LowFreqFactor)
		scaled = float32((1-smooth)*float64(scaled)/s.Factor + smooth*float64(scaled))
	}
	return scaled
}

// Rotary holds the inverse frequencies of rotary position embeddings over
// heads of HeadDim features (Hugging Face's LlamaRotaryEmbedding, whose
// attention_scaling is 1 for the supported types).
type Rotary struct {
	InvFreq []float32 // [HeadDim/2]
	HeadDim int
}

// NewRotary returns the rotary embedding of headDim features with base
// theta under scaling. It panics like RopeInvFreq.
func NewRotary(headDim int, theta float64, scaling RopeScaling) *Rotary {
	return &Rotary{InvFreq: RopeInvFreq(headDim, theta, scaling), HeadDim: headDim}
}

// CosSin returns cos and sin [T, HeadDim] of positions offset … offset+t−1
// on dev, computed in float32 as Hugging Face computes them: the angle
// position·inv_freq, repeated for both halves of a head.
func (r *Rotary) CosSin(offset, t int, dev tensor.Device) (cos, sin *tensor.Tensor) {
	return r.cosSinAt(t, func(p int) int { return offset + p }, dev)
}

// cosSinAt is CosSin of the t positions pos(0) … pos(t−1), in any order
// (the tokens of a serving batch, each at its own sequence's position).
func (r *Rotary) cosSinAt(t int, position func(int) int, dev tensor.Device) (cos, sin *tensor.Tensor) {
	d := r.HeadDim
	c := make([]float32, t*d)
	s := make([]float32, t*d)
	for p := range t {
		r.cosSinRow(c[p*d:(p+1)*d], s[p*d:(p+1)*d], position(p))
	}
	return tensor.New(c, t, d).To(dev), tensor.New(s, t, d).To(dev)
}

// cosSinRow writes cos and sin [HeadDim] of position pos.
func (r *Rotary) cosSinRow(c, s []float32, pos int) {
	half := r.HeadDim / 2
	p := float32(pos)
	for i, f := range r.InvFreq {
		a := float64(p * f)
		cv, sv := float32(math.Cos(a)), float32(math.Sin(a))
		c[i], c[half+i] = cv, cv
		s[i], s[half+i] = sv, sv
	}
}

// ApplyRotary rotates x [..., T, HeadDim] by the angles of cos and sin
// [T, HeadDim] (from CosSin) with Hugging Face's rotate_half convention:
// x·cos + rotate_half(x)·sin, where rotate_half(x) = cat(−x₂, x₁) for the
// halves x₁, x₂ of the last dimension. It is tensor.ApplyRotary, one fused
// kernel each way on the CPU and CUDA backends. It panics if the shapes
// disagree.
func ApplyRotary(x, cos, sin *tensor.Tensor) *tensor.Tensor {
	if x.Dim() < 2 || cos.Dim() != 2 || x.Size(-1) != cos.Size(1) || x.Size(-2) != cos.Size(0) || x.Size(-1)%2 != 0 {
		panic(&tensor.Error{Pkg: "nn", Op: "ApplyRotary", Msg: fmt.Sprintf("expected x [..., T, D] with even D and cos, sin [T, D], got %v and %v", x.Shape(), cos.Shape())})
	}
	return tensor.ApplyRotary(x, cos, sin)
}
