package tensor_test

import (
	"bufio"
	"errors"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wickml/wick/tensor"
)

// allocLimitForTest is the allocation limit the size table runs under
// unless a case says otherwise: the default when it is below 4 TiB (every
// machine this runs on), so that Zeros(1<<40) meets the limit a user gets.
func allocLimitForTest() int64 {
	if m := tensor.MaxAllocBytes(); m < 1<<42 {
		return m
	}
	return 1 << 30
}

// huge returns a view of 2^20 × 2^20 ones (2^40 elements) over one element
// of storage, so that an op over it would need 4 TiB for its output.
func huge() *tensor.Tensor { return tensor.Ones(1, 1).Expand(1<<20, 1<<20) }

// TestSizeTable checks that shapes that cannot exist (a negative
// dimension, an element count that overflows int) and storages larger than
// MaxAllocBytes panic with an *Error that names the op and the shape, in
// creation functions, views and op outputs, and that none of them
// allocates anything close to the requested size first.
func TestSizeTable(t *testing.T) {
	old := tensor.SetMaxAllocBytes(allocLimitForTest())
	defer tensor.SetMaxAllocBytes(old)
	overflow := "overflows"
	limit := "allocation limit"
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name string
		op   string
		want []string
		f    func()
	}{
		// element counts that overflow int
		{"Zeros 2^62×4", "Zeros", []string{"[4611686018427387904 4]", overflow}, func() { tensor.Zeros(1<<62, 4) }},
		{"Ones 2^62×4", "Ones", []string{"[4611686018427387904 4]", overflow}, func() { tensor.Ones(1<<62, 4) }},
		{"Full overflow", "Full", []string{overflow}, func() { tensor.Full(2, 1<<40, 1<<40) }},
		{"New nil 2^62×4", "New", []string{"[4611686018427387904 4]", overflow}, func() { tensor.New(nil, 1<<62, 4) }},
		{"FromInts nil 2^62×4", "FromInts", []string{"[4611686018427387904 4]", overflow}, func() { tensor.FromInts(nil, 1<<62, 4) }},
		{"Rand overflow", "Rand", []string{overflow}, func() { tensor.Rand(1<<62, 4) }},
		{"Randn overflow", "Randn", []string{overflow}, func() { tensor.Randn(1<<62, 4) }},
		{"RandInt overflow", "RandInt", []string{overflow}, func() { tensor.RandInt(0, 5, 1<<62, 4) }},
		{"Eye overflow", "Eye", []string{"[4294967296 4294967296]", overflow}, func() { tensor.Eye(1 << 32) }},
		{"Reshape overflow", "Reshape", []string{"[4611686018427387904 8]", overflow}, func() { tensor.Zeros(0).Reshape(1<<62, 8) }},
		{"View overflow", "View", []string{"[4611686018427387904 8 0]", overflow}, func() { tensor.Zeros(0).View(1<<62, 8, 0) }},
		{"Reshape -1 overflow", "Reshape", []string{overflow}, func() { tensor.Zeros(0).Reshape(1<<62, 8, -1) }},
		{"Expand overflow", "Expand", []string{"[4611686018427387904 4]", overflow}, func() { tensor.Ones(1, 1).Expand(1<<62, 4) }},
		{"Add broadcast overflow", "Add", []string{"[1099511627776 1099511627776]", overflow},
			func() { tensor.Ones(1, 1).Expand(1<<40, 1).Add(tensor.Ones(1, 1).Expand(1, 1<<40)) }},
		{"MatMul outer overflow", "MatMul", []string{"[1099511627776 1099511627776]", overflow},
			func() { tensor.Ones(1, 1).Expand(1<<40, 1).MatMul(tensor.Ones(1, 1).Expand(1, 1<<40)) }},
		{"Cat overflow", "Cat", []string{"add up to more than an int"},
			func() { x := tensor.Ones(1).Expand(math.MaxInt / 2); tensor.Cat([]*tensor.Tensor{x, x, x}, 0) }},

		// negative dimensions
		{"Zeros negative", "Zeros", []string{"[3 -1]", "negative"}, func() { tensor.Zeros(3, -1) }},
		{"Randn negative", "Randn", []string{"[-2]", "negative"}, func() { tensor.Randn(-2) }},
		{"New negative", "New", []string{"[-1 -1]", "negative"}, func() { tensor.New([]float32{1}, -1, -1) }},
		{"Eye negative", "Eye", []string{"[-3 -3]", "negative"}, func() { tensor.Eye(-3) }},
		{"ArangeInt negative", "ArangeInt", []string{"[-1]", "negative"}, func() { tensor.ArangeInt(-1) }},
		{"Expand negative", "Expand", []string{"[-2]", "negative"}, func() { tensor.Ones(1).Expand(-2) }},
		{"Expand negative leading", "Expand", []string{"[-5 3]", "negative"}, func() { tensor.Ones(3).Expand(-5, 3) }},

		// Arange: counts that do not fit, bounds that are not numbers
		{"Arange 1e30", "Arange", []string{"1e+30", "more than an int"}, func() { tensor.Arange(0, 1e30, 1) }},
		{"Arange -1e30 down", "Arange", []string{"more than an int"}, func() { tensor.Arange(0, -1e30, -1) }},
		{"Arange NaN end", "Arange", []string{"NaN", "finite"}, func() { tensor.Arange(0, nan, 1) }},
		{"Arange Inf end", "Arange", []string{"+Inf", "finite"}, func() { tensor.Arange(0, inf, 1) }},
		{"Arange NaN step", "Arange", []string{"NaN", "finite"}, func() { tensor.Arange(0, 1, nan) }},
		{"Arange -Inf start", "Arange", []string{"-Inf", "finite"}, func() { tensor.Arange(-inf, 1, 1) }},
		{"Arange 1e12", "Arange", []string{"[1000000000000]", limit}, func() { tensor.Arange(0, 1e12, 1) }},

		// storages above the limit: creation
		{"Zeros 2^40", "Zeros", []string{"[1099511627776]", "4398046511104 bytes", "4 TiB", limit, "SetMaxAllocBytes"}, func() { tensor.Zeros(1 << 40) }},
		{"Zeros 2^31×2^31", "Zeros", []string{"[2147483648 2147483648]", "bytes"}, func() { tensor.Zeros(1<<31, 1<<31) }},
		{"Ones 2^40", "Ones", []string{"[1099511627776]", limit}, func() { tensor.Ones(1 << 40) }},
		{"Rand 2^40", "Rand", []string{"[1099511627776]", limit}, func() { tensor.Rand(1 << 40) }},
		{"Randn 2^40", "Randn", []string{"[1099511627776]", limit}, func() { tensor.Randn(1 << 40) }},
		{"RandInt 2^40", "RandInt", []string{"[1099511627776]", limit}, func() { tensor.RandInt(0, 2, 1<<40) }},
		{"ArangeInt 2^40", "ArangeInt", []string{"int64", "[1099511627776]", limit}, func() { tensor.ArangeInt(1 << 40) }},
		{"Eye 2^20", "Eye", []string{"[1048576 1048576]", limit}, func() { tensor.Eye(1 << 20) }},
		{"New nil 2^40", "New", []string{"[1099511627776]", limit}, func() { tensor.New(nil, 1<<40) }},

		// storages above the limit: op outputs and host copies of a view
		{"Exp of a huge view", "Exp", []string{"[1048576 1048576]", limit}, func() { huge().Exp() }},
		{"Add of a huge view", "Add", []string{"[1048576 1048576]", limit}, func() { huge().Add(tensor.Ones(1)) }},
		{"Contiguous of a huge view", "Clone", []string{"[1048576 1048576]", limit}, func() { huge().Contiguous() }},
		{"Reshape copy of a huge view", "Clone", []string{"[1024 1073741824]", limit},
			func() { tensor.Ones(1024, 1).Expand(1024, 1<<30).Reshape(-1) }},
		{"ZerosLike of a huge view", "ZerosLike", []string{"[1048576 1048576]", limit}, func() { tensor.ZerosLike(huge()) }},
		{"Float32s of a huge view", "Float32s", []string{"[1048576 1048576]", limit}, func() { huge().Float32s() }},
		{"Ints of a huge view", "Ints", []string{"[1048576 1048576]", limit}, func() { huge().Ints() }},
		{"MatMul outer", "MatMul", []string{"[1048576 1048576]", limit},
			func() { tensor.Ones(1, 1).Expand(1<<20, 1).MatMul(tensor.Ones(1, 1).Expand(1, 1<<20)) }},
		{"Cat of huge views", "Cat", []string{"[2097152 1048576]", limit}, func() { tensor.Cat([]*tensor.Tensor{huge(), huge()}, 0) }},
		{"Tril of a huge view", "Tril", []string{"[1048576 1048576]", limit}, func() { huge().Tril(0) }},
		{"Dropout of a huge view", "Dropout", []string{"[1048576 1048576]", limit}, func() { huge().Dropout(0.5, true) }},
		{"Softmax of a huge view", "Softmax", []string{"[1048576 1048576]", limit}, func() { huge().Softmax(0) }},
		{"LayerNorm of a huge view", "LayerNorm", []string{"[1048576 1048576]", limit}, func() { huge().LayerNorm(nil, nil, 1e-5) }},
		{"Embedding of huge indices", "Embedding", []string{"[1048576 1048576 4]", limit},
			func() { tensor.Embedding(tensor.Zeros(3, 4), tensor.FromInts([]int{0}, 1, 1).Expand(1<<20, 1<<20)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := tensor.Catch(c.f)
			runtime.ReadMemStats(&after)
			var e *tensor.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want a *tensor.Error", err)
			}
			if e.Op != c.op {
				t.Errorf("Op = %q, want %q (%v)", e.Op, c.op, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not mention %q", err, w)
				}
			}
			if n := after.TotalAlloc - before.TotalAlloc; n >= 100<<20 {
				t.Errorf("allocated %d bytes before failing, want < 100 MB", n)
			}
		})
	}
}

