package workload

import (
	"container/list"
	"sync"
)

// blockCache keeps the most recently used block texts, at most max of
// them, so a trace of any number of distinct blocks takes bounded memory.
// Safe for concurrent use.
type blockCache struct {
	mu    sync.Mutex
	max   int
	items map[int64]*list.Element // id → its element in order
	order *list.List              // of *blockEntry, most recent first
}

type blockEntry struct {
	id   int64
	text string
}

func newBlockCache(max int) *blockCache {
	return &blockCache{max: max, items: make(map[int64]*list.Element), order: list.New()}
}

// get returns block id's text if kept, marking it most recently used.
func (c *blockCache) get(id int64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*blockEntry).text, true
}

// put keeps block id's text, dropping the least recently used block when
// full. A block already kept (another goroutine rendered it too) stays.
func (c *blockCache) put(id int64, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[id]; ok {
		return
	}
	c.items[id] = c.order.PushFront(&blockEntry{id: id, text: text})
	if c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*blockEntry).id)
	}
}

// len is how many blocks are kept.
func (c *blockCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
