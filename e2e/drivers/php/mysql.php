<?php
// One MySQL/MariaDB driver of PHP through sqlfwd: php mysql.php DRIVER with
// DRIVER mysqli or pdo_mysql (both on mysqlnd). e2e/drivers_test.go runs it
// and judges the lines it prints ("step value ...", see
// e2e/drivers/README.md); the program only reports what the driver did.
// Connection settings come from DRV_HOST, DRV_PORT, DRV_USER, DRV_PASSWORD,
// DRV_DB; the table to work in from DRV_TABLE and the procedure with two
// result sets from DRV_PROC. Both use server-side prepared statements
// (PDO with ATTR_EMULATE_PREPARES false). With DRV_CA (a CA certificate's
// file) the connection is TLS, the server's certificate verified against it.

function env(string $k): string {
    $v = getenv($k);
    if ($v === false || $v === '') { fwrite(STDERR, "$k not set\n"); exit(2); }
    return $v;
}
function out(...$a): void { echo implode(' ', $a), "\n"; }

$T = env('DRV_TABLE');
$PROC = env('DRV_PROC');
[$host, $port, $user, $pass, $db] = [env('DRV_HOST'), (int) env('DRV_PORT'), env('DRV_USER'), env('DRV_PASSWORD'), env('DRV_DB')];

// Each driver behind one interface: q (text protocol), x (prepared,
// binary protocol), sets (every result set of a text or a prepared CALL),
// reset and err (errno, SQLSTATE and message of an exception).
interface Drv {
    function q(string $s): array;
    function x(string $s, array $p): array;
    function sets(string $s, bool $prepared): array;
    function reset(): string;
    function err(Throwable $e): string;
}

class Mysqli_ implements Drv {
    public mysqli $m;
    function __construct($host, $port, $user, $pass, $db) {
        mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
        $this->m = mysqli_init();
        $flags = 0;
        if ($ca = getenv('DRV_CA')) {
            $this->m->ssl_set(null, null, $ca, null, null);
            $this->m->options(MYSQLI_OPT_SSL_VERIFY_SERVER_CERT, true);
            $flags = MYSQLI_CLIENT_SSL;
        }
        $this->m->real_connect($host, $user, $pass, $db, $port, null, $flags);
    }
    function q(string $s): array {
        $r = $this->m->query($s);
        return $r === true ? [] : $r->fetch_all(MYSQLI_NUM);
    }
    function x(string $s, array $p): array {
        $st = $this->m->prepare($s);
        if ($p) { $st->bind_param(str_repeat('s', count($p)), ...$p); }
        $st->execute();
        $r = $st->get_result();
        $rows = $r ? $r->fetch_all(MYSQLI_NUM) : [];
        $st->close();
        return $rows;
    }
    function sets(string $s, bool $prepared): array {
        $res = [];
        if ($prepared) {
            $st = $this->m->prepare($s);
            $st->execute();
            do {
                if ($r = $st->get_result()) { $res[] = $r->fetch_all(MYSQLI_NUM); }
            } while ($st->more_results() && $st->next_result());
            $st->close();
            return $res;
        }
        $this->m->multi_query($s);
        do {
            if ($r = $this->m->store_result()) { $res[] = $r->fetch_all(MYSQLI_NUM); }
        } while ($this->m->more_results() && $this->m->next_result());
        return $res;
    }
    // COM_CHANGE_USER to the same user: the session starts anew
    function reset(): string {
        global $user, $pass, $db;
        $this->m->change_user($user, $pass, $db);
        return '';
    }
    function err(Throwable $e): string {
        return $e->getCode() . ' ' . ($e instanceof mysqli_sql_exception ? $e->getSqlState() : '-') . ' ' . $e->getMessage();
    }
}

class Pdo_ implements Drv {
    public PDO $p;
    function __construct($host, $port, $user, $pass, $db) {
        $this->p = new PDO("mysql:host=$host;port=$port;dbname=$db", $user, $pass, [
            PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
            PDO::ATTR_EMULATE_PREPARES => false,
            PDO::MYSQL_ATTR_MULTI_STATEMENTS => true,
        ] + (getenv('DRV_CA') ? [PDO::MYSQL_ATTR_SSL_CA => getenv('DRV_CA'), PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT => true] : []));
    }
    // exec and query without parameters go as COM_QUERY, except that with
    // emulation off query() prepares: the text protocol is exec or, for
    // rows, a query with emulation on
    function q(string $s): array {
        $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
        try {
            $st = $this->p->query($s);
            return $st->columnCount() ? $st->fetchAll(PDO::FETCH_NUM) : [];
        } finally {
            $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
        }
    }
    function x(string $s, array $p): array {
        $st = $this->p->prepare($s);
        $st->execute($p);
        return $st->columnCount() ? $st->fetchAll(PDO::FETCH_NUM) : [];
    }
    function sets(string $s, bool $prepared): array {
        $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, !$prepared);
        try {
            $st = $this->p->prepare($s);
            $st->execute();
            $res = [];
            // a prepared CALL's closing status comes back as one more,
            // empty, rowset (as it does from the server directly)
            do {
                if ($st->columnCount() && ($rows = $st->fetchAll(PDO::FETCH_NUM))) { $res[] = $rows; }
            } while ($st->nextRowset());
            return $res;
        } finally {
            $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
        }
    }
    // PDO has no reset of its own
    function reset(): string { return 'none'; }
    function err(Throwable $e): string {
        $i = $e instanceof PDOException ? $e->errorInfo : null;
        return $i ? "$i[1] $i[0] $i[2]" : '- - ' . $e->getMessage();
    }
}

