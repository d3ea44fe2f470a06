package blas

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/wickml/wick/internal/cpu"
	"github.com/wickml/wick/internal/parallel"
)

// path is one way of running the blocked product: a micro-kernel that
// keeps an mr×nr block of C in registers, the packing routines that lay the
// operands out for it, and the cache blocking chosen for it. A kc×nr panel
// of packed B stays in L1 while the kernel sweeps the mc×kc block of packed
// A held in L2; the kc×nc slab of packed B lives in L3 and is shared by all
// threads.
type path struct {
	name       string
	level      cpu.Level // what the processor must support
	mr, nr     int
	kc, mc, nc int
	// kcWide is the depth block for products whose C is larger than
	// wideC bytes (wideC 0: never): C no longer stays in L2 from one depth
	// block to the next, and a deeper block saves a pass over it
	kcWide, wideC int
	kern          kernelFunc
	// kernCols, when set, is kern for an A read in place from a
	// transposed A (each depth step on new cache lines): it fetches A
	// ahead of its loads
	kernCols kernelFunc
	// edge, when set, is a kernel of edgeRows rows (edgeRows divides mr)
	// for row blocks of at most mr-edgeRows rows, where the full kernel
	// would spend most of its work on the padding rows; it runs across
	// the B panels of a task, so that a small tile can work on more than
	// one panel at a time
	edgeRows int
	edge     edgeFunc
	// kernPackB, when set, runs one tile reading its B panel in place
	// and copying it, packed, as it goes: one-thread products pack each
	// panel of a non-transposed B on its first use, so that the copy
	// overlaps that tile's products, instead of in a pass of its own
	kernPackB packKernelFunc
	// kernColsPackA, when set, is kernCols that also copies each tile's
	// A to its packed panel: one-thread products read a transposed A in
	// place under their first B panel only, and packed under the others
	kernColsPackA packAKernelFunc
	// packBRows copies kb rows of nr floats, ldb apart in src, into dst.
	packBRows func(dst, src []float32, ldb, kb int)
	// packBCols transposes nr columns of kb floats, ldb apart in src,
	// into kb rows of nr in dst.
	packBCols func(dst, src []float32, ldb, kb int)
	// packACols packs panels whole A panels of depth kb from a
	// transposed A whose first needed element is src[0] (see packAColsGo).
	packACols func(dst, src []float32, lda, kb, panels int)
}

// goPath returns a path of the given tile with the pure-Go kernels and
// packing; tests run the driver with it.
func goPath(mr, nr, kc, mc, nc int) *path {
	return &path{
		name: fmt.Sprintf("go%dx%d", mr, nr), mr: mr, nr: nr, kc: kc, mc: mc, nc: nc,
		kern:     kernelGoFor(mr, nr),
		edgeRows: mr / 2, edge: edgeGoFor(mr/2, nr),
		kernPackB:     kernelGoPackBFor(mr, nr),
		kernColsPackA: kernelGoPackAFor(mr, nr),
		packBRows:     func(dst, src []float32, ldb, kb int) { packBRowsGo(dst, src, ldb, kb, nr) },
		packBCols:     func(dst, src []float32, ldb, kb int) { packBColsGo(dst, src, ldb, kb, nr, nr) },
		packACols:     func(dst, src []float32, lda, kb, panels int) { packAColsGo(dst, src, lda, kb, panels, mr) },
	}
}

// blocking returns the depth and row blocks for an mr×nr kernel whose
// kc×nr panel of B may take bBytes of L1, on an L2 of l2 bytes (either 0
// when unknown: then kc0 and mc0); an mc×kc block of A takes a quarter of
// L2.
func blocking(mr, nr, bBytes, l2, kc0, mc0 int) (kc, mc int) {
	kc, mc = kc0, mc0
	if bBytes > 0 {
		kc = min(max(bBytes/(4*nr)/8*8, 64), 512)
	}
	if l2 > 0 {
		mc = min(max(l2/4/(4*kc)/mr*mr, 4*mr), 1024/mr*mr)
	}
	return kc, mc
}

