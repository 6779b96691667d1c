package run

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog/relay"
	"github.com/prepl/prepl/binlog/stream"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sourceend"
	"github.com/prepl/prepl/txn"
)

// Replicate reads o.Source's binlog over the replication protocol and
// applies it to the target, from the position the target stores on
// o.Target.Channel (else after o.StartGTID, else from the oldest binlog).
func Replicate(ctx context.Context, o Options) (Summary, error) {
	r := newRunner(o, "replicate")
	log, src := r.log, o.Source
	filter, untilUnreached := replicateFilter(o.UntilGTID, o.SkipGTIDs)
	r.cfg.Filter = withTables(o.Tables, log, filter)
	srcTLS, srcFallback, err := src.TLSConfig()
	if err != nil {
		return Summary{}, fmt.Errorf("%w: --source: %v", ErrUsage, err)
	}

	srcDB, err := src.OpenDB()
	if err != nil {
		return Summary{}, err
	}
	defer srcDB.Close()
	// The source's first answers get a deadline: a source that accepts
	// connections and never answers must not hold prepl at its start.
	pctx, pcancel := context.WithTimeout(ctx, sourceAnswerTimeout)
	warnings, err := stream.Preflight(pctx, srcDB)
	pcancel()
	if err != nil {
		if pctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return Summary{}, fmt.Errorf("source %s did not answer within %s: check that it is up and that the network lets its replies through: %w", src, sourceAnswerTimeout, err)
		}
		return Summary{}, fmt.Errorf("source %s: %w", src, err)
	}
	for _, w := range warnings {
		log.Warn(w, "source", src.String())
	}
	if tgtEnd, err := mysql.ParseURL(o.Target.URL); err == nil {
		if err := refuseSameServer(ctx, srcDB, src, tgtEnd, log); err != nil {
			return Summary{}, err
		}
	}
	mysql.CheckPrivileges(ctx, log, srcDB, "source", src, sourceNeeds)
	poller := sourceend.StartPoller(srcDB, log)
	defer poller.Stop()

	defer r.close()
	if err := r.open(ctx, true); err != nil {
		return Summary{}, stoppedWaiting(err)
	}
	sc := stream.Config{Host: src.Host, Port: src.Port, User: src.User, PasswordFunc: src.Secret,
		TLS: srcTLS, TLSFallback: srcFallback,
		ServerID: o.ServerID, Heartbeat: o.Heartbeat, StopAtEnd: o.StopAtEnd, ReconnectTimeout: o.SourceReconnect, Log: log, Limits: o.Limits,
		Skip: r.ch.requestedSkip}
	channel := o.Target.Channel
	switch res := r.res; {
	case res.Found && res.Position.GTIDPos != "":
		sc.StartGTID = res.Position.GTIDPos
		log.Info("resuming from the target's stored position", "gtid", sc.StartGTID, "channel", channel)
	case res.Found && res.Position.File != "":
		sc.StartFile, sc.StartPos = res.Position.File, res.Position.Pos
		log.Info("resuming from the target's stored position", "file", sc.StartFile, "pos", sc.StartPos, "channel", channel)
	case o.StartGTID != "":
		sc.StartGTID = o.StartGTID
		log.Info("starting after GTID position", "gtid", sc.StartGTID)
	default:
		log.Info("no stored position and no --start-gtid: starting from the source's oldest binlog")
	}
	if r.res.Found && o.StartGTID != "" {
		log.Warn("--start-gtid ignored: the target has a stored position (prepl reset --start-gtid starts over)", "channel", channel)
	}
	r.res.StartAfter(sc.StartGTID)
	// The relay log may move the stream's start to its own end: after
	// StartAfter, which says what the target holds.
	var rl *relay.Log
	applied := txn.Position{File: r.res.Position.File, Offset: r.res.Position.Pos}
	if o.Relay.Dir != "" {
		if rl, err = openRelay(o.Relay, r.res.Found, applied, sc.StartGTID, &sc, log); err != nil {
			return Summary{}, err
		}
		defer rl.Close()
	}
	rd, err := stream.Open(ctx, sc)
	if err != nil {
		return Summary{}, fmt.Errorf("source %s: %w", src, mysql.ExplainTLSError(src, err))
	}
	defer rd.Close()
	wo := watchOptions{info: metrics.Info{Command: "replicate", Source: src.String(), Target: r.tgt.String()},
		end: poller, bar: o.StopAtEnd, sourceReconnects: rd.Reconnects,
		security: []any{"source_tls", mysql.DescribeTLS(rd.Cipher(), src.TLS.Mode)}, relay: rl}
	var from apply.Source = rd
	if rl != nil {
		live := new(apply.Live)
		r.cfg.Live = live
		rl.SetApplied(func() txn.Position {
			if st, ok := live.Stats(); ok && st.Last.File != "" {
				return txn.Position{File: st.Last.File, Offset: st.Last.Pos}
			}
			return applied
		})
		fctx, stopFill := context.WithCancel(ctx)
		filled := make(chan error, 1)
		go func() {
			err := rl.Fill(fctx, rd)
			if err == io.EOF {
				st := rl.Stats()
				log.Info("relay log: holds everything the source had at the start (--stop-at-end)", "relay_files", st.Files, "relay_bytes", st.Bytes)
			}
			filled <- err
		}()
		defer func() {
			stopFill()
			if err := <-filled; err != nil && err != io.EOF && !isCanceled(err) {
				log.Warn("relay log: reading from the source ended", "err", err.Error())
			}
		}()
		after := applied
		if !r.res.Found {
			after = txn.Position{}
		}
		from = rl.Reader(after, rd.Silence)
	}
	sum, err := r.apply(ctx, from, wo, nil)
	if sum.Ran && o.StopAtEnd && err == nil && untilUnreached() {
		// As replay's unreached stop: everything the source had was applied.
		sum.Warnings = append(sum.Warnings, "the source's binlog ended (--stop-at-end) before --until-gtid "+o.UntilGTID+
			" was reached: everything in it was applied")
	}
	return sum, err
}

