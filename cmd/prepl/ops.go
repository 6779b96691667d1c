package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prepl/prepl/filter"
	"github.com/prepl/prepl/mysql"
	pbar "github.com/prepl/prepl/progress"
	prun "github.com/prepl/prepl/run"
)

// ops are the flags and state for running prepl as a service: the metrics
// address, table filters and the progress bar. applyFlags embeds them.
type ops struct {
	metricsAddr               string
	webConfig                 string
	include, exclude, rewrite multiFlag
	skipRows                  multiFlag
	progressBar               bool
	applyPreplSchema          bool

	term   *pbar.Terminal // stderr, when it is a terminal
	tables *filter.Filter // from --include, --exclude, --rewrite-schema
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
	fs.Var(&o.skipRows, "skip-rows", "drop row changes of these kinds: [SCHEMA.TABLE:]KIND[,KIND], KIND insert, update or delete\n"+
		"(repeatable; without a pattern, every table), e.g. shop.archive_*:delete for an archive that keeps what the\n"+
		"source deletes. The target then differs from the source on purpose: a later insert of a deleted key fails\n"+
		"with a duplicate key, an update of a row whose insert was dropped finds no row")
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

// setupOps checks the filter flags and makes the table filter.
func (o *ops) setupOps() error {
	t, err := prun.TableFilter(o.include, o.exclude, o.rewrite, o.skipRows, o.applyPreplSchema)
	o.tables = t
	return err
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
