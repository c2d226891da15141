package bpf

// Regenerating needs clang, llvm-strip and bpftool (Debian: apt-get install -y
// clang llvm libbpf-dev bpftool) and a kernel with BTF. vmlinux.h is written
// from the running kernel's BTF and not checked in; the generated *_bpfel.go
// and *_bpfel.o are, so building needs none of this.

//go:generate sh -c "bpftool btf dump file /sys/kernel/btf/vmlinux format c > vmlinux.h"
//go:generate sh -c "go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cflags '-O2 -mcpu=v3 -Wall -Werror' redirect redirect.c -- -I/usr/include/$(uname -m)-linux-gnu"
//go:generate sh -c "go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cflags '-O2 -mcpu=v3 -Wall -Werror' steer steer.c -- -I/usr/include/$(uname -m)-linux-gnu"
//go:generate sh -c "go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cflags '-O2 -mcpu=v3 -Wall -Werror' unix unix.c -- -I/usr/include/$(uname -m)-linux-gnu"
//go:generate sh -c "go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -cflags '-O2 -mcpu=v3 -Wall -Werror' fastpath fastpath.c -- -I/usr/include/$(uname -m)-linux-gnu"
