package agent

import (
	"net"
	"os"
	"syscall"
)

// samePeer reports whether the process at the other end of a control
// connection runs as this user. The 0700 run directory already keeps
// others out; this holds even if its mode was loosened.
func samePeer(c *net.UnixConn) bool {
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return false
	}
	return int(cred.Uid) == os.Getuid()
}
