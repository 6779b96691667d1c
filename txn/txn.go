// Package txn is prepl's transaction model: what the binlog reader produces
// and every later stage (dependency tracking, scheduling, apply, analysis)
// consumes. It imports nothing of prepl's.
package txn

import (
	"fmt"
	"time"
)

// Flavor is the kind of source that wrote the binlog.
type Flavor string

const (
	MariaDB Flavor = "mariadb"
	MySQL   Flavor = "mysql"
)

// MariaDB GTID event flags (sql/log_event.h), kept as the source wrote them.
const (
	FlagStandalone    uint8 = 1
	FlagGroupCommitID uint8 = 2
	FlagTransactional uint8 = 4
	FlagAllowParallel uint8 = 8
	FlagWaited        uint8 = 16
	FlagDDL           uint8 = 32
)

// Position is where the reader stands after a transaction: the binlog file
// and the offset just past its last event. For a live stream File is the
// source's binlog file name as reported by rotate events.
type Position struct {
	File   string
	Offset uint32
}

func (p Position) String() string { return fmt.Sprintf("%s:%d", p.File, p.Offset) }

// Txn is one source transaction, complete: the reader emits a Txn only when
// it has seen its commit (XID or COMMIT), so a Txn is never partial.
//
// Invariant: Seq is strictly increasing along one stream, starting at 1.
type Txn struct {
	Seq uint64 // assigned by the reader, 1-based, stream order

	// GTID in the source's own text form: MariaDB "domain-server-seq",
	// MySQL "uuid:gno". Empty when the source does not use GTIDs.
	GTID     string
	Domain   uint32 // MariaDB GTID domain id (0 for MySQL)
	ServerID uint32 // server_id of the event header
	SeqNo    uint64 // MariaDB GTID seq_no / MySQL GNO

	// Source parallelism tags.
	CommitID       uint64 // MariaDB group commit id; 0 when absent
	Flags          uint8  // MariaDB GTID flags (FlagXxx)
	LastCommitted  int64  // MySQL logical clock; -1 when absent
	SequenceNumber int64  // MySQL logical clock; -1 when absent

	Timestamp time.Time // source commit time (header timestamp of the commit event)
	Start     Position  // position of the transaction's first event (its GTID event)
	End       Position  // position just past its commit event
	Size      int       // bytes of all events of the transaction
	// Inflated is the bytes of MariaDB compressed column values inflated
	// from its events: held in memory besides them (Footprint).
	Inflated int64

	// Changes in source order: row changes and statements interleaved as
	// they were written. A DDL transaction has exactly one Statement change.
	Changes []Change

	// Format is the source's Format_description event in force for the
	// transaction's events (nil when the reader did not keep raw events).
	Format *Format

	// XA is set when the transaction was prepared with XA on the source.
	XA bool
	// NonTransactional is set when the source flagged it so (MariaDB GTID
	// without FlagTransactional, e.g. MyISAM changes).
	NonTransactional bool

	// KeysMemo belongs to package depend: the transaction's dependency
	// keys once computed, with what they were computed from (depend's
	// memo.go). Nil until asked; nothing else reads or sets it.
	KeysMemo any
}

// IsDDL reports whether the transaction is a DDL transaction: one DDL
// statement, or a DDL followed by the rows it wrote (CREATE TABLE ...
// SELECT, which MariaDB and MySQL 8 log as the CREATE TABLE and the
// selected rows in one transaction). Its DDL is Changes[0].Stmt.
// ID names the transaction stably across runs: its GTID, else its
// starting file:offset.
func (t *Txn) ID() string {
	if t.GTID != "" {
		return t.GTID
	}
	return t.Start.String()
}

func (t *Txn) IsDDL() bool {
	return len(t.Changes) > 0 && t.Changes[0].Stmt != nil && t.Changes[0].Stmt.DDL
}

// Rows counts the row changes of the transaction.
func (t *Txn) Rows() int {
	n := 0
	for _, c := range t.Changes {
		if c.Row != nil {
			n++
		}
	}
	return n
}

// Footprint estimates the bytes the transaction holds in memory once
// decoded: its events, which it keeps (RowsEvent; string values are
// slices of them) and the values inflated from them, and per row change the structures of its images, two
// words and a boxed value per column. It bounds read-ahead queues by
// bytes; it walks the changes, not the values.
func (t *Txn) Footprint() int64 {
	n := int64(t.Size) + t.Inflated + 256
	for _, c := range t.Changes {
		n += 16
		if r := c.Row; r != nil {
			n += 128 + 40*int64(len(r.Before)+len(r.After))
		} else if c.Stmt != nil {
			n += 192 + int64(len(c.Stmt.SQL))
		}
	}
	return n
}

// Change is one row change or one statement; exactly one field is non-nil.
type Change struct {
	Row  *RowChange
	Stmt *Statement
}

// Kind of row change.
type Kind uint8

const (
	Insert Kind = iota + 1
	Update
	Delete
)

