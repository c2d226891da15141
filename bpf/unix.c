//go:build ignore

// App-host interception of unix-socket clients (psql's default): connect()
// to a protected socket path is rewritten to the daemon's socket path with
// the kfunc bpf_sock_addr_set_sun_path (kernel >= 6.7). The daemon knows the
// original path from which of its listeners accepted, and the client from
// SO_PEERCRED, so no origin map is needed here.
//
// The redirect matches the path a client wrote; the kernel resolves it
// afterwards. Other names of the same socket (a symlink, a hard link, a
// relative path, /proc/PID/root/..., another mount of the directory) would
// reach the server unjudged. guard_unix_stream_connect, an lsm_cgroup
// program on the same cgroup (BPF LSM active, kernel >= 6.0), sees the
// socket a connect resolved to: a connect that reaches a protected server
// socket itself (by the bound file's device and inode) is refused unless it
// is sqlfwd's own (own_cookies). A client that wrote the protected path was
// already sent to sqlfwd's listener and never reaches the check's subject.

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unix_path);
} unix_scratch SEC(".maps");

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

SEC("cgroup/connect_unix")
int redirect_connect_unix(struct bpf_sock_addr *ctx)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct unix_target *t;
	struct unix_path *key;
	struct bpf_sock *sk;
	__u32 zero = 0, len, i;
	__u64 cookie;
	int end = 0;

	if (ctx->type != SOCK_STREAM)
		return SYSCALL_ALLOW;
	key = bpf_map_lookup_elem(&unix_scratch, &zero);
	if (!key)
		return SYSCALL_ALLOW;

	// uaddrlen counts sun_family (2 bytes) plus the path bytes given.
	len = sa->uaddrlen;
	if (len <= 2)
		return SYSCALL_ALLOW;
	len -= 2;
	if (len > UNIX_PATH_MAX)
		len = UNIX_PATH_MAX;
	if (bpf_probe_read_kernel(key->path, sizeof(key->path),
				  ((struct sockaddr_un *)sa->uaddr)->sun_path) != 0)
		return SYSCALL_ALLOW;
	if (key->path[0] == 0)
		return SYSCALL_ALLOW;
	for (i = 0; i < UNIX_PATH_MAX; i++) {
		if (i >= len || key->path[i] == 0)
			end = 1;
		if (end)
			key->path[i] = 0;
	}

	t = bpf_map_lookup_elem(&protected_paths, key);
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
