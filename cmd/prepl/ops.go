package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/filter"
	"github.com/prepl/prepl/mysql"
	pbar "github.com/prepl/prepl/progress"
	"github.com/prepl/prepl/redact"
	"github.com/prepl/prepl/txn"
)

// ops are the flags and state for running prepl as a service: the metrics
// address, table filters and the progress bar. applyFlags embeds them.
type ops struct {
	metricsAddr               string
	webConfig                 string
	include, exclude, rewrite multiFlag
	progressBar               bool
	applyPreplSchema          bool

	term   *pbar.Terminal // stderr, when it is a terminal
	tables *filter.Filter // from --include, --exclude, --rewrite-schema
	log    *slog.Logger
}

func (o *ops) registerOps(fs *flag.FlagSet) {
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "HOST:PORT of the HTTP endpoint with /metrics (Prometheus) and /status (JSON):\n"+
		"replicate and replay serve it (port 0 picks a free one), status reads it")
	fs.StringVar(&o.webConfig, "web-config", "", "Prometheus exporter-toolkit web configuration file (YAML) for --metrics-addr: TLS\n"+
		"(tls_server_config) and basic auth (basic_auth_users, bcrypt hashes), as mysqld_exporter's --web.config.file")
	fs.Var(&o.include, "include", "apply only tables matching this SCHEMA.TABLE pattern (globs * ? [..], source names;\n"+
		"repeatable); a DDL follows the tables it changes")
	fs.Var(&o.exclude, "exclude", "do not apply tables matching this SCHEMA.TABLE pattern (repeatable; wins over --include)")
	fs.Var(&o.rewrite, "rewrite-schema", "apply source schema SRC to target schema DST: SRC=DST (repeatable). Rewritten: row changes,\n"+
		"the default schema of DDL, schema-qualified names in table, index, sequence, RENAME, TRUNCATE and DROP\n"+
		"statements (LIKE and REFERENCES included), database names in CREATE/ALTER/DROP DATABASE, and the own\n"+
		"names of views, triggers and routines. Not rewritten: names inside view, trigger and routine bodies,\n"+
		"and account statements (GRANT, CREATE USER)")
	fs.BoolVar(&o.applyPreplSchema, "apply-prepl-schema", false, "also apply the source's own `"+mysql.PositionSchema+"` schema. By default it is left out:\n"+
		"on a source that is itself a prepl target (a chain A -> B -> C) it holds B's positions, not data")
	fs.BoolVar(&o.progressBar, "progress-bar", true, "draw a progress bar with rate and ETA when stderr is a terminal\n(replay, replicate --stop-at-end)")
}

// terminal wraps stderr for the logger: on a terminal, log lines and the
// progress bar share it without mixing.
func (o *ops) terminal(stderr io.Writer) io.Writer {
	f, ok := stderr.(*os.File)
	if !ok || !pbar.IsTerminal(f) || os.Getenv("TERM") == "dumb" {
		return stderr
	}
	o.term = pbar.NewTerminal(f)
	return o.term
}

// setupOps checks the filter flags and installs the table filter.
func (o *ops) setupOps(cfg *apply.Config) error {
	exclude := o.exclude
	if !o.applyPreplSchema {
		exclude = append(exclude[:len(exclude):len(exclude)], mysql.PositionSchema+".*")
	}
	t, err := filter.New(o.include, exclude, o.rewrite)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	o.tables = t
	o.log = cfg.Log
	cfg.Filter = o.filter(nil)
	return nil
}

// warn says msg in the log (when there is one: a dry run has only its
// listing) and at the end of the command's output, where a DBA reading the
// summary sees it.
func warn(log *slog.Logger, stdout io.Writer, msg string) {
	if log != nil {
		log.Warn(msg)
	}
	fmt.Fprintln(stdout, "warning: "+msg)
}

// unmatchedIncludes is the warning, after a run, for --include patterns
// that no table of the selected transactions matched: a pattern with a typo
// ("Shop.*" for shop) applies nothing of what it was meant for, and the
// run exits 0. "" when there is none.
func (o *ops) unmatchedIncludes() string {
	if o.tables == nil {
		return ""
	}
	un := o.tables.Unmatched()
	if len(un) == 0 {
		return ""
	}
	return fmt.Sprintf("--include %s matched no table in the transactions selected, so nothing of it is applied "+
		"(names are compared as the binlog has them, case included)", strings.Join(un, ", --include "))
}

// filter combines a command's own filter (GTIDs, times; nil applies
// everything) with the table filter, which runs on what the command's
// filter applies. A transaction with nothing left is skipped, so the
// position still moves past it.
func (o *ops) filter(cmd func(*txn.Txn) apply.Action) func(*txn.Txn) apply.Action {
	tables := o.tables
	if tables == nil || tables.Empty() {
		return cmd
	}
	return func(t *txn.Txn) apply.Action {
		a := apply.Apply
		if cmd != nil {
			a = cmd(t)
		}
		if a != apply.Apply && a != apply.Last {
			return a
		}
		var ddl string
		if t.IsDDL() {
			ddl = t.Changes[0].Stmt.SQL
		}
		if tables.Apply(t) || t.XA {
			// An XA transaction's prepared part left with no rows is
			// still applied: its XA COMMIT looks for it.
			return a
		}
		if ddl != "" && o.log != nil {
			o.log.Info("DDL skipped by the table filter", "txn", mysql.TxnID(t), "sql", redact.SQL(ddl))
		}
		if a == apply.Last {
			// Nothing of the last transaction is applied: stop before it,
			// which leaves the target in the same state.
			return apply.Stop
		}
		return apply.Skip
	}
}

// filesSource names the files a replay reads, for logs and /status.
func filesSource(files []string) string {
	switch len(files) {
	case 0:
		return ""
	case 1:
		return files[0]
	}
	return fmt.Sprintf("%s ... %s (%d files)", files[0], files[len(files)-1], len(files))
}

// firstLine is the start of a statement, for a log line.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}
