#!/bin/bash
# bench/keyless/run.sh: bulk transactions on a table without a row key (the
# shape of MariaDB's test main.multi_update_big: 2,000,000 rows inserted in
# 8 transactions into a key-less table with a secondary index, then 100,000
# deleted in one), applied to an empty MariaDB with config C's settings by
# prepl replay and by mariadb-binlog | mariadb; prints each run's seconds,
# its own CPU, the target server's CPU and the table's checksum against the
# source's (docs/benchmarks.md, "Compacted rows as rows events").
#
# usage: bench/keyless/run.sh [REPEATS] [-- extra prepl replay flags]
# PREPL (default bin/prepl) is the binary; WORK (default a temp dir) keeps
# the binlog and the data directories.
set -e
REPEATS=${1:-3}; shift || true; [ "$1" = "--" ] && shift
PREPL=${PREPL:-bin/prepl}
WORK=${WORK:-$(mktemp -d /tmp/prepl-keyless-XXXX)}
PORT=$((33500 + RANDOM % 500))
start() { # datadir port [mariadbd options]
	local d=$1 p=$2; shift 2
	mariadbd --no-defaults --datadir=$d --socket=$d.sock --port=$p --bind-address=127.0.0.1 --user=root \
		--innodb-buffer-pool-size=512M --innodb-log-file-size=512M --innodb-flush-log-at-trx-commit=2 \
		--log-error=$d.err --pid-file=$d.pid "$@" &
	for _ in $(seq 120); do mariadb -h127.0.0.1 -P$p -uroot -e 'SELECT 1' >/dev/null 2>&1 && return; sleep 0.5; done
	echo "mariadbd on port $p did not start: $d.err" >&2; exit 1
}
stop() { local pid=$(cat $1.pid); kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.2; done; }
mariadb-install-db --no-defaults --datadir=$WORK/empty --auth-root-authentication-method=normal >/dev/null
cp -a $WORK/empty $WORK/src
start $WORK/src $PORT --server-id=1 --log-bin=$WORK/binlog --binlog-format=ROW --binlog-row-image=FULL --binlog-row-metadata=FULL
M="mariadb -h127.0.0.1 -P$PORT -uroot"
$M -e "CREATE DATABASE kl; CREATE TABLE kl.t1 (a INT, b INT, c VARCHAR(20), KEY (a)) ENGINE=InnoDB"
for k in 0 1 2 3 4 5 6 7; do
	$M -e "INSERT INTO kl.t1 SELECT seq, seq % 1000, CONCAT('row', seq) FROM kl.seq_$((k * 250000 + 1))_to_$(((k + 1) * 250000))"
done
$M -e "DELETE FROM kl.t1 WHERE b < 50"
want=$($M -N -e "CHECKSUM TABLE kl.t1" | cut -f2)
$M -e "FLUSH BINARY LOGS"
stop $WORK/src
BL=$WORK/binlog.000001
run() { # name command...
	local name=$1; shift
	rm -rf $WORK/dst; cp -a $WORK/empty $WORK/dst
	start $WORK/dst $((PORT + 1)) --server-id=2 --skip-log-bin
	local pid=$(cat $WORK/dst.pid) t0 t1 s0 s1
	t0=$(awk '{print $14 + $15}' /proc/$pid/stat); s0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o $WORK/time "$@" >$WORK/$name.log 2>&1 || { echo "$name failed: $WORK/$name.log"; }
	s1=$(date +%s.%N); sleep 1; t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
	local got=$(mariadb -h127.0.0.1 -P$((PORT + 1)) -uroot -N -e "CHECKSUM TABLE kl.t1" | cut -f2)
	read u s < $WORK/time
	printf "%-8s %6.2f s  own CPU %5.2f s  target CPU %5.2f s  checksum %s\n" $name $(echo "$s1 - $s0" | bc) \
		$(echo "$u + $s" | bc) $(echo "($t1 - $t0) / 100" | bc -l) $([ "$got" = "$want" ] && echo equal || echo "DIFFERS ($got, source $want)")
	stop $WORK/dst
}
for _ in $(seq $REPEATS); do
	run prepl $PREPL replay --target mysql://root@127.0.0.1:$((PORT + 1)) --progress 0 --workers 0 --max-txn-size 1GiB "$@" $BL
	run ref sh -c "mariadb-binlog $BL | mariadb -h127.0.0.1 -P$((PORT + 1)) -uroot --max-allowed-packet=1G"
done
