package postgres

import "strings"

// cascadeSQL makes the referential actions of t's foreign key fk (ON
// DELETE/UPDATE CASCADE, SET NULL, SET DEFAULT) fire in prepl's sessions,
// or is "" when fk has none. The source's cascades are not in its binlog
// (InnoDB runs them below the binlog), so the target must run them, as a
// MySQL replica does; but prepl's sessions set session_replication_role =
// replica, under which the triggers that implement them (on the parent,
// the RI_FKey_cascade_* and RI_FKey_set*_ functions) do not fire, unless
// enabled ALWAYS. The checks (on the child, and NO ACTION/RESTRICT on the
// parent) stay off: the source has checked its rows.
func cascadeSQL(t *TableDef, fk ForeignKey, o Options) string {
	if !action(fk.OnDelete) && !action(fk.OnUpdate) {
		return ""
	}
	parent := Table(fk.RefSchema, fk.RefTable, o)
	return `DO $$DECLARE r record; BEGIN
FOR r IN SELECT tg.tgname FROM pg_trigger tg JOIN pg_constraint c ON c.oid = tg.tgconstraint JOIN pg_proc p ON p.oid = tg.tgfoid
WHERE c.conrelid = ` + QuoteString(Table(t.Schema, t.Name, o)) + `::regclass AND c.conname = ` + QuoteString(identName(IndexName(t.Name, fk.Name), o)) + `
AND tg.tgrelid = c.confrelid AND p.proname ~ '^RI_FKey_(cascade|setnull|setdefault)_'
LOOP EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', ` + QuoteString(parent) + `, r.tgname); END LOOP; END$$`
}

func action(a string) bool { return a == "CASCADE" || a == "SET NULL" || a == "SET DEFAULT" }

// identName is the name Ident quotes.
func identName(name string, o Options) string {
	if o.LowercaseNames {
		return strings.ToLower(name)
	}
	return name
}
