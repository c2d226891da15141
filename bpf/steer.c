//go:build ignore

// DB-host interception: an sk_lookup program on the database host's network
// namespace hands inbound TCP connections for protected ports on
// non-loopback addresses to the daemon's listener, whatever else is bound
// there. Connections the daemon itself makes over loopback are not steered.

#include "common.h"

char _license[] SEC("license") = "GPL";

enum {
	STEER_CTR_STEERED = 0,
	STEER_CTR_NO_LISTENER,
	STEER_CTR_ASSIGN_FAILED,
	STEER_CTR_MAX,
};

// Slot 0: the listener for IPv4 (or a dual-stack IPv6 listener); slot 1:
// the listener for IPv6, if different.
struct {
	__uint(type, BPF_MAP_TYPE_SOCKMAP);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} steer_listeners SEC(".maps");

// Protected local ports, host byte order.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u8);
} steer_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STEER_CTR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} steer_counters SEC(".maps");

// bpf_sk_lookup fields: local_ip4/local_ip6 network byte order, local_port
// host byte order, remote_port network byte order.
SEC("sk_lookup")
int steer_lookup(struct bpf_sk_lookup *ctx)
{
	__u16 port = (__u16)ctx->local_port;
	struct bpf_sock *sk;
	__u32 slot = 0;
	long err;

	if (ctx->protocol != IPPROTO_TCP)
		return SK_PASS;
	if (!bpf_map_lookup_elem(&steer_ports, &port))
		return SK_PASS;

	if (ctx->family == AF_INET) {
		if ((bpf_ntohl(ctx->local_ip4) >> 24) == 127)
			return SK_PASS;
	} else if (ctx->family == AF_INET6) {
		__u32 ip6[4] = {ctx->local_ip6[0], ctx->local_ip6[1], ctx->local_ip6[2],
				ctx->local_ip6[3]};

		if (ip6[0] == 0 && ip6[1] == 0 && ip6[2] == 0 && ip6[3] == bpf_htonl(1))
			return SK_PASS;
		if (is_v4_mapped(ip6) && (bpf_ntohl(ip6[3]) >> 24) == 127)
			return SK_PASS;
		slot = 1;
	} else {
		return SK_PASS;
	}

	sk = bpf_map_lookup_elem(&steer_listeners, &slot);
	if (!sk && slot == 1) {
		slot = 0;
		sk = bpf_map_lookup_elem(&steer_listeners, &slot);
	}
	if (!sk) {
		COUNTER_ADD(steer_counters, STEER_CTR_NO_LISTENER);
		return SK_PASS;
	}
	err = bpf_sk_assign(ctx, sk, 0);
	bpf_sk_release(sk);
	if (err) {
		COUNTER_ADD(steer_counters, STEER_CTR_ASSIGN_FAILED);
		return SK_PASS;
	}
	COUNTER_ADD(steer_counters, STEER_CTR_STEERED);
	return SK_PASS;
}
