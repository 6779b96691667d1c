package mysql

import (
	"context"
	"database/sql"
	"regexp"
	"strings"
)

// Grants are the privileges of the connected user, from SHOW GRANTS.
// Grants held through roles are not resolved: Unknown is then true, and a
// check should not claim a privilege is missing.
type Grants struct {
	global  map[string]bool
	schema  map[string]map[string]bool // schema (lower case) -> privileges
	Unknown bool
}

var grantLine = regexp.MustCompile("(?is)^GRANT (.+?) ON (?:(?:TABLE|FUNCTION|PROCEDURE|PACKAGE|PACKAGE BODY) )?(\\S+) TO ")

// ReadGrants reads SHOW GRANTS FOR CURRENT_USER(). The lines hold the
// password hash: they are parsed here and never shown.
func ReadGrants(ctx context.Context, db *sql.DB) (Grants, error) {
	g := Grants{global: map[string]bool{}, schema: map[string]map[string]bool{}}
	rows, err := db.QueryContext(ctx, "SHOW GRANTS FOR CURRENT_USER()")
	if err != nil {
		return g, err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return g, err
		}
		g.add(line)
	}
	return g, rows.Err()
}

func (g *Grants) add(line string) {
	m := grantLine.FindStringSubmatch(line)
	if m == nil {
		if strings.HasPrefix(strings.ToUpper(line), "GRANT ") {
			g.Unknown = true // a role granted
		}
		return
	}
	set := g.global
	if obj := m[2]; obj != "*.*" {
		db, _, _ := strings.Cut(obj, ".")
		db = strings.ToLower(strings.Trim(db, "`\""))
		if g.schema[db] == nil {
			g.schema[db] = map[string]bool{}
		}
		set = g.schema[db]
	}
	for _, p := range strings.Split(m[1], ",") {
		p = strings.ToUpper(strings.Join(strings.Fields(p), " "))
		if i := strings.IndexByte(p, '('); i >= 0 { // column privileges
			p = strings.TrimSpace(p[:i])
		}
		if p == "ALL" {
			p = "ALL PRIVILEGES"
		}
		set[p] = true
	}
}

// Has tells whether priv is held on schema ("" for a global privilege),
// directly or through ALL PRIVILEGES or, for the privileges MariaDB split
// out of it (10.5), SUPER.
func (g Grants) Has(priv, schema string) bool {
	priv = strings.ToUpper(priv)
	holds := func(set map[string]bool) bool {
		return set[priv] || set["ALL PRIVILEGES"]
	}
	if holds(g.global) {
		return true
	}
	switch priv {
	case "BINLOG REPLAY", "BINLOG ADMIN", "CONNECTION ADMIN", "REPLICATION CLIENT", "BINLOG MONITOR":
		if g.global["SUPER"] {
			return true
		}
	}
	if priv == "REPLICATION CLIENT" && g.global["BINLOG MONITOR"] || priv == "BINLOG MONITOR" && g.global["REPLICATION CLIENT"] {
		return true
	}
	return schema != "" && holds(g.schema[strings.ToLower(schema)])
}
