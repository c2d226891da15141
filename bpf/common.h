// Shared definitions for the sqlfw BPF programs. Not a Go file: bpf2go
// compiles each *.c with this header on the include path.
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

// vmlinux.h carries types, not macros.
#define AF_INET 2
#define AF_INET6 10
#define AF_UNIX 1

// Programs of type cgroup/sock_addr return 1 to let the syscall proceed and
// 0 to fail it with EPERM.
#define SYSCALL_ALLOW 1
#define SYSCALL_DENY 0

// addr_key names one TCP endpoint. It is the key of the protected map and of
// the origin-by-client-address map, and the original destination inside
// struct origin. IPv4 (and IPv4-mapped IPv6) is stored as family AF_INET with
// the address in ip[0]; everything in ip is network byte order, port is host
// byte order.
struct addr_key {
	__u32 family;
	__u32 port;
	__u32 ip[4];
};

// is_v4_mapped reports whether an IPv6 address (network-order words) is
// ::ffff:a.b.c.d.
static __always_inline int is_v4_mapped(const __u32 ip6[4])
{
	return ip6[0] == 0 && ip6[1] == 0 && ip6[2] == bpf_htonl(0x0000ffff);
}

// counter_add bumps one slot of a per-CPU counter array.
#define COUNTER_ADD(map, idx)                                       \
	do {                                                        \
		__u32 __k = (idx);                                  \
		__u64 *__v = bpf_map_lookup_elem(&(map), &__k);     \
		if (__v)                                            \
			*__v += 1;                                  \
	} while (0)

// own_cookies holds the socket cookies of the daemon's own sockets while
// they connect (its upstream dialer adds a socket after socket() and before
// connect(), and removes it once connect() has returned): a connect hook
// leaves them alone. A cookie is unique for the boot, so this holds in any
// PID namespace, unlike a tgid compared with the daemon's getpid().
#define OWN_COOKIES_MAP(name)                       \
	struct {                                    \
		__uint(type, BPF_MAP_TYPE_LRU_HASH); \
		__uint(max_entries, 16384);          \
		__type(key, __u64);                  \
		__type(value, __u8);                 \
	} name SEC(".maps")
