// Package store is the contract of a target's channel store: what a
// backend keeps for each channel beside the rows, in its prepl schema.
// That is the channel's lock (a running prepl holds it; prepl skip and
// prepl reset refuse while it is held), the transactions `prepl skip`
// asked the runs to leave out, the stored positions by slot, and the
// units that wrote non-transactional tables and were interrupted.
//
// mysql.Target and postgres.Target implement Store with these types, so
// that package run, which claims a channel and reports on it, needs no
// conversion between backends. The package imports no backend.
package store

import (
	"context"
	"time"

	"github.com/prepl/prepl/position"
)

// Store is a target's channel store. ChannelName is the channel the target
// was opened for; LockChannel, Skips and MarkSkipped act on it;
// Channels, ChannelPositions and HalfApplied read any channel (prepl
// status lists them all).
type Store interface {
	// LockChannel takes the channel's lock, waiting up to wait for a
	// prepl that just went away to let it go; release lets it go (it may
	// be called more than once).
	LockChannel(ctx context.Context, wait time.Duration) (release func(), err error)
	// Skips lists what `prepl skip` asked the channel's runs to
	// leave out, oldest first; none when nothing ever was.
	Skips(ctx context.Context) ([]Skip, error)
	// MarkSkipped records that a run left transaction id out.
	MarkSkipped(ctx context.Context, id string) error
	// ChannelName is the channel the target was opened for.
	ChannelName() string
	// Channels lists the channels with a stored position, by name; none
	// when the position table does not exist yet.
	Channels(ctx context.Context) ([]string, error)
	// ChannelPositions reads one channel's stored positions, by slot.
	ChannelPositions(ctx context.Context, channel string) (map[string]position.Checkpoint, error)
	// HalfApplied describes a channel's unit that wrote non-transactional
	// tables and was interrupted or refused, for a person; "" for none
	// (always "" where every table is transactional, as on PostgreSQL).
	HalfApplied(ctx context.Context, channel string) (string, error)
}

// Skip is a transaction `prepl skip` named, by GTID or by FILE:OFFSET of
// its start (the file's base name), and whether a run has left it out.
type Skip struct {
	Txn  string
	Done bool
}

// Admin is a channel's stored state as prepl skip and prepl reset change
// it, with no prepl running on the channel: mysql.Target and
// postgres.Target implement it alike.
type Admin interface {
	Store
	// AddSkip records that the channel's next run leaves transaction id
	// out (a GTID, or FILE:OFFSET where it begins).
	AddSkip(ctx context.Context, id string) error
	// ResetSkips deletes the channel's skip requests.
	ResetSkips(ctx context.Context) error
	// ResetPositions deletes the channel's stored positions and what is
	// stored with them (prepared XA transactions' records).
	ResetPositions(ctx context.Context) error
	// StorePosition writes p as a stored position of the channel.
	StorePosition(ctx context.Context, p position.Checkpoint) error
	// Checkpoints reads the channel's stored positions, by slot.
	Checkpoints(ctx context.Context) (map[string]position.Checkpoint, error)
	// ChannelHolder describes who holds the channel's lock, for a
	// person ("" when nobody does).
	ChannelHolder(ctx context.Context) string
	String() string // the target, for messages
	Close() error
}