// kernelFunc computes the mr×nr block C = A·B (C += A·B when acc is
// non-zero) of depth k ≥ 1, where A[r][p] = a[r*rsA + p*csA],
// B[p][j] = b[p*rsB + j] and C[r][j] = c[r*ldc + j] (strides in floats),
// for tiles ≥ 1 such blocks down C: tile t reads A from a + t·aNext and
// writes C's rows t·mr to t·mr+mr-1 (one call runs a whole column of tiles,
// so the driver's per-call cost is paid once per B panel, not per tile).
// A packed A panel has rsA = 1, csA = mr; a packed B panel has rsB = nr; the
// strides also let the kernel read A and B where they lie.
type kernelFunc func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int)

// edgeFunc computes the edgeRows×(panels·nr) block C = A·B (C += A·B when
// acc is non-zero) of depth k ≥ 1, for panels ≥ 1 B panels side by side:
// A[r][p] = a[r*rsA + p*csA], panel t's B[p][j] = b[t*bNext + p*rsB + j]
// and its C[r][j] = c[r*ldc + t*nr + j] (strides in floats).
type edgeFunc func(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int)

// packKernelFunc is kernelFunc for one tile whose B panel is read in place
// (B[p][j] = b[p*rsB + j]) and also copied to the packed panel at bp
// (bp[p*nr + j] = B[p][j]) as the products use it.
type packKernelFunc func(k int, a *float32, rsA, csA int, b *float32, rsB int, bp *float32, c *float32, ldc int, acc int)

// packAKernelFunc is kernelFunc for an A read in place (rsA = 1) that is
// also copied to packed panels at ap: tile t's A[r][p] to
// ap[t*k*mr + p*mr + r].
type packAKernelFunc func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int, ap *float32)

// aBufs and bBufs recycle the packing buffers of A blocks and B slabs
// between calls (two pools, so that a small A buffer is never offered where
// a large B slab is needed), so steady-state Sgemm does not allocate them.
var aBufs, bBufs sync.Pool

// getBuf returns a buffer of n floats from pool, reusing a pooled one when
// it is large enough.
func getBuf(pool *sync.Pool, n int) *[]float32 {
	if p, ok := pool.Get().(*[]float32); ok {
		if cap(*p) >= n {
			*p = (*p)[:n]
			return p
		}
	}
	s := alignedFloats(n)
	return &s
}

// alignedFloats returns n float32s starting on a 64-byte boundary.
func alignedFloats(n int) []float32 {
	s := make([]float32, n+16)
	off := int(uintptr(unsafe.Pointer(&s[0]))&63) / 4
	if off != 0 {
		off = 16 - off
	}
	return s[off : off+n : off+n]
}

// Packing policies: whether gemmPacked copies operands into panels or lets
// the kernel read them in place. Tests force each; Sgemm uses packAuto.
const (
	packAuto   = iota // decide from the shapes
	packAlways        // pack A and B
	packNever         // read A, and B unless transposed, in place (edges still packed)
)

// packPolicy is the policy gemmPacked follows; tests change it.
var packPolicy = packAuto

// directMaxN is the widest product whose A gemmPacked reads in place.
const directMaxN = 128

// direct reports whether gemmPacked reads A and B in place: packing pays
// when a panel is reused many times and costs more than it saves when the
// product is small (measured in docs/perf.md). A transposed B is always
// packed: the kernel needs B's rows contiguous. kc is the product's depth
// block.
func direct(p *path, transA, transB bool, m, n, k, lda, kc int) (directA, directB bool) {
	switch packPolicy {
	case packAlways:
		return false, false
	case packNever:
		return true, !transB
	}
	// an A block is reused by every B panel of the slab, a B panel by
	// every A panel of the block. Up to directMaxN columns packing A costs
	// more than reading it in place saves: 4 panels of the AVX-512 kernel
	// and 8 of the AVX2 one (docs/perf.md)
	directA = n <= directMaxN
	// a non-transposed A summed in one depth block whose rows are k
	// apart is laid out as its packed panels would be: packing would
	// only copy it (the recipe's products of depth 128 ran 1.6-3.4%
	// faster without, docs/perf.md)
	directA = directA || !transA && lda == k && k <= kc
	directB = !transB && m <= 64
	return directA, directB
}

