<?php
// One PostgreSQL driver of PHP through sqlfwd: php pg.php DRIVER with DRIVER
// pgsql (the pg_* functions, libpq) or pdo_pgsql. e2e/drivers_test.go runs
// it and judges the lines it prints ("step value ...", see
// e2e/drivers/README.md); the program only reports what the driver did.
// Connection settings come from DRV_HOST, DRV_PORT, DRV_USER, DRV_PASSWORD,
// DRV_DB; the table (id int primary key, v text, made by the test) from
// DRV_TABLE. Both use named server-side statements (pg_prepare; PDO with
// ATTR_EMULATE_PREPARES false). With DRV_CA (a CA certificate's file) the
// connection is TLS, the server's certificate verified against it.

function env(string $k): string {
    $v = getenv($k);
    if ($v === false || $v === '') { fwrite(STDERR, "$k not set\n"); exit(2); }
    return $v;
}
function out(...$a): void { echo implode(' ', $a), "\n"; }

class PgErr extends Exception {
    function __construct(public string $sqlstate, string $msg) { parent::__construct($msg); }
}

$T = env('DRV_TABLE');
[$host, $port, $user, $pass, $db] = [env('DRV_HOST'), env('DRV_PORT'), env('DRV_USER'), env('DRV_PASSWORD'), env('DRV_DB')];
$tls = getenv('DRV_CA') ? 'sslmode=verify-full sslrootcert=' . getenv('DRV_CA') : 'sslmode=disable';

// Each driver behind one interface: q (simple query protocol, several
// statements allowed; the rows of each), x (a named prepared statement)
// and err (SQLSTATE and message of an exception).
interface Drv {
    function q(string $s): array;
    function x(string $s, array $p): array;
    function forget(): void;
    function err(Throwable $e): string;
}

class Pgsql_ implements Drv {
    public $c;
    private array $names = [];
    function __construct($dsn) { $this->c = pg_connect($dsn); }
    // pg_send_query and pg_get_result keep every statement's result and
    // the error's SQLSTATE, which pg_query would not
    private function results(): array {
        $res = [];
        while ($r = pg_get_result($this->c)) {
            if (pg_result_status($r) == PGSQL_FATAL_ERROR) {
                $e = new PgErr(pg_result_error_field($r, PGSQL_DIAG_SQLSTATE), trim(pg_result_error_field($r, PGSQL_DIAG_MESSAGE_PRIMARY)));
                while (pg_get_result($this->c)) {}
                throw $e;
            }
            $res[] = pg_fetch_all($r, PGSQL_NUM);
        }
        return $res;
    }
    function q(string $s): array {
        pg_send_query($this->c, $s);
        return $this->results();
    }
    function x(string $s, array $p): array {
        if (!isset($this->names[$s])) {
            $name = 'drv' . count($this->names);
            pg_send_prepare($this->c, $name, $s);
            $this->results();
            $this->names[$s] = $name;
        }
        pg_send_execute($this->c, $this->names[$s], $p);
        return $this->results()[0];
    }
    function forget(): void { $this->names = []; }
    function err(Throwable $e): string { return ($e instanceof PgErr ? $e->sqlstate : '-') . ' ' . $e->getMessage(); }
}

class Pdo_ implements Drv {
    public PDO $p;
    function __construct($host, $port, $user, $pass, $db) {
        global $tls;
        $this->p = new PDO("pgsql:host=$host;port=$port;dbname=$db;" . str_replace(' ', ';', $tls), $user, $pass, [
            PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
            PDO::ATTR_EMULATE_PREPARES => false,
        ]);
    }
    // exec() is one simple Query (several statements allowed, no rows);
    // query() with emulation on is too, with the last statement's rows
    function q(string $s): array {
        $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, true);
        try {
            $st = $this->p->query($s);
            return [$st->columnCount() ? $st->fetchAll(PDO::FETCH_NUM) : []];
        } finally {
            $this->p->setAttribute(PDO::ATTR_EMULATE_PREPARES, false);
        }
    }
    // PDO's placeholders are ?, which it numbers $1, $2 ... itself
    function x(string $s, array $p): array {
        $st = $this->p->prepare(preg_replace('/\$\d+/', '?', $s));
        $st->execute($p);
        return $st->columnCount() ? $st->fetchAll(PDO::FETCH_NUM) : [];
    }
    function forget(): void {}
    function err(Throwable $e): string {
        $i = $e instanceof PDOException ? $e->errorInfo : null;
        // errorInfo[2] is libpq's whole text: "ERROR:  sqlfw: ..."
        return $i ? $i[0] . ' ' . preg_replace('/^ERROR:\s+/', '', strtok($i[2], "\n")) : '- ' . $e->getMessage();
    }
}

$drv = match ($argv[1] ?? '') {
    'pgsql' => new Pgsql_("host=$host port=$port dbname=$db user=$user password=$pass $tls"),
    'pdo_pgsql' => new Pdo_($host, $port, $user, $pass, $db),
    default => exit("unknown driver\n"),
};
$first = fn(array $rows) => $rows[0][0];
$try = function (string $step, callable $f) use ($drv) {
    try { $f(); out($step, 'not blocked'); } catch (Throwable $e) { out($step, str_replace("\n", ' ', $drv->err($e))); }
};

out('connect', 'ok');
out('plain', $first($drv->q('select 41+1')[0]));
foreach ([[1, 'one'], [2, 'two'], [3, 'three']] as $row) {
    $drv->x("insert into $T (id, v) values ($1, $2)", $row);
}
out('prepared', $first($drv->x("select v from $T where id = $1", [2])));

$drv->q('begin');
$drv->x("insert into $T (id, v) values ($1, $2)", [4, 'four']);
$try('blocked', fn() => $drv->q("delete from $T"));
try { $drv->q('select 1'); out('in-tx', 'ran'); } catch (Throwable $e) { out('in-tx', explode(' ', $drv->err($e))[0]); }
$drv->q('rollback');

$try('blocked-prepare', fn() => $drv->x("update $T set v = $1", ['x']));
$try('blocked-multi', fn() => $drv->q("insert into $T values (5, 'five'); delete from $T"));
out('after', $first($drv->q("select count(*) from $T")[0]));

if ($drv instanceof Pgsql_) {
    out('multi', implode(',', array_map($first, $drv->q('select 1 as a; select 2 as b'))));
} else {
    // PDO hands back only the last statement's rows: the two values go
    // through the table
    $drv->q("insert into $T values (101, 'multi'); insert into $T values (102, 'multi')");
    $got = $drv->x("select id - 100 from $T where v = $1 order by id", ['multi']);
    $drv->q("delete from $T where v = 'multi'");
    out('multi', implode(',', array_map(fn($r) => $r[0], $got)));
}

$sum = fn(array $rows) => array_sum(array_map(fn($r) => (int) $r[0], $rows));
$big = $drv->q("select g, repeat('x', 100) from generate_series(1, 5000) g")[0];
out('big', count($big), $sum($big));
$bigx = $drv->x("select g, repeat('x', 100) from generate_series(1, $1::int) g", [5000]);
out('big-binary', count($bigx), $sum($bigx));

// DISCARD ALL, what a pool sends between clients
$drv->q("set application_name = 'sqlfw_e2e_kept'");
$drv->q('discard all');
$drv->forget();
out('reset', $first($drv->q("select case when current_setting('application_name') = 'sqlfw_e2e_kept' then 'kept' else 'cleared' end")[0]));
out('after-reset', $first($drv->x("select v from $T where id = $1 and true", [3])));
out('done');