func (k Kind) String() string {
	switch k {
	case Insert:
		return "insert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Rows event flags (MySQL/MariaDB Rows_log_event::enum_flag).
const (
	RowsFlagNoForeignKeyChecks uint16 = 1 << 1
	RowsFlagRelaxedUniqueCheck uint16 = 1 << 2
	RowsFlagCompleteRows       uint16 = 1 << 3
)

// RowChange is one row of a rows event.
//
// Before is set for Update and Delete, After for Update and Insert. Both
// have one slot per table column; a column absent from the event's bitmap
// (binlog_row_image MINIMAL/NOBLOB) is marked false in BeforeCols/AfterCols
// and its slot is nil. A present NULL is nil with the bitmap bit true.
type RowChange struct {
	Kind       Kind
	Table      *Table
	Before     []Value
	After      []Value
	BeforeCols []bool
	AfterCols  []bool
	Flags      uint16 // RowsFlagXxx of the rows event
	// Event is the rows event the change came from, as the binlog carried
	// it; the changes of one event share it. nil when not kept.
	Event *RowsEvent
	// BeforeImage and AfterImage are Before and After as Event carries
	// them (null bitmap and values, slices of Event.Event, under the
	// column bitmaps BeforeCols and AfterCols and Event.Map's types), so
	// that a target can build rows events of them. nil when the reader
	// did not keep them, and set to nil by whatever changes Before or
	// After after decoding.
	BeforeImage, AfterImage []byte
}

// Format is a source's Format_description event as the binlog carried it
// (the in-use flag cleared). A target that applies raw events with the
// server's BINLOG statement sends it first, as mariadb-binlog does.
type Format struct {
	Event    []byte
	Flavor   Flavor
	Checksum bool // every event ends with a CRC32 of the rest
}

// RowsEvent is one rows event of a transaction, raw, with the Table_map
// event of its table. Both are shared, never changed: a target that must
// change them (a rewritten schema, a moved statement end) re-encodes a
// copy.
type RowsEvent struct {
	Map   []byte // the Table_map event of the event's table
	Event []byte // the rows event
	// Statement numbers the source statements of the transaction: the
	// rows events of one statement (one set of table maps, the last one
	// flagged STMT_END) share it.
	Statement int
	Rows      int // row changes the event produced
	// Redecode is set on a rows event of a MariaDB table with columns in
	// the pre-10.1 temporal format (TIME, DATETIME, TIMESTAMP type
	// codes): their fractional digits are in no event, and the reader
	// decoded them as none. It decodes the event's rows again with
	// fsp[i] digits for column i (the target's, as MariaDB's replica
	// takes its own columns'); the changes it returns replace the
	// event's. Undecoded: decoding with no digits failed, and the event
	// stands as one row change with no image until decoded again.
	Redecode  func(fsp []int) ([]RowChange, error)
	Undecoded bool
}

// Table is what the binlog's table map event says of a table. Names,
// signedness and keys are known only with binlog_row_metadata=FULL (MariaDB
// 10.5+/MySQL 8.0); otherwise they are nil and the applier takes them from
// the target's schema.
type Table struct {
	ID       uint64
	Schema   string
	Name     string
	Types    []byte   // MYSQL_TYPE_* per column, as in the table map
	Meta     []uint16 // type metadata per column, as in the table map
	Nullable []bool
	Names    []string // nil unless row metadata has names
	// Collations of the character columns (0 for the others); nil unless
	// row metadata has charsets (MySQL 8 binlog_row_metadata=FULL).
	Collations []uint64
	Unsigned   []bool // nil unless row metadata has signedness
	PrimaryKey []int  // column indexes; nil unless row metadata has it
}

// QualifiedName is `schema`.`table` in plain form, for messages and keys.
func (t *Table) QualifiedName() string { return t.Schema + "." + t.Name }

// Statement is a Query event that must be executed as SQL (DDL, or a
// statement the source logged as text inside a row-based transaction).
type Statement struct {
	SQL    string
	Schema string // default database of the session that ran it
	DDL    bool
	// Session state from the Query event's status variables, so the
	// statement means on the target what it meant on the source.
	SQLMode                      uint64
	HasSQLMode                   bool
	CharsetClient                uint16 // collation ids; 0 when absent
	CollationConn                uint16
	CollationServer              uint16
	TimeZone                     string // empty when absent
	ForeignKeyChecks             bool   // from the Query event flags2 (OPTION_NO_FOREIGN_KEY_CHECKS off)
	UniqueChecks                 bool
	CheckConstraintChecks        bool // MariaDB's check_constraint_checks; true from MySQL
	ExplicitDefaultsForTimestamp bool
	HasExplicitDefaults          bool // ExplicitDefaultsForTimestamp was logged
	// UnixMicro is when the statement ran on the source (the event's
	// timestamp, with the microseconds the event carries), in
	// microseconds since 1970; 0 when unknown. NOW() and DEFAULT
	// CURRENT_TIMESTAMP in a DDL mean it: the rows an ALTER adds such a
	// column to get the source's time.
	UnixMicro int64
	// AutoIncrementIncrement and AutoIncrementOffset are the session's
	// auto_increment_increment and _offset (0 when not logged): the
	// numbers an ALTER gives existing rows when it adds an AUTO_INCREMENT
	// column.
	AutoIncrementIncrement, AutoIncrementOffset uint16
	// LCTimeNames is the session's lc_time_names as the server numbers
	// locales (0 is en_US): month and day names in DATE_FORMAT.
	LCTimeNames uint16
	// ErrorCode is the error the statement got on the source (the Query
	// event's error_code), 0 for none: a DDL that failed after changing
	// something (a CREATE OR REPLACE that dropped the old table) is logged
	// with it, and the replica applies it expecting that very error.
	ErrorCode uint16
}
