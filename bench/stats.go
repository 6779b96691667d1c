package bench

import (
	"math"
	"slices"
)

// Summary is a cell's repeats: the median and spread of the runs that
// finished with target = source, and how many did not.
type Summary struct {
	Median, Min, Max float64 // seconds
	Runs             int     // runs that count
	Failed           int     // runs that failed or whose target differed
	Txns             int
	// PreplCPU and ServerCPU are the median CPU seconds of the prepl
	// process and of the target server over the runs that count.
	PreplCPU, ServerCPU float64
	// Counters are the medians of each target status counter.
	Counters Counters
	// ByRepeat is the seconds of each run that counts, by its repeat: the
	// runs of one repeat of every cell are adjacent in time (the plan runs
	// the repeats outermost), so two cells' runs of one repeat are a pair.
	ByRepeat map[int]float64
}

// OK reports whether the cell has a time and no failed run: a cell with a
// failure never counts as anyone's best.
func (s Summary) OK() bool { return s.Runs > 0 && s.Failed == 0 }

// TxnPerSec is the median throughput.
func (s Summary) TxnPerSec() float64 {
	if s.Median <= 0 {
		return 0
	}
	return float64(s.Txns) / s.Median
}

// Median of xs (the mean of the two middle values for an even count); NaN
// for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// summarize groups results by cell.
func summarize(results []Result) map[Cell]Summary {
	secs := map[Cell][]float64{}
	pcpu, scpu := map[Cell][]float64{}, map[Cell][]float64{}
	ctrs := map[Cell][]Counters{}
	out := map[Cell]Summary{}
	for _, r := range results {
		s := out[r.Cell]
		s.Txns = r.Txns
		if r.OK() {
			secs[r.Cell] = append(secs[r.Cell], r.Seconds)
			pcpu[r.Cell] = append(pcpu[r.Cell], r.PreplCPU)
			scpu[r.Cell] = append(scpu[r.Cell], r.ServerCPU)
			ctrs[r.Cell] = append(ctrs[r.Cell], r.Counters)
			if s.ByRepeat == nil {
				s.ByRepeat = map[int]float64{}
			}
			s.ByRepeat[r.Repeat] = r.Seconds
			s.Runs++
		} else {
			s.Failed++
		}
		out[r.Cell] = s
	}
	for c, xs := range secs {
		s := out[c]
		s.Median, s.Min, s.Max = Median(xs), slices.Min(xs), slices.Max(xs)
		s.PreplCPU, s.ServerCPU = Median(pcpu[c]), Median(scpu[c])
		fields := s.Counters.fields()
		for i := range fields {
			var xs []float64
			for _, x := range ctrs[c] {
				xs = append(xs, float64(*x.fields()[i]))
			}
			*fields[i] = int64(Median(xs))
		}
		out[c] = s
	}
	return out
}
