//go:build ignore

// App-host interception: connects to a protected database address are
// rewritten to the daemon's listener, the original destination and the
// connecting process are remembered, and (optionally) the two local legs are
// spliced in the kernel with a SOCKHASH + sk_msg. See doc.go for the flow.

#include "common.h"

char _license[] SEC("license") = "GPL";

// Set from Go before load (RedirectConfig). Addresses are network byte order,
// ports host byte order.
volatile const __u64 cfg_netns_cookie = 0;
volatile const __u32 cfg_mark = 0;
volatile const __u32 cfg_listen4_ip = 0;
volatile const __u32 cfg_listen4_port = 0;
volatile const __u32 cfg_listen6_ip[4] = {};
volatile const __u32 cfg_listen6_port = 0;
volatile const __u8 cfg_sockmap = 0;
// The pod listener: where connects from other network namespaces (pods on
// a Kubernetes node) to protected non-loopback destinations go. Port 0: no
// pod interception for that family.
volatile const __u32 cfg_pod4_ip = 0;
volatile const __u32 cfg_pod4_port = 0;
volatile const __u32 cfg_pod6_ip[4] = {};
volatile const __u32 cfg_pod6_port = 0;
volatile const __u8 cfg_fail_closed = 0;
// Splice the upstream leg too when the database's socket is on this host:
// sqlfwd's own socket to a protected address and the database's accepted
// socket of that connection go into relay_socks (the second is seen only
// where this sockops program is also attached to the database's cgroup).
volatile const __u8 cfg_splice_upstream = 0;

// origin is what the daemon learns about a redirected connection.
struct origin {
	struct addr_key dst; // original destination
	__u64 cookie;        // socket cookie of the client socket
	__u64 cgroup_id;     // cgroup v2 id of the connecting task
	__u64 netns_cookie;  // network namespace of the client socket
	__u32 tgid;
	__u32 uid;
	char comm[16];
};

// tuple_key identifies one established socket by its own view of the
// connection: local and remote address, normalised like addr_key.
struct tuple_key {
	__u32 family;
	__u32 local_port;  // host byte order
	__u32 remote_port; // host byte order
	__u32 local_ip[4];
	__u32 remote_ip[4];
};

enum {
	CTR_REDIRECTED = 0,
	CTR_SKIPPED_OWN,
	CTR_SKIPPED_NETNS,
	CTR_MAP_FULL,
	CTR_SOCKMAP_ADDED,
	CTR_SOCKMAP_FALLBACK,
	CTR_POD_REDIRECTED,
	CTR_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct addr_key);
	__type(value, __u8);
} protected_addrs SEC(".maps");

// Keyed by socket cookie; lives as long as the client socket (getpeername
// needs it), removed on TCP_CLOSE.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct origin);
} origin_by_cookie SEC(".maps");

// Keyed by the client's local address: what the daemon sees as the peer of an
// accepted connection. The daemon removes entries with LookupAndDelete.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct addr_key);
	__type(value, struct origin);
} origin_by_client SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, 65536);
	__type(key, struct tuple_key);
	__type(value, __u64);
} relay_socks SEC(".maps");

// Sockets that sent data through TCP because their peer was not in
// relay_socks yet. They stay on TCP: data redirected later would land in the
// peer's ingress queue, which the reader drains before older TCP data.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct tuple_key);
	__type(value, __u8);
} relay_tcp_only SEC(".maps");

// sqlfwd's upstream legs in relay_socks whose database side is not (yet):
// keyed by the tuple as the database's socket sees it. LRU: a database on
// another host never matches.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct tuple_key);
	__type(value, __u8);
} upstream_legs SEC(".maps");

OWN_COOKIES_MAP(own_cookies);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} redirect_counters SEC(".maps");

static __always_inline void set_key(struct addr_key *k, __u32 family, __u32 ip4,
				    const __u32 ip6[4], __u32 port)
{
	if (family == AF_INET6 && is_v4_mapped(ip6)) {
		family = AF_INET;
		ip4 = ip6[3];
	}
	k->family = family;
	k->port = port;
	if (family == AF_INET) {
		k->ip[0] = ip4;
		return;
	}
	k->ip[0] = ip6[0];
	k->ip[1] = ip6[1];
	k->ip[2] = ip6[2];
	k->ip[3] = ip6[3];
}

// own_socket is true for the daemon's own sockets (its upstream legs): the
// socket's cookie is in own_cookies, or it carries the daemon's mark.
static __always_inline int own_socket(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u64 cookie = bpf_get_socket_cookie(ctx);

	if (bpf_map_lookup_elem(&own_cookies, &cookie))
		return 1;
	if (cfg_mark != 0 && sk && sk->mark == cfg_mark)
		return 1;
	return 0;
}

