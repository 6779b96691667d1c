package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/prepl/prepl/metrics"
	pbar "github.com/prepl/prepl/progress"
	prun "github.com/prepl/prepl/run"
)

// printLive prints the /status of the prepl serving at addr and returns
// it; when nothing answers it says so and returns nil.
func printLive(ctx context.Context, w io.Writer, addr string) *metrics.Status {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := metrics.Fetch(ctx, addr)
	if err != nil {
		fmt.Fprintf(w, "live: no prepl answers at %s (%v): it is not running, or runs without --metrics-addr %s\n", addr, err, addr)
		return nil
	}
	fmt.Fprintf(w, "live: prepl %s %s, %s, from %s to %s, mode %s, %d workers (%d units in flight at most now), channel %q, up %s\n",
		st.Version, st.Command, st.State, st.Source, st.Target, st.Mode, st.Workers, st.Concurrency, st.Channel,
		pbar.Duration(time.Duration(st.ElapsedSeconds*float64(time.Second))))
	caught := "no"
	if st.CaughtUp {
		caught = "yes"
	}
	behind := ""
	if st.BehindBytes != nil {
		behind = fmt.Sprintf(", %s behind the source", pbar.Bytes(*st.BehindBytes))
	}
	fmt.Fprintf(w, "  caught up: %s, lag %.3fs%s, %d in flight (%s of the %s window)\n",
		caught, st.LagSeconds, behind, st.InFlight, pbar.Bytes(int64(st.QueueBytes)), pbar.Bytes(int64(st.WindowBytes)))
	if st.Paused || len(st.Throttled) > 0 {
		var why []string
		if st.Paused {
			why = append(why, fmt.Sprintf("paused for %.0fs (POST /resume or SIGUSR2 resumes)", st.PausedSeconds))
		}
		for _, r := range configKeys(st.Throttled) {
			why = append(why, fmt.Sprintf("throttled by %s: %s", r, st.Throttled[r]))
		}
		fmt.Fprintf(w, "  held:    %s\n", strings.Join(why, "; "))
	}
	fmt.Fprintf(w, "  read:    %s%s\n", posText(st.Read), gtidText(st.Read.LastGTID))
	fmt.Fprintf(w, "  applied: %s%s, gtid position %s", posText(st.Applied), gtidText(st.Applied.LastGTID), st.Applied.GTIDPosition)
	if st.Applied.Total > 0 {
		fmt.Fprintf(w, ", %d on this channel in all runs", st.Applied.Total)
	}
	fmt.Fprintln(w)
	if e := st.SourceEnd; e != nil {
		fmt.Fprintf(w, "  source:  %s:%d, gtid position %s (checked %s ago)", e.File, e.Pos, e.GTIDPos,
			time.Since(e.CheckedAt).Round(time.Second))
		if e.Error != "" {
			fmt.Fprintf(w, ", last check failed: %s", e.Error)
		}
		fmt.Fprintln(w)
	}
	if r := st.Relay; r != nil {
		full := ""
		if r.Full {
			full = "; full: reading from the source waits for the applier (--relay-max-size, --relay-max-age)"
		}
		fmt.Fprintf(w, "  relay:   %s, %d files, %s, oldest file %.0fs old%s\n", r.Dir, r.Files, pbar.Bytes(r.Bytes), r.OldestSeconds, full)
	}
	fmt.Fprintf(w, "  rates:   %.0f txn/s, %.0f rows/s, %s/s (last %s); %.0f txn/s over the run\n",
		st.Rates.Transactions, st.Rates.Rows, pbar.Bytes(int64(st.Rates.Bytes)), metrics.RateWindow, st.Rates.RunTransactions)
	fmt.Fprintf(w, "  counts:  %d applied, %d skipped, %d read, %d rows, %d retries, reconnects %s\n",
		st.Transactions.Applied, st.Transactions.Skipped, st.Transactions.Read, st.Rows, st.Transactions.Retries, mapText(st.Reconnects))
	if len(st.Serialized) > 0 {
		fmt.Fprintf(w, "  waits:   %s\n", mapText(st.Serialized))
	}
	if len(st.Errors) > 0 {
		fmt.Fprintf(w, "  errors:  %s\n", mapText(st.Errors))
	}
	if len(st.RetriesBy) > 0 {
		fmt.Fprintf(w, "  retries: %s", mapText(st.RetriesBy))
		if len(st.Yields) > 0 {
			fmt.Fprintf(w, " (yields: %s)", mapText(st.Yields))
		}
		fmt.Fprintln(w)
	}
	if st.LastError != "" {
		fmt.Fprintf(w, "  last error: %s\n", st.LastError)
	}
	for _, wk := range st.WorkerStates {
		fmt.Fprintf(w, "  worker %d: %-14s busy %6.1fs  %s\n", wk.ID, wk.State, wk.BusySeconds, wk.Transaction)
	}
	return &st
}

func posText(p metrics.Position) string {
	if p.File == "" {
		return "-"
	}
	s := fmt.Sprintf("%s:%d", p.File, p.Pos)
	if p.SourceTime != nil {
		s += " (source time " + p.SourceTime.Local().Format(prun.TimeLayout) + ")"
	}
	return s
}

func gtidText(g string) string {
	if g == "" {
		return ""
	}
	return " gtid " + g
}

func mapText(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}
