// Package tensor provides Wick's eager n-dimensional arrays with autograd.
//
// A Tensor holds Float32 (or Int64, for indices) elements on a device,
// viewed through a Layout (shape, strides, offset) over a Storage that views
// share. Every operation runs immediately on the tensor's backend. When an
// input requires a gradient, the operation also records itself on the
// autograd tape with its derivative, so that Backward can compute gradients:
//
//	tensor.ManualSeed(1337)
//	x := tensor.Randn(4, 8)
//	w := tensor.Randn(8, 2).RequiresGrad()
//	loss := x.MatMul(w).ReLU().Mean()
//	loss.Backward()
//	fmt.Println(w.Grad())
//
// Operations follow PyTorch's semantics: NumPy broadcasting, negative
// dimensions counted from the end, views that share storage (Reshape, View,
// Permute, Transpose, Slice, Narrow, Select, Expand, Squeeze, Unsqueeze,
// Flatten), reductions with or without kept dimensions (Sum and SumKeepDim,
// ...), torch.matmul's batching rules, and gradients that accumulate across
// Backward calls until ZeroGrad. Beside the elementwise ops and reductions
// are PyTorch's indexing and ordering staples, each differentiable like
// PyTorch's: Gather, Scatter and ScatterAdd along a dimension (out of
// place, with Int64 indices checked against their bounds), a stable Sort
// and TopK (NaN largest), Cumsum and Cumprod, and Linspace.
//
// Operations called with arguments that cannot be right (mismatched shapes,
// a dimension out of range, a float operation on Int64 indices) panic with
// an *Error naming the operation and the shapes; Catch turns such panics into
// errors.
//
// # Sizes
//
// A shape is valid when no dimension is negative and its number of
// elements fits in an int. Creation functions, Reshape, View, Expand and
// every operation whose result has a new shape (broadcasting, MatMul, Cat,
// Embedding, ...) panic with an *Error naming the operation and the shape
// when it is not: Zeros(1<<62, 4) panics, it does not return an empty
// tensor, and Arange panics when its bounds are NaN or infinite or its
// length does not fit.
//
// Before any storage is allocated, on any device, its size in bytes is
// compared with MaxAllocBytes, and a larger request panics with an *Error
// that names the operation, the shape, the bytes needed and the limit,
// instead of ending the process with the runtime's fatal (unrecoverable)
// out-of-memory. Zeros(1<<40) asks for 4 TiB:
//
//	err := tensor.Catch(func() { tensor.Zeros(1 << 40) })
//	// tensor: Zeros: a float32 tensor of shape [1099511627776] would need
//	// 4398046511104 bytes (4 TiB), above the allocation limit of ...
//
// The limit applies to each storage on its own (it is not a budget for
// the whole process) and includes host copies such as Float32s. It
// defaults to the machine's physical memory (on Linux; the cgroup's memory
// limit if lower) and to no limit elsewhere. An application that would
// rather fail than swap, or that serves requests of untrusted sizes, sets
// a lower one with SetMaxAllocBytes at start-up. A request below the limit
// can still exhaust memory together with everything else the process
// holds; the limit catches the sizes that cannot succeed, not every
// out-of-memory.
//
// GradCheck compares the gradients that Backward computes for any function
// of tensors with central finite differences; use it to test new
// operations and models.
//
// A Function is a differentiable operation of one's own, like
// torch.autograd.Function: Forward computes the outputs with any code
// (tensor operations, or raw []float32 from Float32s turned back into a
// tensor with NewOn), Backward returns the inputs' gradients from the
// outputs', and a FunctionContext carries saved tensors between them (see
// ExampleFunction). Backward fills Grad only for leaves; RetainGrad keeps
// the gradient of a recorded result too, whose Grad is nil otherwise.
//
// In-place operations (Fill_, CopyFrom, NormalInit, UniformInit,
// AdamWUpdate) are not recorded, so, as PyTorch raises, they panic on a
// tensor that requires a gradient while the calling goroutine records.
// Initialise, load and update parameters inside autograd.NoGrad or through
// Detach(), a view that does not require a gradient. Wick keeps no version
// counters: a write through Detach() to a tensor that a recorded operation
// still needs for Backward changes that gradient without notice, so update
// parameters between Backward and the next forward pass, as optimizers do.
//
// # Concurrency
//
// Any number of goroutines may create tensors, run operations and call
// Backward at the same time, as long as each works on its own tensors and
// models: each goroutine gets results bit-identical to running alone. Many
// goroutines may also run inference (operations inside autograd.NoGrad,
// nn's Forward and Generate) on one shared model at once, as long as nobody
// trains or otherwise changes it meanwhile.
//
// Grad mode belongs to a goroutine: autograd.NoGrad(f) stops recording only
// for the operations that run on f's goroutine, as PyTorch's grad mode is
// thread-local. Nothing in the library switches process-wide state: Backward,
// reductions, losses, optimizers, gradient clipping and Generate compute
// without recording by construction (on detached views, or inside a NoGrad
// scoped to the calling goroutine), so they never change what another
// goroutine records. Autocast is scoped the same way: Autocast(BFloat16, f)
// rounds the operands of the products that run on f's goroutine (and no
// other), as torch.autocast is thread-local, and the parameters it rounds
// are kept for that region alone.
//
// Not allowed, as with Go maps: writing a tensor (in-place operations such as
// CopyFrom, Fill_, an optimizer Step, SetGrad, ZeroGrad, RequiresGrad) while
// another goroutine reads or writes it, and two goroutines backpropagating
// into the same leaf (for example training one model from two goroutines)
// or through the same recorded graph at once. The last two are detected
// where it is cheap: Backward panics with an *Error when it finds another
// goroutine accumulating into the same leaf's gradient, and autograd panics
// when two goroutines run the backward pass through one graph. To train one
// model from several goroutines, give each its own graph and combine the
// gradients on one goroutine.
//
// An operation's result depends on its inputs' values and shapes only, but
// the shapes choose the kernel: MatMul computes a few rows as dot products
// and more with blocked kernels that sum in another order, so a row of a
// product may differ in its last bits with the number of rows beside it.
// MatMulRowInvariant computes each row alone, in an order that the other
// rows never change (batch invariance, which package serve relies on).
//
// # Memory
//
// CPU buffers of 1024 elements and more are reused through a free list
// instead of being allocated afresh, where the package knows that no
// tensor can use them any more: the storage of a released tensor
// (Release); the gradients and temporaries that a backward pass computes
// and hands to no one (everything but the Grad of leaves and of RetainGrad
// tensors, and what a Function's Backward receives), as soon as the node
// that consumes them has run; and the private temporaries of a Scope,
// which nn's modules use for their activations, once the backward pass
// through the Scope's result has released them. A training step of nn's
// GPT therefore allocates almost nothing new after the first. Tensors that
// simply become unreachable are left to the garbage collector.
//
// The recorded graph holds only what the derivatives read (PyTorch's saved
// tensors): the operands of a MatMul or Mul, the input and per-row
// statistics of a norm, the probabilities of attention, the output of a
// Softmax. An intermediate that nothing differentiating needs (the input
// of an Add, a MulScalar, a view, a rotation) is garbage as soon as the
// forward pass lets go of it, Scope or not, so the activations a forward
// pass leaves for the backward pass are the saved tensors only. A buffer
// taken from the free list is cleared wherever fresh memory would be; the
// free list is safe for concurrent use, holds at most 256 MiB, and gives
// back to the garbage collector what has waited in it through two
// collection cycles.
//
// # Mixed precision
//
// Autocast(BFloat16, f) is torch.autocast("cpu", dtype=torch.bfloat16),
// and on CUDA tensors torch.autocast("cuda", dtype=torch.bfloat16) (the
// products then cublasGemmEx calls on 16-bit operands with float32
// compute; Autocast(Float16, f) likewise, for training with
// optim.GradScaler): inside f, MatMul (and through it nn's Linear and the products of the
// attention operations) rounds its operands to bfloat16, sums in float32
// and returns Float32; everything else (softmax, layer norm, losses,
// elementwise operations) computes in float32 as before. PyTorch's
// products return bfloat16 instead; Wick's keep the float32 sums they
// compute, which saves a rounding and a widening per product. The
// backward products round the output's gradient to bfloat16 and use the
// saved 16-bit operands; gradients, master weights and optimizer state
// stay float32. A parameter is rounded once per region however often it
// is used, so parameters must not change inside a region: run the
// forward pass and the loss inside it, Backward and the optimizer step
// after it.
//
// # Random numbers
//
// Rand, Randn, RandInt, NormalInit, UniformInit, Dropout and Multinomial
// draw from the global generator, which ManualSeed seeds like
// torch.manual_seed. It is safe for concurrent use but shared: goroutines
// that draw from it at once interleave their draws, so what each gets
// depends on scheduling, and ManualSeed on one goroutine changes what the
// others draw next. For numbers that depend on nothing else, give each
// goroutine a Generator of its own (NewGenerator) and draw with its methods
// (gen.Randn, gen.Rand, gen.RandInt, gen.Multinomial) and with
// NormalInitWith, UniformInitWith and DropoutWith: a goroutine's results
// then equal those of the same code run alone. A nil *Generator means the
// global one. A tensor's numbers are always drawn under one lock, so they
// are consecutive draws of its generator.
//
// # Backends
//
// Each device has a Backend: a short list of primitive kernels (see
// backend.go) from which every operation and derivative is composed. The
// CPU backend, pure Go, is always present and is the reference. The CUDA
// backend lives in package cuda and registers itself in builds with the cuda
// tag.
package tensor
