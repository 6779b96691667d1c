package bench

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ChartName is the file name of the chart of one workload and config.
func ChartName(workload, config string) string { return workload + "-" + config + ".png" }

// Charts writes one PNG per workload and config into dir: transactions
// per second against workers, one line per system and mode, as in the
// MariaDB blog's graphs. Thread counts are evenly spaced on the x axis
// (0, 2, 4, ... 64 would crowd the left of a linear axis). It returns the
// files written.
func (r *Report) Charts(dir string) ([]string, error) {
	sum := r.Summaries()
	var files []string
	for _, wl := range r.Workloads {
		for _, c := range r.Configs {
			p, ok, err := r.chart(sum, wl, c)
			if err != nil {
				return files, err
			}
			if !ok {
				continue
			}
			path := filepath.Join(dir, ChartName(wl.Name, c.Name))
			if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
				return files, fmt.Errorf("chart %s: %w", path, err)
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// chart plots one workload and config; ok is false when nothing was measured.
func (r *Report) chart(sum map[Cell]Summary, wl Workload, c ReplicaConfig) (*plot.Plot, bool, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, config %s: %s", wl.Name, c.Name, c.Description)
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.X.Label.Text = "workers (MariaDB slave_parallel_threads, prepl --workers)"
	p.Y.Label.Text = "transactions per second (median)"
	var ticks []plot.Tick
	for i, t := range r.Threads {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: strconv.Itoa(t)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.3, float64(len(r.Threads)-1)+0.3
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(niceTicks)

	var lines []any
	top := 0.0
	for _, col := range r.columns() {
		var xys plotter.XYs
		for i, t := range r.Threads {
			s, ok := sum[col.cellAt(wl.Name, c.Name, t)]
			if !ok || !s.OK() {
				continue
			}
			xys = append(xys, plotter.XY{X: float64(i), Y: s.TxnPerSec()})
			top = max(top, s.TxnPerSec())
		}
		if len(xys) > 0 {
			lines = append(lines, col.label(), xys)
		}
	}
	if len(lines) == 0 {
		return nil, false, nil
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, false, err
	}
	if s, ok := sum[limitCell(wl)]; ok && s.OK() && c.Name == "C" {
		l, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: s.TxnPerSec()}, {X: p.X.Max, Y: s.TxnPerSec()}})
		if err != nil {
			return nil, false, err
		}
		l.Color = color.Gray{Y: 100}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("physical limit (one stream, durability off)", l)
		top = max(top, s.TxnPerSec())
	}
	// Head room for the legend above the lines.
	p.Y.Max = top * (1.25 + 0.07*float64(len(lines)/2))
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(plotter.NewGrid())
	return p, true, nil
}

// niceTicks marks an axis from lo to hi every 1, 2 or 5 × 10^k: from
// five to eight marks, labelled as whole numbers, in thousands ("12k") on an axis that
// reaches 10,000.
func niceTicks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	raw := (hi - lo) / 8
	step := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*step >= raw {
			step *= m
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, plot.Tick{Value: v, Label: tickLabel(v, hi >= 10000)})
	}
	return out
}

func tickLabel(v float64, thousands bool) string {
	switch {
	case thousands && v != 0:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	case v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
