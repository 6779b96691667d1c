package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// A DDL cannot share a transaction with the position row, so a crash can
// fall between the DDL and the row that records it done. Exactly once then
// rests on one fact: on a target with atomic DDL (MariaDB 10.6+, MySQL
// 8.0) a DDL either took effect whole or not at all. Before it runs,
// prepl stores a digest of the catalog the DDL can change (its "state")
// with the pending mark. After a crash:
//
//   - the catalog still has that state: the DDL did not take effect (or
//     changed nothing, and running it again from the same state does the
//     same): run it;
//   - the catalog differs: it took effect: do not run it again.
//
// The digest holds what only DDL changes (definitions, and InnoDB table
// ids, so that a swap of two tables of the same definition is seen), never
// what rows or statistics change, and of those only the part of the
// catalog the DDL's text names where it tells (ddlpart.go). Where this
// cannot decide, prepl stops and asks (PendingDDLError).

// ddlScope is which part of the catalog a statement can change.
type ddlScope int

const (
	scopeTables   ddlScope = iota // schemas, tables, views, routines, triggers: everything else
	scopeEvents                   // CREATE/ALTER/DROP EVENT
	scopeAccounts                 // users, roles, grants, passwords
)

// scopeOf reads the statement's leading words. Events are kept out of the
// general scope because the event scheduler changes them by itself (a
// finished one-time event is dropped), and accounts because their tables
// need a privilege the rest does not.
func scopeOf(sql string) ddlScope {
	var w []string // the leading words, past DEFINER = 'u'@'h' and the like
	for _, tk := range sqlTokens(sql) {
		if len(w) == 8 {
			break
		}
		if isIdentByte(tk[0]) {
			w = append(w, strings.ToUpper(tk))
		}
	}
	if len(w) == 0 {
		return scopeTables
	}
	switch w[0] {
	case "GRANT", "REVOKE":
		return scopeAccounts
	case "SET":
		return scopeAccounts // SET PASSWORD, SET DEFAULT ROLE
	case "CREATE", "ALTER", "DROP", "RENAME":
		for _, x := range w[1:] {
			switch x {
			case "USER", "ROLE":
				return scopeAccounts
			case "EVENT":
				return scopeEvents
			case "TABLE", "VIEW", "PROCEDURE", "FUNCTION", "TRIGGER", "DATABASE", "SCHEMA", "INDEX", "SEQUENCE":
				return scopeTables
			}
		}
	}
	return scopeTables
}

// userSchemas excludes the server's own schemas and prepl's.
const userSchemas = "NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', '" + PositionSchema + "')"

// stateQueries per scope: each result is digested in order, so each is
// fully ordered.
var stateQueries = map[ddlScope][]string{
	scopeTables: queryTexts(tableStateQueries),
	scopeEvents: {
		`SELECT EVENT_SCHEMA, EVENT_NAME, DEFINER, EVENT_DEFINITION, EVENT_TYPE, EXECUTE_AT, INTERVAL_VALUE, INTERVAL_FIELD,
		STARTS, ENDS, ON_COMPLETION, CREATED, LAST_ALTERED, EVENT_COMMENT FROM information_schema.EVENTS
		WHERE EVENT_SCHEMA ` + userSchemas + ` ORDER BY 1, 2`,
	},
	scopeAccounts: {
		`SELECT * FROM mysql.user ORDER BY User, Host`,
		`SELECT * FROM mysql.db ORDER BY Host, Db, User`,
		`SELECT Host, Db, User, Table_name, Grantor, Table_priv, Column_priv FROM mysql.tables_priv ORDER BY 1, 2, 3, 4`,
		`SELECT Host, Db, User, Table_name, Column_name, Column_priv FROM mysql.columns_priv ORDER BY 1, 2, 3, 4, 5`,
		`SELECT Host, Db, User, Routine_name, Routine_type, Grantor, Proc_priv FROM mysql.procs_priv ORDER BY 1, 2, 3, 4, 5`,
	},
}

