package analyze

import "math"

// intervalAcc accumulates parallelism intervals and their AMIL, the
// Average Modified Interval Length of the tutorial ("MySQL: Intervals
// Quality", ../shared/seeds/mysql-mariadb-parallel-replication-tutorial.txt):
//
//   - a transaction's interval is (last_committed, sequence_number]: it may
//     run once every transaction up to last_committed has committed;
//   - the applier starts transactions in order, so a last_committed lower
//     than an earlier transaction's is raised to it (the "modified"
//     last_committed is the running maximum), and the interval length is
//     sequence_number minus the modified last_committed;
//   - AMIL is the mean length. A group commit of n transactions has lengths
//     1..n, whose mean is (n+1)/2, so 2*AMIL-1 is a pseudo group commit size.
//
// The running maximum restarts with each MySQL binlog file (reset), where
// sequence numbers restart.
type intervalAcc struct {
	n      uint64
	sum    float64
	sumSq  float64
	maxLen int64
	mlc    int64 // modified last_committed: running maximum
}

// add records one transaction's interval and returns its modified length.
func (a *intervalAcc) add(lastCommitted, sequenceNumber int64) int64 {
	if lastCommitted > a.mlc {
		a.mlc = lastCommitted
	}
	l := sequenceNumber - a.mlc
	if l < 1 {
		l = 1 // a malformed interval counts as serial
	}
	a.addLen(l)
	return l
}

// addLen records a modified interval length computed elsewhere.
func (a *intervalAcc) addLen(l int64) {
	a.n++
	a.sum += float64(l)
	a.sumSq += float64(l) * float64(l)
	a.maxLen = max(a.maxLen, l)
}

// reset restarts the running maximum (a new MySQL binlog file).
func (a *intervalAcc) reset() { a.mlc = 0 }

// merge adds b's counts (not its running maximum).
func (a *intervalAcc) merge(b *intervalAcc) {
	a.n += b.n
	a.sum += b.sum
	a.sumSq += b.sumSq
	a.maxLen = max(a.maxLen, b.maxLen)
}

// IntervalStats summarizes intervals.
type IntervalStats struct {
	Transactions uint64  `json:"transactions"`
	AMIL         float64 `json:"amil"`              // average modified interval length
	StdDev       float64 `json:"stddev"`            // of the modified interval lengths
	PseudoGroup  float64 `json:"pseudo_group_size"` // 2*AMIL-1
	MaxLength    int64   `json:"max_length"`        // longest modified interval
	Capped       int     `json:"history,omitempty"` // intervals are capped at about this many (prepl-computed ones)
	Note         string  `json:"note,omitempty"`
}

func (a *intervalAcc) stats() IntervalStats {
	if a.n == 0 {
		return IntervalStats{}
	}
	mean := a.sum / float64(a.n)
	v := a.sumSq/float64(a.n) - mean*mean
	return IntervalStats{Transactions: a.n, AMIL: mean, StdDev: math.Sqrt(max(v, 0)),
		PseudoGroup: 2*mean - 1, MaxLength: a.maxLen}
}
