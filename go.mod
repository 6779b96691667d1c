module github.com/prepl/prepl

go 1.26.8

require github.com/go-sql-driver/mysql v1.9.3

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/go-mysql-org/go-mysql v1.16.0 // indirect
	golang.org/x/text v0.36.0 // indirect
)
