package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/binlog"
	"github.com/prepl/prepl/metrics"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sourceend"
)

func runReplicate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replicate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	af.register(fs, "default")
	source := fs.String("source", "", "source server URL: mysql://USER@HOST:PORT[?ssl-mode=MODE&ssl-ca=FILE...] (required; needs REPLICATION SLAVE,\n"+
		"REPLICATION CLIENT and SELECT); the password from --source-password-file, PREPL_SOURCE_PASSWORD, --defaults-file or MYSQL_PWD")
	var srcFlags endpointFlags
	srcFlags.register(fs, "source")
	startGTID := fs.String("start-gtid", "", "GTID position to start after when the target has no stored position\n(MariaDB gtid_slave_pos form 0-1-100,1-1-5, or a MySQL GTID set); default: the oldest binlog")
	untilGTID := fs.String("until-gtid", "", "stop after applying this GTID (inclusive), or before the first later transaction\n"+
		"of its domain (MariaDB) or of its UUID (MySQL)")
	var skipGTIDs multiFlag
	fs.Var(&skipGTIDs, "skip-gtid", "do not apply this GTID (repeatable); the position still moves past it: the way past a\n"+
		"transaction the target refuses (a DDL a PostgreSQL target has no translation for), once handled by hand")
	stopAtEnd := fs.Bool("stop-at-end", false, "exit 0 once everything the source had written when prepl started is applied")
	serverID := fs.Uint("server-id", 0, "server_id prepl presents to the source (default: derived, unique per channel)")
	heartbeat := fs.Duration("heartbeat", time.Second, "heartbeat period asked of the source; a silent network is noticed after a few of them")
	sourceReconnect := fs.Duration("source-reconnect-timeout", 5*time.Minute, "after a network error, reconnect to the source with backoff for this long before giving up\n(0: give up at once)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: prepl replicate --source URL --target URL [flags]

Reads the source's binlog over the replication protocol and applies it to the
target with --workers connections, committing in the source's order. The
applied position is stored in the target (table prepl.position) in the same
transaction as the rows; a restart resumes exactly after the last committed
transaction, and a stored position wins over --start-gtid.

A lost source connection is re-opened with backoff (--source-reconnect-timeout),
a lost target connection too (--reconnect-timeout). SIGINT or SIGTERM stops
reading, finishes what is in flight, stores the position and exits 0; a
second signal exits at once (the position stays consistent).

Examples:
  PREPL_SOURCE_PASSWORD=... prepl replicate --source 'mysql://repl@db1:3306?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/prepl/ca.pem' \
      --target mysql://prepl@127.0.0.1:3306 --target-password-file /etc/prepl/target.pw \
      --start-gtid 0-1-1000 --workers 8 --stop-at-end
  prepl replicate --source mysql://repl@db1:3306 --target postgres://postgres@pg:5432/app   # after prepl copy
  prepl replicate --config /etc/prepl/prepl.toml --metrics-addr 127.0.0.1:9104 \
      --include 'shop.*' --exclude 'shop.tmp_*' --rewrite-schema shop=shop_replica

Flags:
`)
		printFlags(fs)
	}
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *source == "" {
		return fmt.Errorf("%w: --source is required", errUsage)
	}
	log, cfg, err := af.setup(stderr)
	if err != nil {
		return err
	}
	src, err := af.secrets.endpoint(*source, &srcFlags)
	if err != nil {
		return err
	}
	if src.Socket != "" {
		return fmt.Errorf("%w: --source: the replication protocol is read over TCP; give HOST:PORT instead of socket=", errUsage)
	}
	srcTLS, srcFallback, err := src.TLSConfig()
	if err != nil {
		return fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	filter, untilUnreached := replicateFilter(*untilGTID, skipGTIDs)
	cfg.Filter = af.filter(filter)
	lim, err := af.limits()
	if err != nil {
		return err
	}

	srcDB, err := src.OpenDB()
	if err != nil {
		return err
	}
	defer srcDB.Close()
	// The source's first answers get a deadline: a source that accepts
	// connections and never answers must not hold prepl at its start.
	pctx, pcancel := context.WithTimeout(ctx, sourceAnswerTimeout)
	warnings, err := binlog.Preflight(pctx, srcDB)
	pcancel()
	if err != nil {
		if pctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return fmt.Errorf("source %s did not answer within %s: check that it is up and that the network lets its replies through: %w", src, sourceAnswerTimeout, err)
		}
		return fmt.Errorf("source %s: %w", src, err)
	}
	for _, w := range warnings {
		log.Warn(w, "source", src.String())
	}
	if tgtEnd, err := mysql.ParseURL(af.target); err == nil {
		if err := refuseSameServer(ctx, srcDB, src, tgtEnd, log); err != nil {
			return err
		}
	}
	checkPrivileges(ctx, log, srcDB, "source", src, sourceNeeds)
	poller := sourceend.StartPoller(srcDB, log)
	defer poller.Stop()

	tgt, err := af.openTarget(ctx)
	if err != nil {
		return err
	}
	defer tgt.Close()
	if err := tgt.checkStart(ctx, log, cfg); err != nil {
		return err
	}
	chRun, err := claimChannel(ctx, log, tgt, &cfg)
	if err != nil {
		return err
	}
	defer chRun.release()
	res, err := apply.LoadResume(ctx, tgt)
	if err != nil {
		return err
	}
	sc := binlog.StreamConfig{Host: src.Host, Port: src.Port, User: src.User, PasswordFunc: src.Secret,
		TLS: srcTLS, TLSFallback: srcFallback,
		ServerID: uint32(*serverID), Heartbeat: *heartbeat, StopAtEnd: *stopAtEnd, ReconnectTimeout: *sourceReconnect, Log: log, Limits: lim,
		Skip: chRun.requestedSkip}
	switch {
	case res.Found && res.Position.GTIDPos != "":
		sc.StartGTID = res.Position.GTIDPos
		log.Info("resuming from the target's stored position", "gtid", sc.StartGTID, "channel", af.channel)
	case res.Found && res.Position.File != "":
		sc.StartFile, sc.StartPos = res.Position.File, res.Position.Pos
		log.Info("resuming from the target's stored position", "file", sc.StartFile, "pos", sc.StartPos, "channel", af.channel)
	case *startGTID != "":
		sc.StartGTID = *startGTID
		log.Info("starting after GTID position", "gtid", sc.StartGTID)
	default:
		log.Info("no stored position and no --start-gtid: starting from the source's oldest binlog")
	}
	if res.Found && *startGTID != "" {
		log.Warn("--start-gtid ignored: the target has a stored position (prepl reset --start-gtid starts over)", "channel", af.channel)
	}
	res.StartAfter(sc.StartGTID)
	rd, err := binlog.OpenStream(ctx, sc)
	if err != nil {
		return fmt.Errorf("source %s: %w", src, mysql.ExplainTLSError(src, err))
	}
	defer rd.Close()
	gate, rctx, err := af.startGate(ctx, log, tgt.mysqlDB(), &cfg)
	if err != nil {
		return err
	}
	w, err := af.startWatch(ctx, log, &cfg, watchOptions{gate: gate, channel: chRun, info: metrics.Info{Command: "replicate", Source: src.String(),
		Target: tgt.String()}, end: poller, bar: *stopAtEnd, sourceReconnects: rd.Reconnects,
		security: []any{"source_tls", mysql.DescribeTLS(rd.Cipher(), src.TLS.Mode), "target_tls", tgt.security(ctx)}})
	if err != nil {
		return err
	}
	at, stopPrefetch := af.withPrefetch(log, tgt)
	stats, err := apply.Run(rctx, rd, at, res, cfg)
	stopPrefetch()
	err = gate.stop(rctx, err)
	w.finish(stats, err)
	printSummary(stdout, stats)
	if *stopAtEnd && err == nil && untilUnreached() {
		// As replay's unreached stop: everything the source had was applied.
		warn(log, stdout, "the source's binlog ended (--stop-at-end) before --until-gtid "+*untilGTID+" was reached: everything in it was applied")
	}
	return err
}

// sourceAnswerTimeout bounds the checks of the source at start.
const sourceAnswerTimeout = 30 * time.Second

// replicateFilter skips the transactions of skip and stops after until
// (see untilFilter); nil when there is nothing to do. unreached reports,
// after the run, that until was given, the filter was asked about a
// transaction (an earlier run had not applied them all), and until did
// not end the stream.
func replicateFilter(until string, skip []string) (filter func(t *txnT) apply.Action, unreached func() bool) {
	var watch stopWatch
	unreached = func() bool { return until != "" && watch.unreached() }
	if until == "" && len(skip) == 0 {
		return nil, unreached
	}
	skips := map[string]bool{}
	for _, g := range skip {
		skips[strings.TrimSpace(g)] = true
	}
	var last func(t *txnT) apply.Action
	if until != "" {
		last = untilFilter(until)
	}
	return func(t *txnT) apply.Action {
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
func untilFilter(g string) func(t *txnT) apply.Action {
	mg, derr := position.ParseMariaGTID(g)
	key, gno, merr := position.SplitMySQLGTID(g)
	return func(t *txnT) apply.Action {
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
