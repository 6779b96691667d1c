package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/sandbox"
	"github.com/prepl/prepl/txn"
)

// TestPositionSourceTimeAfterDDL stores the position after a DDL that ran
// in a source session with time zone +03:00 and timestamp 1234 (MariaDB's
// main.type_timestamp): the source's time is kept exactly, though in that
// session it reads as a time before the epoch.
func TestPositionSourceTimeAfterDDL(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	sandbox.MustExec(t, sandbox.MustOpen(t, s, ""), "CREATE DATABASE d")
	tgt := openTarget(t, s, s.URL())
	for i, unix := range []int64{1234, 1, 2147483647, 4294967295} {
		ts := time.Unix(unix, 0)
		st := &txn.Statement{SQL: "CREATE TABLE t" + string(rune('0'+i)) + " (id INT PRIMARY KEY)", Schema: "d",
			TimeZone: "+03:00", UnixMicro: unix * 1e6, ForeignKeyChecks: true, UniqueChecks: true}
		tx := &txn.Txn{GTID: "0-1-" + string(rune('1'+i)), Domain: 0, ServerID: 1, SeqNo: uint64(i + 1), Timestamp: ts,
			Changes: []txn.Change{{Stmt: st}}}
		after := position.Checkpoint{GTIDPos: tx.GTID, LastGTID: tx.GTID, File: "binlog.000001", Pos: uint32(1000 + i), SourceTS: ts}
		if _, err := tgt.ApplyDDL(ctx, tx, position.Checkpoint{}, after, ""); err != nil {
			t.Fatalf("DDL at %d: %v", unix, err)
		}
		ps, err := tgt.Positions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := ps[""].SourceTS; !got.Equal(ts) {
			t.Errorf("DDL at %d: stored source time %s, want %s", unix, got.UTC(), ts.UTC())
		}
	}
}

// TestPositionTableUpgradesSourceTime opens a target whose position table
// an older prepl made, with source_ts a TIMESTAMP: it becomes a DATETIME
// in UTC, and the time stored keeps its instant.
func TestPositionTableUpgradesSourceTime(t *testing.T) {
	ctx := context.Background()
	s := sandbox.MustStart(t, sandbox.Defaults())
	db := sandbox.MustOpen(t, s, "")
	sandbox.MustExec(t, db, "CREATE DATABASE prepl", `CREATE TABLE prepl.position (
			channel VARCHAR(64) NOT NULL,
			slot VARCHAR(128) NOT NULL,
			gtid_pos TEXT NOT NULL,
			file VARCHAR(512) NOT NULL,
			pos BIGINT UNSIGNED NOT NULL,
			last_gtid VARCHAR(128) NOT NULL,
			source_ts TIMESTAMP(6) NULL,
			pending_ddl VARCHAR(128) NOT NULL DEFAULT '',
			pending_state VARCHAR(64) NOT NULL DEFAULT '',
			applied BIGINT UNSIGNED NOT NULL DEFAULT 0,
			floor_gtid TEXT NOT NULL,
			floor_file VARCHAR(512) NOT NULL DEFAULT '',
			floor_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
			updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
			PRIMARY KEY (channel, slot))`,
		`INSERT INTO prepl.position (channel, slot, gtid_pos, file, pos, last_gtid, source_ts, floor_gtid)
			VALUES ('test', '', '0-1-7', 'binlog.000001', 400, '0-1-7', FROM_UNIXTIME(1700000000.25), '')`)
	tgt := openTarget(t, s, s.URL())
	var typ string
	if err := db.QueryRow(`SELECT DATA_TYPE FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = 'prepl' AND TABLE_NAME = 'position' AND COLUMN_NAME = 'source_ts'`).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if typ != "datetime" {
		t.Errorf("source_ts is a %s after Open, want datetime", typ)
	}
	ps, err := tgt.Positions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1700000000, 250000000); !ps[""].SourceTS.Equal(want) {
		t.Errorf("stored source time %s after the upgrade, want %s", ps[""].SourceTS.UTC(), want.UTC())
	}
}
