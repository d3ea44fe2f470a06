// Package serve runs a causal language model for many clients at once:
// an engine that batches the running requests' decode steps together
// (continuous batching) over a paged key/value cache, and the HTTP
// handlers of OpenAI's API in front of it. cmd/serve is the command that
// starts it; a Go program can mount the same handler in its own server.
//
// The engine's contract, which the HTTP layer relies on, is in this file
// and request.go: a Request goes in through Submit, and its tokens come
// back one Event at a time on a channel that the engine closes after the
// request's final event.
//
// # The engine
//
// An Engine (NewEngine) has one scheduler goroutine. Between two steps it
// ends the requests whose context is done (their blocks go back to the
// cache at once), then joins waiting requests to the running batch, first
// come first served, while the batch has fewer than Config.MaxBatch
// sequences and the cache can reserve the head's prompt plus max_tokens
// positions (a request waits for room; Submit refuses one that could never
// fit with a *RequestError, and returns ErrFull once Config.MaxWaiting
// wait). Each step is one forward pass (nn.BatchLM.ForwardBatch) over one
// new token of every decoding sequence and whole prefill chunks of the
// sequences still reading their prompt, one chunk's cost at most in all
// (Config.PrefillChunk tokens from a prompt's start, fewer further on,
// where attention over more positions makes a token dearer, and in the
// chunk whose last row samples through the output head), so a long prompt
// delays the others' next tokens by one chunk's time at most. The rows of all sequences go through each weight matrix
// together: the weights are read once per step, not once per request.
// Each sequence that has read all its tokens samples its next token with
// its own generator (Request.Seed), and its event goes to a channel with
// room for every event of the request, so a slow reader never holds up
// the others. A panic in a step ends that step's requests with
// FinishError; non-finite logits end their request likewise.
//
// The key/value cache is allocated once from Config.KVCacheBytes: per
// layer, keys and values [blocks, BlockSize, key/value heads, head_dim].
// A sequence's position p lives in slot p%BlockSize of block
// table[p/BlockSize] of its block table (internal/kvcache), so sequences
// of any length share the cache without fragmentation. A sequence takes
// the blocks of its whole reservation from the allocator when it joins
// (Stats.BlocksUsed counts those that hold its positions so far),
// together, so that they are mostly consecutive: attention
// reads a run of consecutive blocks in place and copies only where the
// runs break. The sequences' attention of a layer, and their sampling, run
// on parallel goroutines.
//
// # Batch invariance
//
// A request's tokens are the same whether it runs alone or beside any
// other requests, at any batch size and whatever requests join or leave
// while it runs: given its prompt, its sampling fields and its seed, the
// engine's answer is a function of the request and the model alone. This
// is a guarantee, kept bit for bit on the CPU:
//
//   - every matrix product of a step computes each row from that row alone
//     (tensor.MatMulRowInvariant: dot products in an order fixed by the
//     weight's shape, whatever the number of rows);
//   - norms act on each row, and the elementwise ops whose kernels round
//     an element by its place in the buffer run row by row unless a row is
//     a whole number of SIMD blocks (nn.BatchLM);
//   - attention runs per sequence over that sequence's keys and values
//     only, with shapes that depend on the sequence alone: a prompt is
//     prefilled in chunks cut by its length and the model alone, whatever
//     else runs, and a chunk waits for the next step rather than being cut;
//   - each request samples from its own logits with its own generator.
//
// It holds on the CPU for the float32 models of package nn without an
// unmerged LoRA adapter. On other backends the products are MatMul's,
// without the guarantee.
package serve
