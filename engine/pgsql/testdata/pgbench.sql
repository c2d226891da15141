BEGIN;
END;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (4, 1, 53113, -1256, CURRENT_TIMESTAMP);
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (4, 1, 62751, 4630, CURRENT_TIMESTAMP);
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (7, 1, 44282, -3124, CURRENT_TIMESTAMP);
SELECT abalance FROM pgbench_accounts WHERE aid = 44282;
SELECT abalance FROM pgbench_accounts WHERE aid = 53113;
SELECT abalance FROM pgbench_accounts WHERE aid = 62751;
UPDATE pgbench_accounts SET abalance = abalance + -1256 WHERE aid = 53113;
UPDATE pgbench_accounts SET abalance = abalance + -3124 WHERE aid = 44282;
UPDATE pgbench_accounts SET abalance = abalance + 4630 WHERE aid = 62751;
UPDATE pgbench_branches SET bbalance = bbalance + -1256 WHERE bid = 1;
UPDATE pgbench_branches SET bbalance = bbalance + -3124 WHERE bid = 1;
UPDATE pgbench_branches SET bbalance = bbalance + 4630 WHERE bid = 1;
UPDATE pgbench_tellers SET tbalance = tbalance + -1256 WHERE tid = 4;
UPDATE pgbench_tellers SET tbalance = tbalance + -3124 WHERE tid = 7;
UPDATE pgbench_tellers SET tbalance = tbalance + 4630 WHERE tid = 4;
alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches
alter table pgbench_accounts add primary key (aid)
alter table pgbench_branches add primary key (bid)
alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts
alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches
alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers
alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches
alter table pgbench_tellers add primary key (tid)
begin
commit
copy pgbench_accounts from stdin with (freeze on)
create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)
create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)
create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))
create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)
drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers
insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 100000) as aid
insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 1) as bid
insert into pgbench_branches(bid,bbalance) values(1,0)
insert into pgbench_tellers(tid,bid,tbalance) values (1,1,0)
insert into pgbench_tellers(tid,bid,tbalance) values (2,1,0)
insert into pgbench_tellers(tid,bid,tbalance) values (3,1,0)
select count(*) from pgbench_branches
select o.n, p.partstrat, pg_catalog.count(i.inhparent) from pg_catalog.pg_class as c join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) where c.relname = 'pgbench_accounts' and o.n is not null group by 1, 2 order by 1 asc limit 1
truncate pgbench_history
truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers
vacuum analyze pgbench_accounts
vacuum analyze pgbench_branches
vacuum analyze pgbench_history
vacuum analyze pgbench_tellers
vacuum pgbench_branches
vacuum pgbench_tellers
