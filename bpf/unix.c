//go:build ignore

// App-host interception of unix-socket clients (psql's default): connect()
// to a protected socket path is rewritten to the daemon's socket path with
// the kfunc bpf_sock_addr_set_sun_path (kernel >= 6.7). The daemon knows the
// original path from which of its listeners accepted, and the client from
// SO_PEERCRED, so no origin map is needed here.
//
// The redirect matches the path a client wrote, before the kernel resolves
// it: normalized (a run of slashes is one, "." components are nothing),
// then in protected_paths, or — for a relative name, /proc/self/cwd/... or
// /proc/self/root/... — in protected_rel by the client's working or root
// directory and the rest of the name. Names no program can resolve before
// the kernel does (a symlink, a hard link, "..", /proc/PID/root/... of
// another process, another mount of the directory) would reach the server
// unjudged. A guard sees the socket a connect resolved to and refuses a
// connect that reaches a protected server socket itself (by the bound
// file's device and inode) unless it is sqlfwd's own (own_cookies):
// guard_unix_stream_connect, an lsm_cgroup program on the same cgroup (BPF
// LSM active, kernel >= 6.0), or where that does not load,
// guard_unix_connect_ret, a modify_return program on
// security_unix_stream_connect that scopes itself to the cgroup. Both need
// BPF trampolines. A client that wrote a protected name was already sent
// to sqlfwd's listener and never reaches the check's subject.

#include "common.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define UNIX_PATH_MAX 108

volatile const __u64 cfg_netns_cookie = 0;
volatile const __u32 cfg_mark = 0;

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern int bpf_sock_addr_set_sun_path(struct bpf_sock_addr_kern *sa_kern, const __u8 *sun_path,
				      __u32 sun_path__sz) __ksym;

// unix_path is a socket path without its terminating NUL, zero padded, so
// that "/run/x" sent with or without the NUL (or in a 110-byte sockaddr)
// is one key. Abstract names (leading NUL) are not matched.
struct unix_path {
	__u8 path[UNIX_PATH_MAX];
};

// unix_target is where a protected path is sent: len bytes of path.
struct unix_target {
	__u8 path[UNIX_PATH_MAX];
	__u32 len;
};

enum {
	UNIX_CTR_REDIRECTED = 0,
	UNIX_CTR_SKIPPED_OWN,
	UNIX_CTR_SKIPPED_NETNS,
	UNIX_CTR_SET_PATH_FAILED,
	UNIX_CTR_GUARD_REFUSED,
	UNIX_CTR_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct unix_path);
	__type(value, struct unix_target);
} protected_paths SEC(".maps");

// unix_rel names a protected socket from one of its directory's
// ancestors (the directory itself included): that directory's s_dev and
// inode, and the rest of the path from it, without a leading slash
// (".s.PGSQL.5432", "postgresql/.s.PGSQL.5432", "run/postgresql/...").
// A relative name is looked up from the client's working directory, a
// /proc/self/cwd/ or /proc/self/root/ name from its working or root
// directory, so none needs the client's path resolved here.
struct unix_rel {
	__u64 ino;
	__u32 dev;
	__u32 pad;
	__u8 path[UNIX_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct unix_rel);
	__type(value, struct unix_target);
} protected_rel SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unix_rel);
} unix_rel_scratch SEC(".maps");

OWN_COOKIES_MAP(own_cookies);

// unix_inode names a bound socket file: the kernel's s_dev of its
// filesystem (major << 20 | minor) and its inode number.
struct unix_inode {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct unix_inode);
	__type(value, __u8);
} guarded_inodes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UNIX_CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} unix_counters SEC(".maps");

// unix_buf is a path buffer a power of two long, so that an index masked
// with UNIX_BUF_MASK is in bounds for the verifier whatever it proved.
#define UNIX_BUF_MASK 127
struct unix_buf {
	__u8 path[UNIX_BUF_MASK + 1];
};

// unix_raw holds the path as the client wrote it, unix_norm the name
// normalize_path makes of it (its first UNIX_PATH_MAX bytes are the key).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct unix_buf);
} unix_bufs SEC(".maps");

// normalize_path copies the first len bytes of raw into key as the kernel's
// lookup reads them, up to the spellings that are the same name whatever
// the directories are: a run of slashes is one ("/run//x", "//run/x"), and
// a "." component is nothing ("/run/./x", "./x"). ".." is left as
// written: the kernel resolves it after symlinks, which a program cannot.
// The rest of key is zeroed.
struct normalize_ctx {
	const struct unix_buf *raw;
	struct unix_buf *key;
	__u32 len, j;
	__u8 prev;
};