// depthBlock returns the depth of the blocks in which gemmPacked sums an
// m×n×k product: balanced blocks of at most p.kc (k=300 gives two blocks
// of 150, not 256+44), or of p.kcWide when C is larger than p.wideC bytes.
// It depends on the product's shape only, never on the thread count, so
// that every split of the work adds the same terms in the same order.
func (p *path) depthBlock(m, n, k int) int {
	target := p.kc
	if p.wideC > 0 && 4*float64(m)*float64(n) > float64(p.wideC) {
		target = max(target, p.kcWide)
	}
	return ceilDiv(k, ceilDiv(k, target))
}

// packAPanels is the fewest B panels after the first for which a
// transposed A read in place is packed by the first (see gemmBlocked):
// with 1 (n = 32 on the AVX2 path, attention's products) that cost 3-4%,
// with 7 (n = 128) it gained up to 12% (docs/perf.md).
const packAPanels = 3

// splitRows is the fewest rows per thread for which gemmPacked gives each
// thread a range of C's rows of its own (docs/perf.md): below it, each
// thread would read or pack all of op(B) for too little work with it.
const splitRows = 64

// gemmPacked is the blocked driver around a micro-kernel. With threads > 1
// and at least splitRows rows per thread, each thread computes its own
// range of C's rows as a one-thread product (packing op(B) for itself, and
// never waiting for the others); otherwise gemmBlocked shares each depth
// block's work out. threads ≥ 1.
func gemmPacked(p *path, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	kc := p.depthBlock(m, n, k)
	if threads > 1 && m >= threads*splitRows {
		s := &rowSplit{p: p, transA: transA, transB: transB, m: m, n: n, k: k, kc: kc, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, accumulate: accumulate, parts: threads}
		parallel.For(threads, 1, s.run)
		return
	}
	gemmBlocked(p, kc, transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate, threads)
}

// rowSplit is a product that gemmPacked shares out as parts one-thread
// products, each on its own range of C's rows.
type rowSplit struct {
	p              *path
	transA, transB bool
	m, n, k, kc    int
	a, b, c        []float32
	lda, ldb, ldc  int
	accumulate     bool
	parts          int
}

// run computes parts [lo, hi): part i is the i-th of parts ranges of whole
// mr-row panels of C (the last panel may be partial).
func (s *rowSplit) run(lo, hi int) {
	mr := s.p.mr
	panels := ceilDiv(s.m, mr)
	for i := lo; i < hi; i++ {
		r0, r1 := i*panels/s.parts*mr, min((i+1)*panels/s.parts*mr, s.m)
		ao := r0 * s.lda // op(A)'s row r0
		if s.transA {
			ao = r0
		}
		gemmBlocked(s.p, s.kc, s.transA, s.transB, r1-r0, s.n, s.k, s.a[ao:], s.lda, s.b, s.ldb, s.c[r0*s.ldc:], s.ldc, s.accumulate, 1)
	}
}

