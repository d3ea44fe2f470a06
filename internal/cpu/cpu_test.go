package cpu

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// cpuinfoFlags returns the flags line of /proc/cpuinfo, skipping the test
// where there is none.
func cpuinfoFlags(t *testing.T) map[string]bool {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || runtime.GOARCH != "amd64" {
		t.Skipf("no /proc/cpuinfo on %s/%s to compare with", runtime.GOOS, runtime.GOARCH)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(string(info), "\n") {
		if strings.HasPrefix(line, "flags") {
			for _, f := range strings.Fields(line) {
				flags[f] = true
			}
			break
		}
	}
	return flags
}

// TestDetected compares the CPUID answer with the kernel's view of the
// processor where Linux exposes it (Linux lists a feature only when it also
// saves the registers it needs).
func TestDetected(t *testing.T) {
	has := cpuinfoFlags(t)
	want := Generic
	if detects && has["avx2"] && has["fma"] {
		want = AVX2
		if has["avx512f"] && has["avx512bw"] && has["avx512dq"] && has["avx512vl"] {
			want = AVX512
			if has["avx512_bf16"] {
				want = AVX512BF16
				if has["amx_bf16"] && has["amx_tile"] {
					want = AMXBF16
				}
			}
		}
	}
	if Detected != want {
		t.Errorf("Detected = %v, want %v (/proc/cpuinfo: avx2=%v fma=%v avx512f=%v bw=%v dq=%v vl=%v; detection in this build: %v)",
			Detected, want, has["avx2"], has["fma"], has["avx512f"], has["avx512bw"], has["avx512dq"], has["avx512vl"], detects)
	}
	t.Logf("detected %v, using %v (WICK_CPU=%q)", Detected, Use, os.Getenv("WICK_CPU"))
	if HasAVX2FMA != (Use >= AVX2) || HasAVX512 != (Use >= AVX512) || HasAVX512BF16 != (Use >= AVX512BF16) || HasAMXBF16 != (Use >= AMXBF16) || Use > Detected {
		t.Errorf("Use=%v Detected=%v but HasAVX2FMA=%v HasAVX512=%v HasAVX512BF16=%v HasAMXBF16=%v", Use, Detected, HasAVX2FMA, HasAVX512, HasAVX512BF16, HasAMXBF16)
	}
	if HasAMXBF16 && os.Getenv("WICK_CPU") != "amx" {
		t.Errorf("the AMX kernels run without WICK_CPU=amx asking for them")
	}
}

// TestChoose checks the WICK_CPU rules: a lower level is honoured, a higher
// one falls back with a message, an unknown one is ignored with a message.
func TestChoose(t *testing.T) {
	cases := []struct {
		env      string
		detected Level
		want     Level
		message  bool
	}{
		{"", AVX512, AVX512, false},
		{"", Generic, Generic, false},
		{"purego", AVX512, Generic, false},
		{"avx2", AVX512, AVX2, false},
		{" AVX512 ", AVX512, AVX512, false},
		{"avx512", AVX2, AVX2, true},
		{"avx512", AVX512BF16, AVX512, false},
		{"avx512bf16", AVX512BF16, AVX512BF16, false},
		{"avx512bf16", AVX512, AVX512, true},
		{"avx2", Generic, Generic, true},
		{"sse", AVX2, AVX2, true},
		// AMX is opt-in
		{"", AMXBF16, AVX512BF16, false},
		{"amx", AMXBF16, AMXBF16, false},
		{"AMX", AMXBF16, AMXBF16, false},
		{"avx512bf16", AMXBF16, AVX512BF16, false},
		{"amx", AVX512BF16, AVX512BF16, true},
		{"amx", AVX2, AVX2, true},
		{"sse", AMXBF16, AVX512BF16, true},
	}
	for _, c := range cases {
		var w bytes.Buffer
		got := choose(c.env, c.detected, &w)
		if got != c.want || (w.Len() > 0) != c.message {
			t.Errorf("choose(%q, %v) = %v with message %q; want %v, message %v", c.env, c.detected, got, w.String(), c.want, c.message)
		}
		if c.message && strings.Count(w.String(), "\n") != 1 {
			t.Errorf("choose(%q, %v): message %q is not one line", c.env, c.detected, w.String())
		}
	}
}

// TestGrant checks that a refused tile state lowers AMXBF16 to
// AVX512BF16 with a one-line message, and that other levels ask nothing.
func TestGrant(t *testing.T) {
	refuse := func() error { return errors.New("refused") }
	var w bytes.Buffer
	if got := grant(AMXBF16, refuse, &w); got != AVX512BF16 || strings.Count(w.String(), "\n") != 1 || !strings.Contains(w.String(), "refused") {
		t.Errorf("grant(AMXBF16, refused) = %v with message %q; want %v and one line naming the error", got, w.String(), AVX512BF16)
	}
	w.Reset()
	if got := grant(AMXBF16, func() error { return nil }, &w); got != AMXBF16 || w.Len() != 0 {
		t.Errorf("grant(AMXBF16, granted) = %v with message %q; want %v, no message", got, w.String(), AMXBF16)
	}
	for _, l := range []Level{Generic, AVX2, AVX512, AVX512BF16} {
		asked := false
		if got := grant(l, func() error { asked = true; return nil }, &w); got != l || asked {
			t.Errorf("grant(%v) = %v, asked the OS: %v; want %v without asking", l, got, asked, l)
		}
	}
	if Detected == AMXBF16 {
		// this machine has the tiles: Linux must grant them
		if err := requestAMX(); err != nil {
			t.Errorf("requestAMX on a processor with AMX: %v", err)
		}
	}
}

// TestCacheSizes compares the CPUID cache sizes with Linux's sysfs view.
func TestCacheSizes(t *testing.T) {
	if !detects {
		if L1D != 0 || L2 != 0 {
			t.Errorf("L1D=%d L2=%d in a build without detection", L1D, L2)
		}
		return
	}
	t.Logf("L1D %d KiB, L2 %d KiB", L1D>>10, L2>>10)
	want := map[int]int{}
	for i := range 8 {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + strconv.Itoa(i) + "/"
		lv, err1 := os.ReadFile(dir + "level")
		ty, err2 := os.ReadFile(dir + "type")
		sz, err3 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		level, _ := strconv.Atoi(strings.TrimSpace(string(lv)))
		typ := strings.TrimSpace(string(ty))
		s := strings.TrimSpace(string(sz))
		if !strings.HasSuffix(s, "K") {
			continue
		}
		kib, err := strconv.Atoi(strings.TrimSuffix(s, "K"))
		if err != nil {
			continue
		}
		if (level == 1 && typ == "Data") || (level == 2 && typ != "Instruction") {
			want[level] = kib << 10
		}
	}
	if len(want) == 0 {
		t.Skip("no /sys/devices/system/cpu/cpu0/cache to compare with")
	}
	if w, ok := want[1]; ok && L1D != w {
		t.Errorf("L1D = %d, sysfs says %d", L1D, w)
	}
	if w, ok := want[2]; ok && L2 != w {
		t.Errorf("L2 = %d, sysfs says %d", L2, w)
	}
}
