// Package safetensors reads and writes the safetensors format of Hugging
// Face (https://github.com/huggingface/safetensors): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype,
// shape and byte range, then the data.
//
// It knows files, not tensors: ReadFileHeader checks a file's header
// against its length; a Reader streams a tensor's elements, converted from
// F32, F16 or BF16 to float32, a chunk at a time through buffers it reuses,
// so that a loader fills its own tensors with little memory beyond them
// (and, with RequireFinite, refuses a NaN or an infinity in the same pass);
// ModelFiles finds a Hugging Face model directory's weights
// (model.safetensors, or the shards of model.safetensors.index.json); Write
// writes a file whose tensors' data come from callbacks. Package nn maps
// model parameters onto it (nn.LoadCausalLM, nn.LoadPretrained,
// nn.SaveFile). It imports only the standard library.
//
// Errors name the file and the tensor and wrap ErrTruncated or
// ErrCorruptHeader where those apply. A Reader belongs to one goroutine;
// everything else may run on many at once.
package safetensors
