package sandbox

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrNoGalera is returned when the Galera provider is not installed.
var ErrNoGalera = errors.New("the Galera provider (libgalera_smm.so) is not installed: install it with `apt-get install -y galera-4 rsync` (or run `make deps`)")

// Cluster is a MariaDB Galera cluster of sandboxes on this machine: each
// node a mariadbd with its own data directory, SQL port, group
// communication (gcomm) port, IST port and SST (rsync) port. State
// transfers go over rsync, so a node that joins copies a donor's data
// directory.
type Cluster struct {
	Nodes []*Server
	name  string
}

// galeraNode is a Server's place in its cluster.
type galeraNode struct {
	cluster   *Cluster
	gcomm     int    // group communication port
	ist, sst  int    // incremental and full state transfer ports
	bootstrap bool   // the next start makes a new cluster (--wsrep-new-cluster)
	startPos  string // uuid:seqno recovered after a crash, "" for none
}

// GaleraProvider is the path of libgalera_smm.so: PREPL_GALERA_PROVIDER,
// else Debian's place for it.
func GaleraProvider() string {
	if p := os.Getenv("PREPL_GALERA_PROVIDER"); p != "" {
		return p
	}
	return "/usr/lib/galera/libgalera_smm.so"
}

// galeraFlags keep a node small: 2 cores and a few servers share the
// machine. They come before Options.Flags, which may override them.
var galeraFlags = []string{
	"--innodb-buffer-pool-size=64M",
	"--innodb-log-file-size=32M",
	"--innodb-autoinc-lock-mode=2",
	"--default-storage-engine=InnoDB",
	"--max-connections=300",
}

