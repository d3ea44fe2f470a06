package kvcache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// check verifies the allocator's invariants: every block is either free
// or in exactly one block table, each table covers its sequence's
// positions exactly, no sequence holds more than it reserved, the
// reservations fit in the cache and the counters agree.
func check(a *Allocator) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	owner := make([]string, a.total)
	claim := func(b int, who string) error {
		if b < 0 || b >= a.total {
			return fmt.Errorf("%s holds block %d, outside [0, %d)", who, b, a.total)
		}
		if owner[b] != "" {
			return fmt.Errorf("block %d is held by %s and by %s", b, owner[b], who)
		}
		owner[b] = who
		return nil
	}
	for _, b := range a.free {
		if err := claim(b, "the free list"); err != nil {
			return err
		}
	}
	reserved, inUse := 0, 0
	for id, s := range a.seqs {
		who := fmt.Sprintf("sequence %d", id)
		for _, b := range s.table {
			if err := claim(b, who); err != nil {
				return err
			}
		}
		if want := a.BlocksFor(s.tokens); len(s.table) != want {
			return fmt.Errorf("%s: %d positions in %d blocks, want %d", who, s.tokens, len(s.table), want)
		}
		if len(s.table) > s.reserved {
			return fmt.Errorf("%s: %d blocks, %d reserved", who, len(s.table), s.reserved)
		}
		reserved += s.reserved
		inUse += len(s.table)
	}
	for b, o := range owner {
		if o == "" {
			return fmt.Errorf("block %d is lost (neither free nor in a table)", b)
		}
	}
	if reserved != a.reserved || reserved > a.total {
		return fmt.Errorf("reserved %d (counted %d) of %d", a.reserved, reserved, a.total)
	}
	if inUse+len(a.free) != a.total {
		return fmt.Errorf("%d in use + %d free != %d", inUse, len(a.free), a.total)
	}
	return nil
}

func TestGeometry(t *testing.T) {
	// Llama 3.2 1B: 16 layers, 8 KV heads of 64, bf16, 16-position blocks.
	g := Geometry{Layers: 16, KVHeads: 8, HeadDim: 64, BlockSize: 16, DTypeSize: 2}
	bb, err := g.BlockBytes()
	if err != nil || bb != 2*16*8*64*16*2 {
		t.Fatalf("BlockBytes = %d, %v", bb, err)
	}
	for _, tc := range []struct {
		budget int64
		want   int
	}{{bb, 1}, {10*bb + bb - 1, 10}, {1 << 30, int((1 << 30) / bb)}} {
		if n, err := g.NumBlocks(tc.budget); err != nil || n != tc.want {
			t.Errorf("NumBlocks(%d) = %d, %v; want %d", tc.budget, n, err, tc.want)
		}
	}
	if _, err := g.NumBlocks(bb - 1); err == nil {
		t.Error("a budget under one block gave blocks")
	}
	bad := g
	bad.KVHeads = 0
	if _, err := bad.NumBlocks(1 << 30); err == nil {
		t.Error("KVHeads 0 accepted")
	}
	huge := Geometry{Layers: 1 << 20, KVHeads: 1 << 20, HeadDim: 1 << 20, BlockSize: 1 << 20, DTypeSize: 4}
	if _, err := huge.BlockBytes(); err == nil {
		t.Error("overflow not reported")
	}
}

