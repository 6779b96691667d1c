#!/bin/bash
# Target server CPU per row change by statement shape (docs/benchmarks.md,
# "The target's CPU per row change, by statement shape"): three servers
# with config C's settings; each shape of gen.py (100,000 row changes) as
# SQL on T1, and as the source S's row events through mariadb-binlog's
# BINLOG statements on T2. Usage: bench/shapes/run.sh (MariaDB's server
# and client tools on PATH; SHAPES_DIR keeps the servers' files there).
set -e
W=${SHAPES_DIR:-$(mktemp -d)}; G=$(cd "$(dirname "$0")" && pwd); cd $W; python3 $G/gen.py $W
for s in S T1 T2; do rm -rf $W/$s; mkdir -p $W/$s; mariadb-install-db --no-defaults --datadir=$W/$s/data --user=root --auth-root-authentication-method=normal >/dev/null 2>&1; done
start() { # name extra-args
  mariadbd --no-defaults --datadir=$W/$1/data --socket=$W/$1/sock --skip-networking --user=root --server-id=$2 \
    --innodb-buffer-pool-size=256M --innodb-log-file-size=256M --innodb-flush-log-at-trx-commit=2 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --log-error=$W/$1/error.log $3 >/dev/null 2>&1 &
  echo $! > $W/$1/pid
}
start S 1 "--log-bin=$W/S/binlog --binlog-format=ROW"
start T1 2 --skip-log-bin
start T2 3 --skip-log-bin
for s in S T1 T2; do for i in $(seq 1 120); do mariadb -uroot -S $W/$s/sock -e 'select 1' >/dev/null 2>&1 && break; sleep 0.5; done; done
q() { mariadb -uroot -S $W/$1/sock; }
for s in S T1 T2; do (echo "SET sql_log_bin=0; CREATE DATABASE d;"; cat pre.sql) | q $s; done
tk() { awk '{print $14+$15}' /proc/$(cat $W/$1/pid)/stat; }
HZ=$(getconf CLK_TCK)
for shape in insert upsert update delete; do
  echo "FLUSH BINARY LOGS" | q S
  F=$(echo "SHOW MASTER STATUS" | mariadb -uroot -S $W/S/sock -N | cut -f1)
  (echo 'DELIMITER $$'; sed 's/;$/$$/' $shape.sql | sed 's/; COMMIT\$\$$/; COMMIT$$/') | q S
  echo "FLUSH BINARY LOGS" | q S
  mariadb-binlog $W/S/$F > $W/$shape.binlog.sql
  # CPU over the apply and 3 s after it (InnoDB's background work), less
  # the server's idle rate over the 3 s before.
  i0=$(tk T1); sleep 3; a=$(tk T1); (echo 'DELIMITER $$'; sed 's/;$/$$/' $shape.sql) | q T1; sleep 3; b=$(tk T1)
  j0=$(tk T2); sleep 3; c=$(tk T2); q T2 < $W/$shape.binlog.sql; sleep 3; d=$(tk T2)
  printf "%s sql_cpu=%.3f binlog_cpu=%.3f idle=%.3f,%.3f sql_bytes=%d binlog_bytes=%d load=%s\n" $shape $(echo "($b-$a-($a-$i0))/$HZ" | bc -l) $(echo "($d-$c-($c-$j0))/$HZ" | bc -l) $(echo "($a-$i0)/$HZ" | bc -l) $(echo "($c-$j0)/$HZ" | bc -l) $(stat -c %s $shape.sql) $(stat -c %s $W/$shape.binlog.sql) "$(cut -d' ' -f1 /proc/loadavg)"
done
for s in S T1 T2; do echo "CHECKSUM TABLE d.t" | mariadb -uroot -S $W/$s/sock -N; done
for s in S T1 T2; do kill $(cat $W/$s/pid); done; wait
[ -n "$SHAPES_DIR" ] || rm -rf $W
