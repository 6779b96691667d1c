-- tpcc.lua: a TPC-C-like workload for sysbench 1.0 (prepl bench --workloads
-- tpcc). It is not TPC-C (no terminals, no keying or think times, no
-- checks of the response times): it is the shape of a real OLTP schema that
-- a replica has to apply, where sysbench's own scripts have one table and one
-- key:
--   - nine tables, every one but item with foreign keys, all of them
--     without an action (NO ACTION, as TPC-C schemas declare them);
--   - hot rows: every new-order updates its district's d_next_o_id, every
--     payment its warehouse's w_ytd and its district's d_ytd;
--   - wide rows: customer has 21 columns, c_data up to 500 characters; stock
--     has ten 24-character s_dist columns;
--   - history has neither a primary nor a unique key, and is insert only;
--   - the mix of TPC-C: new-order 45%, payment 43%, order-status, delivery
--     and stock-level 4% each. 1% of new-orders roll back (an unknown item),
--     and the read-only ones write nothing: neither is in the binlog.
--
-- Sizes are TPC-C's per warehouse (100,000 items, 10 districts of 3,000
-- customers and 3,000 orders, the last 900 of them new), scaled by
-- --warehouses; --items and --customers shrink them for tests.
--
--   sysbench tpcc.lua --mysql-db=tpcc --warehouses=2 prepare
--   sysbench tpcc.lua --mysql-db=tpcc --warehouses=2 --threads=16 --events=20000 run
--
-- Each client thread has a home warehouse (thread id modulo the warehouses),
-- as TPC-C's terminals do. Deadlocks and lock wait timeouts roll the
-- transaction back and run it again (sysbench's --mysql-ignore-errors).

sysbench.cmdline.options = {
   warehouses = {"Number of warehouses", 2},
   items = {"Number of items (TPC-C: 100000)", 100000},
   customers = {"Customers and initial orders per district (TPC-C: 3000)", 3000},
   mysql_storage_engine = {"Storage engine", "innodb"},
}

local W, ITEMS, CUST

local function opts()
   W = sysbench.opt.warehouses
   ITEMS = sysbench.opt.items
   CUST = sysbench.opt.customers
   assert(W >= 1 and ITEMS >= 10 and CUST >= 10, "need --warehouses >= 1, --items >= 10, --customers >= 10")
end

-- Random values ------------------------------------------------------------

local rnd = sysbench.rand.uniform

-- A pool of random alphanumeric characters; strings are slices of it.
local POOL
local function pool()
   if POOL == nil then
      local chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
      local t = {}
      for i = 1, 8192 do
         local k = rnd(1, #chars)
         t[i] = chars:sub(k, k)
      end
      POOL = table.concat(t)
   end
   return POOL
end

local function astring(lo, hi)
   local n = rnd(lo, hi)
   local off = rnd(1, 8192 - n)
   return pool():sub(off, off + n - 1)
end

local function nstring(lo, hi)
   local n = rnd(lo, hi)
   local t = {}
   for i = 1, n do t[i] = rnd(0, 9) end
   return table.concat(t)
end

local function zip() return nstring(4, 4) .. "11111" end

-- data strings of item and stock: 10% hold "ORIGINAL"
local function data_string()
   local s = astring(26, 50)
   if rnd(1, 10) == 1 then
      local p = rnd(1, #s - 8)
      s = s:sub(1, p - 1) .. "ORIGINAL" .. s:sub(p + 8)
   end
   return s
end

local C_LAST, C_ID, C_ITEM = 157, 259, 7911

local function nurand(a, x, y, c)
   return ((bit.bor(rnd(0, a), rnd(x, y)) + c) % (y - x + 1)) + x
end

local SYLLABLES = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

local function last_name(n)
   return SYLLABLES[math.floor(n / 100) + 1] .. SYLLABLES[math.floor(n / 10) % 10 + 1] .. SYLLABLES[n % 10 + 1]
end

local function money(lo, hi) return string.format("%.2f", rnd(lo * 100, hi * 100) / 100) end
local function tax() return string.format("%.4f", rnd(0, 2000) / 10000) end

-- Schema --------------------------------------------------------------------

local SCHEMA = {
   [[CREATE TABLE warehouse (
  w_id SMALLINT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id)) ENGINE=%s]],
   [[CREATE TABLE district (
  d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
  d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id),
  CONSTRAINT fk_district_warehouse FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id)) ENGINE=%s]],
   [[CREATE TABLE customer (
  c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME,
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt SMALLINT, c_delivery_cnt SMALLINT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id),
  KEY idx_customer (c_w_id, c_d_id, c_last, c_first),
  CONSTRAINT fk_customer_district FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id)) ENGINE=%s]],
   [[CREATE TABLE history (
  h_c_id INT, h_c_d_id TINYINT, h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT,
  h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24),
  CONSTRAINT fk_history_customer FOREIGN KEY (h_c_w_id, h_c_d_id, h_c_id) REFERENCES customer (c_w_id, c_d_id, c_id),
  CONSTRAINT fk_history_district FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id)) ENGINE=%s]],
   [[CREATE TABLE orders (
  o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL, o_c_id INT,
  o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id),
  KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id),
  CONSTRAINT fk_orders_customer FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)) ENGINE=%s]],
   [[CREATE TABLE new_orders (
  no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id),
  CONSTRAINT fk_new_orders_orders FOREIGN KEY (no_w_id, no_d_id, no_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)) ENGINE=%s]],
   [[CREATE TABLE item (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
  PRIMARY KEY (i_id)) ENGINE=%s]],
   [[CREATE TABLE stock (
  s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
  s_ytd DECIMAL(8,0), s_order_cnt SMALLINT, s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id),
  CONSTRAINT fk_stock_warehouse FOREIGN KEY (s_w_id) REFERENCES warehouse (w_id),
  CONSTRAINT fk_stock_item FOREIGN KEY (s_i_id) REFERENCES item (i_id)) ENGINE=%s]],
   [[CREATE TABLE order_line (
  ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL,
  ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d DATETIME, ol_quantity TINYINT,
  ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number),
  CONSTRAINT fk_order_line_orders FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id),
  CONSTRAINT fk_order_line_stock FOREIGN KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)) ENGINE=%s]],
}

