package postgres

import "github.com/prepl/prepl/tabledef"

// The source's table definition is package tabledef's, shared with the
// copy and the MySQL backend; these are the names the mapping gives it.
type (
	// TableDef is a source table as CREATE TABLE (or SHOW CREATE TABLE)
	// gives it: ParseCreateTable reads it.
	TableDef   = tabledef.Table
	Column     = tabledef.Column
	Index      = tabledef.Index
	ForeignKey = tabledef.ForeignKey
	// Kind is how a source column is carried to PostgreSQL.
	Kind = tabledef.Kind
)

const (
	KindInt       = tabledef.KindInt
	KindDecimal   = tabledef.KindDecimal
	KindFloat     = tabledef.KindFloat
	KindDouble    = tabledef.KindDouble
	KindBit       = tabledef.KindBit
	KindEnum      = tabledef.KindEnum
	KindSet       = tabledef.KindSet
	KindYear      = tabledef.KindYear
	KindDate      = tabledef.KindDate
	KindDatetime  = tabledef.KindDatetime
	KindTimestamp = tabledef.KindTimestamp
	KindTime      = tabledef.KindTime
	KindText      = tabledef.KindText
	KindBinary    = tabledef.KindBinary
	KindJSON      = tabledef.KindJSON
	KindSpatial   = tabledef.KindSpatial
)

// ErrUnsupported is wrapped by every error for a type, value or
// statement the mapping cannot carry without loss (tabledef.KindOf's
// for a type no kind covers among them).
var ErrUnsupported = tabledef.ErrUnsupported

// KindOf returns how c is carried, or an error naming it.
func KindOf(c *Column) (Kind, error) { return tabledef.KindOf(c) }
