package analyze

import "sort"

// chainAcc measures the critical path of a dependency graph given, item by
// item in order, as each item's latest dependency (lc). Items of one
// commit-order key commit in order; keys commit independently (only
// schema and domain modes have several), so an item effectively waits for
// lc and every item of its key up to lc; a global item waits for every
// item up to lc.
//
// level(i) = 1 + the highest level among what i waits for: the longest
// chain of items each of which had to wait for the previous one. Items
// with the same level could all run at once; the number of levels bounds
// the speedup of any number of workers (items / levels).
//
// lc must lie within the last `window` items, which depStream guarantees
// for windows larger than its history.
type chainAcc struct {
	window   uint64
	n        uint64
	levels   []uint64 // level of each item, ring by idx
	prefix   []uint64 // prefix maximum of level over every key, ring by idx
	maxLevel uint64
	keys     map[int]*keyLevels
}

// keyLevels is one key's prefix maximum of level: entries in idx order,
// trimmed to the window, base for what was trimmed.
type keyLevels struct {
	idx  []uint64
	pref []uint64
	base uint64
}

func newChainAcc(window int) *chainAcc {
	w := window + 8
	return &chainAcc{window: uint64(w), levels: make([]uint64, w), prefix: make([]uint64, w), keys: map[int]*keyLevels{}}
}

// add records item n+1 with latest dependency lc, its commit-order key and
// whether it is global.
func (c *chainAcc) add(lc uint64, key int, global bool) {
	c.n++
	i, w := c.n, c.window
	if lc >= i || (lc > 0 && i-lc >= w) {
		panic("analyze: dependency outside the critical path window")
	}
	kl := c.keys[key]
	if kl == nil {
		kl = &keyLevels{}
		c.keys[key] = kl
	}
	var before uint64 // highest level waited for
	if lc > 0 {
		if global {
			before = c.prefix[lc%w]
		} else {
			before = max(kl.at(lc), c.levels[lc%w])
		}
	}
	lvl := before + 1
	c.maxLevel = max(c.maxLevel, lvl)
	c.levels[i%w] = lvl
	c.prefix[i%w] = max(c.prefix[(i-1)%w], lvl)
	kl.push(i, lvl, i-min(i, w))
}

// at is the highest level of the key's items up to idx x.
func (k *keyLevels) at(x uint64) uint64 {
	j := sort.Search(len(k.idx), func(j int) bool { return k.idx[j] > x })
	if j == 0 {
		return k.base
	}
	return k.pref[j-1]
}

// push records item i of level lvl and forgets items before oldest.
func (k *keyLevels) push(i, lvl, oldest uint64) {
	p := max(k.base, lvl)
	if n := len(k.idx); n > 0 {
		p = max(p, k.pref[n-1])
	}
	k.idx = append(k.idx, i)
	k.pref = append(k.pref, p)
	if len(k.idx) > 64 && k.idx[len(k.idx)/2] < oldest {
		cut := sort.Search(len(k.idx), func(j int) bool { return k.idx[j] >= oldest })
		if cut > 0 {
			k.base = k.pref[cut-1]
			k.idx = append([]uint64(nil), k.idx[cut:]...)
			k.pref = append([]uint64(nil), k.pref[cut:]...)
		}
	}
}

// length is the number of levels: the longest dependency chain.
func (c *chainAcc) length() uint64 { return c.maxLevel }