-- Initial population -------------------------------------------------------

-- bulk inserts rows made by row(i), i = 1..n, in multi-row INSERTs.
local function bulk(con, insert, n, row)
   con:bulk_insert_init(insert)
   for i = 1, n do
      con:bulk_insert_next(row(i))
   end
   con:bulk_insert_done()
end

local function load_warehouse(con, w)
   con:query(string.format("INSERT INTO warehouse VALUES (%d, '%s', '%s', '%s', '%s', '%s', '%s', %s, 300000.00)",
      w, astring(6, 10), astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(), tax()))
   bulk(con, "INSERT INTO district VALUES", 10, function(d)
      return string.format("(%d, %d, '%s', '%s', '%s', '%s', '%s', '%s', %s, 30000.00, %d)",
         d, w, astring(6, 10), astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(), tax(), CUST + 1)
   end)
   bulk(con, "INSERT INTO stock VALUES", ITEMS, function(i)
      local dist = {}
      for k = 1, 10 do dist[k] = "'" .. astring(24, 24) .. "'" end
      return string.format("(%d, %d, %d, %s, 0, 0, 0, '%s')", i, w, rnd(10, 100), table.concat(dist, ", "), data_string())
   end)
   local new_from = CUST - math.floor(CUST * 3 / 10) + 1 -- TPC-C: orders 2101..3000 are new
   for d = 1, 10 do
      bulk(con, "INSERT INTO customer VALUES", CUST, function(c)
         local last = c <= 1000 and last_name(c - 1) or last_name(nurand(255, 0, 999, C_LAST))
         local credit = rnd(1, 10) == 1 and "BC" or "GC"
         return string.format("(%d, %d, %d, '%s', 'OE', '%s', '%s', '%s', '%s', '%s', '%s', '%s', NOW(), '%s', 50000.00, %s, -10.00, 10.00, 1, 0, '%s')",
            c, d, w, astring(8, 16), last, astring(10, 20), astring(10, 20), astring(10, 20), astring(2, 2), zip(),
            nstring(16, 16), credit, string.format("%.4f", rnd(0, 5000) / 10000), astring(300, 500))
      end)
      bulk(con, "INSERT INTO history VALUES", CUST, function(c)
         return string.format("(%d, %d, %d, %d, %d, NOW(), 10.00, '%s')", c, d, w, d, w, astring(12, 24))
      end)
      -- o_c_id is a random permutation of the customers
      local perm = {}
      for c = 1, CUST do perm[c] = c end
      for c = CUST, 2, -1 do
         local k = rnd(1, c)
         perm[c], perm[k] = perm[k], perm[c]
      end
      local cnt = {}
      bulk(con, "INSERT INTO orders VALUES", CUST, function(o)
         cnt[o] = rnd(5, 15)
         local carrier = o < new_from and tostring(rnd(1, 10)) or "NULL"
         return string.format("(%d, %d, %d, %d, NOW(), %s, %d, 1)", o, d, w, perm[o], carrier, cnt[o])
      end)
      bulk(con, "INSERT INTO new_orders VALUES", CUST - new_from + 1, function(i)
         return string.format("(%d, %d, %d)", new_from + i - 1, d, w)
      end)
      con:bulk_insert_init("INSERT INTO order_line VALUES")
      for o = 1, CUST do
         for n = 1, cnt[o] do
            local delivered = o < new_from
            con:bulk_insert_next(string.format("(%d, %d, %d, %d, %d, %d, %s, 5, %s, '%s')",
               o, d, w, n, rnd(1, ITEMS), w, delivered and "NOW()" or "NULL",
               delivered and "0.00" or money(0.01, 9999.99), astring(24, 24)))
         end
      end
      con:bulk_insert_done()
   end
