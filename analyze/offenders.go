package analyze

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prepl/prepl/depend"
	"github.com/prepl/prepl/txn"
)

// category is a kind of thing that serializes transactions.
type category uint8

const (
	catDDL category = iota
	catStatement
	catNoKey
	catNoKeyInfo
	catFKParent
	catTrigger
	catNonTransactional
	catUnknownTable
	catXA
	numCategories
)

// attribution names something in a transaction that can make it wait in
// writeset mode, and the tracker reason such a wait is counted as.
type attribution struct {
	cat    category
	reason depend.Reason
	name   string
}

// attribute lists what in tx can serialize it, by name. It reads the same
// facts the tracker reads (depend.Keys' barriers, a table without key), to
// name them; whether tx actually waited is the tracker's answer.
func attribute(tx *txn.Txn, cat layeredCatalog) []attribution {
	var out []attribution
	if tx.XA {
		out = append(out, attribution{catXA, depend.ReasonXA, "XA transactions"})
	}
	for _, ch := range tx.Changes {
		if st := ch.Stmt; st != nil {
			if st.DDL {
				out = append(out, attribution{catDDL, depend.ReasonDDL, qualify(st.Schema, statementHead(st.SQL))})
			} else if !tx.XA {
				out = append(out, attribution{catStatement, depend.ReasonStatement, statementHead(st.SQL)})
			}
		}
	}
	var seen []*txn.Table
	for _, ch := range tx.Changes {
		rc := ch.Row
		if rc == nil || rc.Table == nil || slices.Contains(seen, rc.Table) {
			continue
		}
		seen = append(seen, rc.Table)
		name := rc.Table.QualifiedName()
		if tx.NonTransactional {
			out = append(out, attribution{catNonTransactional, depend.ReasonNonTransactional, name})
		}
		def, ok := cat.Table(rc.Table.Schema, rc.Table.Name)
		switch {
		case !ok || def == nil:
			out = append(out, attribution{catUnknownTable, depend.ReasonUnknownTable, name})
		case len(def.Cascades) > 0:
			out = append(out, attribution{catFKParent, depend.ReasonForeignKey, name})
		case !def.Transactional:
			out = append(out, attribution{catNonTransactional, depend.ReasonNonTransactional, name})
		case def.HasTriggers:
			out = append(out, attribution{catTrigger, depend.ReasonTrigger, name})
		case len(def.Indexes) == 0 && !cat.fromPrimary(rc.Table.Schema, rc.Table.Name) && !cat.meta.KeyKnown(rc.Table.Schema, rc.Table.Name):
			out = append(out, attribution{catNoKeyInfo, depend.ReasonNoKey, name})
		case len(def.Indexes) == 0:
			out = append(out, attribution{catNoKey, depend.ReasonNoKey, name})
		}
	}
	return out
}

func qualify(schema, s string) string {
	if schema == "" {
		return s
	}
	return "[" + schema + "] " + s
}

// statementHead is the statement's first line, shortened, spaces folded.
func statementHead(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// nameCounts counts, per name, the transactions involving it and how many
// of them waited for the reason it stands for. Names beyond maxNames are
// counted together under "(others)", so memory stays bounded.
type nameCounts struct {
	m map[string]*nameCount
}

type nameCount struct {
	txns, waits uint64
	first       string // GTID (or seq) of the first transaction
}

const maxNames = 10000

func (n *nameCounts) add(name string, waited bool, first string) {
	if n.m == nil {
		n.m = map[string]*nameCount{}
	}
	c := n.m[name]
	if c == nil {
		if len(n.m) >= maxNames {
			name = "(others)"
			c = n.m[name]
		}
		if c == nil {
			c = &nameCount{first: first}
			n.m[name] = c
		}
	}
	c.txns++
	if waited {
		c.waits++
	}
}

// Offender is a named cause of serialization.
type Offender struct {
	Name         string `json:"name"`
	Transactions uint64 `json:"transactions"` // transactions involving it
	Waits        uint64 `json:"waits"`        // of them, those that waited for it (writeset mode)
	First        string `json:"first,omitempty"`
}

func (n *nameCounts) top(k int) []Offender {
	out := make([]Offender, 0, len(n.m))
	for name, c := range n.m {
		out = append(out, Offender{Name: name, Transactions: c.txns, Waits: c.waits, First: c.first})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Waits != b.Waits {
			return a.Waits > b.Waits
		}
		if a.Transactions != b.Transactions {
			return a.Transactions > b.Transactions
		}
		return a.Name < b.Name
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// BigTxn is one of the largest transactions.
type BigTxn struct {
	GTID     string    `json:"gtid,omitempty"`
	Seq      uint64    `json:"seq"`
	Bytes    int       `json:"bytes"`
	Rows     int       `json:"rows"`
	Position string    `json:"position"` // file:offset of its first event
	Time     time.Time `json:"time,omitzero"`
	Tables   []string  `json:"tables,omitempty"`
	Seconds  float64   `json:"est_seconds"` // estimated apply time on the target (cost model)
	Big      bool      `json:"big"`         // at least the big-transaction size
}

func tablesOf(tx *txn.Txn, k int) []string {
	var out []string
	for _, ch := range tx.Changes {
		if ch.Row == nil || ch.Row.Table == nil {
			continue
		}
		n := ch.Row.Table.QualifiedName()
		if !slices.Contains(out, n) {
			if len(out) == k {
				out = append(out, "...")
				break
			}
			out = append(out, n)
		}
	}
	return out
}

// txnName names a transaction for people: its GTID, else its position.
func txnName(tx *txn.Txn) string {
	if tx.GTID != "" {
		return tx.GTID
	}
	return tx.Start.String()
}
