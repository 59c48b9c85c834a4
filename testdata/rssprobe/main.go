// Command rssprobe runs a command N times and prints the mean wall time in
// nanoseconds and the largest peak RSS in KiB. Benchmarks run it instead
// of starting the command themselves because Go starts children with
// vfork: a child's peak RSS then includes the (large) test process until
// it execs, while this probe is small enough not to mask the real figure.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rssprobe N COMMAND [ARGS...]")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "rssprobe: N must be a positive integer")
		os.Exit(2)
	}
	var maxRSS int64
	start := time.Now()
	for range n {
		cmd := exec.Command(os.Args[2], os.Args[3:]...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "rssprobe:", err)
			os.Exit(1)
		}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			maxRSS = max(maxRSS, ru.Maxrss)
		}
	}
	fmt.Println(time.Since(start).Nanoseconds()/int64(n), maxRSS)
}
