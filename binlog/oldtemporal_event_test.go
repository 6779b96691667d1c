package binlog

import (
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestOldTemporalEvents reads a MariaDB 10.11 binlog of a table created
// with mysql56_temporal_format=OFF (testdata/binlog/oldtemporal.000001;
// the statements below, after a FLUSH BINARY LOGS):
//
//	CREATE TABLE o.t (id INT PRIMARY KEY, t0 TIME, t3 TIME(3), d2 DATETIME(2),
//	  s1 TIMESTAMP(1) NULL, v VARCHAR(10), s6 TIMESTAMP(6) NULL);
//	SET time_zone='+00:00';
//	INSERT INTO o.t VALUES (1, '-12:34:56', '-00:00:00.001', '0000-00-00 00:00:00.00',
//	  '2001-02-03 04:05:06.7', 'x', '2038-01-19 03:14:07.999999'),
//	  (2, NULL, NULL, NULL, NULL, NULL, NULL), (3, '838:59:59', '838:59:59.999',
//	  '9999-12-31 23:59:59.99', '1970-01-01 00:00:01.9', '', '0000-00-00 00:00:00');
//	UPDATE o.t SET t3 = '01:02:03.004', s1 = NULL WHERE id = 1;
//	DELETE FROM o.t WHERE id = 3;
//
// The reader cannot decode these rows (the fractional digits are in no
// event): each event stands as one row change, Undecoded, until decoded
// again with the target's digits, which gives the values the server
// stored (its SELECT), NULLs included. Digits that do not fit are an
// error, not other values.
func TestOldTemporalEvents(t *testing.T) {
	txns, err := decodeFiles([]string{"testdata/binlog/oldtemporal.000001"})
	if err != nil {
		t.Fatal(err)
	}
	var events []*txn.RowsEvent
	for _, tx := range txns {
		for _, ch := range tx.Changes {
			if rc := ch.Row; rc != nil {
				if rc.Event == nil || rc.Event.Redecode == nil || !rc.Event.Undecoded || rc.Before != nil || rc.After != nil {
					t.Fatalf("row change %+v: want one undecoded change per event, to decode again", rc)
				}
				events = append(events, rc.Event)
			}
		}
	}
	fsp := []int{0, 0, 3, 2, 1, 0, 6}
	T := func(s string) txn.Value { return txn.Temporal(s) }
	want := [][]txn.Value{ // after images of the insert, then the update's before and after, then the delete's before
		{int64(1), T("-12:34:56"), T("-00:00:00.001"), T("0000-00-00 00:00:00.00"), T("2001-02-03 04:05:06.7"), []byte("x"), T("2038-01-19 03:14:07.999999")},
		{int64(2), nil, nil, nil, nil, nil, nil},
		{int64(3), T("838:59:59"), T("838:59:59.999"), T("9999-12-31 23:59:59.99"), T("1970-01-01 00:00:01.9"), []byte{}, T("0000-00-00 00:00:00.000000")},
		{int64(1), T("-12:34:56"), T("-00:00:00.001"), T("0000-00-00 00:00:00.00"), T("2001-02-03 04:05:06.7"), []byte("x"), T("2038-01-19 03:14:07.999999")},
		{int64(1), T("-12:34:56"), T("01:02:03.004"), T("0000-00-00 00:00:00.00"), nil, []byte("x"), T("2038-01-19 03:14:07.999999")},
		{int64(3), T("838:59:59"), T("838:59:59.999"), T("9999-12-31 23:59:59.99"), T("1970-01-01 00:00:01.9"), []byte{}, T("0000-00-00 00:00:00.000000")},
	}
	var got [][]txn.Value
	for _, ev := range events {
		rcs, err := ev.Redecode(fsp)
		if err != nil {
			t.Fatal(err)
		}
		for _, rc := range rcs {
			if rc.Table == nil || rc.Table.Name != "t" || rc.Event == nil || rc.Event.Redecode != nil {
				t.Errorf("decoded change %+v: want table t and its event, decoded", rc)
			}
			for _, img := range [][]txn.Value{rc.Before, rc.After} {
				if img != nil {
					got = append(got, img)
				}
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images:\n got %v\nwant %v", got, want)
	}
	if _, err := events[0].Redecode([]int{0, 0, 2, 2, 1, 0, 6}); err == nil {
		t.Error("decoded with fractional digits the event does not fit")
	}
}