// stateQuery is a query of the general scope's digest, and the columns by
// which a part of the catalog (catalogPart) restricts its rows: those
// MariaDB reads a table's schema and name from before it opens the table
// (an information_schema table's lookup fields), so that a restricted
// query opens only the tables of the part.
type stateQuery struct {
	sql    string
	schema string // the schema's column; "" for a query read whole for every part
	// The columns naming the part's tables, triggers and routines in the
	// rows; "" where the rows are not of that kind.
	table, trigger, routine string
}

var tableStateQueries = []stateQuery{
	{sql: `SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA
		WHERE SCHEMA_NAME ` + userSchemas + ` ORDER BY 1`},
	// CREATE_TIME of InnoDB tables follows the .frm file (a rename
	// changes it); of Aria/MyISAM tables it is kept in the table's own
	// header: their identity.
	{sql: `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, ROW_FORMAT, TABLE_COLLATION, CREATE_OPTIONS, TABLE_COMMENT,
		IF(ENGINE = 'InnoDB', NULL, CREATE_TIME) FROM information_schema.TABLES
		WHERE TABLE_SCHEMA ` + userSchemas + ` ORDER BY 1, 2`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_DEFAULT, IS_NULLABLE, COLUMN_TYPE,
		CHARACTER_SET_NAME, COLLATION_NAME, EXTRA, COLUMN_COMMENT, GENERATION_EXPRESSION FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, SUB_PART, INDEX_TYPE, INDEX_COMMENT
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3, 4`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION, COLUMN_NAME, REFERENCED_TABLE_SCHEMA,
		REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
		WHERE CONSTRAINT_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3, 4`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3`,
		schema: "CONSTRAINT_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS
		WHERE CONSTRAINT_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3, 4`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT TABLE_SCHEMA, TABLE_NAME, PARTITION_NAME, SUBPARTITION_NAME, PARTITION_METHOD, SUBPARTITION_METHOD,
		PARTITION_EXPRESSION, PARTITION_DESCRIPTION FROM information_schema.PARTITIONS
		WHERE TABLE_SCHEMA ` + userSchemas + ` AND PARTITION_NAME IS NOT NULL ORDER BY 1, 2, 3, 4`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION, CHECK_OPTION, DEFINER, SECURITY_TYPE
		FROM information_schema.VIEWS WHERE TABLE_SCHEMA ` + userSchemas + ` ORDER BY 1, 2`, schema: "TABLE_SCHEMA", table: "TABLE_NAME"},
	{sql: `SELECT ROUTINE_SCHEMA, ROUTINE_TYPE, ROUTINE_NAME, ROUTINE_DEFINITION, DEFINER, SECURITY_TYPE, SQL_MODE, CREATED,
		LAST_ALTERED, ROUTINE_COMMENT FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3`,
		schema: "ROUTINE_SCHEMA", routine: "ROUTINE_NAME"},
	{sql: `SELECT SPECIFIC_SCHEMA, SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION, PARAMETER_MODE, PARAMETER_NAME, DTD_IDENTIFIER
		FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA ` + userSchemas + ` ORDER BY 1, 2, 3, 4`,
		schema: "SPECIFIC_SCHEMA", routine: "SPECIFIC_NAME"},
	{sql: `SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, EVENT_MANIPULATION, ACTION_TIMING,
		ACTION_ORDER, ACTION_STATEMENT, DEFINER, SQL_MODE, CREATED FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA ` + userSchemas + ` ORDER BY 1, 2`, schema: "EVENT_OBJECT_SCHEMA", table: "EVENT_OBJECT_TABLE", trigger: "TRIGGER_NAME"},
}

func queryTexts(qs []stateQuery) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.sql
	}
	return out
}