// gemmBlocked is the blocked product in depth blocks of kc: for each
// kc×nc slab of op(B) (packed once, in parallel, or on one thread by the
// first row block's tiles as they go: see path.kernPackB), the m×nc block
// of C is cut into macro-tiles (an mc-row block of A, packed by the task
// that owns it, times a range of B panels), and the tiles are shared out
// over the worker pool. Small products skip the packing (see direct).
// threads ≥ 1.
func gemmBlocked(p *path, kc int, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, accumulate bool, threads int) {
	mr, nr := p.mr, p.nr
	nc := min(n, p.nc)
	ncPanels := ceilDiv(nc, nr)
	j := gemmJob{p: p, transA: transA, transB: transB, m: m, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc, kc: kc}
	j.directA, j.directB = direct(p, transA, transB, m, n, k, lda, kc)
	// one thread runs the row blocks in turn, the first of them over
	// every B panel before the others: it packs each whole panel of a
	// non-transposed B as it first runs it (its first row block has a
	// whole tile: m ≥ mr)
	j.packOnUse = threads == 1 && p.kernPackB != nil && !transB && !j.directB && m >= mr
	// likewise the first B panel of each row block packs the row block's
	// A where it is read in place from a transposed A and at least
	// packAPanels more panels read it (the first tiles read each step's
	// values on a new cache line; the packed panels the others read are
	// contiguous). That first tile then has B packed already: the two
	// never pack in one kernel call
	if threads == 1 && transA && j.directA && p.kernColsPackA != nil && ceilDiv(n, nr) > packAPanels {
		j.packAOnUse, j.packOnUse = true, false
	}

	// row blocks of A and column splits of a slab: enough tasks to keep
	// every thread busy, in a number divisible by the thread count
	mb := ceilDiv(m, p.mc)
	nsplit := 1
	if threads > 1 && mb%threads != 0 {
		if mb < 2*threads && ncPanels >= 2*threads {
			nsplit = threads
		} else {
			mb = roundUp(mb, threads)
		}
	}
	j.mc = roundUp(ceilDiv(m, mb), mr)
	mb = ceilDiv(m, j.mc)

	bbuf := getBuf(&bBufs, kc*ncPanels*nr)
	defer bBufs.Put(bbuf)
	j.bp = *bbuf

	// one thread runs the job's steps on this goroutine; more share a
	// copy of it on the heap (the loops' closures would otherwise move the
	// whole job, and allocations, to the heap on every call)
	var shared *gemmJob
	if threads > 1 {
		shared = new(gemmJob)
	}
	for jc := 0; jc < n; jc += nc {
		j.jc, j.nb = jc, min(nc, n-jc)
		panels := ceilDiv(j.nb, nr)
		j.panels = panels
		j.split = ceilDiv(panels, nsplit)   // B panels per task
		j.perRow = ceilDiv(panels, j.split) // tasks per row block
		tasks := mb * j.perRow
		for pc := 0; pc < k; pc += kc {
			j.pc, j.kb = pc, min(kc, k-pc)
			j.acc = 0
			if accumulate || pc > 0 {
				j.acc = 1
			}
			if threads == 1 {
				if !j.directB && !j.packOnUse {
					j.packBPanels(0, panels)
				} else if j.nb%nr != 0 {
					j.packBPanels(panels-1, panels)
				}
				j.tiles(0, tasks)
				continue
			}
			*shared = j
			if !j.directB {
				parallel.For(panels, grain(panels, threads), shared.packBPanels)
			} else if j.nb%nr != 0 {
				shared.packBPanels(panels-1, panels)
			}
			parallel.For(tasks, grain(tasks, threads), shared.tiles)
		}
	}
}

// gemmJob is one slab step of gemmPacked: its operands, blocking and the
// position of the current kb×nb slab of op(B).
type gemmJob struct {
	p                *path
	transA, transB   bool
	directA, directB bool
	packOnUse        bool // the first row block packs whole B panels (see gemmBlocked)
	packAOnUse       bool // the first B panel of a row block packs its whole A tiles
	m                int
	a, b, c          []float32
	lda, ldb, ldc    int
	kc, mc           int
	bp               []float32 // the packed slab
	jc, nb, pc, kb   int       // the slab: columns [jc, jc+nb), rows [pc, pc+kb)
	panels           int       // B panels in the slab
	split, perRow    int       // B panels per task, tasks per row block
	acc              int       // the kernel's acc: add to C
}

// packBPanels packs B panels [lo, hi) of the slab (gemmPacked asks for
// only the ragged last one when B is read in place).
func (j *gemmJob) packBPanels(lo, hi int) {
	nr := j.p.nr
	j.p.packB(j.transB, j.b, j.ldb, j.pc, j.kb, j.jc+lo*nr, min(hi*nr, j.nb)-lo*nr, j.bp[lo*j.kb*nr:])
}