// Where a protected connect goes.
enum {
	TO_NONE = 0, // left alone
	TO_HOST,     // the daemon's own-namespace listener (listen4/6)
	TO_POD,      // the pod listener (pod4/6)
};

// is_local_only is true for destinations that mean "this network
// namespace" (loopback, unspecified): from another namespace they are that
// namespace's own, never the database the daemon protects.
static __always_inline int is_local_only(const struct addr_key *k)
{
	if (k->family == AF_INET)
		return k->ip[0] == 0 || (bpf_ntohl(k->ip[0]) >> 24) == 127;
	return k->ip[0] == 0 && k->ip[1] == 0 && k->ip[2] == 0 &&
	       (k->ip[3] == 0 || k->ip[3] == bpf_htonl(1));
}

static __always_inline __u32 listen_port(int to, __u32 family)
{
	if (family == AF_INET)
		return to == TO_POD ? cfg_pod4_port : cfg_listen4_port;
	return to == TO_POD ? cfg_pod6_port : cfg_listen6_port;
}

// route applies the checks common to connect4 and connect6 once the
// destination is known to be protected, and picks the listener. A connect
// from the daemon's network namespace goes to its own listener; one from
// another namespace (a pod) goes to the pod listener if there is one and
// the destination is not that namespace's loopback.
static __always_inline int route(struct bpf_sock_addr *ctx, const struct addr_key *dst)
{
	int to = TO_HOST;

	if (bpf_get_netns_cookie(ctx) != cfg_netns_cookie) {
		if (listen_port(TO_POD, dst->family) == 0 || is_local_only(dst)) {
			COUNTER_ADD(redirect_counters, CTR_SKIPPED_NETNS);
			return TO_NONE;
		}
		to = TO_POD;
	} else if (listen_port(TO_HOST, dst->family) == 0) {
		return TO_NONE; // no listener of that family: left alone
	}
	if (own_socket(ctx)) {
		COUNTER_ADD(redirect_counters, CTR_SKIPPED_OWN);
		return TO_NONE;
	}
	return to;
}

static __always_inline void count_redirect(int to)
{
	COUNTER_ADD(redirect_counters, CTR_REDIRECTED);
	if (to == TO_POD)
		COUNTER_ADD(redirect_counters, CTR_POD_REDIRECTED);
}

// record stores the origin under the socket cookie. A failure means the LRU
// could not take the entry.
static __always_inline int record(struct bpf_sock_addr *ctx, const struct addr_key *dst)
{
	struct origin o = {};
	__u64 cookie = bpf_get_socket_cookie(ctx);

	o.dst = *dst;
	o.cookie = cookie;
	o.tgid = bpf_get_current_pid_tgid() >> 32;
	o.uid = (__u32)bpf_get_current_uid_gid();
	o.cgroup_id = bpf_get_current_cgroup_id();
	o.netns_cookie = bpf_get_netns_cookie(ctx);
	bpf_get_current_comm(o.comm, sizeof(o.comm));
	if (bpf_map_update_elem(&origin_by_cookie, &cookie, &o, BPF_ANY) != 0) {
		COUNTER_ADD(redirect_counters, CTR_MAP_FULL);
		return -1;
	}
	return 0;
}

SEC("cgroup/connect4")
int redirect_connect4(struct bpf_sock_addr *ctx)
{
	struct addr_key dst = {};
	int to;

	if (ctx->type != SOCK_STREAM || ctx->protocol != IPPROTO_TCP)
		return SYSCALL_ALLOW;
	dst.family = AF_INET;
	dst.port = bpf_ntohs((__u16)ctx->user_port);
	dst.ip[0] = ctx->user_ip4;
	if (!bpf_map_lookup_elem(&protected_addrs, &dst))
		return SYSCALL_ALLOW;
	to = route(ctx, &dst);
	if (to == TO_NONE)
		return SYSCALL_ALLOW;
	if (record(ctx, &dst) != 0)
		return cfg_fail_closed ? SYSCALL_DENY : SYSCALL_ALLOW;

	ctx->user_ip4 = to == TO_POD ? cfg_pod4_ip : cfg_listen4_ip;
	ctx->user_port = (__u32)bpf_htons((__u16)listen_port(to, AF_INET));
	count_redirect(to);
	return SYSCALL_ALLOW;
}

