# Generates the SQL of each statement shape: N row changes, 1000 rows per
# statement or per transaction, on t(id INT PK, a INT, b VARCHAR(50), c DECIMAL(12,2), d DATETIME).
import sys
D = sys.argv[1] if len(sys.argv) > 1 else "."
N, B, PRE = 100000, 1000, 300000
def row(i, a): return "(%d,%d,'name-%d-%d',%d.%02d,'2024-01-%02d 10:%02d:%02d')" % (i, a, i, a, a % 100000, a % 100, 1 + a % 28, a % 60, i % 60)
out = {}
# preload
pre = ["CREATE TABLE d.t (id INT PRIMARY KEY, a INT, b VARCHAR(50), c DECIMAL(12,2), d DATETIME) ENGINE=InnoDB;"]
for s in range(1, PRE + 1, B):
    pre.append("INSERT INTO d.t VALUES " + ",".join(row(i, i) for i in range(s, s + B)) + ";")
out["pre"] = pre
# multi-row INSERT of new rows
out["insert"] = ["BEGIN; INSERT INTO d.t VALUES " + ",".join(row(i, i) for i in range(s, s + B)) + "; COMMIT;" for s in range(PRE + 1, PRE + N + 1, B)]
# INSERT ... ON DUPLICATE KEY UPDATE every column, of existing rows (a changed)
out["upsert"] = ["BEGIN; INSERT INTO d.t VALUES " + ",".join(row(i, i + 7) for i in range(s, s + B)) +
                 " ON DUPLICATE KEY UPDATE a=VALUES(a),b=VALUES(b),c=VALUES(c),d=VALUES(d); COMMIT;" for s in range(1, N + 1, B)]
# UPDATE by key, only the changed column, one statement per row
out["update"] = ["BEGIN; " + " ".join("UPDATE d.t SET a=%d WHERE id=%d;" % (i + 13, i) for i in range(s, s + B)) + " COMMIT;" for s in range(N + 1, 2 * N + 1, B)]
# DELETE ... IN of 1000 keys
out["delete"] = ["BEGIN; DELETE FROM d.t WHERE id IN (" + ",".join(str(i) for i in range(s, s + B)) + "); COMMIT;" for s in range(2 * N + 1, 3 * N + 1, B)]
for k, v in out.items():
    open("%s/%s.sql" % (D, k), "w").write("\n".join(v) + "\n")
