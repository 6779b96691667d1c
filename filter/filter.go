// Package filter selects and renames what a stream applies: --include and
// --exclude on schema.table patterns and --rewrite-schema src=dst. It works
// on a transaction before the engine sees it, so row changes, DDL and the
// dependency keys (computed from the rewritten table names) agree.
//
// Patterns match the source's names, before any rewrite. A table is applied
// when it matches an include pattern (or there are none) and no exclude
// pattern. Names compare case-sensitively, as on a Linux server with
// lower_case_table_names=0.
package filter

import (
	"fmt"
	"path"
	"strings"

	"github.com/prepl/prepl/txn"
)

// Filter decides and rewrites transactions. It keeps a cache and is not
// safe for concurrent use: the engine calls it from one goroutine.
type Filter struct {
	include, exclude []pattern
	rewrite          map[string]string
	// renamed caches the rewritten copy of each source table: a *txn.Table
	// is shared by every transaction that uses the table map, so it is
	// copied rather than changed.
	renamed map[*txn.Table]*txn.Table
	// used marks the include patterns that matched a table asked about;
	// unused counts the others.
	used   []bool
	unused int
	// skips are --skip-rows: row changes of these kinds to the matching
	// tables are dropped (an archive that keeps what the source deletes).
	skips []skipRule
}

// skipRule drops the row changes of kinds to the tables of pattern.
type skipRule struct {
	pattern
	kinds [txn.Delete + 1]bool
}

// maxRenamed bounds the cache of rewritten tables (table ids are never
// reused, so a long run would otherwise keep every version).
const maxRenamed = 10000

type pattern struct {
	schema, table glob
	text          string
}

// glob is one part of a pattern. Most parts are "*" or a plain name, and
// the filter asks about every row change, so those two compare directly;
// the rest go to path.Match. path.Match keeps '/' out of a wildcard's
// reach, but a MySQL name may hold one ("shop"."a/b" is a table of
// shop.*): both sides are matched with '/' replaced by NUL, which no
// MySQL identifier holds.
type glob struct {
	expr         string
	any, literal bool
}

func compileGlob(s string) glob {
	if !strings.ContainsAny(s, `*?[\`) {
		return glob{expr: s, literal: true}
	}
	return glob{expr: noSlash(s), any: s == "*"}
}

func (g glob) match(name string) bool {
	switch {
	case g.any:
		return true
	case g.literal:
		return g.expr == name
	}
	ok, _ := path.Match(g.expr, noSlash(name))
	return ok
}

func noSlash(s string) string {
	if strings.IndexByte(s, '/') < 0 {
		return s
	}
	return strings.ReplaceAll(s, "/", "\x00")
}

// New parses include and exclude patterns ("shop.orders", "shop.*",
// "*.audit_?", "logs_[0-9]*.*") and rewrites ("src=dst").
func New(include, exclude, rewrite []string) (*Filter, error) {
	f := &Filter{rewrite: map[string]string{}, renamed: map[*txn.Table]*txn.Table{}}
	var err error
	if f.include, err = parsePatterns("--include", include); err != nil {
		return nil, err
	}
	if f.exclude, err = parsePatterns("--exclude", exclude); err != nil {
		return nil, err
	}
	f.used, f.unused = make([]bool, len(f.include)), len(f.include)
	for _, r := range rewrite {
		src, dst, ok := strings.Cut(r, "=")
		src, dst = strings.TrimSpace(src), strings.TrimSpace(dst)
		if !ok || src == "" || dst == "" {
			return nil, fmt.Errorf("--rewrite-schema %q: want SOURCE_SCHEMA=TARGET_SCHEMA", r)
		}
		if strings.ContainsAny(src+dst, "`.*?[") {
			return nil, fmt.Errorf("--rewrite-schema %q: give plain schema names, no quotes, dots or patterns", r)
		}
		if old, dup := f.rewrite[src]; dup && old != dst {
			return nil, fmt.Errorf("--rewrite-schema: %s is rewritten twice (to %s and %s)", src, old, dst)
		}
		f.rewrite[src] = dst
	}
	return f, nil
}

func parsePatterns(flag string, in []string) ([]pattern, error) {
	var out []pattern
	for _, p := range in {
		s, t, ok := strings.Cut(strings.TrimSpace(p), ".")
		if !ok || s == "" || t == "" {
			return nil, fmt.Errorf("%s %q: want SCHEMA.TABLE, with * ? [..] globs (e.g. shop.* for a whole schema)", flag, p)
		}
		for _, part := range []string{s, t} {
			if _, err := path.Match(part, ""); err != nil {
				return nil, fmt.Errorf("%s %q: bad pattern: %v", flag, p, err)
			}
		}
		out = append(out, pattern{schema: compileGlob(s), table: compileGlob(t), text: p})
	}
	return out, nil
}

// RenameIn is sql with the schemas of its qualified names rewritten
// (--rewrite-schema): a copy's SHOW CREATE TABLE, whose foreign keys name
// the schema of a table in another one.
func (f *Filter) RenameIn(sql string) string {
	if len(f.rewrite) == 0 {
		return sql
	}
	return rewriteQualified(sql, f.rewrite)
}