SEC("cgroup/connect6")
int redirect_connect6(struct bpf_sock_addr *ctx)
{
	struct addr_key dst = {};
	__u32 ip6[4];
	int to;

	if (ctx->type != SOCK_STREAM || ctx->protocol != IPPROTO_TCP)
		return SYSCALL_ALLOW;
	ip6[0] = ctx->user_ip6[0];
	ip6[1] = ctx->user_ip6[1];
	ip6[2] = ctx->user_ip6[2];
	ip6[3] = ctx->user_ip6[3];
	// A v4-mapped destination is an IPv4 connection made through an IPv6
	// socket: it is matched against the IPv4 entries.
	set_key(&dst, AF_INET6, 0, ip6, bpf_ntohs((__u16)ctx->user_port));
	if (!bpf_map_lookup_elem(&protected_addrs, &dst))
		return SYSCALL_ALLOW;
	to = route(ctx, &dst);
	if (to == TO_NONE)
		return SYSCALL_ALLOW;
	if (record(ctx, &dst) != 0)
		return cfg_fail_closed ? SYSCALL_DENY : SYSCALL_ALLOW;

	if (dst.family == AF_INET) {
		// Stay on IPv4: the mapped form of the IPv4 listener.
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0x0000ffff);
		ctx->user_ip6[3] = to == TO_POD ? cfg_pod4_ip : cfg_listen4_ip;
	} else if (to == TO_POD) {
		ctx->user_ip6[0] = cfg_pod6_ip[0];
		ctx->user_ip6[1] = cfg_pod6_ip[1];
		ctx->user_ip6[2] = cfg_pod6_ip[2];
		ctx->user_ip6[3] = cfg_pod6_ip[3];
	} else {
		ctx->user_ip6[0] = cfg_listen6_ip[0];
		ctx->user_ip6[1] = cfg_listen6_ip[1];
		ctx->user_ip6[2] = cfg_listen6_ip[2];
		ctx->user_ip6[3] = cfg_listen6_ip[3];
	}
	ctx->user_port = (__u32)bpf_htons((__u16)listen_port(to, dst.family));
	count_redirect(to);
	return SYSCALL_ALLOW;
}

SEC("cgroup/getpeername4")
int redirect_getpeername4(struct bpf_sock_addr *ctx)
{
	__u64 cookie = bpf_get_socket_cookie(ctx);
	struct origin *o = bpf_map_lookup_elem(&origin_by_cookie, &cookie);

	if (!o || o->dst.family != AF_INET)
		return SYSCALL_ALLOW;
	ctx->user_ip4 = o->dst.ip[0];
	ctx->user_port = (__u32)bpf_htons((__u16)o->dst.port);
	return SYSCALL_ALLOW;
}

SEC("cgroup/getpeername6")
int redirect_getpeername6(struct bpf_sock_addr *ctx)
{
	__u64 cookie = bpf_get_socket_cookie(ctx);
	struct origin *o = bpf_map_lookup_elem(&origin_by_cookie, &cookie);

	if (!o)
		return SYSCALL_ALLOW;
	if (o->dst.family == AF_INET) {
		ctx->user_ip6[0] = 0;
		ctx->user_ip6[1] = 0;
		ctx->user_ip6[2] = bpf_htonl(0x0000ffff);
		ctx->user_ip6[3] = o->dst.ip[0];
	} else {
		ctx->user_ip6[0] = o->dst.ip[0];
		ctx->user_ip6[1] = o->dst.ip[1];
		ctx->user_ip6[2] = o->dst.ip[2];
		ctx->user_ip6[3] = o->dst.ip[3];
	}
	ctx->user_port = (__u32)bpf_htons((__u16)o->dst.port);
	return SYSCALL_ALLOW;
}

// sock_ops fields: local_port is host byte order, remote_port is the
// network-order port in the upper 16 bits on little-endian (so bpf_ntohl
// yields the port), addresses are network byte order.
static __always_inline void ops_local(struct bpf_sock_ops *skops, struct addr_key *k)
{
	__u32 ip6[4] = {skops->local_ip6[0], skops->local_ip6[1], skops->local_ip6[2],
			skops->local_ip6[3]};

	set_key(k, skops->family, skops->local_ip4, ip6, skops->local_port);
}

static __always_inline void ops_remote(struct bpf_sock_ops *skops, struct addr_key *k)
{
	__u32 ip6[4] = {skops->remote_ip6[0], skops->remote_ip6[1], skops->remote_ip6[2],
			skops->remote_ip6[3]};

	set_key(k, skops->family, skops->remote_ip4, ip6, bpf_ntohl(skops->remote_port));
}

