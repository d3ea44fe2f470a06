package tokenizer

import (
	"hash/maphash"
	"sync"
)

// The word cache holds the ids of pieces that needed merging. It is split
// into shards, each with its own lock, so that goroutines encoding at the
// same time rarely wait for each other; a shard that fills up is emptied.
const (
	cacheShards     = 64
	cacheShardWords = 4096
	cacheMaxPiece   = 256 // longer pieces are merged every time
)

// A wordCache keeps its state behind an interface, so that the shape of
// GPT2, which holds one, names no package with generic declarations:
// gophernotes' interpreter walks every field of an imported type, unexported
// ones included, loads each package a field's type comes from, and prints a
// warning for every generic function or type of such a package
// (hash/maphash and sync).
type wordCache struct {
	st any // *cacheState
}

type cacheState struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int
}

func newWordCache() *wordCache {
	s := &cacheState{seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].m = map[string][]int{}
	}
	return &wordCache{st: s}
}

func (c *wordCache) shard(piece string) *cacheShard {
	s := c.st.(*cacheState)
	return &s.shards[maphash.String(s.seed, piece)%cacheShards]
}

// get returns the cached ids of piece; the caller must not modify them.
func (c *wordCache) get(sh *cacheShard, piece string) ([]int, bool) {
	sh.mu.RLock()
	ids, ok := sh.m[piece]
	sh.mu.RUnlock()
	return ids, ok
}

// put caches the ids of piece, which nobody modifies afterwards.
func (c *wordCache) put(sh *cacheShard, piece string, ids []int) {
	sh.mu.Lock()
	if len(sh.m) >= cacheShardWords {
		clear(sh.m)
	}
	sh.m[piece] = ids
	sh.mu.Unlock()
}
