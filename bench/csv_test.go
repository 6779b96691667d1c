package bench

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestCSVRoundTrip(t *testing.T) {
	in := []Result{
		{Cell: Cell{"oltp", "A", MariaDB, SerialMode, 0}, Repeat: 1, Seconds: 12.345, Txns: 20000, Verified: true, ServerCPU: 9.5,
			Counters: Counters{LogFsyncs: 12, BinlogGroupCommits: 7}},
		{Cell: Cell{"update-index", "C", PreplReplicate, "writeset", 16}, Repeat: 3, Seconds: 1.5, Txns: 20000, Verified: true,
			PreplCPU: 0.75, ServerCPU: 1.25},
		{Cell: Cell{"update-index", "D", PreplReplicate, SerialMode, 0}, Repeat: 1, Seconds: 6.5, Txns: 5000, Verified: true,
			Counters: Counters{PoolReads: 25000, PurgeReads: 2200, PurgeMillis: 690}},
		{Cell: Cell{"update-index", "C", Limit, "one stream", 0}, Repeat: 2, Txns: 20000,
			Err: "prepl replay: exit status 1; its output ends:\n\"quoted\", with a comma"},
	}
	var buf bytes.Buffer
	cw, err := newCSVWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		if err := cw.write(r); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitN(buf.String(), "\n", 3)
	if lines[0] != "workload,config,system,mode,threads,repeat,seconds,txns,txn_per_s,verified,prepl_cpu_s,server_cpu_s,error,pool_reads,innodb_fsyncs,binlog_group_commits,purge_reads,purge_ms" {
		t.Errorf("header = %q", lines[0])
	}
	if lines[1] != "oltp,A,mariadb,serial,0,1,12.345,20000,1620.1,true,0.000,9.500,,0,12,7,0,0" {
		t.Errorf("first line = %q", lines[1])
	}
	out, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestReadCSVErrors(t *testing.T) {
	header := strings.Join(csvHeader, ",") + "\n"
	for name, in := range map[string]string{
		"empty":        "",
		"wrong header": "a,b,c\n",
		"bad threads":  header + "oltp,A,mariadb,serial,x,1,1.0,10,10.0,true,0,0,,0,0,0,0,0\n",
		"bad seconds":  header + "oltp,A,mariadb,serial,0,1,fast,10,10.0,true,0,0,,0,0,0,0,0\n",
		"bad bool":     header + "oltp,A,mariadb,serial,0,1,1.0,10,10.0,maybe,0,0,,0,0,0,0,0\n",
		"bad cpu":      header + "oltp,A,mariadb,serial,0,1,1.0,10,10.0,true,0,lots,,0,0,0,0,0\n",
		"short line":   header + "oltp,A,mariadb\n",
		"bad counter":  header + "oltp,A,mariadb,serial,0,1,1.0,10,10.0,true,0,0,,0,x,0,0,0\n",
	} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