static __always_inline void ops_tuple(struct bpf_sock_ops *skops, struct tuple_key *t)
{
	struct addr_key l = {}, r = {};

	ops_local(skops, &l);
	ops_remote(skops, &r);
	t->family = l.family;
	t->local_port = l.port;
	t->remote_port = r.port;
	__builtin_memcpy(t->local_ip, l.ip, sizeof(l.ip));
	__builtin_memcpy(t->remote_ip, r.ip, sizeof(r.ip));
}

static __always_inline int is_listener(const struct addr_key *k)
{
	if (k->family == AF_INET)
		return cfg_listen4_port != 0 && k->port == cfg_listen4_port &&
		       (cfg_listen4_ip == 0 || k->ip[0] == cfg_listen4_ip);
	return cfg_listen6_port != 0 && k->port == cfg_listen6_port &&
	       k->ip[0] == cfg_listen6_ip[0] && k->ip[1] == cfg_listen6_ip[1] &&
	       k->ip[2] == cfg_listen6_ip[2] && k->ip[3] == cfg_listen6_ip[3];
}

static __always_inline void add_to_sockhash(struct bpf_sock_ops *skops, struct tuple_key *t)
{
	if (bpf_sock_hash_update(skops, &relay_socks, t, BPF_ANY) == 0)
		COUNTER_ADD(redirect_counters, CTR_SOCKMAP_ADDED);
}

static __always_inline void swap_tuple(const struct tuple_key *t, struct tuple_key *peer)
{
	peer->family = t->family;
	peer->local_port = t->remote_port;
	peer->remote_port = t->local_port;
	__builtin_memcpy(peer->local_ip, t->remote_ip, sizeof(t->remote_ip));
	__builtin_memcpy(peer->remote_ip, t->local_ip, sizeof(t->local_ip));
}

// own_ops_socket is own_socket for sock_ops: one of sqlfwd's upstream legs.
static __always_inline int own_ops_socket(struct bpf_sock_ops *skops)
{
	struct bpf_sock *sk = skops->sk;
	__u64 cookie = bpf_get_socket_cookie(skops);

	if (bpf_map_lookup_elem(&own_cookies, &cookie))
		return 1;
	if (cfg_mark != 0 && sk && sk->mark == cfg_mark)
		return 1;
	return 0;
}

// splice_upstream_active puts sqlfwd's upstream leg to a protected address
// into relay_socks and leaves its tuple for the database's side. Only bytes
// sqlfwd itself writes (judged) leave through it; it still reads every
// reply. Until the database's socket is in the map too, relay_msg finds no
// peer and the leg stays on TCP (relay_tcp_only), in order.
static __always_inline void splice_upstream_active(struct bpf_sock_ops *skops, struct tuple_key *t)
{
	struct addr_key r = {};
	struct tuple_key peer = {};
	__u8 one = 1;

	r.family = t->family;
	r.port = t->remote_port;
	__builtin_memcpy(r.ip, t->remote_ip, sizeof(r.ip));
	if (!bpf_map_lookup_elem(&protected_addrs, &r))
		return;
	swap_tuple(t, &peer);
	if (bpf_map_update_elem(&upstream_legs, &peer, &one, BPF_ANY) != 0)
		return;
	add_to_sockhash(skops, t);
}

// splice_upstream_passive adds the database's accepted socket whose peer is
// one of sqlfwd's spliced upstream legs.
static __always_inline int splice_upstream_passive(struct bpf_sock_ops *skops, struct tuple_key *t)
{
	if (!bpf_map_lookup_elem(&upstream_legs, t))
		return 0;
	bpf_map_delete_elem(&upstream_legs, t);
	add_to_sockhash(skops, t);
	return 1;
}

static __always_inline void tuple_local(const struct tuple_key *t, struct addr_key *k)
{
	k->family = t->family;
	k->port = t->local_port;
	__builtin_memcpy(k->ip, t->local_ip, sizeof(k->ip));
}

static __always_inline void tuple_remote(const struct tuple_key *t, struct addr_key *k)
{
	k->family = t->family;
	k->port = t->remote_port;
	__builtin_memcpy(k->ip, t->remote_ip, sizeof(k->ip));
}