end

function cmd_prepare()
   opts()
   local con = sysbench.sql.driver():connect()
   local engine = sysbench.opt.mysql_storage_engine
   for _, ddl in ipairs(SCHEMA) do
      con:query(string.format(ddl, engine))
   end
   print(string.format("Loading %d items", ITEMS))
   bulk(con, "INSERT INTO item VALUES", ITEMS, function(i)
      return string.format("(%d, %d, '%s', %s, '%s')", i, rnd(1, 10000), astring(14, 24), money(1, 100), data_string())
   end)
   for w = 1, W do
      print(string.format("Loading warehouse %d of %d", w, W))
      load_warehouse(con, w)
   end
end

function cmd_cleanup()
   local con = sysbench.sql.driver():connect()
   for _, t in ipairs({"order_line", "new_orders", "orders", "history", "customer", "district", "stock", "item", "warehouse"}) do
      con:query("DROP TABLE IF EXISTS " .. t)
   end
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare},
   cleanup = {cmd_cleanup},
}

-- Transactions ----------------------------------------------------------------

local con, home

function thread_init()
   opts()
   con = sysbench.sql.driver():connect()
   home = sysbench.tid % W + 1
end

function thread_done()
   con:disconnect()
end

-- A deadlock or lock wait timeout: roll back what is left of the
-- transaction, sysbench then runs the event again.
function sysbench.hooks.before_restart_event(err)
   con:query("ROLLBACK")
end

local function other_warehouse(w)
   if W == 1 then return w end
   local o = rnd(1, W - 1)
   if o >= w then o = o + 1 end
   return o
end

-- pick_customer returns the id of a customer of district (w, d): 60% by
-- last name (the middle one of those with the name, by first name), else by
-- id; nil, by-name if no customer has the name.
local function pick_customer(w, d)
   if rnd(1, 100) <= 60 then
      local name = last_name(nurand(255, 0, 999, C_LAST))
      local rs = con:query(string.format(
         "SELECT c_id FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_last = '%s' ORDER BY c_first", w, d, name))
      if rs.nrows > 0 then
         local ids = {}
         for i = 1, rs.nrows do ids[i] = rs:fetch_row()[1] end
         return tonumber(ids[math.ceil(rs.nrows / 2)])
      end
   end
   return nurand(1023, 1, CUST, C_ID)
end