func TestAdmitAppendFree(t *testing.T) {
	a := New(4, 16)
	if !a.Fits(40, 24) || a.Fits(40, 25) {
		t.Errorf("Fits: 64 positions fit in 4 blocks of 16, 65 do not")
	}
	if err := a.Admit(1, 20, 12); err != nil { // 32 positions: 2 blocks
		t.Fatal(err)
	}
	if err := a.Admit(1, 1, 1); !errors.Is(err, ErrDuplicateSequence) {
		t.Errorf("duplicate: %v", err)
	}
	if a.CanAdmit(20, 13) || !a.CanAdmit(20, 12) {
		t.Error("CanAdmit: 2 unreserved blocks hold 32 positions, not 33")
	}
	if err := a.Admit(2, 33, 0); !errors.Is(err, ErrNoSpace) {
		t.Errorf("over budget: %v", err)
	}
	if s := a.Stats(); s != (Stats{Blocks: 4, InUse: 0, Free: 4, Reserved: 2, Sequences: 1}) {
		t.Errorf("after admit: %+v", s)
	}
	table, err := a.Append(1, 20) // the prompt
	if err != nil || !slices.Equal(table, []int{0, 1}) {
		t.Errorf("prefill: %v, %v", table, err)
	}
	for range 12 {
		if _, err := a.Append(1, 1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Append(1, 1); !errors.Is(err, ErrOverReservation) {
		t.Errorf("past max_tokens: %v", err)
	}
	if _, n, _ := a.BlockTable(1); n != 32 {
		t.Errorf("length %d after a refused append, want 32", n)
	}
	if _, err := a.Append(9, 1); !errors.Is(err, ErrUnknownSequence) {
		t.Errorf("unknown: %v", err)
	}
	if err := a.Admit(2, 1, 0); err != nil {
		t.Fatal(err)
	}
	if table, _ := a.Append(2, 1); !slices.Equal(table, []int{2}) {
		t.Errorf("second sequence: %v", table)
	}
	if !a.Free(1) || a.Free(1) {
		t.Error("Free reports admitted, then not")
	}
	if err := a.Admit(3, 10, 22); err != nil {
		t.Fatal(err)
	}
	// The freed blocks come back first, in their order.
	if table, _ := a.Append(3, 32); !slices.Equal(table, []int{0, 1}) {
		t.Errorf("reuse: %v, want [0 1]", table)
	}
	if s := a.Stats(); s != (Stats{Blocks: 4, InUse: 3, Free: 1, Reserved: 3, Sequences: 2}) {
		t.Errorf("end: %+v", s)
	}
	if err := check(a); err != nil {
		t.Error(err)
	}
	if err := a.Admit(4, -1, 3); err == nil {
		t.Error("negative prompt admitted")
	}
}

// TestRandomJoinLeave drives the allocator through seeded random
// schedules: requests arrive with random prompt and max_tokens, join when
// they fit, append their prompt and then one token per step, and leave
// when they finish or are cancelled at random. After every operation no
// block is lost or shared and the reservations fit; blocks are reused
// many times over, and every sequence's table is its own.
func TestRandomJoinLeave(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			blocks, bs := 1+r.IntN(64), 1+r.IntN(16)
			a := New(blocks, bs)
			type req struct {
				id             SeqID
				prompt, maxTok int
				done           int
				table          []int
			}
			var running []*req
			next := SeqID(1)
			handedOut := 0
			for step := range 2000 {
				switch op := r.IntN(10); {
				case op < 4: // a request arrives
					p, m := r.IntN(4*bs*4), r.IntN(3*bs)
					can := a.CanAdmit(p, m)
					err := a.Admit(next, p, m)
					if can != (err == nil) {
						t.Fatalf("step %d: CanAdmit %v but Admit %v", step, can, err)
					}
					if err != nil && !errors.Is(err, ErrNoSpace) {
						t.Fatalf("step %d: %v", step, err)
					}
					if err == nil {
						q := &req{id: next, prompt: p, maxTok: m}
						tb, err := a.Append(q.id, p)
						if err != nil {
							t.Fatalf("step %d: prefill: %v", step, err)
						}
						handedOut += len(tb)
						q.table = tb
						running = append(running, q)
					}
					next++
				case op < 8 && len(running) > 0: // a decode step for every running request
					for i := 0; i < len(running); i++ {
						q := running[i]
						if q.done == q.maxTok {
							if !a.Free(q.id) {
								t.Fatalf("step %d: finished sequence %d unknown", step, q.id)
							}
							running = slices.Delete(running, i, i+1)
							i--
							continue
						}
						tb, err := a.Append(q.id, 1)
						if err != nil {
							t.Fatalf("step %d: decode of %d: %v", step, q.id, err)
						}
						if !slices.Equal(tb[:len(q.table)], q.table) {
							t.Fatalf("step %d: sequence %d's blocks moved: %v then %v", step, q.id, q.table, tb)
						}
						handedOut += len(tb) - len(q.table)
						q.table = tb
						q.done++
					}
				case len(running) > 0: // a client disconnects
					i := r.IntN(len(running))
					if !a.Free(running[i].id) {
						t.Fatalf("step %d: cancel of unknown %d", step, running[i].id)
					}
					running = slices.Delete(running, i, i+1)
				}
				if err := check(a); err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				if s := a.Stats(); s.Sequences != len(running) || s.InUse+s.Free != blocks || s.Reserved > blocks {
					t.Fatalf("step %d: stats %+v with %d running", step, s, len(running))
				}
			}
			for _, q := range running {
				a.Free(q.id)
			}
			if s := a.Stats(); s != (Stats{Blocks: blocks, Free: blocks}) {
				t.Errorf("after all left: %+v", s)
			}
			if handedOut <= 2*blocks {
				t.Errorf("only %d blocks handed out over the run from %d: blocks were not reused", handedOut, blocks)
			}
		})
	}
}

// TestConcurrentSequences runs join, append and leave on many goroutines
// at once against one allocator (under -race in CI); every goroutine sees
// its own blocks unchanged by the others, and all blocks come back.
func TestConcurrentSequences(t *testing.T) {
	a := New(48, 4)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 300 {
				id := SeqID(w*1000 + i)
				p, m := r.IntN(12), r.IntN(12)
				if a.Admit(id, p, m) != nil {
					continue
				}
				tb, err := a.Append(id, p)
				for range m {
					if err != nil {
						break
					}
					tb, err = a.Append(id, 1)
				}
				got, n, err2 := a.BlockTable(id)
				if err != nil || err2 != nil || n != p+m || (p+m > 0 && !slices.Equal(got, tb)) {
					errs <- fmt.Errorf("sequence %d: %v %v, %d positions, table %v then %v", id, err, err2, n, tb, got)
					return
				}
				if i%7 == 0 {
					if err := check(a); err != nil {
						errs <- err
						return
					}
				}
				a.Free(id)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := check(a); err != nil {
		t.Error(err)
	}
	if s := a.Stats(); s != (Stats{Blocks: 48, Free: 48}) {
		t.Errorf("after all left: %+v", s)
	}
}

func ExampleAllocator() {
	g := Geometry{Layers: 2, KVHeads: 2, HeadDim: 8, BlockSize: 4, DTypeSize: 4}
	n, _ := g.NumBlocks(4096) // 4096 bytes of 1024-byte blocks
	a := New(n, g.BlockSize)
	_ = a.Admit(1, 5, 3)    // a prompt of 5 tokens, max_tokens 3: 2 blocks reserved
	tb, _ := a.Append(1, 5) // prefill
	fmt.Println(n, tb, a.Stats())
	tb, _ = a.Append(1, 1) // one decoded token
	tb, _ = a.Append(1, 1)
	tb, _ = a.Append(1, 1)
	fmt.Println(tb, a.CanAdmit(8, 0), a.CanAdmit(8, 1))
	a.Free(1)
	fmt.Println(a.Stats())
	// Output:
	// 4 [0 1] {4 2 2 2 1}
	// [0 1] true false
	// {4 0 4 0 0}
}
