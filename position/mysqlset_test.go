package position

import "testing"

const u1 = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

func TestMySQLSet(t *testing.T) {
	cases := []struct{ a, b, union, minus string }{
		{u1 + ":1-5", u1 + ":6-9", u1 + ":1-9", u1 + ":1-5"},
		{u1 + ":1-10", u1 + ":3-4:8", u1 + ":1-10", u1 + ":1-2:5-7:9-10"},
		{u1 + ":5,other:1", u1 + ":1-3", u1 + ":1-3:5,other:1", u1 + ":5,other:1"},
		{"", u1 + ":1", u1 + ":1", ""},
	}
	for _, c := range cases {
		a, err1 := ParseMySQLSet(c.a)
		b, err2 := ParseMySQLSet(c.b)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := a.Union(b).String(); got != c.union {
			t.Errorf("%s ∪ %s = %s, want %s", c.a, c.b, got, c.union)
		}
		if got := a.Minus(b).String(); got != c.minus {
			t.Errorf("%s \\ %s = %s, want %s", c.a, c.b, got, c.minus)
		}
	}
}
