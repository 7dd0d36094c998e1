package priorityqueue

// The ready items of one priority form a FIFO list; levels holds the non-empty lists in
// descending priority. Controllers use a handful of priorities, so a sorted slice beats a
// tree: finding a level is a binary search over a few elements, and the next item to hand
// out is always levels[0].head.

// linkLevel puts e into the list of its priority by seq, creating the level if needed:
// at the back for an item that becomes ready or is raised now, which is O(log L) for L
// distinct priorities present, plus O(L) to insert a new level; a parked item coming back at
// done walks back past the items of its level that became ready after it.
func (c *core[T]) linkLevel(e *entry[T]) {
	i, found := c.findLevel(e.priority)
	var l *level[T]
	if found {
		l = c.levels[i]
	} else {
		l = c.newLevel(e.priority)
		c.levels = append(c.levels, nil)
		copy(c.levels[i+1:], c.levels[i:])
		c.levels[i] = l
	}
	e.level = l
	p := l.tail
	for p != nil && p.seq > e.seq {
		p = p.prev
	}
	e.prev = p
	if p == nil {
		e.next, l.head = l.head, e
	} else {
		e.next, p.next = p.next, e
	}
	if e.next == nil {
		l.tail = e
	} else {
		e.next.prev = e
	}
}

// unlinkLevel removes e from its level, dropping the level when it becomes empty.
func (c *core[T]) unlinkLevel(e *entry[T]) {
	l := e.level
	if e.prev == nil {
		l.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		l.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.level = nil, nil, nil
	if l.head == nil {
		i, _ := c.findLevel(l.priority)
		copy(c.levels[i:], c.levels[i+1:])
		c.levels[len(c.levels)-1] = nil
		c.levels = c.levels[:len(c.levels)-1]
		c.freeLevels = append(c.freeLevels, l)
	}
}

// findLevel returns the index of priority in levels, or where it would be inserted.
func (c *core[T]) findLevel(priority int) (int, bool) {
	lo, hi := 0, len(c.levels)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c.levels[m].priority > priority {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(c.levels) && c.levels[lo].priority == priority
}

func (c *core[T]) newLevel(priority int) *level[T] {
	if n := len(c.freeLevels); n > 0 {
		l := c.freeLevels[n-1]
		c.freeLevels = c.freeLevels[:n-1]
		l.priority = priority
		return l
	}
	return &level[T]{priority: priority}
}

// The waiting items form a heap on (readyAt, seq), each entry knowing its index so that a
// re-add with an earlier time or a removal is O(log n).

func (c *core[T]) pushWaiting(e *entry[T], at int64) {
	e.state = stateWaiting
	e.readyAt = at
	c.waiting.Push(at, e)
}

func (c *core[T]) removeWaiting(e *entry[T]) {
	c.waiting.Remove(e.heapIndex)
	e.heapIndex = -1
	e.state = stateIdle
}

func (c *core[T]) fixWaiting(e *entry[T]) { c.waiting.Replace(e.heapIndex, e.readyAt, e) }
