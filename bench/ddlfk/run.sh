#!/bin/bash
# A stream of DDL into a target of many tables (docs/benchmarks.md, "DDL
# into a target of many tables"): the first half of MariaDB's test
# innodb.innodb-fk (120 CREATE TABLEs with a cascading foreign key, each
# followed by 3 one-row INSERTs, an UPDATE of the parent, 121 DROP
# TABLEs), written by a source S with a ROW binlog, then applied by each
# prepl binary given with `prepl replay --workers 0` into a fresh target
# that already holds FILLER tables (schema f; default 300), REPEAT times
# each, the binaries alternating ("reference" for mariadb-binlog | mariadb).
# Prints one line a run: the seconds, the CPU seconds of prepl
# (user+system) and of the target's mariadbd.
#
# Usage: bench/ddlfk/run.sh PREPL|reference... (MariaDB's server and client tools on
# PATH; REPEAT, FILLER; DDLFK_DIR keeps the servers' files there).
set -e
[ $# -gt 0 ] || { echo "usage: $0 PREPL..." >&2; exit 2; }
W=${DDLFK_DIR:-$(mktemp -d)}; REPEAT=${REPEAT:-3}; FILLER=${FILLER:-300}; HZ=$(getconf CLK_TCK)
mkdir -p $W/tmpl
[ -d $W/tmpl/data ] || mariadb-install-db --no-defaults --datadir=$W/tmpl/data --user=root --auth-root-authentication-method=normal --skip-test-db >/dev/null 2>&1
start() { # name port extra-args
  rm -rf $W/$1; mkdir -p $W/$1; cp -a $W/tmpl/data $W/$1/data
  mariadbd --no-defaults --datadir=$W/$1/data --socket=$W/$1/sock --port=$2 --bind-address=127.0.0.1 --user=root \
    --server-id=$2 --innodb-buffer-pool-size=256M --innodb-log-file-size=256M --innodb-flush-log-at-trx-commit=2 \
    --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --log-error=$W/$1/error.log $3 >/dev/null 2>&1 &
  echo $! > $W/$1/pid
  for i in $(seq 1 120); do mariadb -uroot -S $W/$1/sock -e 'select 1' >/dev/null 2>&1 && return; sleep 0.5; done
  echo "$1 did not start" >&2; exit 1
}
stop() { kill $(cat $W/$1/pid); while kill -0 $(cat $W/$1/pid) 2>/dev/null; do sleep 0.2; done; }
q() { mariadb -uroot -S $W/$1/sock; }
tk() { awk '{print $14+$15}' /proc/$(cat $W/$1/pid)/stat; }

if [ ! -s $W/files ]; then
  start S 3471 "--log-bin=$W/S/binlog --binlog-format=ROW --binlog-row-metadata=FULL"
  {
    echo "CREATE DATABASE test; USE test;"
    echo "create table t1 (f1 int primary key) engine=innodb;"
    echo "insert into t1 values (5); insert into t1 values (2882); insert into t1 values (10);"
    for i in $(seq 120 -1 1); do
      echo "create table fk_$i (f1 int primary key, constraint pc$i foreign key (f1) references t1(f1) on delete cascade on update cascade) engine=innodb;"
      echo "insert into fk_$i values (5); insert into fk_$i values (2882); insert into fk_$i values (10);"
    done
    echo "update t1 set f1 = 28 where f1 = 2882;"
    for i in $(seq 120 -1 1); do echo "drop table fk_$i;"; done
    echo "drop table t1;"
  } | q S
  stop S
  mkdir -p $W/binlog; cp $W/S/binlog.0* $W/binlog/
  ls $W/binlog/* > $W/files
fi
filler() {
  echo "CREATE DATABASE f; USE f;"
  for i in $(seq 1 $FILLER); do echo "CREATE TABLE t$i (id INT PRIMARY KEY, v INT, KEY (v)) ENGINE=InnoDB;"; done
}
for r in $(seq 1 $REPEAT); do
  for bin in "$@"; do
    start T 3472 --skip-log-bin
    filler | q T
    a=$(tk T); t0=$(date +%s.%N)
    if [ "$bin" = reference ]; then
      echo "0 0" > $W/time; mariadb-binlog $(cat $W/files) | q T
    else
      /usr/bin/time -f "%U %S" -o $W/time $bin replay --target mysql://root@127.0.0.1:3472 --workers 0 --progress 0 $(cat $W/files) > $W/out 2>&1 || { cat $W/out; exit 1; }
    fi
    t1=$(date +%s.%N); b=$(tk T)
    n=$(echo "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'test'" | mariadb -uroot -S $W/T/sock -N)
    stop T
    printf "run=%d prepl=%s seconds=%.2f prepl_cpu=%.2f target_cpu=%.2f tables_left=%s load=%s\n" $r $bin \
      $(echo "$t1 - $t0" | bc -l) $(awk '{print $1+$2}' $W/time) $(echo "($b - $a) / $HZ" | bc -l) $n "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
[ -n "$DDLFK_DIR" ] || rm -rf $W
