// Package atomicfile writes files so that a reader, or a process that
// starts after a crash, sees either the old contents or the complete new
// ones, never a mix; and it deletes the temporary files that a process
// killed in the middle of such a write leaves behind.
//
// nn writes its checkpoints through it, and the train command its log,
// loss-curve pictures and sample text. The package is internal: it is a
// file helper, not part of Wick's library API.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// WriteFile writes a file through write so that path holds either its
// old contents or the complete new ones, never a mix: the data goes to a
// temporary file in the same directory, named .NAME.wick-tmp-DIGITS for a
// path ending in NAME, which is synced, renamed over path, and the
// directory synced. A process killed before the rename leaves the
// temporary file behind; RemoveTempFiles deletes such leftovers. Errors
// read "write PATH: ..." and wrap the error of write or of the file
// system.
func WriteFile(path string, write func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Syncing the directory makes the rename durable; some systems
		// cannot sync directories, which is not an error for the caller.
		d.Sync()
		d.Close()
	}
	return nil
}

// tempInfix is what WriteFile puts between the target's name and the
// random digits of its temporary file. Before it, temporary files were
// named .NAME.tmp-DIGITS (legacyTempInfix).
const (
	tempInfix       = ".wick-tmp-"
	legacyTempInfix = ".tmp-"
)

// RemoveTempFiles deletes from dir the temporary files that WriteFile
// left there when a process died before renaming them over one of names
// (base names such as "ckpt.safetensors"): .NAME.wick-tmp-DIGITS, and
// .NAME.tmp-DIGITS as earlier versions named them. Nothing else is
// touched. It returns the paths it removed and their total size. Call it
// only while no other process writes those files into dir, such as when a
// program that owns dir starts. Errors reading dir or removing a file are
// returned, joined, after removing what it could.
func RemoveTempFiles(dir string, names []string) (removed []string, total int64, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, fmt.Errorf("remove temporary files: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTempFileOf(e.Name(), names) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		var size int64
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
		total += size
	}
	if len(errs) > 0 {
		return removed, total, fmt.Errorf("remove temporary files: %w", errors.Join(errs...))
	}
	return removed, total, nil
}

// isTempFileOf reports whether file is the name of a temporary file
// WriteFile makes for one of names.
func isTempFileOf(file string, names []string) bool {
	for _, n := range names {
		for _, infix := range []string{tempInfix, legacyTempInfix} {
			digits, ok := strings.CutPrefix(file, "."+n+infix)
			if ok && digits != "" && strings.Trim(digits, "0123456789") == "" {
				return true
			}
		}
	}
	return false
}
