package run

import (
	"context"

	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/snapshot"
)

// OpenCopyTarget opens the writer prepl copy writes through (package
// snapshot reads the source and drives it): postgres:// or postgresql://
// for PostgreSQL, with the mapping's options o; else MySQL/MariaDB.
func OpenCopyTarget(ctx context.Context, url string, o postgres.Options) (snapshot.Target, error) {
	if postgres.IsURL(url) {
		t, err := postgres.OpenCopy(ctx, url, o)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	t, err := mysql.OpenCopy(ctx, url)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// VerifyTarget is the target's side of prepl verify.
type VerifyTarget interface {
	snapshot.Reader
	Close() error
}

// OpenVerifyTarget opens the target's side of prepl verify, as
// OpenCopyTarget chooses the backend.
func OpenVerifyTarget(ctx context.Context, url string, o postgres.Options) (VerifyTarget, error) {
	if postgres.IsURL(url) {
		r, err := postgres.OpenVerifyReader(ctx, url, o)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	r, err := mysql.OpenVerifyReader(ctx, url)
	if err != nil {
		return nil, err
	}
	return r, nil
}