// SkipRows adds --skip-rows rules: "[SCHEMA.TABLE:]KIND[,KIND...]", KIND
// insert, update or delete; without a pattern, every table. A row change
// of a skipped kind is dropped before anything else sees it (dependency
// keys, compaction), as a change to an excluded table is; a transaction
// left with no rows is skipped, the position moving past it.
func (f *Filter) SkipRows(rules []string) error {
	for _, r := range rules {
		pat, kinds := "*.*", r
		if i := strings.LastIndexByte(r, ':'); i >= 0 {
			pat, kinds = r[:i], r[i+1:]
		}
		ps, err := parsePatterns("--skip-rows", []string{pat})
		if err != nil {
			return err
		}
		rule := skipRule{pattern: ps[0]}
		for _, k := range strings.Split(kinds, ",") {
			switch strings.ToLower(strings.TrimSpace(k)) {
			case "insert":
				rule.kinds[txn.Insert] = true
			case "update":
				rule.kinds[txn.Update] = true
			case "delete":
				rule.kinds[txn.Delete] = true
			default:
				return fmt.Errorf("--skip-rows %q: %q is not a row change kind: want insert, update or delete, after an optional SCHEMA.TABLE: pattern (shop.archive_*:delete)", r, k)
			}
		}
		f.skips = append(f.skips, rule)
	}
	return nil
}

// skipped reports whether a --skip-rows rule drops a change of kind k
// to the source table schema.table.
func (f *Filter) skipped(schema, table string, k txn.Kind) bool {
	for _, r := range f.skips {
		if int(k) < len(r.kinds) && r.kinds[k] && r.match(schema, table) {
			return true
		}
	}
	return false
}

// Empty reports whether the filter lets everything through unchanged.
func (f *Filter) Empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0 && len(f.rewrite) == 0 && len(f.skips) == 0
}

func (p pattern) match(schema, table string) bool {
	return p.schema.match(schema) && p.table.match(table)
}

// Table reports whether the source table schema.table is applied.
func (f *Filter) Table(schema, table string) bool {
	if len(f.include) > 0 {
		in := false
		for i, p := range f.include {
			if p.match(schema, table) {
				in = true
				f.markUsed(i, schema, table)
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, p := range f.exclude {
		if p.match(schema, table) {
			return false
		}
	}
	return true
}

// markUsed marks include pattern i, which matched schema.table, and any
// later one not marked yet that matches it too (overlapping patterns).
func (f *Filter) markUsed(i int, schema, table string) {
	if f.unused == 0 {
		return
	}
	for j := i; j < len(f.include); j++ {
		if !f.used[j] && f.include[j].match(schema, table) {
			f.used[j] = true
			f.unused--
		}
	}
}

// Unmatched lists the include patterns that no table asked about
// (Table) has matched: after a replay, a pattern with a typo in it, which
// applied nothing.
func (f *Filter) Unmatched() []string {
	var out []string
	for i, p := range f.include {
		if !f.used[i] {
			out = append(out, p.text)
		}
	}
	return out
}

// Schema reports whether some table of the source schema may be applied:
// an include pattern's schema part matches it (or there are none), and no
// exclude pattern takes the whole schema (its table part is "*").
func (f *Filter) Schema(schema string) bool {
	if len(f.include) > 0 {
		in := false
		for _, p := range f.include {
			if p.schema.match(schema) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	for _, p := range f.exclude {
		if p.schema.match(schema) && p.table.any {
			return false
		}
	}
	return true
}

// Rename returns the target name of a source schema.
func (f *Filter) Rename(schema string) string {
	if dst, ok := f.rewrite[schema]; ok {
		return dst
	}
	return schema
}

// Apply filters and rewrites t in place and reports whether anything is
// left to apply. A transaction with nothing left should be skipped (its
// position still counts as applied).
//
// Row changes of tables not applied are dropped, the others get the
// target's schema name. Statements inside a row transaction are kept and
// rewritten, but a transaction whose row changes were all dropped is left
// with nothing. A DDL is kept or dropped as a whole by the tables it
// changes (see DDL).
func (f *Filter) Apply(t *txn.Txn) bool {
	if f.Empty() {
		return true
	}
	changes := t.Changes
	if t.IsDDL() {
		st := t.Changes[0].Stmt
		sql, keep := f.DDL(st.SQL, st.Schema)
		if !keep {
			return false
		}
		st.SQL, st.Schema = sql, f.Rename(st.Schema)
		// The rows of a CREATE TABLE ... SELECT follow below, by their table.
		changes = t.Changes[1:]
	}
	kept := t.Changes[:len(t.Changes)-len(changes)]
	hadRows, rows := false, 0
	for _, ch := range changes {
		switch {
		case ch.Row != nil:
			hadRows = true
			tb := ch.Row.Table
			if !f.Table(tb.Schema, tb.Name) || len(f.skips) > 0 && f.skipped(tb.Schema, tb.Name, ch.Row.Kind) {
				continue
			}
			ch.Row.Table = f.table(tb)
			rows++
		case ch.Stmt != nil:
			ch.Stmt.SQL = rewriteQualified(ch.Stmt.SQL, f.rewrite)
			ch.Stmt.Schema = f.Rename(ch.Stmt.Schema)
		}
		kept = append(kept, ch)
	}
	clear(t.Changes[len(kept):])
	t.Changes = kept
	return t.IsDDL() || !hadRows || rows > 0
}

// table returns tb under its target schema name.
func (f *Filter) table(tb *txn.Table) *txn.Table {
	dst, ok := f.rewrite[tb.Schema]
	if !ok {
		return tb
	}
	if c := f.renamed[tb]; c != nil {
		return c
	}
	if len(f.renamed) >= maxRenamed {
		clear(f.renamed)
	}
	c := *tb
	c.Schema = dst
	f.renamed[tb] = &c
	return &c
}
