package mysql

import (
	"reflect"
	"testing"

	"github.com/prepl/prepl/txn"
)

// TestPadImages: images of a table the target has more columns of are
// extended with absent columns, present ones kept as they were (all of
// a full image, the given ones of a minimal one); padding twice changes
// nothing; a missing image stays missing.
func TestPadImages(t *testing.T) {
	rc := &txn.RowChange{Kind: txn.Update,
		Before: []txn.Value{int64(1), "a"}, // full: present nil
		After:  []txn.Value{int64(1), nil}, AfterCols: []bool{true, false}}
	padImages(rc, 4)
	if want := []txn.Value{int64(1), "a", nil, nil}; !reflect.DeepEqual(rc.Before, want) {
		t.Errorf("before %v, want %v", rc.Before, want)
	}
	if want := []bool{true, true, false, false}; !reflect.DeepEqual(rc.BeforeCols, want) {
		t.Errorf("before columns %v, want %v", rc.BeforeCols, want)
	}
	if want := []bool{true, false, false, false}; !reflect.DeepEqual(rc.AfterCols, want) {
		t.Errorf("after columns %v, want %v", rc.AfterCols, want)
	}
	before := rc.BeforeCols
	padImages(rc, 4)
	if &rc.BeforeCols[0] != &before[0] {
		t.Error("padding an image of n columns again made a new one")
	}
	ins := &txn.RowChange{Kind: txn.Insert, After: []txn.Value{int64(2)}}
	padImages(ins, 2)
	if ins.Before != nil || ins.BeforeCols != nil || len(ins.After) != 2 || !reflect.DeepEqual(ins.AfterCols, []bool{true, false}) {
		t.Errorf("insert padded to %+v", ins)
	}
}

// TestNamesLead: with names in the binlog, the source's columns must be
// the target's first ones (any case); without names, position decides.
func TestNamesLead(t *testing.T) {
	d := &txn.TableDef{Columns: []txn.ColumnDef{{Name: "id"}, {Name: "v"}, {Name: "extra"}}}
	for _, c := range []struct {
		names []string
		want  bool
	}{
		{nil, true},
		{[]string{"id", "v"}, true},
		{[]string{"ID", "V"}, true},
		{[]string{"id", "extra"}, false}, // the target's extra column is not after the source's
		{[]string{"v", "id"}, false},
	} {
		if got := namesLead(d, c.names); got != c.want {
			t.Errorf("namesLead(%v) = %v, want %v", c.names, got, c.want)
		}
	}
}
