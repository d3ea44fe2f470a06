package nn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// hubNames are the model names PretrainedDir looks up in the Hugging Face
// cache, with the repositories that hold them: the hub moved GPT-2 to
// openai-community/, and a cache keeps the name it was downloaded under.
var hubNames = map[string][]string{
	"gpt2":        {"gpt2", "openai-community/gpt2"},
	"gpt2-medium": {"gpt2-medium", "openai-community/gpt2-medium"},
	"gpt2-large":  {"gpt2-large", "openai-community/gpt2-large"},
	"gpt2-xl":     {"gpt2-xl", "openai-community/gpt2-xl"},
}

// hubRepo matches a hub repository id, owner/name.
var hubRepo = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// HubCacheDir returns the directory of the Hugging Face hub cache, as the
// huggingface_hub library finds it: $HF_HUB_CACHE, else $HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. It does
// not check that the directory exists.
func HubCacheDir() string {
	if d := os.Getenv("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := os.Getenv("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "~"
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

// PretrainedDir returns the directory that LoadPretrained reads for name:
// name itself if it is a directory; otherwise, for the hub names gpt2,
// gpt2-medium, gpt2-large and gpt2-xl (also spelled
// openai-community/gpt2, …), a snapshot in the Hugging Face cache
// (HubCacheDir): models--gpt2/snapshots/<commit>/, the commit that
// models--gpt2/refs/main names, or the most recently modified snapshot
// when there is no such ref. Any other repository id owner/name (such as
// HuggingFaceTB/SmolLM2-135M or Qwen/Qwen3-0.6B) is looked up the same way
// as models--owner--name. The files in a snapshot are usually symbolic
// links into the cache's blobs/, which is fine. Programs that also need
// the tokenizer files of a model find them in the same directory.
func PretrainedDir(name string) (string, error) {
	if fi, err := os.Stat(name); err == nil {
		if fi.IsDir() {
			return name, nil
		}
		return "", fmt.Errorf("nn: pretrained model %s: not a directory (give the directory that holds config.json and the weights)", name)
	}
	repos, ok := hubNames[strings.TrimPrefix(name, "openai-community/")]
	if !ok && hubRepo.MatchString(name) {
		repos, ok = []string{name}, true // owner/name, such as HuggingFaceTB/SmolLM2-135M
	}
	if !ok {
		return "", fmt.Errorf("nn: pretrained model %s: no such directory, and not one of the hub names gpt2, gpt2-medium, gpt2-large, gpt2-xl: %w", name, fs.ErrNotExist)
	}
	cache := HubCacheDir()
	var looked []string
	for _, repo := range repos {
		root := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
		looked = append(looked, filepath.Join(root, "snapshots"))
		dir, err := snapshot(root)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("nn: pretrained model %s: %w", name, err)
		}
	}
	return "", fmt.Errorf("nn: pretrained model %s: no snapshot in the Hugging Face cache (looked in %s; set HF_HUB_CACHE or HF_HOME, or give the model's directory): %w", name, strings.Join(looked, " and "), fs.ErrNotExist)
}

// maxRefBytes bounds what snapshot reads of refs/main, which holds a
// 40-character commit hash and a newline.
const maxRefBytes = 1024

// snapshot returns the current snapshot directory of the cached repository
// at root (models--NAME): the one refs/main names, or the most recently
// modified one when there is no refs/main. A refs/main that is not a
// regular file, is longer than maxRefBytes, or does not name a directory
// directly under snapshots/ (empty, ".", "..", a path with slashes, a
// missing snapshot) is an error naming it, never a silent fallback.
func snapshot(root string) (string, error) {
	snaps := filepath.Join(root, "snapshots")
	refPath := filepath.Join(root, "refs", "main")
	commit, err := readRef(refPath)
	switch {
	case err == nil:
		if commit == "" || commit == "." || commit == ".." || strings.ContainsAny(commit, "/\\\x00") || !filepath.IsLocal(commit) {
			return "", fmt.Errorf("%s names %q, which is not a snapshot name (want a commit hash under %s)", refPath, commit, snaps)
		}
		dir := filepath.Join(snaps, commit)
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%s names snapshot %s, which is not a directory in the cache (download the model again, or give its directory)", refPath, dir)
		}
		return dir, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	ents, err := os.ReadDir(snaps)
	if err != nil {
		return "", err
	}
	type snap struct {
		dir string
		mod int64
	}
	var all []snap
	for _, e := range ents {
		dir := filepath.Join(snaps, e.Name())
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			all = append(all, snap{dir, fi.ModTime().UnixNano()})
		}
	}
	if len(all) == 0 {
		return "", fmt.Errorf("%s holds no snapshot: %w", snaps, fs.ErrNotExist)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].mod != all[j].mod {
			return all[i].mod > all[j].mod
		}
		return all[i].dir > all[j].dir
	})
	return all[0].dir, nil
}

// readRef returns the trimmed text of the ref file at path, read with a
// byte limit; it checks that path is a regular file first, so that a FIFO
// or a device never blocks or floods the read. A missing file is an error
// wrapping fs.ErrNotExist.
func readRef(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (want a commit hash)", path)
	}
	if fi.Size() > maxRefBytes {
		return "", fmt.Errorf("%s is %d bytes, more than the %d of a ref (want a commit hash)", path, fi.Size(), maxRefBytes)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRefBytes+1))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxRefBytes {
		return "", fmt.Errorf("%s is longer than the %d bytes of a ref (want a commit hash)", path, maxRefBytes)
	}
	return strings.TrimSpace(string(b)), nil
}
