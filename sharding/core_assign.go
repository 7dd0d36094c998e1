package sharding

// Assignment uses rendezvous (highest random weight) hashing: every member gets a score for a
// key, the highest score wins. It needs no ring state beyond the member list, is the same in
// every process (the hash is fixed, not seeded), and when a member leaves exactly the keys it
// won move, each to the member with the next-highest score; when a member joins, exactly the
// keys it now wins move, all to it. A consistent-hash ring gives the same 1/N movement only on
// average over many virtual nodes per member, and needs those nodes kept in sorted order;
// with the few members a controller runs, rendezvous' O(N) per key is cheaper than the
// bookkeeping. See SHARDING.md.

// score is the weight of member for key: a 64-bit FNV-1a hash of member, a separator byte and
// key, mixed by the SplitMix64 finalizer so that keys differing in one byte spread over the
// whole range.
func score(member, key string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(member); i++ {
		h ^= uint64(member[i])
		h *= prime64
	}
	h ^= 0xff // separator: no member name holds this byte, so (a, bc) and (ab, c) differ
	h *= prime64
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= prime64
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// Assign returns the member that owns key among members: the one with the highest score for
// key, ties broken by the smaller name. It returns "" and false when members is empty. The
// result depends only on key and the set of members (not their order or duplicates), so every
// replica that sees the same members computes the same owner. O(len(members)).
func Assign(key string, members []string) (string, bool) {
	var best string
	var bestScore uint64
	found := false
	for _, m := range members {
		s := score(m, key)
		if !found || s > bestScore || (s == bestScore && m < best) {
			best, bestScore, found = m, s, true
		}
	}
	return best, found
}
