package tensor

// The products of an autocast region. A bfloat16 region hands its float32
// operands that are not parameters (activations, output gradients) to the
// CPU's bfloat16 product as they are, float32, to be rounded to bfloat16
// while the product packs them (blas.Mat16.Round): the same values as a
// rounded copy, bit for bit, with neither the copy nor a pass of its own
// over the operand. Parameters keep their region-wide rounded copy (one
// rounding per region, however often they are read). A Float16 region,
// and any operand off the CPU, takes rounded copies as before.

// acOperand is an operand of an autocast product: t, read rounded to the
// region's dtype when round is set (t then float32 on the CPU).
type acOperand struct {
	t     *Tensor
	round bool
}

// transpose returns o with t's last two dims swapped.
func (o acOperand) transpose() acOperand { return acOperand{o.t.Transpose(-1, -2), o.round} }

// shape returns o's shape.
func (o acOperand) shape() []int { return o.t.layout.Shape }

// roundsOnRead reports whether x can be given to the region's product as
// it is, rounded while packed: a bfloat16 region, x float32 on the CPU.
func (r *autocastRegion) roundsOnRead(x *Tensor) bool {
	if r.dt != BFloat16 || x.DType() != Float32 {
		return false
	}
	_, ok := x.backend.(cpuBackend)
	return ok
}

// productOperand returns x as an operand of the region's products, not
// recorded: a parameter (or a view of one) as the region's rounded copy,
// another float32 CPU tensor of a bfloat16 region as it is (rounded as
// the product reads it), anything else as operand gives it.
func (r *autocastRegion) productOperand(x *Tensor) acOperand {
	if x.DType() != r.dt && r.roundsOnRead(x) {
		if x.requiresGrad && x.IsLeaf() {
			return acOperand{t: r.operand(x)}
		}
		if _, marked := r.cache[x.storage]; !marked {
			return acOperand{t: x.Detach(), round: true}
		}
	}
	return acOperand{t: r.operand(x)}
}

// gradOperand returns the output gradient g of a product as an operand
// of its backward products: rounded as they read it (a bfloat16 region)
// or a rounded copy.
func (r *autocastRegion) gradOperand(g *Tensor) acOperand {
	if r.roundsOnRead(g) {
		return acOperand{t: g.Detach(), round: true}
	}
	return acOperand{t: r.round(g)}
}

// product returns the float32 product a·b of two operands of the region
// (not recorded), shapes origA and origB for messages.
func (r *autocastRegion) product(a, b acOperand, origA, origB []int) *Tensor {
	if !a.round && !b.round {
		return matmulTo(a.t, b.t, origA, origB, Float32, a.t.backend.MatMul)
	}
	be := cpuBackend{}
	return matmulTo(a.t, b.t, origA, origB, Float32, func(dst, as Storage, al Layout, bs Storage, bl Layout) {
		be.matMulRound(dst, as, al, a.round, bs, bl, b.round)
	})
}