local function new_order()
   local w, d = home, rnd(1, 10)
   local c = nurand(1023, 1, CUST, C_ID)
   local n = rnd(5, 15)
   local lines, all_local = {}, 1
   for i = 1, n do
      local supply = w
      if rnd(1, 100) == 1 then supply = other_warehouse(w) end
      if supply ~= w then all_local = 0 end
      lines[i] = {item = nurand(8191, 1, ITEMS, C_ITEM), supply = supply, qty = rnd(1, 10)}
   end
   if rnd(1, 100) == 1 then lines[n].item = ITEMS + 1 end -- unknown: the order rolls back
   -- Stock rows are locked in one order by every transaction: no deadlocks
   -- between new-orders.
   table.sort(lines, function(a, b)
      if a.supply ~= b.supply then return a.supply < b.supply end
      return a.item < b.item
   end)
   con:query("BEGIN")
   con:query(string.format("SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
   con:query(string.format("SELECT w_tax FROM warehouse WHERE w_id = %d", w))
   local next_o = con:query_row(string.format("SELECT d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d FOR UPDATE", w, d))
   local o = tonumber(next_o)
   con:query(string.format("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %d AND d_id = %d", w, d))
   con:query(string.format("INSERT INTO orders VALUES (%d, %d, %d, %d, NOW(), NULL, %d, %d)", o, d, w, c, n, all_local))
   con:query(string.format("INSERT INTO new_orders VALUES (%d, %d, %d)", o, d, w))
   for i, l in ipairs(lines) do
      local price = con:query_row(string.format("SELECT i_price FROM item WHERE i_id = %d", l.item))
      if price == nil then
         con:query("ROLLBACK")
         return
      end
      local qty = con:query_row(string.format(
         "SELECT s_quantity FROM stock WHERE s_w_id = %d AND s_i_id = %d FOR UPDATE", l.supply, l.item))
      qty = tonumber(qty)
      if qty >= l.qty + 10 then qty = qty - l.qty else qty = qty - l.qty + 91 end
      con:query(string.format(
         "UPDATE stock SET s_quantity = %d, s_ytd = s_ytd + %d, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + %d WHERE s_w_id = %d AND s_i_id = %d",
         qty, l.qty, l.supply == w and 0 or 1, l.supply, l.item))
      con:query(string.format("INSERT INTO order_line VALUES (%d, %d, %d, %d, %d, %d, NULL, %d, %.2f, '%s')",
         o, d, w, i, l.item, l.supply, l.qty, l.qty * tonumber(price), astring(24, 24)))
   end
   con:query("COMMIT")
end

local function payment()
   local w, d = home, rnd(1, 10)
   local cw, cd = w, d
   if rnd(1, 100) <= 15 then cw, cd = other_warehouse(w), rnd(1, 10) end
   local amount = rnd(100, 500000) / 100
   con:query("BEGIN")
   con:query(string.format("UPDATE warehouse SET w_ytd = w_ytd + %.2f WHERE w_id = %d", amount, w))
   local w_name = con:query_row(string.format(
      "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = %d", w))
   con:query(string.format("UPDATE district SET d_ytd = d_ytd + %.2f WHERE d_w_id = %d AND d_id = %d", amount, w, d))
   local d_name = con:query_row(string.format(
      "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = %d AND d_id = %d", w, d))
   local c = pick_customer(cw, cd)
   local credit = con:query_row(string.format(
      "SELECT c_credit, c_first, c_middle, c_last, c_street_1, c_city, c_phone, c_since, c_credit_lim, c_discount, c_balance " ..
         "FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d FOR UPDATE", cw, cd, c))
   local set = string.format("c_balance = c_balance - %.2f, c_ytd_payment = c_ytd_payment + %.2f, c_payment_cnt = c_payment_cnt + 1",
      amount, amount)
   if credit == "BC" then
      local old = con:query_row(string.format("SELECT c_data FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", cw, cd, c))
      local data = string.format("%d %d %d %d %d %.2f | %s", c, cd, cw, d, w, amount, old or "")
      set = set .. string.format(", c_data = '%s'", data:sub(1, 500))
   end
   con:query(string.format("UPDATE customer SET %s WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", set, cw, cd, c))
   con:query(string.format("INSERT INTO history VALUES (%d, %d, %d, %d, %d, NOW(), %.2f, '%s    %s')",
      c, cd, cw, d, w, amount, w_name, d_name))
   con:query("COMMIT")
end

local function order_status()
   local w, d = home, rnd(1, 10)
   con:query("BEGIN")
   local c = pick_customer(w, d)
   con:query(string.format("SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", w, d, c))
   local o = con:query_row(string.format(
      "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d ORDER BY o_id DESC LIMIT 1", w, d, c))
   if o ~= nil then
      con:query(string.format(
         "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s",
         w, d, o))
   end
   con:query("COMMIT")
end

local function delivery()
   local w, carrier = home, rnd(1, 10)
   con:query("BEGIN")
   for d = 1, 10 do
      local o = con:query_row(string.format(
         "SELECT no_o_id FROM new_orders WHERE no_w_id = %d AND no_d_id = %d ORDER BY no_o_id LIMIT 1 FOR UPDATE", w, d))
      if o ~= nil then
         con:query(string.format("DELETE FROM new_orders WHERE no_w_id = %d AND no_d_id = %d AND no_o_id = %s", w, d, o))
         local c = con:query_row(string.format("SELECT o_c_id FROM orders WHERE o_w_id = %d AND o_d_id = %d AND o_id = %s", w, d, o))
         con:query(string.format("UPDATE orders SET o_carrier_id = %d WHERE o_w_id = %d AND o_d_id = %d AND o_id = %s", carrier, w, d, o))
         con:query(string.format("UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o))
         local total = con:query_row(string.format(
            "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %s", w, d, o))
         con:query(string.format(
            "UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = %d AND c_d_id = %d AND c_id = %s",
            total or "0", w, d, c))
      end
   end
   con:query("COMMIT")
end

local function stock_level()
   local w, d = home, rnd(1, 10)
   con:query("BEGIN")
   local next_o = tonumber(con:query_row(string.format("SELECT d_next_o_id FROM district WHERE d_w_id = %d AND d_id = %d", w, d)))
   con:query(string.format(
      "SELECT COUNT(DISTINCT s_i_id) FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id " ..
         "WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id >= %d AND ol_o_id < %d AND s_quantity < %d",
      w, d, next_o - 20, next_o, rnd(10, 20)))
   con:query("COMMIT")
end

function event()
   local x = rnd(1, 100)
   if x <= 45 then
      new_order()
   elseif x <= 88 then
      payment()
   elseif x <= 92 then
      order_status()
   elseif x <= 96 then
      delivery()
   else
      stock_level()
   end
end
