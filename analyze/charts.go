package analyze

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Charts of the HTML report, rendered as PNG with gonum/plot.

// speedupChart draws the predicted speedup per worker count, one line per
// mode, with the ideal (speedup = workers) for reference.
func speedupChart(r *Report) ([]byte, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Speedup prepl's engine gets from workers, simulated, against serial apply (commit units of %d)", r.Model.UnitTxns)
	p.X.Label.Text = "workers"
	p.Y.Label.Text = "speedup"
	p.X.Scale = plot.LogScale{}
	var ticks plot.ConstantTicks
	for _, w := range r.Model.Workers {
		ticks = append(ticks, plot.Tick{Value: float64(w), Label: strconv.Itoa(w)})
	}
	p.X.Tick.Marker = ticks
	p.Y.Min = 0
	// The legend is drawn beside the plot, never over its lines.
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	top := 1.0
	for i, m := range r.Modes {
		xys := make(plotter.XYs, 0, len(m.Predictions))
		for _, pr := range m.Predictions {
			xys = append(xys, plotter.XY{X: float64(pr.Workers), Y: pr.Speedup})
			top = max(top, pr.Speedup)
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		leg.Add(m.Mode, l, pts)
	}
	// The best mode of each other commit unit size, dashed.
	for j, u := range r.UnitSizes {
		if u.UnitTxns == r.Model.UnitTxns {
			continue
		}
		var best UnitSizeMode
		for _, m := range u.Modes {
			if m.Best.Speedup > best.Best.Speedup {
				best = m
			}
		}
		xys := make(plotter.XYs, 0, len(best.Predictions))
		for _, pr := range best.Predictions {
			xys = append(xys, plotter.XY{X: float64(pr.Workers), Y: pr.Speedup})
			top = max(top, pr.Speedup)
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(len(r.Modes) + j)
		l.Dashes = plotutil.Dashes(1)
		p.Add(l)
		leg.Add(fmt.Sprintf("%s, units of %d", best.Mode, u.UnitTxns), l)
	}
	p.Y.Max = math.Ceil(top*1.15*2) / 2
	p.Y.Tick.Marker = plainTicks{}
	p.Add(plotter.NewGrid())
	return renderBeside(p, &leg)
}

// renderBeside renders p as a wide PNG (the HTML page scales it to its
// width) with legend leg in a column of its own on the right.
func renderBeside(p *plot.Plot, leg *plot.Legend) ([]byte, error) {
	const w, h = 11 * vg.Inch, 4 * vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	r := leg.Rectangle(dc)
	lw := r.Max.X - r.Min.X + vg.Points(12)
	p.Draw(draw.Crop(dc, 0, -lw, 0, 0))
	leg.Draw(draw.Crop(dc, w-lw+vg.Points(6), 0, 0, -vg.Points(28)))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// plainTicks are gonum's default ticks labelled without trailing zeros.
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// histogramChart draws a bar per bucket.
func histogramChart(title, xLabel string, buckets []Bucket, label func(Bucket) string) ([]byte, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "count"
	vals := make(plotter.Values, len(buckets))
	names := make([]string, len(buckets))
	for i, b := range buckets {
		vals[i] = float64(b.Count)
		names[i] = label(b)
	}
	if len(vals) == 0 {
		vals, names = plotter.Values{0}, []string{"none"}
	}
	w := vg.Length(math.Max(4, math.Min(24, 360/float64(len(vals)))))
	bars, err := plotter.NewBarChart(vals, w)
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.Y.Tick.Marker = plainTicks{}
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign = -0.8
	p.X.Tick.Label.YAlign = -0.6
	return render(p)
}

func render(p *plot.Plot) ([]byte, error) {
	wt, err := p.WriterTo(11*vg.Inch, 4*vg.Inch, "png")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if _, err := wt.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func sizeLabel(b Bucket) string {
	if b.Lo == b.Hi {
		return fmtBytes(float64(b.Lo))
	}
	return fmtBytes(float64(b.Lo)) + "-" + fmtBytes(float64(b.Hi)+1)
}

func countLabel(b Bucket) string {
	if b.Lo == b.Hi {
		return strconv.FormatUint(b.Lo, 10)
	}
	return fmt.Sprintf("%d-%d", b.Lo, b.Hi)
}
