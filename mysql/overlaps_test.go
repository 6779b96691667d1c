package mysql

import (
	"slices"
	"testing"
)

func TestKeysWithoutOverlaps(t *testing.T) {
	create := "CREATE TABLE `t2` (\n" +
		"  `id` int(11) NOT NULL,\n" +
		"  `s` date NOT NULL,\n" +
		"  `e` date NOT NULL,\n" +
		"  `n` int(11) DEFAULT NULL COMMENT 'x WITHOUT OVERLAPS)',\n" +
		"  PERIOD FOR `p` (`s`, `e`),\n" +
		"  PRIMARY KEY (`id`,`p` WITHOUT OVERLAPS),\n" +
		"  UNIQUE KEY `a``b` (`n`,`p` WITHOUT OVERLAPS),\n" +
		"  UNIQUE KEY \"q\" (`n`,`p` WITHOUT OVERLAPS) COMMENT 'c',\n" +
		"  UNIQUE KEY bare (`n`,`p` WITHOUT OVERLAPS),\n" +
		"  UNIQUE KEY `plain` (`n`,`e`,`s`)\n" +
		") ENGINE=InnoDB"
	got := keysWithoutOverlaps(create)
	if want := []string{"PRIMARY", "a`b", "q", "bare"}; !slices.Equal(got, want) {
		t.Fatalf("keysWithoutOverlaps = %q, want %q", got, want)
	}
}
