SET GLOBAL max_allowed_packet = 16 * 1024 * 1024;