// StartCluster starts an n-node Galera cluster: the first node makes a
// new cluster, the others join it one by one (a full state transfer
// each), and it returns once every node is Synced in a cluster of n.
// opts applies to every node (ServerID is set per node: 1, 2, ...;
// Binlog, if set, gives each node a binlog of its own).
func StartCluster(ctx context.Context, n int, opts Options) (*Cluster, error) {
	if _, err := os.Stat(GaleraProvider()); err != nil {
		return nil, ErrNoGalera
	}
	if _, err := exec.LookPath("rsync"); err != nil {
		return nil, ErrNoGalera
	}
	c := &Cluster{name: fmt.Sprintf("prepl-sb-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)}
	for i := range n {
		g := &galeraNode{cluster: c, bootstrap: i == 0}
		for _, p := range []*int{&g.gcomm, &g.ist, &g.sst} {
			var err error
			if *p, err = freePort(); err != nil {
				return nil, err
			}
		}
		o := opts
		o.ServerID = uint32(i + 1)
		o.Flags = append(append([]string{}, galeraFlags...), opts.Flags...)
		s, err := start(ctx, o, g)
		if err != nil {
			donor := ""
			if len(c.Nodes) > 0 {
				donor = "\nthe first node's log:\n" + c.Nodes[0].logTail()
			}
			c.Close()
			return nil, fmt.Errorf("sandbox: galera node %d: %w%s", i+1, err, donor)
		}
		g.bootstrap = false
		c.Nodes = append(c.Nodes, s)
		if err := c.waitSynced(ctx, s, i+1); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// Kill kills node i (from 0) with SIGKILL, as a crash would.
func (c *Cluster) Kill(i int) { c.Nodes[i].Kill() }

// Restart starts node i again after a Kill or a Stop: it recovers the
// node's last committed position from its data directory (mariadbd
// --wsrep-recover, as galera_recovery does), joins the running nodes with
// it (an incremental transfer when their gcache still holds what it
// missed, a full one otherwise) and waits until it is Synced in a cluster
// of every node that is running.
func (c *Cluster) Restart(ctx context.Context, i int) error {
	s := c.Nodes[i]
	pos, err := s.recoverPosition(ctx)
	if err != nil {
		return err
	}
	s.galera.startPos = pos
	if err := s.Restart(ctx); err != nil {
		return fmt.Errorf("sandbox: restart galera node %d: %w", i+1, err)
	}
	return c.waitSynced(ctx, s, c.running())
}

func (c *Cluster) running() int {
	n := 0
	for _, s := range c.Nodes {
		if s.Running() {
			n++
		}
	}
	return n
}

// Close kills every node and removes their directories.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}

// WaitSynced waits until node i is Synced in a cluster of size nodes.
func (c *Cluster) WaitSynced(ctx context.Context, i, size int) error {
	return c.waitSynced(ctx, c.Nodes[i], size)
}

func (c *Cluster) waitSynced(ctx context.Context, s *Server, size int) error {
	db, err := s.Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(2 * time.Minute)
	var state string
	var got int
	for {
		state, got = WsrepState(ctx, db)
		if state == "Synced" && got == size {
			return nil
		}
		if !s.Running() {
			return fmt.Errorf("sandbox: galera node on port %d exited before it was Synced: %s", s.Port, s.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox: galera node on port %d is %q in a cluster of %d after 2 minutes, want Synced in %d: %s",
				s.Port, state, got, size, s.logTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// SyncWait waits until node i has applied every write set the cluster
// ordered before the call: a causal read (wsrep_sync_wait). Replicated
// write sets are certified at once but applied on the other nodes a
// moment later, so a test reads a node only after it.
func (c *Cluster) SyncWait(ctx context.Context, i int) error {
	db, err := c.Nodes[i].Open("")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "SET STATEMENT wsrep_sync_wait=1 FOR SELECT 1"); err != nil {
		return fmt.Errorf("sandbox: galera node %d: wait for the cluster's write sets: %w", i+1, err)
	}
	return nil
}

// WsrepState returns a node's wsrep_local_state_comment (Synced, Donor/
// Desynced, Joining, ...) and wsrep_cluster_size; "" and 0 when it does
// not answer.
func WsrepState(ctx context.Context, db *sql.DB) (string, int) {
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_cluster_size')")
	if err != nil {
		return "", 0
	}
	defer rows.Close()
	var state string
	var size int
	for rows.Next() {
		var k, v string
		if rows.Scan(&k, &v) != nil {
			return "", 0
		}
		if strings.EqualFold(k, "wsrep_cluster_size") {
			size, _ = strconv.Atoi(v)
		} else {
			state = v
		}
	}
	return state, size
}

// galeraArgs are the wsrep flags of node s.
func (s *Server) galeraArgs() []string {
	g := s.galera
	address := "gcomm://"
	if !g.bootstrap {
		var peers []string
		for _, o := range g.cluster.Nodes {
			if o != s {
				peers = append(peers, "127.0.0.1:"+strconv.Itoa(o.galera.gcomm))
			}
		}
		address += strings.Join(peers, ",")
	}
	a := []string{
		"--wsrep-on=ON",
		"--wsrep-provider=" + GaleraProvider(),
		"--wsrep-cluster-name=" + g.cluster.name,
		"--wsrep-cluster-address=" + address,
		"--wsrep-node-address=127.0.0.1:" + strconv.Itoa(g.gcomm),
		"--wsrep-node-name=node" + strconv.FormatUint(uint64(s.opts.ServerID), 10),
		"--wsrep-sst-method=" + sstMethod,
		"--wsrep-sst-receive-address=127.0.0.1:" + strconv.Itoa(g.sst),
		"--wsrep-provider-options=" + strings.Join([]string{
			"gmcast.listen_addr=tcp://127.0.0.1:" + strconv.Itoa(g.gcomm),
			"ist.recv_addr=127.0.0.1:" + strconv.Itoa(g.ist),
			"gcache.size=64M",
			"gcache.page_size=16M",
			// A killed node is evicted from the view within seconds,
			// not the default's 5 s suspect + 15 s inactive.
			"evs.suspect_timeout=PT3S",
			"evs.inactive_timeout=PT6S",
			"evs.install_timeout=PT6S",
		}, ";"),
	}
	if g.bootstrap {
		a = append(a, "--wsrep-new-cluster")
	}
	if g.startPos != "" {
		a = append(a, "--wsrep-start-position="+g.startPos)
	}
	if !s.opts.Binlog {
		a = append(a, "--binlog-format=ROW")
	}
	return a
}

var recoveredRE = regexp.MustCompile(`WSREP: Recovered position:?\s+([0-9a-f-]{36}:-?[0-9]+)`)

// recoverPosition runs mariadbd --wsrep-recover on the stopped node's
// data directory and returns the uuid:seqno it logs.
func (s *Server) recoverPosition(ctx context.Context) (string, error) {
	if s.Running() {
		return "", errors.New("sandbox: recover a galera node's position: the node is running")
	}
	log := filepath.Join(s.Dir, "recover.log")
	os.Remove(log)
	args := append(s.args(), "--wsrep-recover", "--log-error="+log)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, mariadbd(), args...).CombinedOutput()
	b, _ := os.ReadFile(log)
	m := recoveredRE.FindSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("sandbox: mariadbd --wsrep-recover found no position (%v): %s %s", err, out, lastLines(string(b), 8))
	}
	return string(m[1]), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The state transfers go through two scripts written into each node's
// bin/: rsyncWrapper runs rsync, and as a daemon as the user that runs
// it. The SST script starts `rsync --daemon` with a configuration that
// names no uid, and an rsync daemon started by root (the sandbox's
// mariadbd runs as root) drops to the user nobody, who can neither write
// nor chmod the node's files: every state transfer failed with
// "Permission denied". mariadbd puts its own bin directory first on the
// PATH of the SST script, so a wrapper of rsync alone is never found:
// the SST method is sstMethod, a script of that name that puts bin/ first
// on the PATH and runs the stock wsrep_sst_rsync.
const (
	sstMethod    = "prepl_rsync"
	rsyncWrapper = `#!/bin/sh
for a in "$@"; do
	if [ "$a" = --daemon ]; then exec RSYNC --dparam=uid=$(id -u) --dparam=gid=$(id -g) "$@"; fi
done
exec RSYNC "$@"
`
	sstScript = `#!/bin/sh
PATH="BIN:$PATH"
export PATH
exec SST "$@"
`
)

// binDir writes the two scripts into the node's bin/ once and returns
// that directory, to put on mariadbd's PATH.
func (s *Server) binDir() (string, error) {
	dir := filepath.Join(s.Dir, "bin")
	if _, err := os.Stat(filepath.Join(dir, "wsrep_sst_"+sstMethod)); err == nil {
		return dir, nil
	}
	rsync, err := exec.LookPath("rsync")
	if err != nil {
		return "", ErrNoGalera
	}
	sst, err := exec.LookPath("wsrep_sst_rsync")
	if err != nil {
		return "", fmt.Errorf("sandbox: wsrep_sst_rsync not found (it comes with mariadb-server): %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "rsync"), []byte(strings.ReplaceAll(rsyncWrapper, "RSYNC", rsync)), 0o755); err != nil {
		return "", err
	}
	script := strings.NewReplacer("BIN", dir, "SST", sst).Replace(sstScript)
	return dir, os.WriteFile(filepath.Join(dir, "wsrep_sst_"+sstMethod), []byte(script), 0o755)
}
