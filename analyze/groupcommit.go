package analyze

import "github.com/prepl/prepl/txn"

// groupAcc counts MariaDB group commits: a maximal run of consecutive
// transactions with the same non-zero commit_id is one group commit; a
// transaction without a commit_id was committed alone (a group of one).
// Transactions / groups is what the server's status variables give as
// Binlog_commits / Binlog_group_commits: the average group size, the
// parallelism commit-order mode finds.
type groupAcc struct {
	commits, groups, tagged uint64
	waited, notParallel     uint64 // GTID flags WAITED, and ALLOW_PARALLEL clear
	curID, curSize          uint64
	sizes                   logHist
}

func (g *groupAcc) add(tx *txn.Txn) {
	g.commits++
	if tx.CommitID != 0 {
		g.tagged++
	}
	if tx.Flags != 0 || tx.CommitID != 0 {
		if tx.Flags&txn.FlagWaited != 0 {
			g.waited++
		}
		if tx.Flags&txn.FlagAllowParallel == 0 {
			g.notParallel++
		}
	}
	if tx.CommitID != 0 && tx.CommitID == g.curID {
		g.curSize++
		return
	}
	g.close()
	g.curID, g.curSize = tx.CommitID, 1
	if tx.CommitID == 0 {
		g.close()
	}
}

// close ends the current group.
func (g *groupAcc) close() {
	if g.curSize > 0 {
		g.groups++
		g.sizes.add(g.curSize)
	}
	g.curID, g.curSize = 0, 0
}

func (g *groupAcc) avg() float64 {
	if g.groups == 0 {
		return 0
	}
	return float64(g.commits-g.curSize) / float64(g.groups)
}

// GroupCommit is the MariaDB group commit report.
type GroupCommit struct {
	Commits      uint64       `json:"binlog_commits"`       // transactions
	GroupCommits uint64       `json:"binlog_group_commits"` // groups
	AvgSize      float64      `json:"avg_group_size"`       // Binlog_commits / Binlog_group_commits
	Tagged       uint64       `json:"with_commit_id"`       // transactions carrying a commit_id
	Waited       uint64       `json:"waited_flag"`          // GTID flag WAITED: waited for a row lock on the source
	NotParallel  uint64       `json:"not_allow_parallel"`   // GTID flag ALLOW_PARALLEL clear
	Sizes        Distribution `json:"size"`
	Histogram    []Bucket     `json:"histogram"` // group sizes
}

func (g *groupAcc) report() GroupCommit {
	g.close()
	var hist []Bucket
	for b, c := range g.sizes.counts {
		if c == 0 {
			continue
		}
		lo, hi := bucketRange(b)
		hist = append(hist, Bucket{Lo: lo, Hi: hi, Count: c})
	}
	return GroupCommit{Commits: g.commits, GroupCommits: g.groups, AvgSize: g.avg(), Tagged: g.tagged,
		Waited: g.waited, NotParallel: g.notParallel, Sizes: g.sizes.distribution(), Histogram: hist}
}
