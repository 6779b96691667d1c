package sandbox

import "syscall"

// PostgresUser is the credential of the `postgres` OS user when running
// as root, else nil: for the programs that, like the PostgreSQL server,
// refuse to run as root (pg_chameleon in bench/pgmigrate).
func PostgresUser() *syscall.Credential { return pgCredential() }

// ChownToPostgres gives dir and what it holds to the `postgres` OS user
// when running as root; it does nothing otherwise.
func ChownToPostgres(dir string) error { return chownPostgres(dir) }
