-- A function that draws RAND() and writes rows: the source accepts it
-- only with this set (binary logging on); row-based logging makes it safe.
SET GLOBAL log_bin_trust_function_creators = 1;
