package run

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prepl/prepl/mysql"
)

// serverIdentity is what tells two servers apart: server_uuid where the
// server has one, else server_id
// with the port and data directory the server reports.
type serverIdentity struct {
	uuid     string
	serverID uint64
	port     uint64
	datadir  string
}

func identify(ctx context.Context, db *sql.DB) (serverIdentity, error) {
	var id serverIdentity
	if err := db.QueryRowContext(ctx, "SELECT @@server_id, @@port, @@datadir").Scan(&id.serverID, &id.port, &id.datadir); err != nil {
		return id, err
	}
	var uuid sql.NullString
	if db.QueryRowContext(ctx, "SELECT @@server_uuid").Scan(&uuid) == nil {
		id.uuid = uuid.String
	}
	return id, nil
}

// same reports whether a and b are one server, and why.
func (a serverIdentity) same(b serverIdentity) (bool, string) {
	if a.uuid != "" && b.uuid != "" {
		return a.uuid == b.uuid, "server_uuid " + a.uuid
	}
	if a.serverID == b.serverID && a.port == b.port && a.datadir == b.datadir {
		return true, fmt.Sprintf("server_id %d, port %d, datadir %s", a.serverID, a.port, a.datadir)
	}
	return false, ""
}

// refuseSameServer fails when the target is the source itself: prepl
// would read its own writes back and apply them again, forever. It runs
// before the target is opened, so that nothing is written to it. A
// target that cannot be reached yet is not an error here: opening it
// retries, and a server that cannot be reached is not the source, which
// answered.
func refuseSameServer(ctx context.Context, srcDB *sql.DB, src, tgt mysql.Endpoint, log *slog.Logger) error {
	if src.Socket == "" && tgt.Socket == "" && sameAddr(src, tgt) {
		return fmt.Errorf("%w: --source and --target are the same server (%s): prepl replicates from one server to another; give the replica as --target", ErrUsage, src.Addr())
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	srcID, err := identify(ctx, srcDB)
	if err != nil {
		return fmt.Errorf("source %s: read server identity: %w", src, err)
	}
	tdb, err := tgt.OpenDB()
	if err != nil {
		return err
	}
	defer tdb.Close()
	tgtID, err := identify(ctx, tdb)
	if err != nil {
		log.Warn("could not check that the target is not the source: the target did not answer yet", "target", tgt.String(), "err", err.Error())
		return nil
	}
	if same, why := srcID.same(tgtID); same {
		return fmt.Errorf("%w: --source %s and --target %s are the same server (%s): prepl replicates from one server to another; give the replica as --target", ErrUsage, src, tgt, why)
	}
	return nil
}

// sameAddr compares host:port, taking localhost and 127.0.0.1 (and ::1)
// as one host.
func sameAddr(a, b mysql.Endpoint) bool {
	norm := func(h string) string {
		if h == "localhost" || h == "" {
			return "127.0.0.1"
		}
		if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
			return "127.0.0.1"
		}
		return h
	}
	return a.Port == b.Port && norm(a.Host) == norm(b.Host)
}
