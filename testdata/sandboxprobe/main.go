// Command sandboxprobe tries one thing a confined command must not be able
// to do, for the end-to-end tests of the sandbox (e2e_sandbox_test.go):
//
//	sandboxprobe tcp ADDR      connect over TCP
//	sandboxprobe udp ADDR      send a UDP datagram
//	sandboxprobe raw           open a raw IP socket
//	sandboxprobe unix PATH     connect to a unix socket
//	sandboxprobe ptrace PID    attach to a process
//	sandboxprobe signal PID    send signal 0 to a process
//	sandboxprobe trunc PATH    open a file read-only with O_TRUNC
//	sandboxprobe fds           list the descriptors it inherited above 2
//	sandboxprobe caps          print the effective capabilities
//
// It prints "allowed" and exits 0 when the thing worked, or "refused: ERR"
// and exits 1; fds and caps print what they found.
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sandboxprobe WHAT [ARG]")
		os.Exit(2)
	}
	arg := ""
	if len(os.Args) > 2 {
		arg = os.Args[2]
	}
	var err error
	switch os.Args[1] {
	case "tcp", "unix":
		var c net.Conn
		if c, err = net.Dial(os.Args[1], arg); err == nil {
			c.Close()
		}
	case "udp":
		var c net.Conn
		if c, err = net.Dial("udp", arg); err == nil {
			_, err = c.Write([]byte("x"))
			c.Close()
		}
	case "raw":
		var fd int
		if fd, err = syscall.Socket(syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP); err == nil {
			syscall.Close(fd)
		}
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		if err = syscall.PtraceAttach(pid); err == nil {
			syscall.PtraceDetach(pid)
		}
	case "trunc":
		var fd int
		if fd, err = syscall.Open(arg, syscall.O_RDONLY|syscall.O_TRUNC, 0); err == nil {
			syscall.Close(fd)
		}
	case "signal":
		pid, _ := strconv.Atoi(arg)
		err = syscall.Kill(pid, 0)
	case "fds":
		ents, rerr := os.ReadDir("/proc/self/fd")
		if rerr != nil {
			fmt.Println("refused:", rerr)
			os.Exit(1)
		}
		var extra []string
		for _, e := range ents {
			n, _ := strconv.Atoi(e.Name())
			if n <= 2 {
				continue
			}
			if target, _ := os.Readlink("/proc/self/fd/" + e.Name()); !strings.HasPrefix(target, "/proc/") {
				extra = append(extra, e.Name()+"->"+target)
			}
		}
		fmt.Printf("fds: %q\n", extra)
		return
	case "caps":
		b, _ := os.ReadFile("/proc/self/status")
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Cap") || strings.HasPrefix(l, "NoNewPrivs") || strings.HasPrefix(l, "Seccomp:") {
				fmt.Println(l)
			}
		}
		return
	default:
		fmt.Fprintln(os.Stderr, "sandboxprobe: unknown", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(1)
	}
	fmt.Println("allowed")
}