// tiles runs macro-tiles [lo, hi) of the slab: tile t is row block
// t/perRow of A times the t%perRow-th range of split B panels.
func (j *gemmJob) tiles(lo, hi int) {
	p := j.p
	mr, nr, mc, kc, kb, pc, jc, nb := p.mr, p.nr, j.mc, j.kc, j.kb, j.pc, j.jc, j.nb
	a, b, c, lda, ldb, ldc, acc := j.a, j.b, j.c, j.lda, j.ldb, j.ldc, j.acc
	transA, directA, directB := j.transA, j.directA, j.directB
	abuf := getBuf(&aBufs, mc*kc+mr*nr)
	defer aBufs.Put(abuf)
	ap, tile := (*abuf)[:mc*kb], (*abuf)[mc*kc:]
	bp := j.bp
	packed := -1
	for t := lo; t < hi; t++ {
		ib, js := t/j.perRow, t%j.perRow
		i0 := ib * mc
		rows := min(mc, j.m-i0)
		full := rows / mr * mr // rows in whole panels
		// the rows of the ragged tile that the edge kernel writes straight
		// into C across the whole-width panels once they are done
		edged := 0
		if er := p.edgeRows; p.edge != nil && rows-full <= mr-er {
			edged = (rows - full) / er * er
		}
		// where A is read in place and the edge kernel takes all of the
		// ragged rows, it reads them in place too
		edgeInPlace := directA && edged == rows-full
		if ib != packed {
			if !directA {
				p.packA(transA, a, lda, i0, rows, pc, kb, ap)
			} else if full < rows && !edgeInPlace {
				p.packA(transA, a, lda, i0+full, rows-full, pc, kb, ap[full*kb:])
			}
			packed = ib
		}
		q0, q1 := js*j.split, min((js+1)*j.split, j.panels)
		for q := q0; q < q1; q++ {
			jj := q * nr
			w := min(nr, nb-jj)
			bq, rsB := &bp[q*kb*nr], nr
			if directB && w == nr {
				_ = b[(pc+kb-1)*ldb+jc+jj+nr-1] // the kernel reads up to here
				bq, rsB = &b[pc*ldb+jc+jj], ldb
			}
			ir0 := 0 // the first row of the tiles run one by one below
			if w == nr && full > 0 && j.packOnUse && ib == 0 {
				// the first tile packs the panel as it reads B in place
				_ = b[(pc+kb-1)*ldb+jc+jj+nr-1] // the kernel reads up to here
				_ = bp[q*kb*nr+kb*nr-1]         // and writes up to here
				_, aq, rsA, csA, _ := j.aTiles(ap, i0, 0, mr, directA)
				off := i0*ldc + jc + jj
				_ = c[off+(mr-1)*ldc+nr-1] // the kernel writes up to here
				p.kernPackB(kb, aq, rsA, csA, &b[pc*ldb+jc+jj], ldb, bq, &c[off], ldc, acc)
				ir0 = mr
			}
			if w == nr && full > ir0 {
				// the whole tiles of the column in one call; where the
				// first panel packs A, the others read the packed A
				inPlace := directA && (!j.packAOnUse || q == q0)
				kern, aq, rsA, csA, aNext := j.aTiles(ap, i0, ir0, full-ir0, inPlace)
				off := (i0+ir0)*ldc + jc + jj
				_ = c[off+(full-ir0-1)*ldc+nr-1] // the kernel writes up to here
				if inPlace && j.packAOnUse {
					_ = ap[full*kb-1] // the kernel packs up to here
					p.kernColsPackA((full-ir0)/mr, kb, aq, rsA, csA, aNext, bq, rsB, &c[off], ldc, acc, &ap[ir0*kb])
				} else {
					kern((full-ir0)/mr, kb, aq, rsA, csA, aNext, bq, rsB, &c[off], ldc, acc)
				}
				ir0 = full
			}
			for ir := ir0; ir < rows; ir += mr {
				h := min(mr, rows-ir)
				off := (i0+ir)*ldc + jc + jj
				// ragged edge: compute the tile aside and keep its
				// valid part, but for its first skip rows (the edge
				// kernel's, below)
				skip := 0
				if w == nr {
					skip = edged
				}
				if er := p.edgeRows; p.edge != nil && h <= mr-er {
					for r0 := skip; r0 < h; r0 += er {
						ae, rsA, csA := j.edgeA(ap, i0, ir+r0, edgeInPlace)
						p.edge(1, kb, ae, rsA, csA, bq, rsB, 0, &tile[r0*nr], nr, 0)
					}
				} else {
					kern, aq, rsA, csA, _ := j.aTiles(ap, i0, ir, mr, directA && h == mr)
					kern(1, kb, aq, rsA, csA, 0, bq, rsB, &tile[0], nr, 0)
				}
				for r := skip; r < h; r++ {
					crow := c[off+r*ldc:][:w]
					trow := tile[r*nr:][:w]
					if acc != 0 {
						for x, v := range trow {
							crow[x] += v
						}
					} else {
						copy(crow, trow)
					}
				}
			}
		}
		if qw := min(q1, nb/nr); edged > 0 && qw > q0 {
			// the edge rows across the whole-width panels [q0, qw),
			// edgeRows at a time
			bq, rsB, bNext := &bp[q0*kb*nr], nr, kb*nr
			if directB {
				_ = b[(pc+kb-1)*ldb+jc+qw*nr-1] // the kernel reads up to here
				bq, rsB, bNext = &b[pc*ldb+jc+q0*nr], ldb, nr
			} else {
				_ = bp[qw*kb*nr-1] // the kernel reads up to here
			}
			for r0 := 0; r0 < edged; r0 += p.edgeRows {
				off := (i0+full+r0)*ldc + jc + q0*nr
				_ = c[off+(p.edgeRows-1)*ldc+(qw-q0)*nr-1] // the kernel writes up to here
				ae, rsA, csA := j.edgeA(ap, i0, full+r0, edgeInPlace)
				p.edge(qw-q0, kb, ae, rsA, csA, bq, rsB, bNext, &c[off], ldc, acc)
			}
		}
	}
}