$drv = match ($argv[1] ?? '') {
    'mysqli' => new Mysqli_($host, $port, $user, $pass, $db),
    'pdo_mysql' => new Pdo_($host, $port, $user, $pass, $db),
    default => exit("unknown driver\n"),
};
$first = fn(array $rows) => $rows[0][0];
$try = function (string $step, callable $f) use ($drv) {
    try { $f(); out($step, 'not blocked'); } catch (Throwable $e) { out($step, str_replace("\n", ' ', $drv->err($e))); }
};

out('connect', 'ok', 'binary');
out('plain', $first($drv->q('select 41+1')));
$drv->q("create table $T (id int primary key, v varchar(64))");
foreach ([[1, 'one'], [2, 'two'], [3, 'three']] as $row) {
    $drv->x("insert into $T (id, v) values (?, ?)", $row);
}
out('prepared', $first($drv->x("select v from $T where id = ?", [2])));

$drv->q('begin');
$drv->x("insert into $T (id, v) values (?, ?)", [4, 'four']);
$try('blocked', fn() => $drv->q("delete from $T"));
out('in-tx', $first($drv->q("select count(*) from $T")));
$drv->q('commit');

$try('blocked-prepare', fn() => $drv->x("update $T set v = ?", ['x']));
$try('blocked-multi', fn() => $drv->sets("insert into $T values (5, 'five'); delete from $T", false));
out('after', $first($drv->q("select count(*) from $T")));

out('multi', implode(',', array_map($first, $drv->sets('select 1 as a; select 2 as b', false))));
out('call', implode(',', array_map($first, $drv->sets("call $PROC()", false))));
out('call-binary', implode(',', array_map($first, $drv->sets("call $PROC()", true))));

$sum = fn(array $rows) => array_sum(array_map(fn($r) => (int) $r[0], $rows));
$big = $drv->q("select seq, repeat('x', 100) from seq_1_to_5000");
out('big', count($big), $sum($big));
$bigx = $drv->x("select seq, repeat('x', 100) from seq_1_to_5000 where seq <= ?", [5000]);
out('big-binary', count($bigx), $sum($bigx));

if ($drv instanceof Mysqli_) {
    // a read-only cursor: the server keeps the rows and the client asks
    // for them with COM_STMT_FETCH (mysqlnd: one row at a time)
    $st = $drv->m->prepare('select seq from seq_1_to_5000 where seq <= ?');
    $st->attr_set(MYSQLI_STMT_ATTR_CURSOR_TYPE, MYSQLI_CURSOR_TYPE_READ_ONLY);
    $limit = 5000;
    $st->bind_param('i', $limit);
    $st->execute();
    $st->bind_result($seq);
    [$n, $s] = [0, 0];
    while ($st->fetch()) { $n++; $s += $seq; }
    $st->close();
    out('cursor', $n, $s);
    // a parameter sent in pieces: COM_STMT_SEND_LONG_DATA before the execute
    $st = $drv->m->prepare('select length(?)');
    $null = null;
    $st->bind_param('b', $null);
    for ($i = 0; $i < 4; $i++) { $st->send_long_data(0, str_repeat('z', 1 << 20)); }
    $st->execute();
    out('long-data', $st->get_result()->fetch_row()[0]);
    $st->close();
}

if ($drv instanceof Pdo_) {
    // The classic: after SET NAMES gbk, PDO's emulated prepare (its
    // default) escapes the quote after 0xbf as 0xbf 0x5c 0x27, which GBK
    // reads as one character and a quote: the parameter ends the string
    // and "or 1=1" runs (it does against the server directly).
    $drv->p->exec('SET NAMES gbk');
    $drv->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
    try {
        $st = $drv->p->prepare("select id from $T where v = ?");
        $st->execute(["\xbf' or 1=1 -- "]);
        out('gbk-injection', 'not blocked', count($st->fetchAll()));
    } catch (PDOException $e) {
        out('gbk-injection', str_replace("\n", ' ', $drv->err($e)));
    }
    $drv->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
    $drv->p->exec('SET NAMES utf8mb4');
}

$drv->q("set @sqlfw_e2e = 'kept'");
$what = $drv->reset();
out('reset', $what !== '' ? $what : $first($drv->q("select coalesce(@sqlfw_e2e, 'cleared')")));
out('after-reset', $first($drv->x("select v from $T where id = ?", [3])));
out('done');