// openRelay opens the relay log of ro.Dir. When it holds the position
// applied (found: the target stores one), the stream starts at its end;
// otherwise it is emptied and the stream starts as without it.
func openRelay(ro relay.Options, found bool, applied txn.Position, appliedGTID string, sc *stream.Config, log *slog.Logger) (*relay.Log, error) {
	ro.Log, ro.ServerID, ro.Limits, ro.Skip = log, sc.ServerID, sc.Limits, sc.Skip
	if ro.ServerID == 0 {
		ro.ServerID = 0x7072706c
	}
	rl, err := relay.Open(ro)
	if err != nil {
		return nil, err
	}
	if err := resumeRelay(rl, ro, found, applied, appliedGTID, sc, log); err != nil {
		rl.Close()
		return nil, err
	}
	return rl, nil
}

func resumeRelay(rl *relay.Log, ro relay.Options, found bool, applied txn.Position, appliedGTID string, sc *stream.Config, log *slog.Logger) error {
	sc.KeepRaw = true
	if found && rl.Holds(applied) {
		end, gtid := rl.End()
		st := rl.Stats()
		log.Info("resuming from the relay log: the source is read again from its end", "relay_dir", ro.Dir,
			"applied", applied.String(), "relay_end", end.String(), "relay_end_gtid", gtid, "relay_files", st.Files, "relay_bytes", st.Bytes)
		// By GTID when known: a source that purged the binlog of the log's
		// end serves it from the next binlog's GTID list.
		sc.StartGTID, sc.StartFile, sc.StartPos = gtid, "", 0
		if gtid == "" {
			sc.StartFile, sc.StartPos = end.File, end.Offset
		}
		return nil
	}
	if st := rl.Stats(); st.Files > 0 {
		end, _ := rl.End()
		log.Warn("the relay log does not hold the position to resume from: emptied, reading from the source",
			"relay_dir", ro.Dir, "applied", applied.String(), "relay_end", end.String())
	}
	return rl.Reset(appliedGTID, applied)
}

// sourceAnswerTimeout bounds the checks of the source at start.
const sourceAnswerTimeout = 30 * time.Second

// replicateFilter skips the transactions of skip and stops after until
// (see untilFilter); nil when there is nothing to do. unreached reports,
// after the run, that until was given, the filter was asked about a
// transaction (an earlier run had not applied them all), and until did
// not end the stream.
func replicateFilter(until string, skip []string) (filter func(t *txn.Txn) apply.Action, unreached func() bool) {
	var watch stopWatch
	unreached = func() bool { return until != "" && watch.unreached() }
	if until == "" && len(skip) == 0 {
		return nil, unreached
	}
	skips := map[string]bool{}
	for _, g := range skip {
		skips[strings.TrimSpace(g)] = true
	}
	var last func(t *txn.Txn) apply.Action
	if until != "" {
		last = untilFilter(until)
	}
	return func(t *txn.Txn) apply.Action {
		a := apply.Apply
		if last != nil {
			a = last(t)
		}
		if a != apply.Stop && t.GTID != "" && skips[t.GTID] {
			if a == apply.Last {
				a = apply.Stop // skipped, and still the last: as replay's --stop-gtid
			} else {
				a = apply.Skip
			}
		}
		return watch.note(a)
	}, unreached
}

// untilFilter applies up to and including GTID g, then stops. A later
// transaction of the same stream also stops: a later sequence number in
// the same domain for a MariaDB GTID, a later GNO of the same UUID (and
// tag) for a MySQL one. A stop GTID that is not in the binlog (the
// transaction was never written, or one of its digits is wrong) still
// stops where it would have been.
func untilFilter(g string) func(t *txn.Txn) apply.Action {
	mg, derr := position.ParseMariaGTID(g)
	key, gno, merr := position.SplitMySQLGTID(g)
	return func(t *txn.Txn) apply.Action {
		switch {
		case t.GTID == g:
			return apply.Last
		case t.GTID == "":
		case derr == nil && t.Domain == mg.Domain && t.SeqNo > mg.Seq:
			return apply.Stop
		case derr != nil && merr == nil && t.SeqNo > gno:
			if k, _, err := position.SplitMySQLGTID(t.GTID); err == nil && k == key {
				return apply.Stop
			}
		}
		return apply.Apply
	}
}
