package analyze

import (
	"math"
	"math/bits"
)

// logHist is a histogram of non-negative integers in buckets a quarter of
// a power of two wide (values below 8 exactly), so percentiles are within
// about 10% of the truth in fixed memory, whatever the count.
type logHist struct {
	counts [64 * 4]uint64
	n      uint64
	sum    float64
	max    uint64
}

func histBucket(v uint64) int {
	if v < 8 {
		return int(v)
	}
	e := bits.Len64(v) - 1       // 2^e <= v < 2^(e+1), e >= 3
	q := int(v>>(uint(e)-2)) & 3 // which quarter of the octave
	return 8 + (e-3)*4 + q
}

// bucketRange is the values [lo, hi] of bucket b.
func bucketRange(b int) (lo, hi uint64) {
	if b < 8 {
		return uint64(b), uint64(b)
	}
	e := uint((b-8)/4 + 3)
	q := uint64((b - 8) % 4)
	lo = (1 << e) + q<<(e-2)
	return lo, lo + 1<<(e-2) - 1
}

func (h *logHist) add(v uint64) {
	h.counts[histBucket(v)]++
	h.n++
	h.sum += float64(v)
	h.max = max(h.max, v)
}

func (h *logHist) merge(o *logHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile is the value below which a fraction q of the values fall,
// interpolated within its bucket.
func (h *logHist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := q * float64(h.n)
	var seen float64
	for b, c := range h.counts {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo, hi := bucketRange(b)
			frac := (rank - seen) / float64(c)
			v := float64(lo) + frac*float64(hi-lo)
			return math.Min(v, float64(h.max))
		}
		seen += float64(c)
	}
	return float64(h.max)
}

// Distribution summarizes a histogram.
type Distribution struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  uint64  `json:"max"`
}

func (h *logHist) distribution() Distribution {
	if h.n == 0 {
		return Distribution{}
	}
	return Distribution{Mean: h.sum / float64(h.n), P50: h.quantile(0.5), P90: h.quantile(0.9),
		P99: h.quantile(0.99), Max: h.max}
}

// Bucket is one bar of a histogram: Count values in [Lo, Hi].
type Bucket struct {
	Lo    uint64 `json:"lo"`
	Hi    uint64 `json:"hi"`
	Count uint64 `json:"count"`
}

// octaves returns the histogram in power-of-two buckets (0, 1, 2-3, 4-7,
// ...), for charts.
func (h *logHist) octaves() []Bucket {
	var out []Bucket
	add := func(lo, hi, c uint64) {
		if n := len(out); n > 0 && out[n-1].Lo == lo {
			out[n-1].Count += c
			return
		}
		out = append(out, Bucket{Lo: lo, Hi: hi, Count: c})
	}
	for b, c := range h.counts {
		lo, _ := bucketRange(b)
		if lo == 0 {
			add(0, 0, c)
			continue
		}
		e := bits.Len64(lo) - 1
		add(1<<e, 1<<(e+1)-1, c)
	}
	// Trim empty buckets at both ends.
	for len(out) > 0 && out[0].Count == 0 {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1].Count == 0 {
		out = out[:len(out)-1]
	}
	return out
}
