package metrics

import (
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/sequencer"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("prepl_"+name, help, labels, nil)
}

// Every metric prepl exports, besides the Go and process collectors.
var (
	descInfo       = desc("info", "The run: version, command, mode, channel, source and target (always 1).", "version", "command", "mode", "channel", "source", "target")
	descWorkers    = desc("workers", "Worker connections to the target, by state (idle, applying, waiting-commit, committing, reconnecting).", "state")
	descCaughtUp   = desc("caught_up", "1 when everything the source had written (at the last check) is applied, else 0.")
	descApplied    = desc("transactions_applied_total", "Source transactions applied (committed on the target) by this process.")
	descSkipped    = desc("transactions_skipped_total", "Source transactions read and not applied: filtered out or already applied.")
	descRead       = desc("transactions_read_total", "Source transactions read.")
	descRows       = desc("rows_applied_total", "Row changes applied.")
	descBytes      = desc("bytes_applied_total", "Binlog bytes of the transactions applied.")
	descLag        = desc("lag_seconds", "Now minus the source commit time of the oldest transaction read and not yet applied, or the time since the source was last heard from when it is overdue (unreachable, silent); 0 when caught up.")
	descBehind     = desc("source_behind_bytes", "Bytes the source has written past prepl's read position (absent when unknown).")
	descInFlight   = desc("in_flight_transactions", "Transactions read and not yet committed.")
	descQueue      = desc("queue_bytes", "Binlog bytes read and not yet committed.")
	descWindow     = desc("window_bytes", "The read-ahead window (--window): queue_bytes stays at or below it.")
	descReadPos    = desc("read_position_bytes", "Offset in its binlog file of the end of the last transaction read.", "file")
	descAppliedPos = desc("applied_position_bytes", "Offset in its binlog file of the end of the last transaction applied.", "file")
	descReadFile   = desc("read_file_number", "Numeric suffix of the binlog file of the last transaction read.")
	descAppFile    = desc("applied_file_number", "Numeric suffix of the binlog file of the last transaction applied.")
	descAppliedTS  = desc("applied_source_timestamp_seconds", "Source commit time (Unix) of the last transaction applied.")
	descBusy       = desc("worker_busy_seconds_total", "Time a worker spent applying and committing.", "worker")
	descUnits      = desc("commit_unit_transactions", "Target commits of row transactions, by how many source transactions each held.")
	descRetries    = desc("retries_total", "Units rolled back and run again, by cause (yield: for an earlier unit, see yields_total; conflict: failed ahead of its turn; deadlock: a deadlock or lock wait timeout of the next to commit; connection: after a reconnect).", "cause")
	descSerialized = desc("serialized_total", "Times a transaction had to wait for an earlier one, by reason.", "reason")
	descReconnects = desc("reconnects_total", "Reconnections, by peer (source, target).", "peer")
	descErrors     = desc("errors_total", "Failed attempts, by class (conflict, retry, connection, fatal).", "class")
	descCompacted  = desc("compacted_rows_total", "Source row changes that compaction of commit units made unnecessary.")
	descFallbacks  = desc("compact_fallbacks_total", "Commit units re-applied in source order after a compacted statement surprised.")
	descRowEvents  = desc("row_events_rows_total", "Source row changes sent to the target as rows events (MariaDB's BINLOG statement) rather than as SQL.")
	descSkipReq    = desc("transactions_skip_requested_total", "Source transactions left out because prepl skip asked (also in transactions_skipped_total).")
	descPaused     = desc("paused", "1 while paused (POST /pause, SIGUSR1): nothing new is started until resumed.")
	descPausedSec  = desc("paused_seconds_total", "Time spent paused.")
	descThrottled  = desc("throttled", "1 while throttling holds new work, by reason (max-load, replica-lag, flag-file).", "reason")
	descThrotSec   = desc("throttled_seconds_total", "Time spent throttled, by reason (max-load, replica-lag, flag-file).", "reason")
	descConcur     = desc("concurrency", "Units the engine lets run in flight now: at most --workers, chosen from the throughput it measures (--fixed-workers: --workers).")
	descStandby    = desc("standby", "1 while this process waits as a standby for the channel's active prepl to go (--standby), 0 once it is the active.")
	descActSince   = desc("active_since_timestamp_seconds", "When this process became the channel's active (Unix, the target's clock); absent while a standby.")
	descEpoch      = desc("channel_epoch", "The channel's epoch this process claimed; a position write under another epoch is refused (fenced).")
	descRelayBytes = desc("relay_bytes", "Bytes of the relay log's files (replicate --relay-dir).")
	descRelayFiles = desc("relay_files", "Files of the relay log (replicate --relay-dir).")
	descRelayAge   = desc("relay_oldest_file_age_seconds", "Age of the oldest relay file held, whose transactions are not all applied (replicate --relay-dir).")
	descRelayFull  = desc("relay_full", "1 while reading from the source waits for the applier at --relay-max-size or --relay-max-age.")
	descYields     = desc("yields_total", "Units rolled back or interrupted for an earlier one, by cause (lock-wait: an earlier unit waits for its lock; lock-wait-unseen: the next to commit waits, holder not named; head-stall: lock waits cannot be seen and the next to commit ran long).", "cause")
)