// normalize_step is one byte of normalize_path (a bpf_loop callback, so
// the verifier checks it once rather than every path through 108 bytes).
static long normalize_step(__u64 index, void *data)
{
	struct normalize_ctx *n = data;
	__u32 i = index;
	__u8 c, next = 0;

	if (i >= UNIX_PATH_MAX || i >= n->len)
		return 1;
	c = n->raw->path[i & UNIX_BUF_MASK];
	if (c == 0)
		return 1;
	if (i + 1 < n->len)
		next = n->raw->path[(i + 1) & UNIX_BUF_MASK];
	if (c == '/' && n->prev == '/')
		return 0;
	if (c == '.' && n->prev == '/' && (next == '/' || next == 0))
		return 0; // the next slash, if any, joins the previous one
	if (n->j >= UNIX_PATH_MAX)
		return 1;
	n->key->path[n->j & UNIX_BUF_MASK] = c;
	n->j++;
	n->prev = c;
	return 0;
}

static __always_inline void normalize_path(const struct unix_buf *raw, struct unix_buf *key, __u32 len)
{
	// a relative name starts as if after a slash: "./x" is "x"
	struct normalize_ctx n = {.raw = raw, .key = key, .len = len, .prev = raw->path[0] == '/' ? 0 : '/'};

	__builtin_memset(key->path, 0, sizeof(key->path));
	bpf_loop(UNIX_PATH_MAX, normalize_step, &n, 0);
	// "/run/x/." leaves "/run/x/", matching nothing: the kernel refuses a
	// trailing slash on a socket (ENOTDIR) as it is.
}

// has_prefix reports whether b starts with the n bytes of p (a literal).
#define has_prefix(b, p) has_prefix_n((b), (p), sizeof(p) - 1)
static __always_inline int has_prefix_n(const struct unix_buf *b, const char *p, const int n)
{
#pragma unroll
	for (int i = 0; i < n; i++)
		if (b->path[i] != p[i])
			return 0;
	return 1;
}

// lookup_rel finds the target of a normalized name that is relative to the
// client's working directory (a relative name, /proc/self/cwd/...) or root
// (/proc/self/root/...), by that directory and the rest of the name.
static __always_inline struct unix_target *lookup_rel(const struct unix_buf *key)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct dentry *dir;
	struct unix_rel *rel;
	__u32 zero = 0, off, i;

	if (key->path[0] != '/') {
		dir = BPF_CORE_READ(task, fs, pwd.dentry);
		off = 0;
	} else if (has_prefix(key, "/proc/self/cwd/")) {
		dir = BPF_CORE_READ(task, fs, pwd.dentry);
		off = sizeof("/proc/self/cwd/") - 1;
	} else if (has_prefix(key, "/proc/thread-self/cwd/")) {
		dir = BPF_CORE_READ(task, fs, pwd.dentry);
		off = sizeof("/proc/thread-self/cwd/") - 1;
	} else if (has_prefix(key, "/proc/self/root/")) {
		dir = BPF_CORE_READ(task, fs, root.dentry);
		off = sizeof("/proc/self/root/") - 1;
	} else if (has_prefix(key, "/proc/thread-self/root/")) {
		dir = BPF_CORE_READ(task, fs, root.dentry);
		off = sizeof("/proc/thread-self/root/") - 1;
	} else {
		return NULL;
	}
	if (!dir)
		return NULL;
	rel = bpf_map_lookup_elem(&unix_rel_scratch, &zero);
	if (!rel)
		return NULL;
	rel->ino = BPF_CORE_READ(dir, d_inode, i_ino);
	rel->dev = BPF_CORE_READ(dir, d_sb, s_dev);
	rel->pad = 0;
	for (i = 0; i < UNIX_PATH_MAX; i++)
		rel->path[i] = i + off < UNIX_PATH_MAX ? key->path[(i + off) & UNIX_BUF_MASK] : 0;
	return bpf_map_lookup_elem(&protected_rel, rel);
}

SEC("cgroup/connect_unix")
int redirect_connect_unix(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct unix_buf *key, *raw;
	struct unix_target *t;
	struct bpf_sock *sk;
	__u32 zero = 0, one = 1, len;
	__u64 cookie;

	if (ctx->type != SOCK_STREAM)
		return SYSCALL_ALLOW;
	raw = bpf_map_lookup_elem(&unix_bufs, &zero);
	key = bpf_map_lookup_elem(&unix_bufs, &one);
	if (!key || !raw)
		return SYSCALL_ALLOW;

	// uaddrlen counts sun_family (2 bytes) plus the path bytes given.
	len = sa->uaddrlen;
	if (len <= 2)
		return SYSCALL_ALLOW;
	len -= 2;
	if (len > UNIX_PATH_MAX)
		len = UNIX_PATH_MAX;
	if (bpf_probe_read_kernel(raw->path, UNIX_PATH_MAX,
				  ((struct sockaddr_un *)sa->uaddr)->sun_path) != 0)
		return SYSCALL_ALLOW;
	if (raw->path[0] == 0)
		return SYSCALL_ALLOW;
	normalize_path(raw, key, len);

	t = bpf_map_lookup_elem(&protected_paths, key->path);
	if (!t)
		t = lookup_rel(key);
	if (!t)
		return SYSCALL_ALLOW;
	if (bpf_get_netns_cookie(ctx) != cfg_netns_cookie) {
		COUNTER_ADD(unix_counters, UNIX_CTR_SKIPPED_NETNS);
		return SYSCALL_ALLOW;
	}
	sk = ctx->sk;
	cookie = bpf_get_socket_cookie(ctx);
	if (bpf_map_lookup_elem(&own_cookies, &cookie) ||
	    (cfg_mark != 0 && sk && sk->mark == cfg_mark)) {
		COUNTER_ADD(unix_counters, UNIX_CTR_SKIPPED_OWN);
		return SYSCALL_ALLOW;
	}

	len = t->len;
	if (len == 0 || len > UNIX_PATH_MAX)
		return SYSCALL_ALLOW;
	if (bpf_sock_addr_set_sun_path(sa, t->path, len) != 0) {
		COUNTER_ADD(unix_counters, UNIX_CTR_SET_PATH_FAILED);
		return SYSCALL_ALLOW;
	}
	COUNTER_ADD(unix_counters, UNIX_CTR_REDIRECTED);
	return SYSCALL_ALLOW;
}