// aTiles returns the kernel and its A operand (first element, strides,
// step between tiles) for the rows [ir, ir+rows) of the row block at i0
// (rows a multiple of mr, but for a ragged last tile read packed): read in
// place when inPlace, else from the row block's packed panels in ap.
func (j *gemmJob) aTiles(ap []float32, i0, ir, rows int, inPlace bool) (kern kernelFunc, a *float32, rsA, csA, aNext int) {
	if inPlace {
		return j.inPlaceA(i0+ir, rows)
	}
	rsA, csA = j.p.packedAStrides(j.transA, j.kb)
	return j.p.kern, &ap[ir*j.kb], rsA, csA, j.kb * j.p.mr
}

// edgeA returns the edge kernel's A operand (first element and strides)
// for the edgeRows rows from row r of the row block at i0: read in place
// when inPlace, else from the row block's packed panels in ap.
func (j *gemmJob) edgeA(ap []float32, i0, r int, inPlace bool) (a *float32, rsA, csA int) {
	if inPlace {
		_, a, rsA, csA, _ = j.inPlaceA(i0+r, j.p.edgeRows)
		return a, rsA, csA
	}
	mr := j.p.mr
	rsA, csA = j.p.packedAStrides(j.transA, j.kb)
	return &ap[r/mr*mr*j.kb+r%mr*rsA], rsA, csA
}

// inPlaceA returns what the kernel needs to read rows [i, i+rows) of op(A)
// (rows a multiple of mr, or the edge kernel's rows) in place at the
// slab's depth: the kernel for that layout, the first element, A's strides
// (element (r, p) at r·rsA + p·csA) and the step between mr-row tiles. It
// checks that the last element the kernel reads is within a.
func (j *gemmJob) inPlaceA(i, rows int) (kern kernelFunc, a *float32, rsA, csA, aNext int) {
	p, pc, kb, lda := j.p, j.pc, j.kb, j.lda
	if j.transA {
		_ = j.a[(pc+kb-1)*lda+i+rows-1]
		kern = p.kern
		if p.kernCols != nil {
			kern = p.kernCols
		}
		return kern, &j.a[pc*lda+i], 1, lda, p.mr
	}
	_ = j.a[(i+rows-1)*lda+pc+kb-1]
	return p.kern, &j.a[i*lda+pc], lda, 1, p.mr * lda
}

