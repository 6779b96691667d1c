package binlog

import (
	"encoding/binary"

	"github.com/prepl/prepl/txn"
)

// Query event status variable codes (sql/log_event.h, MySQL and MariaDB).
const (
	qFlags2                  = 0
	qSQLMode                 = 1
	qCatalog                 = 2
	qAutoIncrement           = 3
	qCharset                 = 4
	qTimeZone                = 5
	qCatalogNZ               = 6
	qLCTimeNames             = 7
	qCharsetDatabase         = 8
	qTableMapForUpdate       = 9
	qMasterDataWritten       = 10
	qInvoker                 = 11
	qUpdatedDBNames          = 12
	qMicroseconds            = 13
	qCommitTS                = 14
	qCommitTS2               = 15
	qExplicitDefaultsForTS   = 16
	qDDLLoggedWithXID        = 17
	qDefaultCollationUTF8MB4 = 18
	qSQLRequirePrimaryKey    = 19
	qDefaultTableEncryption  = 20
	qMariaHRNow              = 128
	qMariaXID                = 129
	qMariaGTIDFlags3         = 130
)

// flags2 bits (OPTION_* of sql_priv.h that the server writes to Q_FLAGS2_CODE).
const (
	optionNoForeignKeyChecks   = 1 << 26
	optionRelaxedUniqueChecks  = 1 << 27
	optionExplicitDefTimestamp = 1 << 24 // MariaDB only (MySQL has Q_EXPLICIT_DEFAULTS_FOR_TIMESTAMP)
	optionNoCheckConstraints   = 1 << 15 // MariaDB only: check_constraint_checks off
)

// applyStatusVars fills the session state of st from a Query event's
// status variables (st.UnixMicro, the event's whole seconds, gains the
// microseconds). It stops at the first code it does not know (their
// lengths are not self-describing); fields it did not reach stay as they
// are. It reports whether it parsed the whole block.
func applyStatusVars(st *txn.Statement, vars []byte, mariadb bool) bool {
	st.ForeignKeyChecks = true
	st.UniqueChecks = true
	st.CheckConstraintChecks = true
	p := 0
	need := func(n int) bool { return p+n <= len(vars) }
	for p < len(vars) {
		code := vars[p]
		p++
		switch code {
		case qFlags2:
			if !need(4) {
				return false
			}
			f := binary.LittleEndian.Uint32(vars[p:])
			st.ForeignKeyChecks = f&optionNoForeignKeyChecks == 0
			st.UniqueChecks = f&optionRelaxedUniqueChecks == 0
			if mariadb {
				st.ExplicitDefaultsForTimestamp = f&optionExplicitDefTimestamp != 0
				st.HasExplicitDefaults = true
				st.CheckConstraintChecks = f&optionNoCheckConstraints == 0
			}
			p += 4
		case qSQLMode:
			if !need(8) {
				return false
			}
			st.SQLMode = binary.LittleEndian.Uint64(vars[p:])
			st.HasSQLMode = true
			p += 8
		case qCatalog:
			if !need(1) || !need(1+int(vars[p])+1) {
				return false
			}
			p += 1 + int(vars[p]) + 1
		case qAutoIncrement:
			if !need(4) {
				return false
			}
			st.AutoIncrementIncrement = binary.LittleEndian.Uint16(vars[p:])
			st.AutoIncrementOffset = binary.LittleEndian.Uint16(vars[p+2:])
			p += 4
		case qCharset:
			if !need(6) {
				return false
			}
			st.CharsetClient = binary.LittleEndian.Uint16(vars[p:])
			st.CollationConn = binary.LittleEndian.Uint16(vars[p+2:])
			st.CollationServer = binary.LittleEndian.Uint16(vars[p+4:])
			p += 6
		case qTimeZone:
			if !need(1) || !need(1+int(vars[p])) {
				return false
			}
			n := int(vars[p])
			st.TimeZone = string(vars[p+1 : p+1+n])
			p += 1 + n
		case qCatalogNZ:
			if !need(1) {
				return false
			}
			p += 1 + int(vars[p])
		case qLCTimeNames:
			if !need(2) {
				return false
			}
			st.LCTimeNames = binary.LittleEndian.Uint16(vars[p:])
			p += 2
		case qCharsetDatabase, qDefaultCollationUTF8MB4:
			p += 2
		case qTableMapForUpdate, qDDLLoggedWithXID, qMariaXID:
			p += 8
		case qMasterDataWritten:
			p += 4
		case qInvoker:
			for range 2 {
				if !need(1) {
					return false
				}
				p += 1 + int(vars[p])
			}
		case qUpdatedDBNames:
			if !need(1) {
				return false
			}
			n := int(vars[p])
			p++
			if n == 254 { // OVER_MAX_DBS_IN_EVENT_MTS: no names follow
				break
			}
			for range n {
				for p < len(vars) && vars[p] != 0 {
					p++
				}
				p++
			}
		case qMicroseconds, qMariaHRNow:
			if !need(3) {
				return false
			}
			st.UnixMicro += int64(vars[p]) | int64(vars[p+1])<<8 | int64(vars[p+2])<<16
			p += 3
		case qExplicitDefaultsForTS:
			if !need(1) {
				return false
			}
			st.ExplicitDefaultsForTimestamp, st.HasExplicitDefaults = vars[p] != 0, true
			p++
		case qSQLRequirePrimaryKey, qDefaultTableEncryption, qMariaGTIDFlags3:
			p++
		default:
			return false
		}
		if p > len(vars) {
			return false
		}
	}
	return true
}
