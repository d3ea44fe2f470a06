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

type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int
}

func newWordCache() *wordCache {
	c := &wordCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = map[string][]int{}
	}
	return c
}

func (c *wordCache) shard(piece string) *cacheShard {
	return &c.shards[maphash.String(c.seed, piece)%cacheShards]
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
