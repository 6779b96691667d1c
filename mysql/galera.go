package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Galera is what Open learned of a MariaDB Galera cluster target: the
// zero value when the target is no cluster node (wsrep_on is OFF, or the
// server has no wsrep).
//
// On a node, prepl's own writes are ordinary InnoDB transactions that the
// cluster certifies and replicates like any client's. Two things differ
// from a single server: a write set has limits (MaxWSRows, MaxWSSize),
// which bound commit units (UnitLimits), and only InnoDB tables are
// replicated, so a change to another engine's table is refused before it
// is applied (RefuseOnGalera). XA transactions need nothing: prepl
// applies an XA transaction's rows at its XA COMMIT as an ordinary
// transaction (xa.go) and never sends XA statements to the target, which
// Galera refuses.
type Galera struct {
	On bool
	// MaxWSRows is wsrep_max_ws_rows (0: no limit), MaxWSSize
	// wsrep_max_ws_size in bytes.
	MaxWSRows, MaxWSSize int64
	// Mode is wsrep_mode (MariaDB 10.6 and later): REPLICATE_MYISAM and
	// REPLICATE_ARIA make the cluster replicate those engines' tables.
	Mode string
}

// readGalera reads the wsrep settings; on a server without them (MySQL)
// it returns the zero Galera.
func readGalera(ctx context.Context, db *sql.DB) (Galera, error) {
	rows, err := db.QueryContext(ctx, `SHOW GLOBAL VARIABLES WHERE Variable_name IN
		('wsrep_on', 'wsrep_max_ws_rows', 'wsrep_max_ws_size', 'wsrep_mode')`)
	if err != nil {
		return Galera{}, fmt.Errorf("read the target's wsrep settings: %w", err)
	}
	defer rows.Close()
	var g Galera
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return Galera{}, err
		}
		switch strings.ToLower(k) {
		case "wsrep_on":
			g.On = strings.EqualFold(v, "ON")
		case "wsrep_max_ws_rows":
			g.MaxWSRows, _ = strconv.ParseInt(v, 10, 64)
		case "wsrep_max_ws_size":
			g.MaxWSSize, _ = strconv.ParseInt(v, 10, 64)
		case "wsrep_mode":
			g.Mode = strings.ToUpper(v)
		}
	}
	if err := rows.Err(); err != nil {
		return Galera{}, err
	}
	if !g.On {
		return Galera{}, nil
	}
	return g, nil
}

// replicates reports whether the cluster replicates changes to tables of
// engine (lower case, as txn.TableDef.Engine).
func (g Galera) replicates(engine string) bool {
	switch engine {
	case "innodb", "":
		return true
	case "myisam":
		return strings.Contains(g.Mode, "REPLICATE_MYISAM")
	case "aria":
		return strings.Contains(g.Mode, "REPLICATE_ARIA")
	}
	return false
}

// ErrGaleraEngine is wrapped when a transaction changes a table that a
// Galera cluster target does not replicate.
var ErrGaleraEngine = fmt.Errorf("the target is a Galera cluster node, which replicates only InnoDB tables: %w", ErrUnsupported)

// refuseOnGalera refuses tx, before anything of it is sent, when it
// changes a table of an engine the cluster does not replicate: applied
// there, its rows would land on the node prepl writes to and on no other,
// and the nodes would differ without an error.
func (t *Target) refuseOnGalera(ctx context.Context, tx *txn.Txn) error {
	if !t.Galera.On {
		return nil
	}
	var bad *txn.TableDef
	err := t.eachTable(ctx, tx, func(d *txn.TableDef) bool {
		if !t.Galera.replicates(d.Engine) {
			bad = d
			return true
		}
		return false
	})
	if err != nil || bad == nil {
		return err
	}
	name := bad.QualifiedName()
	return fmt.Errorf("apply %s: table %s is %s on the target: %w; the other nodes would not get its rows. "+
		"Convert it on the target (ALTER TABLE %s ENGINE=InnoDB), or leave it out of the run with --exclude %s",
		describe(tx), name, strings.ToUpper(bad.Engine), ErrGaleraEngine, name, name)
}

// UnitLimits bounds a commit unit under the cluster's write-set limits:
// at most rows source row changes (0: no bound) and bytes of binlog. The
// write set of a unit holds its rows after compaction (no more than the
// source's) and prepl's position row; the bytes keep half of
// wsrep_max_ws_size for what SQL and the write set's keys add to the
// binlog's row images.
func (t *Target) UnitLimits() (rows, bytes int) {
	if !t.Galera.On {
		return 0, 0
	}
	if r := t.Galera.MaxWSRows; r > 0 {
		rows = int(max(1, r-2)) // the position row, and one to spare
	}
	if s := t.Galera.MaxWSSize; s > 0 {
		bytes = int(min(s/2, 1<<40))
	}
	return rows, bytes
}

// nodeReady fails while the Galera node c is connected to is out of the
// cluster's primary component (wsrep_ready OFF: a partition, a node
// joining): it would refuse every statement with 1047. A worker that
// reconnects after a 1047 so waits, within its reconnect timeout, for the
// node to come back, instead of spending its retries in a few
// milliseconds.
func nodeReady(ctx context.Context, c *sql.Conn) error {
	var k, v string
	if err := c.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'").Scan(&k, &v); err != nil {
		return err
	}
	if !strings.EqualFold(v, "ON") {
		return errors.New("the Galera node is not ready (wsrep_ready is OFF: it is out of the cluster's primary component)")
	}
	return nil
}