// restricted returns q restricted to the part's rows, and false when
// none of its rows can be in the part.
func (q stateQuery) restricted(p catalogPart) (string, bool) {
	if q.schema == "" {
		return q.sql, true
	}
	var or []string
	if len(p.schemas) > 0 {
		or = append(or, q.schema+sqlIn(p.schemas))
	}
	or = appendObjects(or, q.schema, q.table, p.tables)
	or = appendObjects(or, q.schema, q.trigger, p.triggers)
	or = appendObjects(or, q.schema, q.routine, p.routines)
	if len(or) == 0 {
		return "", false
	}
	return strings.Replace(q.sql, "ORDER BY", "AND ("+strings.Join(or, " OR ")+") ORDER BY", 1), true
}

// appendObjects appends to or a condition on the columns schema and name
// for the objects, one per schema.
func appendObjects(or []string, schema, name string, objs []objectName) []string {
	if name == "" {
		return or
	}
	var schemas []string
	names := map[string][]string{}
	for _, o := range objs {
		if names[o.schema] == nil {
			schemas = append(schemas, o.schema)
		}
		names[o.schema] = append(names[o.schema], o.name)
	}
	for _, s := range schemas {
		or = append(or, schema+" = "+sqlLiteral(s)+" AND "+name+sqlIn(names[s]))
	}
	return or
}

// sqlIn returns " = 'a'" or " IN ('a', 'b')": MariaDB looks an
// information_schema table's rows up by an equality only.
func sqlIn(vals []string) string {
	if len(vals) == 1 {
		return " = " + sqlLiteral(vals[0])
	}
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = sqlLiteral(v)
	}
	return " IN (" + strings.Join(q, ", ") + ")"
}

// sqlLiteral quotes a name of a catalogPart (no backslash, partOf) as a
// string in every sql_mode.
func sqlLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// identityQueries name every InnoDB table with its table id, which a
// RENAME keeps and a re-creation changes; the first that the server has
// is used (MariaDB, then MySQL 8). Tables of the server's and of prepl's
// schemas, and the intermediate tables of a running ALTER, are left out.
var identityQueries = []string{
	`SELECT TABLE_ID, NAME FROM information_schema.INNODB_SYS_TABLES WHERE NAME LIKE '%/%' AND NAME NOT LIKE '%#sql%'
	AND SUBSTRING_INDEX(NAME, '/', 1) ` + userSchemas + ` ORDER BY 2`,
	`SELECT TABLE_ID, NAME FROM information_schema.INNODB_TABLES WHERE NAME LIKE '%/%' AND NAME NOT LIKE '%#sql%'
	AND SUBSTRING_INDEX(NAME, '/', 1) ` + userSchemas + ` ORDER BY 2`,
}

// identityFilter returns the condition that restricts identityQueries to
// the part's tables ("" for all), and false when the part has no table.
// InnoDB names a table schema/table (a partition schema/table#P#p), each
// name encoded for the file system but for ASCII letters, digits and '_':
// the part's tables are read whole where one of their names has another
// byte.
func (p catalogPart) identityFilter() (string, bool) {
	if p.whole {
		return "", true
	}
	var or []string
	for _, s := range p.schemas {
		if !plainName(s) {
			return "", true
		}
		or = append(or, "NAME LIKE '"+s+"/%'")
	}
	for _, o := range p.tables {
		if !plainName(o.schema) || !plainName(o.name) {
			return "", true
		}
		n := o.schema + "/" + o.name
		or = append(or, "NAME = '"+n+"' OR NAME LIKE '"+n+"#%'")
	}
	if len(or) == 0 {
		return "", false
	}
	return "AND (" + strings.Join(or, " OR ") + ") ", true
}

