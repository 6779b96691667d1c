package bench

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// csvHeader names the columns of results.csv: one line per run.
var csvHeader = []string{"workload", "config", "system", "mode", "threads", "repeat", "seconds", "txns", "txn_per_s", "verified",
	"prepl_cpu_s", "server_cpu_s", "error", "pool_reads", "innodb_fsyncs", "binlog_group_commits",
	"purge_reads", "purge_ms"}

// csvWriter appends runs to results.csv as they finish, so an interrupted
// benchmark keeps what it measured.
type csvWriter struct {
	w *csv.Writer
}

func newCSVWriter(w io.Writer) (*csvWriter, error) {
	cw := &csvWriter{w: csv.NewWriter(w)}
	if err := cw.w.Write(csvHeader); err != nil {
		return nil, err
	}
	cw.w.Flush()
	return cw, cw.w.Error()
}

func (cw *csvWriter) write(r Result) error {
	rec := []string{r.Workload, r.Config, string(r.System), r.Mode, strconv.Itoa(r.Threads), strconv.Itoa(r.Repeat),
		strconv.FormatFloat(r.Seconds, 'f', 3, 64), strconv.Itoa(r.Txns),
		strconv.FormatFloat(r.TxnPerSec(), 'f', 1, 64), strconv.FormatBool(r.Verified),
		strconv.FormatFloat(r.PreplCPU, 'f', 3, 64), strconv.FormatFloat(r.ServerCPU, 'f', 3, 64), r.Err}
	for _, f := range r.Counters.fields() {
		rec = append(rec, strconv.FormatInt(*f, 10))
	}
	if err := cw.w.Write(rec); err != nil {
		return err
	}
	cw.w.Flush()
	return cw.w.Error()
}

// ReadCSV reads results.csv back.
func ReadCSV(r io.Reader) ([]Result, error) {
	cr := csv.NewReader(r)
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("results csv: %w", err)
	}
	if len(recs) == 0 || !slices.Equal(recs[0], csvHeader) {
		return nil, fmt.Errorf("results csv: header is not %v", csvHeader)
	}
	var out []Result
	for i, rec := range recs[1:] {
		line := i + 2
		var r Result
		var err error
		r.Workload, r.Config, r.System, r.Mode, r.Err = rec[0], rec[1], System(rec[2]), rec[3], rec[12]
		ints := []*int{&r.Threads, &r.Repeat, &r.Txns}
		for j, col := range []int{4, 5, 7} {
			if *ints[j], err = strconv.Atoi(rec[col]); err != nil {
				return nil, fmt.Errorf("results csv line %d, %s: %w", line, csvHeader[col], err)
			}
		}
		floats := []*float64{&r.Seconds, &r.PreplCPU, &r.ServerCPU}
		for j, col := range []int{6, 10, 11} {
			if *floats[j], err = strconv.ParseFloat(rec[col], 64); err != nil {
				return nil, fmt.Errorf("results csv line %d, %s: %w", line, csvHeader[col], err)
			}
		}
		if r.Verified, err = strconv.ParseBool(rec[9]); err != nil {
			return nil, fmt.Errorf("results csv line %d, verified: %w", line, err)
		}
		for j, f := range r.Counters.fields() {
			if *f, err = strconv.ParseInt(rec[13+j], 10, 64); err != nil {
				return nil, fmt.Errorf("results csv line %d, %s: %w", line, csvHeader[13+j], err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}