SEC("sockops")
int redirect_sockops(struct bpf_sock_ops *skops)
{
	struct addr_key k = {};
	struct tuple_key t = {};
	struct origin *o;
	__u64 cookie;

	if (skops->family != AF_INET && skops->family != AF_INET6)
		return 1;
	// Read once: the verifier refuses a ctx pointer the compiler offsets
	// to share loads between branches.
	ops_tuple(skops, &t);

	switch (skops->op) {
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		// The local port is assigned by now: re-key the origin by the
		// address the daemon will see as its peer.
		cookie = bpf_get_socket_cookie(skops);
		o = bpf_map_lookup_elem(&origin_by_cookie, &cookie);
		if (!o)
			return 1;
		tuple_local(&t, &k);
		if (bpf_map_update_elem(&origin_by_client, &k, o, BPF_ANY) != 0)
			COUNTER_ADD(redirect_counters, CTR_MAP_FULL);
		bpf_sock_ops_cb_flags_set(skops, BPF_SOCK_OPS_STATE_CB_FLAG);
		break;

	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		// Client leg: only sockets that were redirected, and only in the
		// daemon's namespace. A pod's connection crosses its veth; splicing
		// it would skip the pod's network stack (policies, accounting).
		if (!cfg_sockmap)
			return 1;
		if (cfg_splice_upstream && own_ops_socket(skops)) {
			splice_upstream_active(skops, &t);
			return 1;
		}
		cookie = bpf_get_socket_cookie(skops);
		o = bpf_map_lookup_elem(&origin_by_cookie, &cookie);
		if (!o || o->netns_cookie != cfg_netns_cookie)
			return 1;
		add_to_sockhash(skops, &t);
		break;

	case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB:
		// Daemon leg: accepted on the listener from a redirected client.
		if (!cfg_sockmap)
			return 1;
		if (cfg_splice_upstream && splice_upstream_passive(skops, &t))
			return 1;
		tuple_local(&t, &k);
		if (!is_listener(&k))
			return 1;
		tuple_remote(&t, &k);
		if (!bpf_map_lookup_elem(&origin_by_client, &k))
			return 1;
		add_to_sockhash(skops, &t);
		break;

	case BPF_SOCK_OPS_STATE_CB:
		if (skops->args[1] != BPF_TCP_CLOSE)
			return 1;
		cookie = bpf_get_socket_cookie(skops);
		bpf_map_delete_elem(&origin_by_cookie, &cookie);
		tuple_local(&t, &k);
		// Only our own entry: the daemon may already have taken it.
		o = bpf_map_lookup_elem(&origin_by_client, &k);
		if (o && o->cookie == cookie)
			bpf_map_delete_elem(&origin_by_client, &k);
		break;
	}
	return 1;
}

// relay_msg runs on every sendmsg of a socket in relay_socks and hands the
// data straight to the receive queue of the other local leg, skipping the
// loopback TCP stack. When the peer is not (yet) in the map the data takes
// the normal path, for good (relay_tcp_only).
SEC("sk_msg")
int relay_msg(struct sk_msg_md *msg)
{
	struct addr_key l = {}, r = {};
	struct tuple_key peer = {}, self = {};
	__u32 lip6[4], rip6[4];
	__u8 one = 1;

	if (msg->family != AF_INET && msg->family != AF_INET6)
		return SK_PASS;
	lip6[0] = msg->local_ip6[0];
	lip6[1] = msg->local_ip6[1];
	lip6[2] = msg->local_ip6[2];
	lip6[3] = msg->local_ip6[3];
	rip6[0] = msg->remote_ip6[0];
	rip6[1] = msg->remote_ip6[1];
	rip6[2] = msg->remote_ip6[2];
	rip6[3] = msg->remote_ip6[3];
	// sk_msg_md ports: local host order, remote like sock_ops.
	set_key(&l, msg->family, msg->local_ip4, lip6, msg->local_port);
	set_key(&r, msg->family, msg->remote_ip4, rip6, bpf_ntohl(msg->remote_port));

	self.family = l.family;
	self.local_port = l.port;
	self.remote_port = r.port;
	__builtin_memcpy(self.local_ip, l.ip, sizeof(l.ip));
	__builtin_memcpy(self.remote_ip, r.ip, sizeof(r.ip));
	if (bpf_map_lookup_elem(&relay_tcp_only, &self))
		return SK_PASS;

	// The peer socket sees the connection from the other end.
	peer.family = l.family;
	peer.local_port = r.port;
	peer.remote_port = l.port;
	__builtin_memcpy(peer.local_ip, r.ip, sizeof(r.ip));
	__builtin_memcpy(peer.remote_ip, l.ip, sizeof(l.ip));

	if (bpf_msg_redirect_hash(msg, &relay_socks, &peer, BPF_F_INGRESS) != SK_PASS) {
		// No peer yet (it is added when the daemon's side of the handshake
		// completes): this message goes through TCP, and so must every
		// later one, to keep the byte stream in order.
		bpf_map_update_elem(&relay_tcp_only, &self, &one, BPF_ANY);
		COUNTER_ADD(redirect_counters, CTR_SOCKMAP_FALLBACK);
	}
	// On a failed lookup the helper sets no redirect, so SK_PASS sends the
	// data through TCP as usual.
	return SK_PASS;
}
