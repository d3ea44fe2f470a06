package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/wickml/wick/internal/boundedread"
)

// The weight files of a Hugging Face model directory.
const (
	WeightsFile = "model.safetensors"
	IndexFile   = "model.safetensors.index.json"
)

// maxIndexBytes bounds model.safetensors.index.json (the largest models'
// are a few MB: one line per tensor).
const maxIndexBytes = 64 << 20

// ModelFiles returns the safetensors files of the Hugging Face model in
// dir: model.safetensors, or else the shards that
// model.safetensors.index.json's weight_map names (sorted), with that map
// from tensor name to file name (nil for a single file). A missing file
// is an error wrapping fs.ErrNotExist; a malformed index wraps
// ErrCorruptHeader; a shard name that leaves the directory is refused.
func ModelFiles(dir string) ([]string, map[string]string, error) {
	single := filepath.Join(dir, WeightsFile)
	if _, err := os.Stat(single); err == nil {
		return []string{single}, nil, nil
	}
	indexPath := filepath.Join(dir, IndexFile)
	b, err := boundedread.ReadFile(indexPath, maxIndexBytes, "a safetensors index")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: neither %s nor %s is there (Wick reads the safetensors format, not pytorch_model.bin): %w", dir, WeightsFile, IndexFile, fs.ErrNotExist)
	}
	if err != nil {
		return nil, nil, err
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil || len(idx.WeightMap) == 0 {
		if err == nil {
			err = errors.New("no weight_map")
		}
		return nil, nil, fmt.Errorf("%s: %w: %v", indexPath, ErrCorruptHeader, err)
	}
	seen := map[string]bool{}
	var files []string
	for name, f := range idx.WeightMap {
		if f == "" || filepath.Base(f) != f || f == "." || f == ".." {
			return nil, nil, fmt.Errorf("%s: tensor %q: %w: file name %q is not a file of the directory", indexPath, name, ErrCorruptHeader, f)
		}
		if !seen[f] {
			seen[f] = true
			files = append(files, filepath.Join(dir, f))
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			var first string // a tensor the index puts there, for the message
			for name, g := range idx.WeightMap {
				if filepath.Join(dir, g) == f && (first == "" || name < first) {
					first = name
				}
			}
			return nil, nil, fmt.Errorf("%s: tensor %q: %s lists it in a shard that cannot be read: %w", indexPath, first, IndexFile, err)
		}
	}
	return files, idx.WeightMap, nil
}