SEC("lsm_cgroup/unix_stream_connect")
int BPF_PROG(guard_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct unix_inode key = {};
	struct inode *inode;
	__u64 cookie;

	inode = BPF_CORE_READ(u, path.dentry, d_inode);
	if (!inode)
		return 1; // an abstract or unbound socket
	key.ino = BPF_CORE_READ(inode, i_ino);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	if (!bpf_map_lookup_elem(&guarded_inodes, &key))
		return 1;
	if (BPF_CORE_READ(sock, __sk_common.skc_net.net, net_cookie) != cfg_netns_cookie)
		return 1; // as the redirect: other network namespaces are not ours
	cookie = BPF_CORE_READ(sock, __sk_common.skc_cookie.counter);
	if (cookie != 0 && bpf_map_lookup_elem(&own_cookies, &cookie))
		return 1;
	COUNTER_ADD(unix_counters, UNIX_CTR_GUARD_REFUSED);
	return 0; // EPERM
}

// Where the BPF LSM is not active (no "bpf" in the kernel's lsm= list, as
// on most distributions' default command lines) lsm_cgroup programs do not
// load, even for root. guard_unix_connect_ret makes the same check as a
// modify_return tracing program on security_unix_stream_connect (the
// verifier allows modify_return on every security_* function; it is an
// ordinary, traced kernel function whether or not any LSM is active, and
// unix_stream_connect calls it once it has found the listening socket).
// It is global, so it scopes itself as lsm_cgroup does: only a connecting
// socket of the cgroup (cfg_cgroup_id, 0 for the whole hierarchy; the
// socket's cgroup, as lsm_cgroup uses for a socket hook) in the daemon's
// network namespace, only a protected server socket as the other end, and
// never sqlfwd's own dials (own_cookies). A client sent to sqlfwd's
// listener by the redirect reaches sqlfwd's socket, which is not guarded.
volatile const __u64 cfg_cgroup_id = 0;

#define GUARD_MAX_LEVEL 32

// sock_in_cgroup reports whether sk was created in cfg_cgroup_id or a
// cgroup below it.
static __always_inline int sock_in_cgroup(struct sock *sk)
{
	struct cgroup *cg, *anc;
	int level, i;

	if (cfg_cgroup_id == 0)
		return 1;
	cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup);
	if (!cg)
		return 0;
	level = BPF_CORE_READ(cg, level);
	for (i = 0; i < GUARD_MAX_LEVEL; i++) {
		if (i > level)
			return 0;
		anc = NULL;
		if (bpf_probe_read_kernel(&anc, sizeof(anc), &cg->ancestors[i]) != 0 || !anc)
			return 0;
		if (BPF_CORE_READ(anc, kn, id) == cfg_cgroup_id)
			return 1;
	}
	return 0;
}

SEC("fmod_ret/security_unix_stream_connect")
int BPF_PROG(guard_unix_connect_ret, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
	struct unix_sock *u = (struct unix_sock *)other;
	struct unix_inode key = {};
	struct inode *inode;
	__u64 cookie;

	if (ret != 0)
		return ret; // an earlier program refused already
	inode = BPF_CORE_READ(u, path.dentry, d_inode);
	if (!inode)
		return 0;
	key.ino = BPF_CORE_READ(inode, i_ino);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	if (!bpf_map_lookup_elem(&guarded_inodes, &key))
		return 0;
	if (BPF_CORE_READ(sock, __sk_common.skc_net.net, net_cookie) != cfg_netns_cookie)
		return 0;
	if (!sock_in_cgroup(sock))
		return 0;
	cookie = BPF_CORE_READ(sock, __sk_common.skc_cookie.counter);
	if (cookie != 0 && bpf_map_lookup_elem(&own_cookies, &cookie))
		return 0;
	COUNTER_ADD(unix_counters, UNIX_CTR_GUARD_REFUSED);
	return -1; // -EPERM, as the lsm_cgroup guard's 0
}
