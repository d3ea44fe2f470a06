package data

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
)

// Prepared is a dataset in the layout nanoGPT's data/NAME/prepare.py
// writes: train.bin and val.bin, the token ids of the two splits as
// little-endian uint16 (numpy's uint16 tofile on the machines nanoGPT runs
// on), and, for character-level datasets, meta.pkl with the vocabulary.
// The .bin files are memory-mapped (read into memory on systems other than
// Linux): call Close when done with Train and Val.
type Prepared struct {
	Dir        string
	Train, Val *Tokens
	// Vocab is meta.pkl's vocabulary, nil when the folder has no
	// meta.pkl: the ids are GPT-2's, as in nanoGPT's shakespeare and
	// openwebtext.
	Vocab *CharVocab
	// Bytes is the size of train.bin and val.bin together; CRC32C is
	// the Castagnoli CRC of their sizes and of up to their first and last
	// MiB each, which tells two datasets apart without reading gigabytes.
	Bytes  int64
	CRC32C uint32

	closers []func() error
}

// HasPrepared reports whether dir holds train.bin or val.bin.
func HasPrepared(dir string) bool {
	for _, n := range []string{"train.bin", "val.bin"} {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// OpenPrepared opens the dataset nanoGPT's prepare.py wrote into dir:
// train.bin, val.bin and meta.pkl when present. Errors name the file.
func OpenPrepared(dir string) (*Prepared, error) {
	p := &Prepared{Dir: dir}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	for _, split := range []struct {
		name string
		dst  **Tokens
	}{{"train.bin", &p.Train}, {"val.bin", &p.Val}} {
		path := filepath.Join(dir, split.name)
		b, closeFn, err := mapBin(path)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.closers = append(p.closers, closeFn)
		*split.dst = &Tokens{le16: b}
		p.Bytes += int64(len(b))
		fmt.Fprintf(h, "%s %d\n", split.name, len(b))
		const edge = 1 << 20
		if len(b) <= 2*edge {
			h.Write(b)
		} else {
			h.Write(b[:edge])
			h.Write(b[len(b)-edge:])
		}
	}
	p.CRC32C = h.Sum32()
	meta := filepath.Join(dir, "meta.pkl")
	if _, err := os.Stat(meta); err == nil {
		v, err := ReadMetaPkl(meta)
		if err != nil {
			p.Close()
			return nil, err
		}
		p.Vocab = v
	} else if !errors.Is(err, fs.ErrNotExist) {
		p.Close()
		return nil, fmt.Errorf("meta.pkl: %w", err)
	}
	return p, nil
}

// mapBin maps a .bin file of uint16 ids.
func mapBin(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s does not exist (nanoGPT's prepare.py writes train.bin and val.bin together)", path)
		}
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %w", err)
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	case st.Size() == 0:
		return nil, nil, fmt.Errorf("%s is empty", path)
	case st.Size()%2 != 0:
		return nil, nil, fmt.Errorf("%s has %d bytes, an odd number: not uint16 token ids", path, st.Size())
	}
	b, unmap, err := mapFile(f, st.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: reading: %w", path, err)
	}
	return b, unmap, nil
}

// Close unmaps the .bin files; Train and Val must not be used after.
func (p *Prepared) Close() error {
	var err error
	for _, c := range p.closers {
		err = errors.Join(err, c())
	}
	p.closers, p.Train, p.Val = nil, nil, nil
	return err
}
