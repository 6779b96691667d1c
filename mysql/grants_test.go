package mysql

import "testing"

func TestGrants(t *testing.T) {
	var g Grants
	g = Grants{global: map[string]bool{}, schema: map[string]map[string]bool{}}
	for _, l := range []string{
		"GRANT PROCESS, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`%` IDENTIFIED BY PASSWORD '*6C8989366EAF75BB670AD8EA7A7FC1176A95CEF4'",
		"GRANT ALL PRIVILEGES ON `prepl`.* TO `repl`@`%`",
		"GRANT SELECT (a, b), INSERT ON `shop`.`t` TO `repl`@`%`",
	} {
		g.add(l)
	}
	for _, c := range []struct {
		priv, schema string
		want         bool
	}{
		{"PROCESS", "", true}, {"REPLICATION SLAVE", "", true}, {"REPLICATION CLIENT", "", true},
		{"SUPER", "", false}, {"BINLOG REPLAY", "", false}, {"SELECT", "", false},
		{"CREATE", "prepl", true}, {"CREATE", "PREPL", true}, {"CREATE", "shop", false},
		{"SELECT", "shop", true}, {"INSERT", "shop", true},
	} {
		if got := g.Has(c.priv, c.schema); got != c.want {
			t.Errorf("Has(%s, %q) = %v", c.priv, c.schema, got)
		}
	}
	g.add("GRANT SUPER ON *.* TO x")
	if !g.Has("BINLOG REPLAY", "") || !g.Has("CONNECTION ADMIN", "") || g.Unknown {
		t.Error("SUPER covers what MariaDB split from it")
	}
	g.add("GRANT `app_role` TO `x`@`%`")
	if !g.Unknown {
		t.Error("a role makes the grants unknown")
	}
}
