package mysql

import "testing"

func TestFloatDigits(t *testing.T) {
	for _, c := range []struct {
		dataType, colType string
		want              int
	}{
		{"float", "float(30,0)", 30},
		{"double", "double(200,0) unsigned zerofill", 200},
		{"float", "float(7,4)", 3},
		{"float", "float", 0},
		{"double", "double", 0},
		{"float", "float(5,5)", 0},
		{"decimal", "decimal(10,2)", 0},
	} {
		if got := floatDigits(c.dataType, c.colType); got != c.want {
			t.Errorf("floatDigits(%q, %q) = %d, want %d", c.dataType, c.colType, got, c.want)
		}
	}
}
