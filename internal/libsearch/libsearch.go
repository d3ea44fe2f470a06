// Package libsearch lists the files a shared library may be loaded from
// with dlopen, in the order Wick tries them: CUDA libraries such as cuBLAS
// and NCCL are found where the machine's own packages put them, and also
// where Python's NVIDIA wheels (the CUDA libraries that a pip-installed
// PyTorch brings) keep them, which on some machines is the only copy.
package libsearch

import "path/filepath"

// Lib describes one library to look for.
type Lib struct {
	// EnvVar names the environment variable that, when set, gives a file
	// to try first (WICK_CUBLAS, WICK_NCCL).
	EnvVar string
	// Sonames are tried in order through the dynamic loader's own search
	// (LD_LIBRARY_PATH, the ld.so cache).
	Sonames []string
	// WheelSonames are the file names looked for in WheelDirs.
	WheelSonames []string
	// WheelDirs are where the wheels keep the library, below a
	// site-packages (or dist-packages) directory.
	WheelDirs []string
}

// prefixes are the installation prefixes whose Python site directories
// are searched, after $VIRTUAL_ENV, $CONDA_PREFIX and ~/.local.
var prefixes = []string{"/usr/local", "/usr", "/opt/conda"}

// sitePatterns are the site directories below a prefix.
var sitePatterns = []string{"lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages"}

// Candidates returns what to try to load, in order: $EnvVar (a file) if
// set, each soname through the dynamic loader's search, then each wheel
// soname in each wheel directory of the Python installations found below
// $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr and /opt/conda
// and in the directories of $PYTHONPATH, where the file exists. env, home
// and glob stand in for os.Getenv, the home directory and filepath.Glob.
func Candidates(lib Lib, env func(string) string, home string, glob func(string) ([]string, error)) []string {
	var out []string
	if f := env(lib.EnvVar); f != "" {
		out = append(out, f)
	}
	out = append(out, lib.Sonames...)
	var sites []string
	for _, prefix := range append([]string{env("VIRTUAL_ENV"), env("CONDA_PREFIX"), filepath.Join(home, ".local")}, prefixes...) {
		if prefix == "" || prefix == ".local" {
			continue
		}
		for _, pat := range sitePatterns {
			m, _ := glob(filepath.Join(prefix, pat))
			sites = append(sites, m...)
		}
	}
	for _, p := range filepath.SplitList(env("PYTHONPATH")) {
		if p != "" {
			sites = append(sites, p)
		}
	}
	seen := map[string]bool{}
	for _, site := range sites {
		for _, so := range lib.WheelSonames {
			for _, dir := range lib.WheelDirs {
				f := filepath.Join(site, dir, so)
				if seen[f] {
					continue
				}
				seen[f] = true
				if m, _ := glob(f); len(m) > 0 {
					out = append(out, f)
				}
			}
		}
	}
	return out
}
