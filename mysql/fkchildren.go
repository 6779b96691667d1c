package mysql

import (
	"context"
	"database/sql"
	"strings"
)

// innodbForeignQueries list the tables whose foreign keys reference a
// table (REF_NAME, schema/table), from InnoDB's dictionary: MariaDB's,
// then MySQL 8's.
var innodbForeignQueries = []string{
	`SELECT FOR_NAME FROM information_schema.INNODB_SYS_FOREIGN WHERE REF_NAME = ?`,
	`SELECT FOR_NAME FROM information_schema.INNODB_FOREIGN WHERE REF_NAME = ?`,
}

// referencingTables returns the tables whose foreign keys reference
// schema.name, read from InnoDB's dictionary (InnoDB is the one engine
// with foreign keys), which the server reads without opening a table;
// false when it cannot tell: the dictionary needs the PROCESS privilege,
// and InnoDB encodes the bytes of a name other than ASCII letters, digits
// and '_'. The dictionary's names compare without case, as
// information_schema's: the tables returned hold every child.
func referencingTables(ctx context.Context, db *sql.DB, schema, name string) ([]objectName, bool) {
	if !plainName(schema) || !plainName(name) {
		return nil, false
	}
	for _, q := range innodbForeignQueries {
		rows, err := db.QueryContext(ctx, q, schema+"/"+name)
		if err != nil {
			continue
		}
		var out []objectName
		ok := true
		for ok && rows.Next() {
			var f string
			if rows.Scan(&f) != nil {
				ok = false
				break
			}
			s, n, found := strings.Cut(f, "/")
			ok = found && plainName(s) && plainName(n)
			out = append(out, objectName{s, n})
		}
		rows.Close()
		if !ok || rows.Err() != nil {
			return nil, false
		}
		return uniq(out), true
	}
	return nil, false
}
