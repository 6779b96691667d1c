package sandbox

import (
	"context"
	"testing"
)

func TestStartBinlogAndRestart(t *testing.T) {
	opts := Defaults()
	opts.Binlog = true
	opts.GTIDDomain = 3
	opts.ServerID = 7
	opts.SyncBinlog = 0
	s := MustStart(t, opts)
	db := MustOpen(t, s, "")
	MustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")
	var name, val string
	for q, want := range map[string]string{"log_bin": "ON", "binlog_format": "ROW", "gtid_domain_id": "3", "server_id": "7", "sync_binlog": "0"} {
		if err := db.QueryRow("SHOW GLOBAL VARIABLES LIKE '"+q+"'").Scan(&name, &val); err != nil {
			t.Fatal(err)
		}
		if val != want {
			t.Errorf("%s = %s, want %s", q, val, want)
		}
	}
	files, err := s.BinlogFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("binlog files: %v %v", files, err)
	}
	db.Close()
	s.Kill()
	if s.Running() {
		t.Fatal("still running after Kill")
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	db2 := MustOpen(t, s, "d")
	var n int
	if err := db2.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 1 {
		t.Fatalf("after restart: n=%d err=%v", n, err)
	}
}
