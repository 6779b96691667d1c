package analyze

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page: the charts
// are PNG images embedded as base64 data URLs, the style is inline, and
// nothing is fetched from anywhere.
func (r *Report) WriteHTML(w io.Writer) error {
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		return err
	}
	d := htmlData{R: r, Text: text.String(), Gaps: engineGaps(r)}
	var err error
	if d.Speedup, err = pngURL(speedupChart(r)); err != nil {
		return fmt.Errorf("speedup chart: %w", err)
	}
	if g := r.GroupCommit; g != nil {
		if d.Groups, err = pngURL(histogramChart("Group commit sizes (MariaDB commit_id)", "transactions per group commit", g.Histogram, countLabel)); err != nil {
			return fmt.Errorf("group size chart: %w", err)
		}
	}
	if d.Sizes, err = pngURL(histogramChart("Transaction sizes", "bytes in the binlog", r.Summary.SizeHistogram, sizeLabel)); err != nil {
		return fmt.Errorf("transaction size chart: %w", err)
	}
	return htmlPage.Execute(w, d)
}

type htmlData struct {
	R                      *Report
	Text                   string
	Speedup, Groups, Sizes template.URL
	Gaps                   []string
}

func pngURL(b []byte, err error) (template.URL, error) {
	if err != nil {
		return "", err
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b)), nil
}

var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"bytes":  func(v uint64) string { return fmtBytes(float64(v)) },
	"fbytes": func(v float64) string { return fmtBytes(v) },
	"ibytes": func(v int) string { return fmtBytes(float64(v)) },
	"count":  fmtCount,
	"secs":   fmtSeconds,
	"f2":     func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"reasons": func(m map[string]uint64) string {
		var parts []string
		for _, r := range sortedReasons(m) {
			parts = append(parts, fmt.Sprintf("%s %s", r, fmtCount(m[r])))
		}
		return strings.Join(parts, ", ")
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>prepl analyze: {{index .R.Input 0}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em 2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}
img{width:100%;height:auto;border:1px solid #eee;margin:.5em 0}
pre{background:#f8f8f8;padding:1em;overflow-x:auto;font-size:85%}
.warn{color:#a40}
</style></head><body>
<h1>prepl analyze</h1>
<p>{{range .R.Input}}<code>{{.}}</code> {{end}}</p>
{{if .R.Partial}}<p class="warn">Partial: {{.R.Partial}}</p>{{end}}
{{range .R.Warnings}}<p class="warn">Warning: {{.}}</p>{{end}}
<p>{{count .R.Summary.Transactions}} transactions, {{count .R.Summary.Rows}} rows, {{bytes .R.Summary.Bytes}}
in {{len .R.Files}} binlog file(s){{if .R.Flavor}}, {{.R.Flavor}}{{end}}.
Serial apply: {{secs .R.Serial.Seconds}} with commit units of {{.R.Model.UnitTxns}}, {{secs .R.Serial.PerTxnSeconds}} committing every transaction.</p>

<h2>Recommendations</h2>
<ul>{{range .R.Recommendations}}<li>{{.}}</li>{{else}}<li>none: nothing in the numbers calls for a change</li>{{end}}</ul>

<h2>Speedup prepl's engine gets from workers</h2>
<p>Simulated: the engine's own sequencer, driven with a simulated clock and the cost model; against serial apply.</p>
<img alt="speedup per workers per mode" src="{{.Speedup}}">
<table><tr><th class="l">mode</th>{{range .R.Model.Workers}}<th>{{.}}</th>{{end}}<th>best (workers)</th></tr>
{{range .R.Modes}}<tr><td class="l">{{.Mode}}</td>{{range .Predictions}}<td title="{{secs .Seconds}}">{{f2 .Speedup}}</td>{{end}}<td>{{f2 .Best.Speedup}} ({{.Best.Workers}})</td></tr>
{{end}}</table>
{{range .Gaps}}<p>{{.}}</p>{{end}}
<p>Cost model: {{.R.Model.Costs.String}} ({{.R.Model.Costs.Source}}).</p>

<h2>Parallelism the binlog holds</h2>
<p>Its dependencies per mode, whatever applies it: the critical path bounds the speedup of any applier.</p>
<table><tr><th class="l">mode</th><th>AMIL</th><th>pseudo group</th><th>critical path (txns)</th><th>bound</th><th class="l">waits</th></tr>
{{range .R.Modes}}<tr><td class="l">{{.Mode}}</td><td>{{f2 .Intervals.AMIL}}</td><td>{{f2 .Intervals.PseudoGroup}}</td><td>{{count .Chain}}</td><td>{{f2 .ChainBound}}</td><td class="l">{{reasons .Waits}}</td></tr>
{{end}}</table>

{{if .R.GroupCommit}}<h2>Group commit</h2>
<p>{{count .R.GroupCommit.Commits}} commits in {{count .R.GroupCommit.GroupCommits}} group commits: {{f2 .R.GroupCommit.AvgSize}} per group (Binlog_commits / Binlog_group_commits).</p>
<img alt="group commit sizes" src="{{.Groups}}">{{end}}
{{if .R.SourceIntervals}}<h2>MySQL intervals</h2>
<p>AMIL {{f2 .R.SourceIntervals.AMIL}}, pseudo group commit size {{f2 .R.SourceIntervals.PseudoGroup}}.</p>{{end}}

<h2>Transaction sizes</h2>
<img alt="transaction sizes" src="{{.Sizes}}">

<h2>Largest transactions</h2>
<table><tr><th class="l">GTID</th><th>bytes</th><th>rows</th><th class="l">position</th><th>est. apply</th><th class="l">tables</th></tr>
{{range .R.Offenders.Largest}}<tr><td class="l">{{.GTID}}{{if .Big}} <b>big</b>{{end}}</td><td>{{ibytes .Bytes}}</td><td>{{.Rows}}</td><td class="l">{{.Position}}</td><td>{{secs .Seconds}}</td><td class="l">{{range .Tables}}{{.}} {{end}}</td></tr>
{{end}}</table>

{{if .R.Offenders.HotKeys}}<h2>Hot keys</h2>
<table><tr><th class="l">row</th><th>changes within {{.R.Offenders.HotKeyWindow}} txns of the previous</th></tr>
{{range .R.Offenders.HotKeys}}<tr><td class="l">{{.Name}}</td><td>{{count .Transactions}}</td></tr>
{{end}}</table>{{end}}

<h2>Full report</h2>
<pre>{{.Text}}</pre>
</body></html>
`))