// TestSizesThatFit checks that the size checks reject nothing valid: an
// empty dimension beside huge ones, views of huge shapes over a small
// storage, Arange's edge cases, and a storage exactly at the limit.
func TestSizesThatFit(t *testing.T) {
	if n := tensor.Zeros(0, 1<<40, 1<<20).Numel(); n != 0 {
		t.Errorf("Zeros(0, 2^40, 2^20).Numel() = %d, want 0", n)
	}
	if n := tensor.Zeros(0).Reshape(1<<40, 0).Numel(); n != 0 {
		t.Errorf("Reshape(2^40, 0).Numel() = %d, want 0", n)
	}
	if got := huge().Numel(); got != 1<<40 {
		t.Errorf("expanded view has %d elements, want 2^40", got)
	}
	if got := huge().Select(0, 5).Narrow(0, 1<<19, 3).Sum().Item(); got != 3 {
		t.Errorf("sum over 3 elements of the expanded view = %v, want 3", got)
	}
	if got := tensor.Arange(0, 5, 1).Shape(); len(got) != 1 || got[0] != 5 {
		t.Errorf("Arange(0, 5, 1) has shape %v, want [5]", got)
	}
	if got := tensor.Arange(3, 3, 1).Shape(); len(got) != 1 || got[0] != 0 {
		t.Errorf("Arange(3, 3, 1) has shape %v, want [0]", got)
	}
	old := tensor.SetMaxAllocBytes(1 << 20)
	defer tensor.SetMaxAllocBytes(old)
	if n := tensor.Zeros(1 << 18).Numel(); n != 1<<18 {
		t.Errorf("Zeros(2^18) under a 1 MiB limit has %d elements", n)
	}
	if n := tensor.ArangeInt(1 << 17).Numel(); n != 1<<17 {
		t.Errorf("ArangeInt(2^17) under a 1 MiB limit has %d elements", n)
	}
	err := tensor.Catch(func() { tensor.Zeros(1<<18 + 1) })
	if err == nil || !strings.Contains(err.Error(), "1048580 bytes") || !strings.Contains(err.Error(), "limit of 1048576 bytes (1 MiB)") {
		t.Errorf("Zeros(2^18+1) under a 1 MiB limit: got %v", err)
	}
	if err := tensor.Catch(func() { tensor.ArangeInt(1<<17 + 1) }); err == nil {
		t.Errorf("ArangeInt(2^17+1) (8 bytes each) under a 1 MiB limit: no error")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = tensor.Catch(func() { tensor.RandInt(0, 2, 1<<17+1) })
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "int64") {
		t.Errorf("RandInt(0, 2, 2^17+1) (8 bytes each) under a 1 MiB limit: got %v, want the int64 size refused", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n >= 1<<20 {
		t.Errorf("RandInt allocated %d bytes before failing, want < 1 MiB", n)
	}
}

// TestMaxAllocBytes checks the limit's setter: it returns the previous
// limit, 0 restores the default, a negative value only reads.
func TestMaxAllocBytes(t *testing.T) {
	def := tensor.MaxAllocBytes()
	if def <= 0 {
		t.Fatalf("default MaxAllocBytes = %d, want > 0", def)
	}
	defer tensor.SetMaxAllocBytes(tensor.SetMaxAllocBytes(-1))
	if prev := tensor.SetMaxAllocBytes(1000); prev != def {
		t.Errorf("SetMaxAllocBytes returned %d, want the default %d", prev, def)
	}
	if got := tensor.SetMaxAllocBytes(-1); got != 1000 {
		t.Errorf("SetMaxAllocBytes(-1) = %d, want 1000", got)
	}
	if got := tensor.MaxAllocBytes(); got != 1000 {
		t.Errorf("MaxAllocBytes() = %d after setting 1000", got)
	}
	if prev := tensor.SetMaxAllocBytes(0); prev != 1000 {
		t.Errorf("SetMaxAllocBytes(0) returned %d, want 1000", prev)
	}
	if got := tensor.MaxAllocBytes(); got != def {
		t.Errorf("MaxAllocBytes() = %d after restoring the default, want %d", got, def)
	}
	tensor.SetMaxAllocBytes(math.MaxInt64)
	err := tensor.Catch(func() { tensor.Zeros(1<<61, 2) })
	if err == nil || !strings.Contains(err.Error(), "address") {
		t.Errorf("Zeros(2^61, 2) with no limit: got %v, want an error about the address space", err)
	}
}

// TestDefaultAllocLimit checks the default against /proc/meminfo: positive
// and at most the machine's total memory (lower under a cgroup limit).
func TestDefaultAllocLimit(t *testing.T) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		if runtime.GOOS == "linux" {
			t.Fatal(err)
		}
		if got := tensor.MaxAllocBytes(); got != math.MaxInt64 {
			t.Errorf("default MaxAllocBytes on %s = %d, want no limit", runtime.GOOS, got)
		}
		return
	}
	defer f.Close()
	var total int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 3 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total = kb << 10
		}
	}
	if total == 0 {
		t.Fatal("no MemTotal in /proc/meminfo")
	}
	def := tensor.SetMaxAllocBytes(-1)
	if def <= 0 || def > total {
		t.Errorf("default MaxAllocBytes = %d, want in (0, MemTotal = %d]", def, total)
	}
}

// TestMaxAllocBytesConcurrent sets the limit while other goroutines
// allocate; run under -race.
func TestMaxAllocBytesConcurrent(t *testing.T) {
	defer tensor.SetMaxAllocBytes(tensor.SetMaxAllocBytes(1 << 20))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if g == 0 {
					tensor.SetMaxAllocBytes(int64(1<<20 + i))
					continue
				}
				if n := tensor.Zeros(64).Numel(); n != 64 {
					t.Errorf("Zeros(64).Numel() = %d", n)
				}
				if err := tensor.Catch(func() { tensor.Zeros(1 << 30) }); err == nil {
					t.Errorf("Zeros(2^30) under a limit near 1 MiB: no error")
				}
			}
		}()
	}
	wg.Wait()
}
