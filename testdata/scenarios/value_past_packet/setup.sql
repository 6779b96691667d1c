-- The source must take a 20 MiB value (target.sql sets the targets back).
SET GLOBAL max_allowed_packet = 64 * 1024 * 1024;