// ddlState returns the digest of the catalog that stmt, run with db as
// its default database, can change: of the part of the catalog its text
// names (partOf, ddlpart.go), or of every user schema when whole or when
// the text does not tell. A part's state begins with partMark, so that a
// stored state is read again the way it was made (rerunDDL); the whole
// catalog's state is the one earlier versions stored.
func ddlState(ctx context.Context, c *sql.Conn, stmt, db string, whole bool) (string, error) {
	scope := scopeOf(stmt)
	part := wholeCatalog
	if scope == scopeTables && !whole {
		part = partOf(stmt, db)
	}
	h := sha256.New()
	fmt.Fprintf(h, "scope %d\n", scope)
	queries := stateQueries[scope]
	if !part.whole {
		fmt.Fprintf(h, "part %s\n", part)
		queries = nil
		for _, q := range tableStateQueries {
			if r, ok := q.restricted(part); ok {
				queries = append(queries, r)
			}
		}
	}
	for _, q := range queries {
		err := digest(ctx, c, h, q)
		if code := ErrorCode(err); unreadableSystemTable(code) {
			fmt.Fprintf(h, "query %q: error %d\n", q, code)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("read the target's catalog before a DDL: %w", err)
		}
	}
	ids := true
	if filter, ok := part.identityFilter(); ok && scope == scopeTables {
		ids = false
		for _, q := range identityQueries {
			if digest(ctx, c, h, strings.Replace(q, "ORDER BY", filter+"ORDER BY", 1)) == nil {
				ids = true
				break
			}
		}
	}
	state := hex.EncodeToString(h.Sum(nil)[:16])
	if !part.whole {
		state = partMark + state
	}
	if !ids {
		state += noTableIDs
	}
	return state, nil
}

// partMark begins the state of a part of the catalog.
const partMark = "part-"

// unreadableSystemTable reports the errors of a catalog query whose
// system table (mysql.proc under information_schema.ROUTINES, mysql.event,
// the grant tables) the stream itself has renamed away or changed, as
// MariaDB's own tests do: 1146 (no such table), 1547 and 1805 (column
// count wrong), 1548 and 1728 (cannot load). The error is part of the
// catalog's state, as lasting as the rows it hides: the DDL that brings
// the table back changes it.
func unreadableSystemTable(code uint16) bool {
	switch code {
	case 1146, 1547, 1548, 1728, 1805:
		return true
	}
	return false
}

// noTableIDs marks a state read without InnoDB table ids (they need the
// PROCESS privilege): it cannot tell a swap of two tables of the same
// definition from no swap at all.
const noTableIDs = "-noids"

// swapsTables reports whether a DDL may exchange tables, which only table
// ids tell apart: RENAME TABLE, ALTER TABLE ... EXCHANGE PARTITION.
func swapsTables(stmt string) bool {
	toks := sqlTokens(stmt)
	for i, tk := range toks {
		if i == 0 && strings.EqualFold(tk, "RENAME") || strings.EqualFold(tk, "EXCHANGE") || strings.EqualFold(tk, "RENAME") && i+1 < len(toks) && strings.EqualFold(toks[i+1], "TO") {
			return true
		}
	}
	return false
}

type writer interface{ Write([]byte) (int, error) }

func digest(ctx context.Context, c *sql.Conn, h writer, q string) error {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	fmt.Fprintf(h, "query %q\n", q)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for _, v := range vals {
			if v == nil {
				h.Write([]byte("N;"))
				continue
			}
			fmt.Fprintf(h, "%d:%s;", len(v), v)
		}
		h.Write([]byte{'\n'})
	}
	return rows.Err()
}

// atomicDDL reports whether the target's DDL takes effect whole or not at
// all across a crash: MariaDB 10.6 and later, MySQL 8.0 and later.
func atomicDDL(version string, mariadb bool) bool {
	major, minor := versionNumbers(version)
	if mariadb {
		return major > 10 || major == 10 && minor >= 6
	}
	return major >= 8
}

func versionNumbers(v string) (major, minor int) {
	p := strings.SplitN(v, ".", 3)
	if len(p) < 2 {
		return 0, 0
	}
	major, _ = strconv.Atoi(p[0])
	digits := strings.TrimRightFunc(p[1], func(r rune) bool { return r < '0' || r > '9' })
	minor, _ = strconv.Atoi(digits)
	return major, minor
}
