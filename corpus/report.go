package corpus

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// WriteReport writes the run as text: the summary line, then every stop
// (grouped by cause), divergence, reference failure, mtr skip, error and
// exclusion, one line each.
func (res *Result) WriteReport(w io.Writer, command string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", res.Summary())
	if command != "" {
		fmt.Fprintf(&b, "command: %s\n", command)
	}
	causes := map[string][]string{}
	var stops, divs, refs, skips, errs, excl, repDiffs []string
	for _, t := range res.Tests {
		id := t.Test + " " + t.Image
		for _, s := range t.Stops {
			stops = append(stops, s.String())
			causes[cause(s.Message)] = append(causes[cause(s.Message)], id+" "+s.Config.String())
		}
		for _, d := range t.Divergences {
			divs = append(divs, d.String())
		}
		for _, d := range t.RefDiffs {
			repDiffs = append(repDiffs, d.String())
		}
		if t.ReferenceFail != "" {
			refs = append(refs, id+": "+t.ReferenceFail+withOpts(t.ServerOpts))
		}
		if t.MTR == "skipped" || t.MTR == "disabled" {
			skips = append(skips, id+": "+oneLine(t.MTRComment))
		}
		if t.Err != "" {
			errs = append(errs, id+": "+oneLine(t.Err)+withOpts(t.ServerOpts))
		}
		if t.Excluded != nil {
			excl = append(excl, fmt.Sprintf("%s: %s: %s", t.Test, t.Excluded.Kind, t.Excluded.Why))
		}
	}
	var cs []string
	for c, ids := range causes {
		cs = append(cs, fmt.Sprintf("%d× %s\n    %s", len(ids), c, strings.Join(ids, ", ")))
	}
	sort.Strings(cs)
	section(&b, "stop causes (digits as N)", cs)
	section(&b, "stops", stops)
	section(&b, "divergences", divs)
	section(&b, "reference fails (mariadb-binlog | mariadb; the checkpoints after it are compared with the replica alone where --replica applied them, else not at all)", refs)
	section(&b, "MariaDB's replica against mariadb-binlog | mariadb (--replica)", repDiffs)
	section(&b, "skipped by mtr", skips)
	section(&b, "errors of the corpus itself", errs)
	section(&b, "exclusions", excl)
	_, err := io.WriteString(w, b.String())
	return err
}

func section(b *strings.Builder, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %s (%d)\n", title, len(lines))
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

var (
	digits  = regexp.MustCompile(`\d+`)
	logTime = regexp.MustCompile(`^time=\S+ `)
)

// cause is a stop's message with its numbers (GTIDs, offsets, values)
// blurred, so that one cause met in several tests groups as one.
func cause(msg string) string {
	return digits.ReplaceAllString(logTime.ReplaceAllString(msg, ""), "N")
}

// withOpts says which of the test's own server options its targets had;
// the InnoDB information-schema plugins most suites switch on ("--innodb",
// "--innodb-trx", no value) are counted, not listed.
func withOpts(opts []string) string {
	var shown []string
	plugins := 0
	for _, o := range opts {
		if o == "--innodb" || strings.HasPrefix(o, "--innodb-") && !strings.Contains(o, "=") {
			plugins++
			continue
		}
		shown = append(shown, o)
	}
	if plugins > 0 {
		shown = append(shown, fmt.Sprintf("and %d InnoDB information-schema plugins", plugins))
	}
	if len(shown) == 0 {
		return ""
	}
	return " (targets started with the test's " + strings.Join(shown, " ") + ")"
}
