package nn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/wickml/wick/internal/atomicfile"
	"github.com/wickml/wick/safetensors"
	"github.com/wickml/wick/tensor"
)

// StateDict maps dotted names to tensors, like PyTorch's state_dict. It is
// what safetensors files hold; SaveFile and LoadFile move a module's
// StateDict, and programs may add tensors of their own (optimizer state,
// RNG state as Int64) and write them with WriteStateDict or
// SaveStateDictFile.
type StateDict map[string]*tensor.Tensor

// Names returns the names in sorted order.
func (sd StateDict) Names() []string {
	names := make([]string, 0, len(sd))
	for n := range sd {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WithPrefix returns the entries whose names start with prefix, with the
// prefix removed.
func (sd StateDict) WithPrefix(prefix string) StateDict {
	out := StateDict{}
	for n, t := range sd {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			out[rest] = t
		}
	}
	return out
}

// WithoutPrefix returns the entries whose names do not start with prefix.
func (sd StateDict) WithoutPrefix(prefix string) StateDict {
	out := StateDict{}
	for n, t := range sd {
		if !strings.HasPrefix(n, prefix) {
			out[n] = t
		}
	}
	return out
}

// Errors that checkpoint reading and loading wrap, so that callers can test
// for them with errors.Is. The messages around them name the tensor.
var (
	ErrTruncated        = safetensors.ErrTruncated     // the same value as safetensors.ErrTruncated
	ErrCorruptHeader    = safetensors.ErrCorruptHeader // the same value as safetensors.ErrCorruptHeader
	ErrMissingTensor    = errors.New("missing tensor")
	ErrUnexpectedTensor = errors.New("unexpected tensor")
	ErrShapeMismatch    = errors.New("shape mismatch")
	ErrDTypeMismatch    = errors.New("dtype mismatch")
)

func safetensorsDType(t *tensor.Tensor) string {
	if t.DType() == tensor.Int64 {
		return "I64"
	}
	return "F32"
}

// WriteStateDict writes sd in the safetensors format: an 8-byte
// little-endian header length, a JSON header (names in sorted order, with
// dtype, shape and data_offsets, and metadata under "__metadata__" when
// given) padded with spaces to 8 bytes, then the little-endian data of each
// tensor in header order. Float32 tensors are stored as F32 and Int64
// tensors as I64.
func WriteStateDict(w io.Writer, sd StateDict, metadata map[string]string) error {
	ts := make([]safetensors.Tensor, 0, len(sd))
	for _, n := range sd.Names() {
		t := sd[n]
		if t == nil {
			return fmt.Errorf("nn: write safetensors: tensor %q is nil", n)
		}
		ts = append(ts, safetensors.Tensor{Name: n, DType: safetensorsDType(t), Shape: t.Shape(), Data: func(w io.Writer) error {
			var buf []byte
			if t.DType() == tensor.Int64 {
				for _, v := range t.Ints() {
					buf = binary.LittleEndian.AppendUint64(buf, uint64(int64(v)))
				}
			} else {
				for _, v := range t.Float32s() {
					buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
				}
			}
			_, err := w.Write(buf)
			return err
		}})
	}
	if err := safetensors.Write(w, ts, metadata); err != nil {
		return fmt.Errorf("nn: write safetensors: %w", err)
	}
	return nil
}

// ReadStateDict reads a safetensors stream written by WriteStateDict or by
// the safetensors library. Tensors of dtype F32 and I64 are supported; any
// other dtype, a malformed header, offsets that disagree with the shapes or
// overlap, or data cut short return an error that names the tensor and
// wraps ErrCorruptHeader, ErrDTypeMismatch or ErrTruncated. The header is
// read with a limit (safetensors.MaxHeaderLen), and the memory the tensors
// it declares take is checked against tensor.MaxAllocBytes (ErrTooLarge)
// before any is read; data cut short cost no more memory than what
// arrived. Values are returned as they are, NaN included. The tensors are
// created on the default device.
func ReadStateDict(r io.Reader) (StateDict, map[string]string, error) {
	sd, meta, err := readStateDict(r)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: read safetensors: %w", err)
	}
	return sd, meta, nil
}

// readStateDict is ReadStateDict with errors that do not say "nn: read".
func readStateDict(r io.Reader) (StateDict, map[string]string, error) {
	entries, meta, _, err := safetensors.ReadHeader(r)
	if err != nil {
		return nil, nil, err
	}
	if err := stateDictDTypes(entries); err != nil {
		return nil, nil, err
	}
	if err := checkBudget(entries, 0); err != nil {
		return nil, nil, err
	}
	sd, err := readStreamTensors(r, entries, false)
	if err != nil {
		return nil, nil, err
	}
	return sd, meta, nil
}

// SaveStateDictFile writes sd and metadata to path as a safetensors file,
// atomically: path holds either its old contents or the complete new ones.
// The data goes to a temporary file next to path, .NAME.wick-tmp-DIGITS,
// which is synced and renamed over path; a process killed before the
// rename leaves it behind.
func SaveStateDictFile(path string, sd StateDict, metadata map[string]string) error {
	if err := atomicfile.WriteFile(path, func(w io.Writer) error { return WriteStateDict(w, sd, metadata) }); err != nil {
		return fmt.Errorf("nn: %w", err)
	}
	return nil
}

// LoadStateDictFile reads a safetensors file (see ReadStateDict). The
// header, the file's length and the memory the tensors take (against
// tensor.MaxAllocBytes, ErrTooLarge) are checked before any tensor is
// read; each tensor is then read straight into its storage, a chunk at a
// time. Values are returned as they are, NaN included.
func LoadStateDictFile(path string) (StateDict, map[string]string, error) {
	h, err := safetensors.ReadFileHeader(path)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: read %s: %w", path, trimmed{err, path + ": "})
	}
	if err := stateDictDTypes(h.Entries); err != nil {
		return nil, nil, fmt.Errorf("nn: read %s: %w", path, err)
	}
	if err := checkBudget(h.Entries, 0); err != nil {
		return nil, nil, fmt.Errorf("nn: read %s: %w", path, err)
	}
	sd, err := readFileTensors(h, h.Entries, false)
	if err != nil {
		return nil, nil, fmt.Errorf("nn: read %s: %w", path, err)
	}
	return sd, h.Metadata, nil
}
