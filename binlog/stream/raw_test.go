package stream

import (
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/prepl/prepl/binlog/fileset"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestRawEventsKept: files and the stream keep, per rows event, its raw
// bytes and its table map's, and the format description per
// transaction; the raw events decode (checksums verified) to the rows
// the transaction holds, and the events of one statement (a trigger's
// rows with the row that fired it) share a statement number.
func TestRawEventsKept(t *testing.T) {
	src := startSource(t, nil)
	db := sandbox.MustOpen(t, src, "")
	sandbox.MustExec(t, db,
		"CREATE DATABASE r",
		"CREATE TABLE r.t (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE r.audit (id INT AUTO_INCREMENT PRIMARY KEY, rid INT)",
		"CREATE TRIGGER r.t_ai AFTER INSERT ON r.t FOR EACH ROW INSERT INTO r.audit (rid) VALUES (NEW.id)",
		"INSERT INTO r.t VALUES (1, 1), (2, 2)",
		"BEGIN", "INSERT INTO r.t VALUES (3, 3)", "UPDATE r.t SET v = 0", "COMMIT",
	)
	sandbox.MustExec(t, db, "FLUSH BINARY LOGS")
	for name, txns := range map[string][]*txn.Txn{"files": readFiles(t, src, fileset.Options{}), "stream": readStream(t, streamConfig(src))} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, tx := range txns {
				if tx.Rows() == 0 {
					continue
				}
				if tx.Format == nil || !tx.Format.Checksum || tx.Format.Flavor != txn.MariaDB {
					t.Fatalf("%s: format %+v, want a MariaDB one with checksums", tx.GTID, tx.Format)
				}
				p := replication.NewBinlogParser()
				p.SetVerifyChecksum(true)
				if _, err := p.Parse(tx.Format.Event); err != nil {
					t.Fatalf("%s: format description: %v", tx.GTID, err)
				}
				var last *txn.RowsEvent
				for _, rc := range rowsOf(tx) {
					re := rc.Event
					if re == nil {
						t.Fatalf("%s: row change of %s without its raw event", tx.GTID, rc.Table.QualifiedName())
					}
					if re == last {
						continue
					}
					last = re
					m, err := p.Parse(re.Map)
					if err != nil {
						t.Fatalf("%s: table map: %v", tx.GTID, err)
					}
					tm := m.Event.(*replication.TableMapEvent)
					ev, err := p.Parse(re.Event)
					if err != nil {
						t.Fatalf("%s: rows event: %v", tx.GTID, err)
					}
					rows := len(ev.Event.(*replication.RowsEvent).Rows)
					if rc.Kind == txn.Update {
						rows /= 2
					}
					if rows != re.Rows {
						t.Fatalf("%s: raw event has %d rows, %d recorded", tx.GTID, rows, re.Rows)
					}
					got = append(got, fmt.Sprintf("%s %s.%s stmt %d rows %d", rc.Kind, tm.Schema, tm.Table, re.Statement, re.Rows))
				}
			}
			// Each row fires the trigger before the next is written: the
			// events of one statement alternate between the tables.
			want := "[insert r.t stmt 0 rows 1 insert r.audit stmt 0 rows 1 insert r.t stmt 0 rows 1 insert r.audit stmt 0 rows 1 " +
				"insert r.t stmt 0 rows 1 insert r.audit stmt 0 rows 1 update r.t stmt 1 rows 3]"
			if fmt.Sprint(got) != want {
				t.Fatalf("raw events\n got %v\nwant %s", got, want)
			}
		})
	}
}
