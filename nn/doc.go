// Package nn builds neural networks from package tensor: layers with
// PyTorch's parameter layouts and initialisation, models composed from
// them (nanoGPT's GPT, the Llama family), one causal-LM interface that
// generation and loading use, and checkpoints in the safetensors format
// (package safetensors).
//
// # Modules
//
// Every layer implements Module: Parameters and NamedParameters (dotted
// PyTorch names, in the order of PyTorch's named_parameters), Train and
// Eval. Layers have a Forward method taking and returning tensors, and
// print their tree with parameter counts like PyTorch's repr.
//
//   - Linear (weight [out, in], kaiming-uniform init), Embedding,
//     LayerNorm (bias optional), Dropout, and the activations ReLU, GELU,
//     Tanh and Sigmoid;
//   - Sequential (layers chained, parameters named "0.weight", "2.bias"
//     like torch.nn.Sequential), ModuleList ("layers.1.bias" inside a
//     parent), and Container (see below);
//   - the generic layers of today's decoders: RMSNorm (float32
//     statistics, Hugging Face's weight-after-cast order), Rotary and
//     ApplyRotary (rotate_half, cos/sin in float32; RopeScaling default,
//     linear, llama3), SiLU and GatedMLP (SwiGLU), CausalAttention (causal
//     scaled dot-product attention with a query offset, so one function
//     serves training, the prefill and cached decoding, with grouped and
//     multi-query key/value heads through RepeatKV), and Attention
//     (q/k/v/o projections with optional biases, optional per-head q/k
//     RMSNorm, an explicit head_dim);
//   - CausalSelfAttention, MLP and Block: the pieces of nanoGPT's model;
//   - GPT: nanoGPT's decoder (NewGPT(GPTConfig{...})), with Forward
//     (logits), Loss (cross-entropy, ignore index -1) and Generate; its
//     MLP uses exact GELU, or GPT-2's tanh approximation
//     (GPTConfig.Activation).
//   - Llama: the Llama family (LlamaConfig.ModelType llama for Llama 2/3,
//     TinyLlama and SmolLM2; qwen2 with q/k/v biases; qwen3 with q/k
//     norms; mistral without a sliding window), composed from the generic
//     layers, with Hugging Face's parameter names (model.embed_tokens,
//     model.layers.N.self_attn.q_proj, mlp.gate_proj, input_layernorm,
//     model.norm, lm_head tied or not).
//
// # Causal language models
//
// CausalLM is what every family implements and what generation, loading
// and cmd/train see: Forward, Loss, ModelType, VocabSize, ContextSize,
// EOSTokenIDs, NewKVCache (a cache laid out by the model, sized by its
// key/value heads) and ForwardCached. Generate(model, idx, GenerateOptions)
// is the one generation loop: greedy at Temperature 0, TopK, TopP, stop
// tokens and the config's EOS ids, a Generator, a Context.
// LoadCausalLM reads a Hugging Face directory or hub name of any supported
// model_type (gpt2, llama, mistral, qwen2, qwen3), checking config.json,
// names, shapes and dtypes before it reads the weights; LoadPretrained
// stays GPT-2's and returns a *GPT.
//
// BatchLM is what a serving engine (package serve) needs of a model, and
// *GPT and *Llama implement it: ForwardBatch runs a Batch, the new tokens
// of many sequences laid end to end, each at its own positions, in one
// forward pass, handing each sequence's attention to the engine's
// callback (which keeps the keys and values in its own, paged, cache). Its
// rows do not depend on one another (tensor.MatMulRowInvariant, norms per
// row, attention per sequence), so a sequence's logits have the same bits
// whatever else runs beside it. SampleNext picks tokens from logits as
// Generate does.
//
// Container gives a user's struct the Module methods (NamedParameters,
// Parameters, Train, Eval, String) from an explicit list of named
// children, which NewContainer checks against the struct's exported fields
// (a field holding parameters that the list leaves out panics there,
// naming the field):
//
//	type MLP struct {
//		nn.Container
//		FC1, FC2 *nn.Linear
//	}
//	m := &MLP{FC1: nn.NewLinear(4, 16, true), FC2: nn.NewLinear(16, 2, true)}
//	m.Container = nn.NewContainer(m, nn.Named("fc1", m.FC1), nn.Named("fc2", m.FC2))
//
// GPT's Generate, GenerateWith and GenerateContext run through Generate.
// Generation keeps the keys and values of earlier positions in a cache that
// belongs to the call, so each new token costs one position's forward
// pass; its tokens and logits are those of recomputing the context for
// every token, as nanoGPT does (past BlockSize, where every position
// shifts, it recomputes the cropped window).
//
// Random numbers (initial weights, dropout masks, sampled tokens) come from
// tensor's global generator unless a tensor.Generator is given:
// NewGPTWith, NewLinearWith and NewEmbeddingWith for the weights,
// Dropout's Gen field (and GPT.SetDropoutGenerator) for the masks, and
// GPT.GenerateWith for sampling. Many goroutines may call Forward,
// Generate and GenerateWith on one model in evaluation mode at once; with
// a generator each, each gets the tokens it would get alone.
//
// GPT's parameters carry nanoGPT's names (transformer.wte.weight,
// transformer.h.0.attn.c_attn.weight, …, lm_head.weight tied to wte), so
// weights move both ways between Wick and PyTorch.
//
// # Losses
//
// MSELoss, L1Loss, BCEWithLogitsLoss and NLLLoss (NLLLossIgnore) take a
// Reduction: ReduceMean (the zero value, PyTorch's default), ReduceSum or
// ReduceNone; tensor.CrossEntropy is the fused softmax cross-entropy. They
// match torch.nn.functional's losses, forward and gradients.
//
// # Checkpoints
//
// SaveFile and LoadFile (and Save and Load on streams) write and read a
// module's parameters as a safetensors file: an 8-byte little-endian
// header length, a JSON header giving each tensor's dtype (F32 or I64),
// shape and data offsets, then the raw little-endian data. Writes are
// atomic. Loading validates the whole file against the module before
// copying anything, so a bad file leaves the module unchanged and returns
// an error naming the tensor and the problem (see ErrTruncated and its
// siblings); several problems come as their count, the first eight one
// per line, and how many more. Files written by PyTorch for nanoGPT's
// model load whether or not they hold the tied lm_head.weight and the
// causal-mask buffers.
//
// LoadCheckpoint reads a checkpoint written by cmd/train and returns the
// trained GPT (in evaluation mode), its config and its tokenizer (package
// tokenizer) in one call; ReadCheckpoint returns the same without building
// the model, with every tensor, optimizer state included. Both check the
// metadata, its bounds and every tensor of the file before reading any.
// LoadFile reads such a checkpoint into a GPT too, skipping the
// optimizer's tensors.
//
//	ck, err := nn.LoadCheckpoint("out/ckpt.safetensors")
//	ids := ck.Tokenizer.Encode("ROMEO:")
//	out := ck.Model.Generate(tensor.FromInts(ids, 1, len(ids)), 100, 0.8, 200)
//
// Package nn imports package tokenizer for the train checkpoint alone:
// Checkpoint.Tokenizer is the tokenizer a model was trained with, which
// LoadCheckpoint returns beside it. The layers, models, generation and
// LoadCausalLM do not use it (Generate's stop strings take any Decoder).
//
// LoadPretrained builds a GPT from a Hugging Face GPT-2 checkpoint
// (config.json and safetensors, Conv1D layout, with or without the
// "transformer." prefix, sharded or not, F32, F16 or BF16), from a
// directory or the hub cache (PretrainedDir), streaming the weights so
// that loading needs little memory beyond the model's.
//
// # Bounds on what is read
//
// Every loader checks sizes before it allocates or reads: headers and
// configs are read with a byte limit; every tensor's name, dtype and shape
// is checked against what the caller needs (a module's parameters, a
// checkpoint's or config.json's model), so that a tensor the model has no
// place for is refused by name (ErrUnexpectedTensor) without being read;
// the memory the tensors to read take is checked against
// tensor.MaxAllocBytes (ErrTooLarge), which is the machine's memory unless
// lowered (train's --max_memory lowers it); a model's size is computed from
// its config (GPTConfig.NumParams, LlamaConfig.NumParams) and checked
// before it is built. Tensors the caller does not need are not read: the
// optimizer's state for LoadCheckpoint, LoadFile and Load; ReadCheckpoint,
// which returns it for resuming, first bounds each optimizer tensor by the
// model's largest parameter and all of them by three times the model. The
// loaders of weights refuse a NaN or an infinity as they stream it in
// (ErrNonFinite, naming the file, the tensor and the element);
// LoadStateDictFile, ReadStateDict and LoadStateDict, which do not judge
// values, pass such values on as they are.
//
// The lower-level StateDict, WriteStateDict, ReadStateDict,
// SaveStateDictFile and LoadStateDictFile handle any set of named tensors
// plus string metadata, for checkpoints that also hold optimizer and RNG
// state. SaveFile and SaveStateDictFile write atomically: the file holds
// either its old contents or the complete new ones.
package nn