var allDescs = []*prometheus.Desc{descInfo, descWorkers, descCaughtUp, descApplied, descSkipped, descRead, descRows,
	descBytes, descLag, descBehind, descInFlight, descQueue, descWindow, descReadPos, descAppliedPos, descReadFile,
	descAppFile, descAppliedTS, descBusy, descUnits, descRetries, descSerialized, descReconnects, descErrors,
	descCompacted, descFallbacks, descRowEvents, descSkipReq, descPaused, descPausedSec, descThrottled, descThrotSec, descConcur, descYields,
	descStandby, descActSince, descEpoch, descRelayBytes, descRelayFiles, descRelayAge, descRelayFull}

// collector reads the latest snapshot on every scrape.
type collector struct{ m *Monitor }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	i := m.info
	ch <- prometheus.MustNewConstMetric(descInfo, prometheus.GaugeValue, 1, i.Version, i.Command, i.Mode, i.Channel, i.Source, i.Target)
	if m.role != nil {
		r := m.role()
		ch <- prometheus.MustNewConstMetric(descStandby, prometheus.GaugeValue, b2f(r.Standby))
		if !r.ActiveSince.IsZero() {
			ch <- prometheus.MustNewConstMetric(descActSince, prometheus.GaugeValue, float64(r.ActiveSince.UnixNano())/1e9)
		}
		if r.Epoch > 0 {
			ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(r.Epoch))
		}
	}
	s, x, _ := m.snapshot()
	ch <- prometheus.MustNewConstMetric(descCaughtUp, prometheus.GaugeValue, b2f(x.CaughtUp))
	ch <- prometheus.MustNewConstMetric(descReconnects, prometheus.CounterValue, float64(x.SourceReconnects), "source")
	if x.BehindBytes >= 0 {
		ch <- prometheus.MustNewConstMetric(descBehind, prometheus.GaugeValue, float64(x.BehindBytes))
	}
	if r := x.Relay; r != nil {
		ch <- prometheus.MustNewConstMetric(descRelayBytes, prometheus.GaugeValue, float64(r.Bytes))
		ch <- prometheus.MustNewConstMetric(descRelayFiles, prometheus.GaugeValue, float64(r.Files))
		ch <- prometheus.MustNewConstMetric(descRelayAge, prometheus.GaugeValue, r.OldestSeconds)
		ch <- prometheus.MustNewConstMetric(descRelayFull, prometheus.GaugeValue, b2f(r.Full))
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(descApplied, s.Txns)
	counter(descSkipped, s.Skipped)
	counter(descRead, s.Read)
	counter(descRows, s.Rows)
	counter(descBytes, s.Bytes)
	for _, cause := range []string{sequencer.RetryYield, sequencer.RetryConflict, sequencer.RetryDeadlock, sequencer.RetryConnection} {
		counter(descRetries, s.RetriesBy[cause], cause)
	}
	counter(descCompacted, s.CompactedRows)
	counter(descFallbacks, s.CompactFallbacks)
	counter(descRowEvents, s.RowEvents)
	counter(descReconnects, s.Reconnects, "target")
	gauge(descLag, s.Lag.Seconds())
	gauge(descInFlight, float64(s.InFlight))
	gauge(descConcur, float64(s.Concurrency))
	for _, cause := range []string{sequencer.YieldLockWait, sequencer.YieldLockWaitUnseen, sequencer.YieldHeadStall} {
		counter(descYields, s.Yields[cause], cause)
	}
	gauge(descQueue, float64(s.QueueBytes))
	gauge(descWindow, float64(s.WindowBytes))
	if s.ReadPos.File != "" {
		gauge(descReadPos, float64(s.ReadPos.Pos), s.ReadPos.File)
		gauge(descReadFile, float64(FileNumber(s.ReadPos.File)))
	}
	if s.Last.File != "" {
		gauge(descAppliedPos, float64(s.Last.Pos), s.Last.File)
		gauge(descAppFile, float64(FileNumber(s.Last.File)))
	}
	if !s.Last.SourceTS.IsZero() {
		gauge(descAppliedTS, float64(s.Last.SourceTS.UnixNano())/1e9)
	}
	states := map[string]int{"idle": 0, "applying": 0, "waiting-commit": 0, "committing": 0, "reconnecting": 0}
	for _, w := range s.Workers {
		ch <- prometheus.MustNewConstMetric(descBusy, prometheus.CounterValue, w.Busy.Seconds(), strconv.Itoa(w.ID))
		states[w.State]++
	}
	for st, n := range states {
		gauge(descWorkers, float64(n), st)
	}
	for _, r := range sortedKeys(s.Serialized) {
		if r != "" {
			counter(descSerialized, s.Serialized[r], string(r))
		}
	}
	for _, class := range []string{"conflict", "retry", "connection", "fatal"} {
		counter(descErrors, s.Errors[class], class)
	}
	for class, n := range s.Errors {
		switch class {
		case "conflict", "retry", "connection", "fatal":
		default:
			counter(descErrors, n, class)
		}
	}
	counter(descSkipReq, x.SkipRequested)
	gauge(descPaused, b2f(x.Gate.Paused))
	ch <- prometheus.MustNewConstMetric(descPausedSec, prometheus.CounterValue, x.Gate.PausedFor.Seconds())
	for _, r := range []string{apply.ThrottleMaxLoad, apply.ThrottleReplicaLag, apply.ThrottleFlagFile} {
		_, on := x.Gate.Throttled[r]
		gauge(descThrottled, b2f(on), r)
		ch <- prometheus.MustNewConstMetric(descThrotSec, prometheus.CounterValue, x.Gate.ThrottledFor[r].Seconds(), r)
	}
	ch <- unitHistogram(s)
}

// unitHistogram builds the commit unit histogram from Stats.UnitHist
// (per-bucket counts, bounds apply.UnitBuckets, last one overflow).
//
// The engine does not report how many source transactions its units held
// in total, so the sum is the applied transactions (DDL included, which is
// committed outside units): exact for units of row transactions only.
func unitHistogram(s apply.Stats) prometheus.Metric {
	buckets := map[float64]uint64{}
	var cum uint64
	for i, b := range apply.UnitBuckets {
		if i < len(s.UnitHist) {
			cum += s.UnitHist[i]
		}
		buckets[float64(b)] = cum
	}
	if n := len(apply.UnitBuckets); n < len(s.UnitHist) {
		cum += s.UnitHist[n]
	}
	return prometheus.MustNewConstHistogram(descUnits, cum, float64(s.Txns), buckets)
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
