package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	prun "github.com/prepl/prepl/run"
)

func runReplicate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replicate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af applyFlags
	af.register(fs, prun.DefaultChannel)
	source := fs.String("source", "", "source server URL: mysql://USER@HOST:PORT[?ssl-mode=MODE&ssl-ca=FILE...] (required; needs REPLICATION SLAVE,\n"+
		"REPLICATION CLIENT and SELECT); the password from --source-password-file, PREPL_SOURCE_PASSWORD, --defaults-file or MYSQL_PWD")
	var srcFlags prun.EndpointSecrets
	registerEndpoint(fs, &srcFlags, "source")
	startGTID := fs.String("start-gtid", "", "GTID position to start after when the target has no stored position\n(MariaDB gtid_slave_pos form 0-1-100,1-1-5, or a MySQL GTID set); default: the oldest binlog")
	delay := fs.Duration("delay", 0, "apply each transaction no earlier than this long after the source committed it (its commit\n"+
		"event's timestamp, by the local clock), as MASTER_DELAY/SOURCE_DELAY; reading goes on ahead within --window.\n"+
		"While waiting, status and metrics show the throttling reason \"delay\" with the GTID and the time it waits for")
	untilGTID := fs.String("until-gtid", "", "stop after applying this GTID (inclusive), or before the first later transaction\n"+
		"of its domain (MariaDB) or of its UUID (MySQL)")
	var skipGTIDs multiFlag
	fs.Var(&skipGTIDs, "skip-gtid", "do not apply this GTID (repeatable); the position still moves past it: the way past a\n"+
		"transaction the target refuses (a DDL a PostgreSQL target has no translation for), once handled by hand")
	stopAtEnd := fs.Bool("stop-at-end", false, "exit 0 once everything the source had written when prepl started is applied")
	serverID := fs.Uint("server-id", 0, "server_id prepl presents to the source (default: derived, unique per channel)")
	heartbeat := fs.Duration("heartbeat", time.Second, "heartbeat period asked of the source; a silent network is noticed after a few of them")
	sourceReconnect := fs.Duration("source-reconnect-timeout", 5*time.Minute, "after a network error, reconnect to the source with backoff for this long before giving up\n(0: give up at once)")
	relayDir := fs.String("relay-dir", "", "keep what is read from the source in relay files in this directory before applying it\n"+
		"(relay.000001...: binlog files mariadb-binlog and prepl replay read): reading never waits for applying, and a\n"+
		"stopped prepl resumes from them after the source purged its binlogs. Files wholly applied are deleted (docs/relay.md)")
	relayMaxSize := fs.String("relay-max-size", "10GiB", "with --relay-dir, the relay files' total size at which reading from the source waits for the applier")
	relayMaxAge := fs.Duration("relay-max-age", 0, "with --relay-dir, the age of the oldest relay file held at which reading from the source waits\nfor the applier (0: no bound)")
	relayFileSize := fs.String("relay-file-size", "64MiB", "with --relay-dir, start a new relay file past this size")
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

With --relay-dir, what is read from the source is kept in relay files first
and applied from them: reading goes on while applying is paused, throttled or
stopped (up to --relay-max-size), and a restart resumes from them even after
the source purged its binlogs (docs/relay.md).

One prepl applies a channel at a time: it holds the channel's lock on the
target. With --standby a second one waits beside it and takes over within
--takeover-after of the active's death, hang or loss of the target, fencing
it: a commit of the old one is refused from then on, and it exits 3
(docs/standby.md).

Examples:
  PREPL_SOURCE_PASSWORD=... prepl replicate --source 'mysql://repl@db1:3306?ssl-mode=VERIFY_IDENTITY&ssl-ca=/etc/prepl/ca.pem' \
      --target mysql://prepl@127.0.0.1:3306 --target-password-file /etc/prepl/target.pw \
      --start-gtid 0-1-1000 --workers 8 --stop-at-end
  prepl replicate --source mysql://repl@db1:3306 --target postgres://postgres@pg:5432/app   # after prepl copy
  prepl replicate --config /etc/prepl/prepl.toml --metrics-addr 127.0.0.1:9104 \
      --include 'shop.*' --exclude 'shop.tmp_*' --rewrite-schema shop=shop_replica
  prepl replicate --source mysql://repl@db1:3306 --target mysql://prepl@127.0.0.1:3306 \
      --relay-dir /var/lib/prepl/relay --relay-max-size 20GiB --delay 1h

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
	o, err := af.options(stderr)
	if err != nil {
		return err
	}
	if *delay < 0 {
		return fmt.Errorf("%w: --delay must not be negative", errUsage)
	}
	o.Config.Delay = *delay
	src, err := af.secrets.Endpoint(*source, &srcFlags)
	if err != nil {
		return err
	}
	if src.Socket != "" {
		return fmt.Errorf("%w: --source: the replication protocol is read over TCP; give HOST:PORT instead of socket=", errUsage)
	}
	if _, _, err := src.TLSConfig(); err != nil {
		return fmt.Errorf("%w: --source: %v", errUsage, err)
	}
	if o.Limits, err = af.limits(); err != nil {
		return err
	}
	o.Source, o.StartGTID, o.UntilGTID, o.SkipGTIDs, o.StopAtEnd = src, *startGTID, *untilGTID, skipGTIDs, *stopAtEnd
	o.ServerID, o.Heartbeat, o.SourceReconnect = uint32(*serverID), *heartbeat, *sourceReconnect
	if *relayDir != "" {
		maxSize, err := parseBytes(*relayMaxSize)
		if err != nil {
			return fmt.Errorf("%w: --relay-max-size: %v", errUsage, err)
		}
		fileSize, err := parseBytes(*relayFileSize)
		if err != nil || fileSize < 4096 {
			return fmt.Errorf("%w: --relay-file-size: want a size of 4KiB or more", errUsage)
		}
		if *relayMaxAge < 0 {
			return fmt.Errorf("%w: --relay-max-age must not be negative", errUsage)
		}
		o.Relay.Dir, o.Relay.MaxSize, o.Relay.MaxAge, o.Relay.FileSize = *relayDir, int64(maxSize), *relayMaxAge, int64(fileSize)
	}
	sum, err := prun.Replicate(ctx, o)
	report(o, stdout, sum, false)
	return err
}