// grain is the grain for parallel.For that spreads n items over at most
// threads goroutines: with the whole pool, single items, claimed as the
// goroutines get to them (which balances the load when the machine is
// shared); with fewer threads, ranges of n/threads.
func grain(n, threads int) int {
	if threads >= parallel.Workers() {
		return 1
	}
	return ceilDiv(n, threads)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// kernelGoFor returns the pure-Go statement of the micro-kernel contract
// (see kernelFunc) for an mr×nr tile; tests run the blocked driver with it
// and compare the assembly kernels against it.
func kernelGoFor(mr, nr int) kernelFunc {
	return func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int) {
		for t := range tiles {
			at := unsafe.Add(unsafe.Pointer(a), 4*t*aNext)
			ct := unsafe.Add(unsafe.Pointer(c), 4*t*mr*ldc)
			kernelGo(mr, nr, k, (*float32)(at), rsA, csA, b, rsB, (*float32)(ct), ldc, acc)
		}
	}
}

// edgeGoFor returns the pure-Go statement of edgeFunc's contract for
// er-row tiles of nr columns.
func edgeGoFor(er, nr int) edgeFunc {
	return func(panels, k int, a *float32, rsA, csA int, b *float32, rsB, bNext int, c *float32, ldc int, acc int) {
		for t := range panels {
			bt := unsafe.Add(unsafe.Pointer(b), 4*t*bNext)
			ct := unsafe.Add(unsafe.Pointer(c), 4*t*nr)
			kernelGo(er, nr, k, a, rsA, csA, (*float32)(bt), rsB, (*float32)(ct), ldc, acc)
		}
	}
}

// kernelGoPackBFor returns the pure-Go statement of packKernelFunc's
// contract for an mr×nr tile.
func kernelGoPackBFor(mr, nr int) packKernelFunc {
	return func(k int, a *float32, rsA, csA int, b *float32, rsB int, bp *float32, c *float32, ldc int, acc int) {
		packBRowsGo(unsafe.Slice(bp, k*nr), unsafe.Slice(b, (k-1)*rsB+nr), rsB, k, nr)
		kernelGo(mr, nr, k, a, rsA, csA, bp, nr, c, ldc, acc)
	}
}

// kernelGoPackAFor returns the pure-Go statement of packAKernelFunc's
// contract for an mr×nr tile.
func kernelGoPackAFor(mr, nr int) packAKernelFunc {
	kern := kernelGoFor(mr, nr)
	return func(tiles, k int, a *float32, rsA, csA, aNext int, b *float32, rsB int, c *float32, ldc int, acc int, ap *float32) {
		as := unsafe.Slice(a, (tiles-1)*aNext+(mr-1)*rsA+(k-1)*csA+1)
		ps := unsafe.Slice(ap, tiles*k*mr)
		for t := range tiles {
			for p := range k {
				for r := range mr {
					ps[t*k*mr+p*mr+r] = as[t*aNext+r*rsA+p*csA]
				}
			}
		}
		kern(tiles, k, a, rsA, csA, aNext, b, rsB, c, ldc, acc)
	}
}

// kernelGo is kernelFunc's contract for an mr×nr tile, in Go.
func kernelGo(mr, nr, k int, a *float32, rsA, csA int, b *float32, rsB int, c *float32, ldc int, acc int) {
	as := unsafe.Slice(a, (mr-1)*rsA+(k-1)*csA+1)
	bs := unsafe.Slice(b, (k-1)*rsB+nr)
	cs := unsafe.Slice(c, (mr-1)*ldc+nr)
	t := make([]float32, mr*nr)
	for p := range k {
		brow := bs[p*rsB:][:nr]
		for r := range mr {
			av := as[r*rsA+p*csA]
			for j, bv := range brow {
				t[r*nr+j] += av * bv
			}
		}
	}
	for r := range mr {
		crow := cs[r*ldc:][:nr]
		for j := range crow {
			if acc != 0 {
				crow[j] += t[r*nr+j]
			} else {
				crow[j] = t[r*nr+j]
			}
		}
	}
}
