package run

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/prepl/prepl/apply"
	"github.com/prepl/prepl/mysql"
	"github.com/prepl/prepl/position"
	"github.com/prepl/prepl/postgres"
	"github.com/prepl/prepl/store"
)

// OpenIdle opens a target to change channel's stored state (prepl skip,
// prepl reset): MySQL/MariaDB, whose endpoint s completes, or PostgreSQL;
// it refuses when a prepl runs on the channel (it holds the channel's
// lock).
func OpenIdle(ctx context.Context, url, channel string, s *Secrets) (store.Admin, error) {
	tgt, lock, err := openAdmin(ctx, url, channel, s)
	if err != nil {
		return nil, err
	}
	if h := tgt.ChannelHolder(ctx); h != "" {
		tgt.Close()
		return nil, fmt.Errorf("a prepl runs on channel %q (it holds %s%s): stop it first; changing a running channel's "+
			"position is refused", channel, lock, h)
	}
	return tgt, nil
}

// OpenObserver opens a target to read channel's stored state while a
// prepl may run on it (prepl verify --online reads its positions): as
// OpenIdle, without the refusal. Change nothing through it.
func OpenObserver(ctx context.Context, url, channel string, s *Secrets) (store.Admin, error) {
	tgt, _, err := openAdmin(ctx, url, channel, s)
	return tgt, err
}

// openAdmin opens the target of url for channel; lock names the
// channel's lock, for a person.
func openAdmin(ctx context.Context, url, channel string, s *Secrets) (store.Admin, string, error) {
	if url == "" {
		return nil, "", fmt.Errorf("%w: --target is required", ErrUsage)
	}
	var tgt store.Admin
	var lock string
	if postgres.IsURL(url) {
		var opts []postgres.Option
		pw, err := s.PGPassword()
		if err != nil {
			return nil, "", err
		}
		if pw != "" {
			opts = append(opts, postgres.Password(pw))
		}
		t, err := postgres.Open(ctx, url, channel, postgres.Options{}, opts...)
		if err != nil {
			return nil, "", err
		}
		tgt, lock = t, "the channel's advisory lock, see pg_locks"
	} else {
		e, err := s.Endpoint(url, &s.Target)
		if err != nil {
			return nil, "", err
		}
		t, err := mysql.Open(ctx, e, channel)
		if err != nil {
			return nil, "", err
		}
		tgt, lock = t, "the lock "+strconv.Quote(mysql.LockName(channel))
	}
	return tgt, lock, nil
}

// SkipID is the transaction a skip request names: a GTID, or FILE:OFFSET
// where it begins (the file's base name); exactly one is given.
func SkipID(gtid, pos string) (string, error) {
	switch {
	case (gtid == "") == (pos == ""):
		return "", fmt.Errorf("%w: give one of --gtid and --position", ErrUsage)
	case gtid != "":
		if _, err := position.ParseMariaGTID(gtid); err != nil && !strings.Contains(gtid, ":") {
			return "", fmt.Errorf("%w: --gtid %q: want a MariaDB GTID D-S-N or a MySQL UUID:N", ErrUsage, gtid)
		}
		return gtid, nil
	}
	f, off, ok := strings.Cut(pos, ":")
	n, err := strconv.ParseUint(off, 10, 32)
	if !ok || f == "" || err != nil {
		return "", fmt.Errorf("%w: --position %q: want FILE:OFFSET (e.g. binlog.000042:1234)", ErrUsage, pos)
	}
	return fmt.Sprintf("%s:%d", filepath.Base(f), n), nil
}

// AddSkip records that tgt's channel's next run leaves transaction id out.
// warning is not "" when the channel has no stored position: a first run
// to come, or a mistyped name (then the run that stopped on the
// transaction never sees the skip and stops on it again).
func AddSkip(ctx context.Context, tgt store.Admin, id string) (warning string, err error) {
	if err := tgt.AddSkip(ctx, id); err != nil {
		return "", fmt.Errorf("record the skip on target %s: %w", tgt, err)
	}
	ch := tgt.ChannelName()
	if chs, err := tgt.Channels(ctx); err == nil && !slices.Contains(chs, ch) {
		have := "none"
		if len(chs) > 0 {
			have = strings.Join(chs, ", ")
		}
		return fmt.Sprintf("channel %s has no stored position on this target (channels that have one: %s): the skip waits for "+
			"a run of channel %s; if the name is mistyped, record it again with the right --channel", ch, have, ch), nil
	}
	return "", nil
}

// Reset deletes tgt's channel's stored positions, prepared XA transactions
// and skip requests; with start, the next run starts after that GTID
// position.
func Reset(ctx context.Context, tgt store.Admin, start string) error {
	if err := tgt.ResetPositions(ctx); err != nil {
		return fmt.Errorf("reset channel %q on %s: %w", tgt.ChannelName(), tgt, err)
	}
	if err := tgt.ResetSkips(ctx); err != nil {
		return fmt.Errorf("reset channel %q on %s: %w", tgt.ChannelName(), tgt, err)
	}
	if start != "" {
		p := position.Checkpoint{Slot: apply.SlotMain, GTIDPos: start, Floor: position.Floor{GTIDPos: start}}
		if err := tgt.StorePosition(ctx, p); err != nil {
			return fmt.Errorf("store the start position of channel %q on %s: %w", tgt.ChannelName(), tgt, err)
		}
	}
	return nil
}
