package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/txn"
)

// serverCatalog gives prepl analyze the table definitions of a server
// (unique keys, foreign keys, triggers, collations: what the binlog does
// not carry). A table the server lacks, or defines with another number of
// columns than the binlog's table map, is left to the binlog's metadata.
type serverCatalog struct {
	name    string
	db      *sql.DB
	cat     *mysql.Catalog
	checked map[*txn.Table]bool
	defs    map[string]*txn.TableDef // usable definitions by schema.table
	missing []string
	errs    []string
}

var _ txn.Catalog = (*serverCatalog)(nil)

func openServerCatalog(ctx context.Context, raw string) (*serverCatalog, error) {
	e, err := mysql.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: --catalog: %v", errUsage, err)
	}
	db, err := e.OpenDB()
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog server %s: %w (give --catalog binlog to use the binlog's own metadata)", e, err)
	}
	return &serverCatalog{name: e.String(), db: db, cat: mysql.NewCatalog(db),
		checked: map[*txn.Table]bool{}, defs: map[string]*txn.TableDef{}}, nil
}

func (c *serverCatalog) Close() error { return c.db.Close() }

// prepare loads the definitions of the tables tx changes, once per table
// shape seen in the binlog.
func (c *serverCatalog) prepare(ctx context.Context, tx *txn.Txn) {
	for _, ch := range tx.Changes {
		if ch.Row == nil || ch.Row.Table == nil || c.checked[ch.Row.Table] {
			continue
		}
		t := ch.Row.Table
		c.checked[t] = true
		key := t.Schema + "." + t.Name
		d, err := c.cat.Load(ctx, t.Schema, t.Name)
		switch {
		case errors.Is(err, mysql.ErrNoTable):
			c.missing = append(c.missing, key)
			delete(c.defs, key)
		case err != nil:
			if len(c.errs) < 10 {
				c.errs = append(c.errs, err.Error())
			}
			delete(c.defs, key)
		case len(d.Columns) != len(t.Types):
			c.errs = append(c.errs, fmt.Sprintf("%s has %d columns on %s but %d in the binlog: its definition there is not used", key, len(d.Columns), c.name, len(t.Types)))
			delete(c.defs, key)
		default:
			c.defs[key] = d
		}
	}
}

// Table implements txn.Catalog.
func (c *serverCatalog) Table(schema, name string) (*txn.TableDef, bool) {
	d, ok := c.defs[schema+"."+name]
	return d, ok
}

func (c *serverCatalog) warnings() []string {
	var out []string
	if n := len(c.missing); n > 0 {
		out = append(out, fmt.Sprintf("catalog %s lacks %d table(s) of the binlog (e.g. %s): their definitions come from the binlog's metadata", c.name, n, c.missing[0]))
	}
	for _, e := range c.errs {
		out = append(out, "catalog: "+e)
	}
	return out
}
